"""A formula-safe CSV release (``'=1+1``, crowdsafe.csv_safety) reads back as published in
``compare`` and ``check --original``: both once refused crowdsafe's own release, reading the
escaped cell as a value the original does not hold (found by a black-box sweep)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from crowdsafe import cli, csv_safety


def _run(capsys, *argv) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main([str(a) for a in argv])
    return code, capsys.readouterr().err


@pytest.fixture()
def release(tmp_path, capsys) -> tuple[Path, Path]:
    rng = np.random.default_rng(5)
    data = tmp_path / "t.csv"
    pl.DataFrame({"age": rng.integers(20, 80, 400), "team": rng.choice(["=1+1", "@sum", "plain"], 400),
                  "score": rng.choice(["-high", "low"], 400)}).write_csv(data)
    out = tmp_path / "r.csv"
    code, err = _run(capsys, "anonymize", data, "--k", "5", "--qi", "age,team", "--sensitive", "score", "--out", out,
                     "--no-report")
    assert code == 0, err
    assert "'=1+1" in out.read_text(encoding="utf-8")  # written formula-safe
    return data, out


def test_compare_and_check_read_a_formula_safe_release_as_published(release, capsys):
    data, out = release
    code, err = _run(capsys, "compare", data, out, "--qi", "age,team")
    assert code == 0, err
    code, err = _run(capsys, "check", out, "--original", data, "--qi", "age,team", "--sensitive", "score")
    assert code == 0, err


def test_the_check_can_fail(release, capsys, monkeypatch):
    """Broken variant: the escape left in place, as before."""
    data, out = release
    monkeypatch.setattr(csv_safety, "escaped_release", lambda path: False)
    code, err = _run(capsys, "compare", data, out, "--qi", "age,team")
    assert code == 2 and "'=1+1" in err


def test_a_hand_edited_certificate_does_not_crash_an_attack(capsys, tmp_path):
    """Found by a sweep: `"parameters": 5` or `"format_notes": 5` beside a release was an
    internal error in `attack`; such a certificate now says nothing (no k, cells as escaped)."""
    from crowdsafe import cli

    rows = "age,sex,zip\n" + "".join(f"{20 + i % 5},{'FM'[i % 2]},{'abc'[i % 3]}\n" for i in range(60))
    (tmp_path / "t.csv").write_text(rows)
    release = tmp_path / "r.csv"
    assert cli.main(["anonymize", str(tmp_path / "t.csv"), "--k", "5", "--qi", "age,sex", "--sensitive", "zip",
                     "--out", str(release), "--no-report"]) == 0
    for edited in ('{"parameters": 5}', '{"format_notes": 5}', '{"parameters": {"k": true}}'):
        release.with_name("r.certificate.json").write_text(edited)
        capsys.readouterr()
        code = cli.main(["attack", "intersection", str(release), str(release), "--targets", str(tmp_path / "t.csv"),
                         "--qi", "age,sex", "--sensitive", "zip"])
        assert code == 0, capsys.readouterr().err
