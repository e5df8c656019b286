"""Issue 32 for α-β: the domain is made of public things only, and a row outside it changes
nothing public.

Neighbouring tables, same seed, the command line (JSON and printed text) and the Python API:

- D and D plus one row whose value lies outside its public domain (a declared list, a schema
  order, a hierarchy file's leaves): the row is left out of I before the mechanism, so the runs
  are identical (the view too), and only the custodian-only report counts the row;
- D and D plus one row with a missing value in a column whose domain is a hierarchy's leaves:
  the missing value is in every domain because the policy keeps missing values (not because the
  data holds one), so m, β and the certificate are identical and only the view may differ; with
  ``--missing drop`` the row is dropped and the runs are identical.

The comparison is shown to fail on the old behaviour (a refusal naming the column) and on
domains that take the hierarchy's leaves as the data made them.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.cli import main
from crowdsafe.errors import InputError
from crowdsafe.perturb import domain as domain_module

COUNTRIES = ["NL", "DE", "FR", "ES"]
STRAY = "Holand-Netherlands"  # a private value: it must show nowhere public
ARGS = ["--gamma", "0.3", "--d", "0.05", "--attributes", "country,sex,band", "--max-rows", "500", "--seed", "7"]


@pytest.fixture(autouse=True)
def _wide_console(monkeypatch):
    """Printed lines unwrapped, so that a longer folder name wraps nothing differently."""
    monkeypatch.setenv("COLUMNS", "1000")


def _base() -> list[dict[str, Any]]:
    return [{"country": COUNTRIES[i % 4], "sex": "FM"[i % 2], "band": i % 5} for i in range(120)]


def _write(folder: Path, rows: list[dict[str, Any]]) -> tuple[Path, Path, Path]:
    """people.csv, a schema (country: a hierarchy file; sex: a schema order) and domains.json
    (band: a declared list) in ``folder``."""
    for part in ("out", "private"):
        (folder / part).mkdir(parents=True)
    (folder / "country.csv").write_text("".join(f"{v};EU;*\n" for v in COUNTRIES))
    (folder / "schema.toml").write_text(
        '[attributes.country]\ntype = "categorical"\nhierarchy = "country.csv"\n'
        '[attributes.sex]\ntype = "ordinal"\norder = ["F", "M"]\n'
        '[attributes.band]\ntype = "numeric"\n'
    )
    (folder / "domains.json").write_text(json.dumps({"band": list(range(5))}))
    path = folder / "people.csv"
    pl.DataFrame(rows, schema={"country": pl.String, "sex": pl.String, "band": pl.Int64}).write_csv(path)
    return path, folder / "schema.toml", folder / "domains.json"


def _cli(folder: Path, rows: list[dict[str, Any]], capsys, *extra: str, as_json: bool) -> dict[str, Any]:
    """One run of ``crowdsafe perturb`` in ``folder``; every artifact, paths made relative."""
    path, schema, domains = _write(folder, rows)
    out, custodian = folder / "out" / "view.csv", folder / "private" / "facts.json"
    code = main(["perturb",
                 "--no-ledger", str(path), "--schema", str(schema), "--domains", str(domains), *ARGS, "--out", str(out),
                 "--custodian-report", str(custodian), *extra, *(["--json"] if as_json else [])])
    printed = capsys.readouterr()
    local = str(folder)
    run: dict[str, Any] = {"exit": code, "stdout": printed.out.replace(local, "<dir>"),
                           "stderr": printed.err.replace(local, "<dir>")}
    if code == 0:
        run["certificate"] = json.loads((folder / "out" / "view.certificate.json").read_text())
        run["view"] = out.read_text()
        run["report"] = (folder / "out" / "view.report.html").read_text()
        run["custodian"] = json.loads(custodian.read_text())
    return run


def _api(folder: Path, rows: list[dict[str, Any]], missing: str = "keep") -> dict[str, Any]:
    path, schema, domains = _write(folder, rows)
    try:
        result = api.perturb(path, schema=schema, domains=json.loads(domains.read_text()), gamma=0.3, d=0.05,
                             attributes=["country", "sex", "band"], max_rows=500, seed=7, missing=missing,
                             out=folder / "out" / "view.csv", report=False, ledger=None)
    except InputError as error:
        return {"exit": 2, "stderr": str(error)}
    return {"exit": 0, "stdout": json.dumps(result.as_dict(), sort_keys=True),
            "certificate": result.view.certificate.to_dict(), "view": result.view.frame.write_csv(),
            "custodian": result.custodian_report()}


VIEW_ROWS_LINE = re.compile(r"^view: [\d,]+ rows -> .*$", re.MULTILINE)


def _public(run: dict[str, Any], *, view_may_differ: bool) -> dict[str, Any]:
    """What of a run is public; with ``view_may_differ`` the view and what is computed from it
    alone (its size, its report) are left out (the DP output)."""
    public = {k: v for k, v in run.items() if k != "custodian"}
    if view_may_differ and run["exit"] == 0:
        public.pop("view")
        public.pop("report", None)
        public["certificate"] = {**run["certificate"],
                                 "parameters": {k: v for k, v in run["certificate"]["parameters"].items()
                                                if k != "view_rows"}}
        stdout = run["stdout"]
        if stdout.lstrip().startswith("{"):
            document = json.loads(stdout)
            document.pop("view_rows")
            public["stdout"] = json.dumps(document, sort_keys=True)
        else:
            public["stdout"] = VIEW_ROWS_LINE.sub("view: <rows>", stdout)
    return public


def _leaks(runs: tuple[dict[str, Any], dict[str, Any]], *, view_may_differ: bool = False) -> list[str]:
    """Why the two runs (D plus the row, D) are not neighbours as the guarantee needs: a public
    difference, a failed run, or the stray value in a public output."""
    with_row, without_row = runs
    problems = []
    if with_row["exit"] != 0 or without_row["exit"] != 0:
        problems.append(f"exit {with_row['exit']} vs {without_row['exit']}: {with_row['stderr']}")
    left, right = _public(with_row, view_may_differ=view_may_differ), _public(without_row,
                                                                               view_may_differ=view_may_differ)
    problems += [f"{key} differs" for key in sorted(set(left) | set(right)) if left.get(key) != right.get(key)]
    problems += [f"{key} names the value" for key, value in left.items() if STRAY in json.dumps(value)]
    return problems


OUTSIDE = {  # one row, each outside one public domain (a hierarchy file, a schema order, a declared list)
    "hierarchy": {"country": STRAY, "sex": "F", "band": 1},
    "order": {"country": "NL", "sex": "X", "band": 1},
    "declared": {"country": "NL", "sex": "F", "band": 9},
}


def _pair(tmp_path: Path, row: dict[str, Any], run) -> tuple[dict[str, Any], dict[str, Any]]:
    first = run(tmp_path / "with", [*_base(), row])
    second = run(tmp_path / "without", _base())
    return first, second


@pytest.mark.parametrize("where", ["declared", "hierarchy", "order"])
@pytest.mark.parametrize("form", ["json", "text", "api"])
def test_a_row_outside_the_public_domain_changes_nothing_public(where, form, tmp_path, capsys):
    """The row is left out before any coin is drawn: same seed, the same view and every public
    output identical; the custodian-only report alone counts it."""
    def run(folder, rows):
        return _api(folder, rows) if form == "api" else _cli(folder, rows, capsys, as_json=form == "json")

    with_row, without_row = _pair(tmp_path, OUTSIDE[where], run)
    assert not _leaks((with_row, without_row))
    assert with_row["view"] == without_row["view"]  # not only the certificate: I is the same
    facts = with_row["custodian"], without_row["custodian"]
    assert facts[0]["custodian_only"].startswith("CUSTODIAN ONLY")
    assert (facts[0]["rows_outside_domain"], facts[1]["rows_outside_domain"]) == (1, 0)
    assert (facts[0]["rows"], facts[1]["rows"]) == (121, 120)
    assert facts[0]["distinct_tuples"] == facts[1]["distinct_tuples"]
    assert STRAY not in json.dumps(facts[0])  # counted, never named (not even to the custodian)


def test_a_row_outside_a_schema_order_is_left_out_by_the_library():
    """The schema-order case on a Dataset made in Python (no load pipeline): the same view,
    certificate and summary, the row counted for the custodian only."""
    from crowdsafe.data import Attribute, AttributeType, Dataset, Schema
    from crowdsafe.perturb import perturb
    from crowdsafe.perturb.alpha_beta import PerturbRequest
    from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest

    schema = Schema((Attribute("country"), Attribute("sex", type=AttributeType.ORDINAL, order=("F", "M")),
                     Attribute("band", type=AttributeType.NUMERIC)))
    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.3, d=0.05), domains={"country": COUNTRIES,
                                                                               "band": list(range(5))}, max_rows=500)
    runs = []
    for rows in ([*_base(), OUTSIDE["order"]], _base()):
        frame = pl.DataFrame(rows, schema={"country": pl.String, "sex": pl.String, "band": pl.Int64})
        result = perturb(Dataset(frame, schema), request, randomness=7)
        runs.append((result.view.frame, result.view.certificate.to_dict(), result.as_dict(),
                     result.custodian_report()))
    assert runs[0][0].equals(runs[1][0]) and runs[0][1:3] == runs[1][1:3]
    assert runs[0][1]["parameters"]["domain_sources"]["sex"] == "schema order"
    assert (runs[0][3]["rows_outside_domain"], runs[1][3]["rows_outside_domain"]) == (1, 0)


@pytest.mark.parametrize("form", ["json", "api"])
def test_a_missing_value_moves_no_domain(form, tmp_path, capsys):
    """With missing values kept, null is in every public domain (the hierarchy file's leaves
    included) whether or not a row holds one: m, β and the certificate are those of D; only the
    view (a DP output) may differ. Dropped, the row goes and the runs are identical."""
    def run(folder, rows, missing="keep"):
        if form == "api":
            return _api(folder, rows, missing)
        return _cli(folder, rows, capsys, "--missing", missing, as_json=True)

    row = {"country": None, "sex": "F", "band": 1}
    kept = _pair(tmp_path / "keep", row, run)
    assert not _leaks(kept, view_may_differ=True)
    parameters = kept[0]["certificate"]["parameters"]
    assert parameters["m"] == 5 * 3 * 6  # COUNTRIES + null, F, M + null, 0..4 + null
    assert parameters["domain"]["country"]["values"] == [*COUNTRIES, None]
    assert kept[0]["custodian"]["rows_outside_domain"] == 0  # the missing value is inside: a tuple of I
    dropped = _pair(tmp_path / "drop", row, lambda folder, rows: run(folder, rows, "drop"))
    assert not _leaks(dropped)
    assert dropped[0]["view"] == dropped[1]["view"]
    assert dropped[0]["certificate"]["parameters"]["m"] == 4 * 2 * 5


def test_the_comparison_catches_a_refusal(tmp_path, monkeypatch, capsys):
    """The old behaviour (a refusal naming the column when a value lies outside the domain)
    fails the comparison above."""
    within = domain_module.TupleDomain.encode_within

    def refusing(self, frame):
        codes, inside = within(self, frame)
        if not inside.all():
            raise InputError("column 'country' of the data holds a value outside its public domain")
        return codes, inside

    monkeypatch.setattr(domain_module.TupleDomain, "encode_within", refusing)
    runs = _pair(tmp_path, OUTSIDE["hierarchy"], lambda folder, rows: _cli(folder, rows, capsys, as_json=True))
    assert runs[0]["exit"] == 2 and runs[1]["exit"] == 0
    assert any(problem.startswith("exit 2 vs 0") for problem in _leaks(runs))


def test_the_comparison_catches_a_domain_that_follows_the_data(tmp_path, monkeypatch, capsys):
    """Domains taken as the load pipeline made the hierarchy (a missing-value leaf only when the
    column holds a missing value) fail the comparison: m and the certificate move."""
    monkeypatch.setattr(domain_module, "with_missing_rule", lambda listed, keep: listed)
    runs = _pair(tmp_path, {"country": None, "sex": "F", "band": 1},
                 lambda folder, rows: _cli(folder, rows, capsys, as_json=True))
    assert {"certificate differs", "stdout differs"} <= set(_leaks(runs, view_may_differ=True))
