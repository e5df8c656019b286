"""An exploratory α-β run says which of its N and m it read from the data, in the same words on
neighbouring tables.

Without ``--max-rows`` N is the data's number of distinct tuples, and without a public domain m is
the size of the data's own values; both move with one row (264 and 2,664 on the reviewer's D,
265 and 3,375 on D plus a row). They used to be printed as "N (public bound on n)" and "m
(public domain size)", the plan's JSON said nothing of where they came from, and the
certificate carried the assumption that max_rows was "a public bound ... fixed before it was
read". Now the plan's text, its JSON (``from_data``, a note) and the certificate
(``max_rows_source``, ``m_source``, the assumptions) mark them as read from the data and
custodian-only, and the run is certified NOT fit for release. On D, D + 1 row and D − 1 row (same
seed) every label, note and assumption is the same: only the values differ.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from crowdsafe.cli import main

SCHEMA = """\
[attributes.age]
type = "integer"
[attributes.sex]
type = "categorical"
order = ["F", "M"]
[attributes.zip]
type = "categorical"
[attributes.income]
role = "sensitive"
type = "categorical"
order = ["<=50K", ">50K"]
"""
DECLARED_SCHEMA = """\
[attributes.sex]
type = "categorical"
order = ["F", "M"]
[attributes.income]
role = "sensitive"
type = "categorical"
order = ["<=50K", ">50K"]
"""
ARGS = ["--schema", "schema.toml", "--attributes", "age,sex,zip,income", "--c", "0.1", "--gamma", "0.2",
        "--exploratory", "--seed", "5"]
NUMBER = re.compile(r"\d[\d,.e+-]*")
SPACING = re.compile(r"[\s\u2500-\u257f]+")  # blanks and box-drawing characters: the table's widths


@pytest.fixture(autouse=True)
def _wide_console(monkeypatch):
    monkeypatch.setenv("COLUMNS", "1000")


def _rows() -> list[dict[str, Any]]:
    return [{"age": 20 + i % 37, "sex": "FM"[i % 2], "zip": f"13{i % 11:02d}", "income": ["<=50K", ">50K"][i % 3 // 2]}
            for i in range(200)]


TABLES = {
    "D": _rows(),
    "D+1": [*_rows(), {"age": 90, "sex": "F", "zip": "9999", "income": ">50K"}],
    "D-1": _rows()[1:],
}


def _run(folder: Path, rows: list[dict[str, Any]], capsys, *extra: str) -> tuple[int, str]:
    folder.mkdir()
    pl.DataFrame(rows).write_csv(folder / "D.csv")
    (folder / "schema.toml").write_text(SCHEMA, encoding="utf-8")
    code = main(["perturb",
                 "--no-ledger", str(folder / "D.csv"), *[str(folder / a) if a == "schema.toml" else a for a in ARGS],
                 *extra])
    return code, capsys.readouterr().out


def _runs(tmp_path: Path, capsys, *extra: str) -> dict[str, tuple[int, str]]:
    return {side: _run(tmp_path / side, rows, capsys, *extra) for side, rows in TABLES.items()}


def _words(text: str) -> str:
    """The text with every number blanked and the table's padding dropped: what must be the same
    on every side (a wider number widens the printed table)."""
    return SPACING.sub(" ", NUMBER.sub("#", text))


def test_the_printed_plan_labels_n_and_m_as_read_from_the_data_on_every_side(tmp_path, capsys):
    runs = _runs(tmp_path, capsys, "--plan-only")
    assert {code for code, _ in runs.values()} == {0}
    texts = {side: out for side, (_, out) in runs.items()}
    assert len({_words(t) for t in texts.values()}) == 1, texts
    assert len({t for t in texts.values()}) > 1  # the values do differ: the labels are what must not
    text = texts["D"]
    assert re.search(r"N \(read from the data, in place of n: custodian-only\)\s*│\s*[\d,]+", text)
    assert re.search(r"m \(domain size read from the data: custodian-only\)\s*│\s*[\d,]+", text)
    assert "public bound" not in text and "public domain size" not in text
    assert "N and m were read from the data (exploratory)" in text and "NOT fit for release" in text


def test_the_json_plan_says_n_and_m_were_read_from_the_data(tmp_path, capsys):
    runs = _runs(tmp_path, capsys, "--plan-only", "--json")
    plans = {side: json.loads(out)["plan"] for side, (_, out) in runs.items()}
    assert {p["n_bound"] for p in plans.values()} == {200, 201, 199}  # distinct tuples: the data's n
    for plan in plans.values():
        assert plan["from_data"] == ["n", "m"]
        assert plan["notes"] == plans["D"]["notes"] and any("read from the data" in n for n in plan["notes"])


def test_the_certificate_marks_them_and_is_not_fit_for_release(tmp_path, capsys):
    certificates = {}
    for side, rows in TABLES.items():
        folder = tmp_path / side
        code, out = _run(folder, rows, capsys, "--out", str(folder / "out" / "v.csv"), "--json")
        assert code == 0, out
        certificates[side] = json.loads((folder / "out" / "v.certificate.json").read_text())
        assert json.loads(out)["fit_for_release"] is False
    first = certificates["D"]
    for cert in certificates.values():
        assert cert["fit_for_release"] is False and cert["guarantee"] == "none"
        assert [_words(a) for a in cert["assumptions"]] == [_words(a) for a in first["assumptions"]]
        assert cert["unfit_reasons"] == first["unfit_reasons"]
        for key in ("max_rows_source", "m_source", "domain_kind"):
            assert cert["parameters"][key] == first["parameters"][key]
    assert {c["parameters"]["max_rows"] for c in certificates.values()} == {200, 201, 199}
    assert "read from the data" in first["parameters"]["max_rows_source"]
    assert "custodian-only" in first["parameters"]["max_rows_source"]
    assert "read from the data" in first["parameters"]["m_source"]
    assumptions = " ".join(first["assumptions"])
    assert "fixed before it was read" not in assumptions and "so the exact n is not published" not in assumptions
    assert "N was read from the data" in assumptions and "m = |D| is a custodian-only fact" in assumptions


def test_a_declared_bound_and_domains_keep_their_public_labels(tmp_path, capsys):
    """The marks follow where N and m came from: with --max-rows and every domain declared, the
    plan says public bound and public domain, and nothing is marked."""
    folder = tmp_path / "declared"
    folder.mkdir()
    pl.DataFrame(_rows()).select("sex", "income").write_csv(folder / "D.csv")
    (folder / "schema.toml").write_text(DECLARED_SCHEMA, encoding="utf-8")
    code = main(["perturb", str(folder / "D.csv"), "--schema", str(folder / "schema.toml"), "--attributes",
                 "sex,income", "--d", "0.05", "--gamma", "0.3", "--max-rows", "4", "--plan-only", "--json"])
    printed = capsys.readouterr()
    assert code == 0, printed.err
    plan = json.loads(printed.out)["plan"]
    assert plan["from_data"] == [] and not any("read from the data" in n for n in plan["notes"])
