"""``crowdsafe calc``: each subcommand's JSON, human output, help example and errors."""

from __future__ import annotations

import json
import math

import pytest

from crowdsafe import Randomness, cli
from crowdsafe.privacy import (
    RecodingProfile,
    SamplingProfile,
    certify_k_anonymization,
    dps_delta,
)


def run_json(capsys, *args: str):
    code = cli.main(["calc", *args, "--json"])
    out = capsys.readouterr().out
    assert code == 0, out
    return json.loads(out)


@pytest.mark.parametrize("command", ["amplify", "dps", "solve", "compose"])
def test_help_has_an_example(capsys, command):
    assert cli.main(["calc", command, "--help"]) == 0
    assert "Example: crowdsafe calc " + command in capsys.readouterr().out


def test_amplify_table(capsys):
    data = run_json(capsys, "amplify", "--epsilon", str(math.log(11)), "--delta", "1e-5",
                    "--beta", "1,0.1,0.01")
    eps = [row["epsilon"] for row in data["rows"]]
    assert eps[0] == pytest.approx(math.log(11)) and eps[1] == pytest.approx(math.log(2))
    assert data["rows"][2]["delta"] == pytest.approx(1e-7)


def test_amplify_inverse_directions(capsys):
    data = run_json(capsys, "amplify", "--epsilon", "1", "--target-epsilon", str(math.log(1 + 0.1 * (math.e - 1))))
    assert data["largest_rate"] == pytest.approx(0.1)
    data = run_json(capsys, "amplify", "--beta", "0.1", "--target-epsilon", str(math.log(2)))
    assert data["largest_inner"]["epsilon"] == pytest.approx(math.log(11))


def test_dps_grid(capsys):
    data = run_json(capsys, "dps", "--k", "20", "--beta", "0.05,0.1", "--epsilon", "0.5,1", "--epsilon1", "0")
    assert len(data["rows"]) == 4
    assert data["rows"][3]["delta"] == dps_delta(20, 0.1, 1.0)


def test_solve_each_unknown(capsys):
    assert run_json(capsys, "solve", "--epsilon", "1", "--delta", "1e-6", "--beta", "0.2")["k"] == 14
    beta = run_json(capsys, "solve", "--epsilon", "1", "--delta", "1e-6", "--k", "200")
    assert beta["floor_binds"] and beta["beta"] == pytest.approx(1 - math.exp(-1))
    eps = run_json(capsys, "solve", "--k", "100", "--beta", "0.1", "--delta", "1e-6")
    assert eps["floor_binds"] and "floor binds" in eps["explanation"]


def test_solve_human_output_explains(capsys):
    assert cli.main(["calc", "solve", "--epsilon", "1", "--delta", "1e-6"]) == 0
    out = capsys.readouterr().out
    assert "k = 74" in out and "largest rate the theorem admits" in out


def test_compose_homogeneous_and_sequential(capsys):
    data = run_json(capsys, "compose", "--epsilon", "0.5", "--times", "50", "--slack", "1e-6")
    drv = next(c for c in data["candidates"] if c["bound"] == "drv")
    assert drv["epsilon"] == pytest.approx(34.8, abs=0.05)
    assert data["bound"] == "kov"
    data = run_json(capsys, "compose", "0.1", "0.2:1e-6")
    assert data["sequential"]["epsilon"] == pytest.approx(0.3)
    assert data["parallel"] == {"epsilon": 0.2, "delta": 1e-6}


def _write_cert(path, sample_id):
    cert = certify_k_anonymization(sampling=SamplingProfile(0.2, sample_id),
                                   recoding=RecodingProfile.strongly_safe(), k=20, epsilon=1.0,
                                   randomness=Randomness())
    return cert.write(path)


def test_compose_certificates_refuses_sample_reuse(tmp_path, capsys):
    a = _write_cert(tmp_path / "a.json", "s1")
    b = _write_cert(tmp_path / "b.json", "s1")
    c = _write_cert(tmp_path / "c.json", "s2")
    assert cli.main(["calc", "compose", "--certificate", str(a), "--certificate", str(b)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("crowdsafe: error: ") and "fresh independent sample" in err
    data = run_json(capsys, "compose", "--certificate", str(a), "--certificate", str(c))
    assert data["guarantee"] == "dp" and data["epsilon"] == pytest.approx(2.0)


def test_compose_refuses_a_certificate_stating_less_than_its_fields_give(tmp_path, capsys):
    """An officer's sweep (2026-11-30): a certificate whose delta was lowered by hand composed at
    the lowered delta. Every reader of a certificate file now checks it against d(k, beta, epsilon)
    of its own parameters, and its stated verdict against the one its fields give."""
    import json

    a = _write_cert(tmp_path / "a.json", "s1")
    data = json.loads(a.read_text())
    for name, edit in (("low.json", {"delta": data["delta"] / 100}), ("fit.json", {"fit_for_release": False})):
        (tmp_path / name).write_text(json.dumps({**data, **edit}))
        assert cli.main(["calc", "compose", "--certificate", str(a), "--certificate", str(tmp_path / name)]) == 2
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and f"the certificate {tmp_path / name} is not valid" in err, err
        assert "it was edited" in err


@pytest.mark.parametrize(
    "args, message",
    [
        (["dps", "--k", "20", "--beta", "0.5", "--epsilon", "0.5"], "below the sampling floor"),
        (["dps", "--k", "20", "--beta", "0.5,x", "--epsilon", "1"], "--beta: 'x' is not a number"),
        (["solve", "--epsilon", "1", "--beta", "0.2"], "--delta is required"),
        (["amplify", "--epsilon", "1"], "give --epsilon and --beta"),
        (["compose", "--epsilon", "1"], "exactly one of"),
        (["compose", "0.1:x"], "EPS or EPS:DELTA"),
        (["compose", "--epsilon", "0.1", "--times", "0"], "k must be"),
        (["compose", "1e308:0", "1e308:0"], "sequential composition gives an epsilon beyond the largest double"),
        (["compose", "--epsilon", "1e308", "--times", "2"], "2-fold composition gives an epsilon beyond"),
        (["amplify", "--epsilon", "1e308", "--target-epsilon", "1"], "below the smallest positive double"),
        (["dps", "--k", "20", "--beta", "1e-300", "--epsilon", "2e-300"], "too large to evaluate"),
    ],
)
def test_bad_input_is_one_line_exit_2(capsys, args, message):
    assert cli.main(["calc", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and message in err


def test_a_huge_epsilon_gets_a_finite_answer_at_once(capsys):
    # e^1e308 overflows: amplification is ε + ln β + (terms below ε's rounding), i.e. ε itself
    assert run_json(capsys, "amplify", "--epsilon", "1e308", "--beta", "0.1")["rows"][0]["epsilon"] == 1e308
    # d(k, β, ε) falls to β^k as ε grows (γ → 1, n_m → k); at ε = 1e7 the n = k tie is decided at once
    row = run_json(capsys, "dps", "--k", "20", "--beta", "0.1", "--epsilon", "1e7")["rows"][0]
    assert row["delta"] == pytest.approx(1e-20, rel=1e-6) and row["delta"] >= 1e-20 and row["n_min"] == 20
    solved = run_json(capsys, "solve", "--epsilon", "1e7", "--delta", "1e-6", "--beta", "0.2")
    assert solved["k"] == 9 and solved["delta"] == pytest.approx(0.2**9, rel=1e-6)  # 0.2^8 > 1e-6 >= 0.2^9
    assert run_json(capsys, "compose", "--epsilon", "800", "--times", "2", "--slack", "1e-6")["epsilon"] == 1600.0
