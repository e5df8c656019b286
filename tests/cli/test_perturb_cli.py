"""``crowdsafe perturb`` and ``crowdsafe estimate``: outputs, JSON, help examples, one-line errors."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_command


def people(rows: int = 300) -> pl.DataFrame:
    rng = np.random.default_rng(9)
    return pl.DataFrame({
        "age": rng.integers(18, 60, rows),
        "sex": rng.choice(["Female", "Male"], rows),
        "region": rng.choice(["north", "south", "east", "west"], rows),
        "band": rng.integers(0, 50, rows),
    })


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    folder = tmp_path_factory.mktemp("perturb-cli")
    path = folder / "people.csv"
    people().write_csv(path)
    return path


@pytest.fixture(scope="module")
def domains(tmp_path_factory):
    """The public domain, declared in a file (m = 42 * 2 * 4 * 50 = 16,800 with --missing drop;
    the missing value is one more value of each attribute under the default keep)."""
    path = tmp_path_factory.mktemp("perturb-domains") / "domains.json"
    path.write_text(json.dumps({"age": list(range(18, 60)), "sex": ["Female", "Male"],
                                "region": ["north", "south", "east", "west"], "band": list(range(50))}))
    return path


def integers(value) -> set[int]:
    """Every whole number in a JSON value (to check that no exact count of the data is in it)."""
    if isinstance(value, bool):
        return set()
    if isinstance(value, int):
        return {value}
    if isinstance(value, dict):
        return set().union(*(integers(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(integers(v) for v in value)) if value else set()
    return set()


def public(domains) -> list[str]:
    """The public flags: the domains file, N = 500 and no missing value in the domains (the table
    has none; --missing drop makes that a parameter)."""
    return ["--domains", str(domains), "--max-rows", "500", "--missing", "drop"]


@pytest.mark.parametrize("command", ["perturb", "estimate"])
def test_help_has_an_example(capsys, command):
    code, out, _ = run_command(capsys, command, "--help")
    assert code == 0 and f"Example: crowdsafe {command}" in out


def test_perturb_writes_view_and_certificate_then_estimate_reads_them(capsys, data, domains, tmp_path):
    out = tmp_path / "view.csv"
    code, stdout, err = run_command(capsys, "perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.3",
                                    "--out", str(out),
                                    "--seed", "1", "--json", *public(domains))
    assert code == 0, err
    payload = json.loads(stdout)
    cert = json.loads((tmp_path / "view.certificate.json").read_text())
    assert payload["view_rows"] == pl.read_csv(out).height == cert["parameters"]["view_rows"]
    assert payload["plan"]["alpha"] == 0.5 == cert["parameters"]["alpha"]
    assert cert["guarantee"] == "d-gamma" and cert["fit_for_release"] is False
    assert "kept" not in payload and "inserted" not in payload
    # the (d, gamma) printed is the paper's, computed here from N = 500 and m = 16,800
    d = 2 * 500 / 16_800
    beta = (d / 0.3) * ((1 - 0.3) / (1 - d)) * 0.5
    assert cert["parameters"]["d"] == pytest.approx(d, rel=1e-12) == payload["plan"]["d"]
    assert cert["parameters"]["beta"] == pytest.approx(beta, rel=1e-9)
    assert cert["epsilon"] == pytest.approx(max(math.log(0.5 / beta), math.log((1 - beta) / 0.5)), rel=1e-9)
    # no exact count of the data anywhere public: 300 rows, 300 - duplicates distinct tuples
    n = people().unique().height
    assert "rows" not in payload and "distinct_tuples" not in payload and "duplicate_rows_collapsed" not in payload
    assert payload["plan"]["n_bound"] == cert["parameters"]["max_rows"] == 500 and "n" not in cert["parameters"]
    assert not {300, n} & (integers(cert) | integers(payload))
    code, printed, err = run_command(capsys, "perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.3",
                                     "--out", str(out),
                                     "--seed", "1", *public(domains))
    printed = " ".join(printed.split())
    assert code == 0 and "guarantee: (" in printed, err
    shown_d, rest = printed.split("guarantee: (", 1)[1].split(", ", 1)
    assert rest.startswith("0.3)-private (as unbounded DP: epsilon = ")
    assert float(shown_d) <= d < float(shown_d) + 10 ** (math.floor(math.log10(d)) - 2)  # d never shown larger
    assert f"{beta:.6g}" in printed and f"{d:.6g}" in printed
    assert f"report->{tmp_path / 'view.report.html'}" in "".join(printed.split())  # a long path may wrap
    assert sorted(tmp_path.iterdir()) == sorted([out, tmp_path / "view.certificate.json",
                                                 tmp_path / "view.report.html"])
    assert payload["report_file"] == str(tmp_path / "view.report.html")

    code, stdout, err = run_command(capsys, "estimate", str(out),
                                    "count where age between 26 and 32 and sex = 'Female'",
                                    "count", "--json")
    assert code == 0, err
    estimates = json.loads(stdout)["estimates"]
    assert len(estimates) == 2 and estimates[1]["n_view"] == payload["view_rows"]
    assert all(e["error"] > 0 for e in estimates)

    code, stdout, _ = run_command(capsys, "estimate", str(out), "count where region = 'north'")
    assert code == 0 and "count where region = 'north'" in stdout and "theorem bound" in stdout
    # a per-query bound (audit math1): never claimed for every query at once
    said = " ".join(stdout.split())
    assert "each query fixed before looking at the view; not all queries at once" in said
    assert "for every query at once" not in said

    sweep = tmp_path / "sweep.csv"
    code, stdout, err = run_command(capsys, "estimate", str(out), "--equality", "2", "--out", str(sweep), "--json")
    assert code == 0, err
    with open(sweep, newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == json.loads(stdout)["equality"]["queries"] > 0
    assert {"attributes", "estimate", "error", "n_view", "n_domain"} <= set(rows[0])

    # the queries' estimates written to --out (the option was silently ignored without --equality)
    listed = tmp_path / "estimates.csv"
    code, stdout, err = run_command(capsys, "estimate", str(out), "count where region = 'north'", "count",
                                    "--out", str(listed), "--json")
    assert code == 0, err
    with open(listed, newline="") as handle:
        written = list(csv.DictReader(handle))
    printed = json.loads(stdout)["estimates"]
    assert [r["query"] for r in written] == ["count where region = 'north'", "count"]
    assert [float(r["estimate"]) for r in written] == [e["estimate"] for e in printed]
    code, _, err = run_command(capsys, "estimate", str(out), "count", "--out", str(tmp_path / "e.txt"))
    assert code == 2 and "must be a .csv file" in err


def test_plan_only_writes_nothing(capsys, data, domains, tmp_path):
    code, stdout, _ = run_command(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--plan-only", "--json",
                                  *public(domains))
    assert code == 0
    plan = json.loads(stdout)["plan"]
    assert plan["n_bound"] == 500 and plan["m"] == 16_800
    assert plan["expected_view"] == pytest.approx(0.5 * 500 + plan["beta"] * (16_800 - 500))
    code, stdout, _ = run_command(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--plan-only",
                                  *public(domains))
    assert code == 0 and "expected |V| / N" in stdout and "public bound on n" in stdout
    said = " ".join(stdout.split())  # the theorem's bound is per query (audit math1)
    assert "error bound, per query fixed in advance (95%)" in said and "any query" not in said
    # the default policy keeps missing values: null is one more value of every attribute's domain
    code, stdout, _ = run_command(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--plan-only", "--json",
                                  *public(domains)[:-2])
    assert code == 0 and json.loads(stdout)["plan"]["m"] == 43 * 3 * 5 * 51
    assert list(tmp_path.iterdir()) == []


def test_a_certified_run_without_a_public_domain_is_refused_and_exploratory_says_no_guarantee(capsys, data, tmp_path):
    out = tmp_path / "view.csv"
    code, _, err = run_command(capsys, "perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.3",
                               "--max-rows", "500",
                               "--out", str(out))
    assert code == 2 and err.count("\n") == 1
    assert "no public domain for 'age', 'sex', 'region', 'band'" in err and "--domains FILE" in err
    assert "--exploratory" in err and list(tmp_path.iterdir()) == []
    code, stdout, err = run_command(capsys, "perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.3",
                                    "--exploratory",
                                    "--out", str(out), "--seed", "3")
    assert code == 0, err
    assert "guarantee: no formal guarantee: exploratory run" in " ".join(stdout.split())
    cert = json.loads((tmp_path / "view.certificate.json").read_text())
    assert cert["guarantee"] == "none" and cert["epsilon"] is None and "taken from the data" in cert["reason"]
    code, stdout, err = run_command(capsys, "estimate", str(out), "count where sex = 'Female'", "--json")
    assert code == 0, err  # an exploratory view can still be read and estimated from


def test_same_seed_on_a_table_and_the_table_minus_one_row(capsys, domains, tmp_path):
    """Every public output but the view (and what is computed from it) is identical."""
    outputs = []
    for name, frame in (("t1", people()), ("t2", people().slice(1))):  # names of one length: same wrapping
        folder = tmp_path / name
        folder.mkdir()
        frame.write_csv(folder / "people.csv")
        printed = []
        for extra in (["--json"], []):
            code, stdout, err = run_command(capsys, "perturb", "--no-ledger", str(folder / "people.csv"), "--c",
                                            "2", "--gamma", "0.3",
                                            "--seed", "4", "--out", str(folder / "view.csv"), *public(domains), *extra)
            assert code == 0, err
            printed.append(stdout.replace(str(folder), "<dir>"))
        payload = json.loads(printed[0])
        view_rows = payload.pop("view_rows")
        cert = json.loads((folder / "view.certificate.json").read_text())
        assert cert["parameters"].pop("view_rows") == view_rows
        text = "\n".join(line for line in printed[1].splitlines() if "rows ->" not in line)
        outputs.append((payload, cert, text))
    assert outputs[0] == outputs[1]


def test_the_custodian_report_is_written_only_where_asked(capsys, data, domains, tmp_path):
    out, report = tmp_path / "release" / "view.csv", tmp_path / "private" / "facts.json"
    out.parent.mkdir()
    report.parent.mkdir()
    code, stdout, err = run_command(capsys, "perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.3",
                                    "--out", str(out),
                                    "--custodian-report", str(report), "--json", *public(domains))
    assert code == 0, err
    facts = json.loads(report.read_text())
    assert facts["custodian_only"].startswith("CUSTODIAN ONLY") and facts["rows"] == 300
    assert facts["distinct_tuples"] == people().unique().height
    assert sorted(p.name for p in out.parent.iterdir()) == ["view.certificate.json", "view.csv", "view.report.html"]
    code, _, err = run_command(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--out", str(out),
                               "--custodian-report", str(out), *public(domains))
    assert code == 2 and "must not be the view" in err
    code, _, err = run_command(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--out", str(out),
                               "--custodian-report", str(out.parent / "view.report.html"), *public(domains))
    assert code == 2 and "its report" in err


@pytest.mark.parametrize("args, fragment", [
    (["--c", "2", "--gamma", "0.3"], "--out"),
    (["--c", "2", "--gamma", "0.3", "--max-rows", "100", "--out", "v.csv"], "more than --max-rows 100 rows"),
    (["--c", "2", "--gamma", "0.3", "--max-rows", "0", "--out", "v.csv"], "whole number >= 1"),
    (["--c", "2", "--gamma", "0.3", "--budget", "5,0", "--out", "v.csv"], "--no-ledger cannot be combined"),
    (["--c", "2", "--gamma", "1.5", "--out", "v.csv"], "gamma must lie in (0, 1)"),
    (["--d", "0.5", "--gamma", "0.3", "--out", "v.csv"], "must be below gamma"),
    (["--c", "2", "--d", "0.01", "--gamma", "0.3", "--out", "v.csv"], "exactly one of d"),
    (["--c", "2", "--gamma", "0.3", "--alpha", "0.99", "--out", "v.csv"], "1 - d/gamma"),
    (["--c", "2", "--gamma", "0.3", "--beta", "1e-9", "--out", "v.csv"], "posterior above gamma"),
    (["--c", "2", "--gamma", "0.3", "--out", "v.txt"], "output format"),
    (["--c", "2", "--gamma", "0.3", "--attributes", "age,nope", "--out", "v.csv"], "no column named 'nope'"),
    (["--c", "2", "--gamma", "0.3", "--duplicates", "error", "--out", "v.csv"], "rows repeat"),
])
def test_perturb_errors_are_one_line_exit_2_and_write_nothing(capsys, data, domains, tmp_path, monkeypatch, args,
                                                              fragment):
    monkeypatch.chdir(tmp_path)
    if "--max-rows" not in args:
        args = [*args, "--max-rows", "500"]
    code, _, err = run_command(capsys, "perturb", "--no-ledger", str(data), *args, "--domains", str(domains))
    assert code == 2 and err.count("\n") == 1 and fragment in err, err
    assert list(tmp_path.iterdir()) == []


def test_estimate_errors_are_one_line_exit_2(capsys, data, domains, tmp_path):
    out = tmp_path / "view.csv"
    assert run_command(capsys, "perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.3", "--out", str(out),
                       *public(domains))[0] == 0
    for args, fragment in [
        ([str(out)], "give a query"),
        ([str(out), "count where nope = 1"], "unknown attribute 'nope'"),
        ([str(out), "count where age >"], "does not parse"),
        ([str(out), "--equality", "2"], "--out"),
        ([str(tmp_path / "absent.csv"), "count"], "no certificate"),
        ([str(data), "count"], "no certificate"),
    ]:
        code, _, err = run_command(capsys, "estimate", *args)
        assert code == 2 and err.count("\n") == 1 and fragment in err, (args, err)


def test_perturb_charges_the_ledger_it_is_given(capsys, data, domains, tmp_path):
    ledger = tmp_path / "private" / "ledger.sqlite3"
    ledger.parent.mkdir()
    out = tmp_path / "view.csv"
    code, stdout, err = run_command(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--out", str(out),
                                    "--json",
                                    "--ledger", str(ledger), "--budget", "10,0", "--name", "people", *public(domains))
    assert code == 0, err
    payload = json.loads(stdout)
    epsilon = json.loads((tmp_path / "view.certificate.json").read_text())["epsilon"]
    assert payload["ledger"]["charged"]["epsilon"] == pytest.approx(epsilon)
    assert payload["ledger"]["dataset"] == "people"
    code, stdout, err = run_command(capsys, "perturb", str(data), "--c", "2", "--gamma", "0.3", "--out", str(out),
                                    "--ledger", str(ledger), *public(domains))
    assert code == 0 and "ledger: charged epsilon" in stdout and "entry #2" in stdout


def test_perturb_charges_the_default_ledger_as_publish_and_query_do(capsys, data, domains, tmp_path, private_ledger):
    """Without --ledger, perturb charges $CROWDSAFE_LEDGER (here the test's own, tests/conftest.py), as
    publish and query do: a script that set it had its views spent uncounted. The ledger's refusals
    come before anything is charged or written, with exit 3; --no-ledger runs without one."""
    out = tmp_path / "out" / "view.csv"
    run = ["perturb", str(data), "--c", "2", "--gamma", "0.3", "--out", str(out), *public(domains)]
    code, _, err = run_command(capsys, *run)
    assert code == 3 and err.count("\n") == 1 and "no privacy budget is set for 'people.csv'" in err, err
    assert str(private_ledger) in err and "--budget E,D" in err
    assert not out.parent.exists() and not private_ledger.exists()  # refused before a ledger was made
    code, stdout, err = run_command(capsys, *run, "--budget", "5,0", "--json")
    assert code == 0, err
    payload = json.loads(stdout)
    epsilon = json.loads((out.parent / "view.certificate.json").read_text())["epsilon"]
    assert payload["ledger"]["path"] == str(private_ledger)
    assert payload["ledger"]["charged"] == {"epsilon": epsilon, "delta": 0.0}  # what the certificate states
    code, stdout, err = run_command(capsys, *run, "--force")
    assert code == 0, err
    said = "".join(stdout.split())  # a long path may wrap
    assert "ledger:chargedepsilon" in said and "(entry#2)" in said and str(private_ledger) in said
    code, stdout, err = run_command(capsys, "ledger", "show", "--json")
    assert code == 0, err
    [dataset] = json.loads(stdout)["datasets"]
    assert [e["epsilon"] for e in dataset["entries"]] == [epsilon, epsilon]
    # a third view would spend more than the budget of 5: refused before it is drawn or written
    before = (out.read_bytes(), private_ledger.read_bytes())
    code, _, err = run_command(capsys, *run, "--force")
    assert code == 3 and err.count("\n") == 1 and "refused" in err, err
    assert (out.read_bytes(), private_ledger.read_bytes()) == before
    # an exploratory run has no guarantee to charge: refused before the data is read, unless --no-ledger
    code, _, err = run_command(capsys, "perturb", str(tmp_path / "absent.csv"), "--c", "2", "--gamma", "0.3",
                               "--exploratory", "--out", str(tmp_path / "e.csv"))
    assert code == 2 and "--no-ledger" in err and "absent" not in err, err
    code, stdout, err = run_command(capsys, "perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.3",
                                    "--exploratory", "--out", str(tmp_path / "e.csv"), "--json")
    assert code == 0 and "ledger" not in json.loads(stdout), err
