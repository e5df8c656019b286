"""Formula-safe CSV: cells a spreadsheet would run are written as text, in every CSV writer.

The expected cells below are written by hand from the OWASP rule (a leading apostrophe before a
text cell starting with = + - @, a tab or a carriage return), not computed by the code tested.
"""

from __future__ import annotations

import csv
import json

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe import api
from crowdsafe.attacks.releases import read_release
from crowdsafe.csv_safety import escape_expr, escape_frame, escape_text, unescape_frame, unescape_text
from crowdsafe.data import write
from crowdsafe.experiments.output import write_csv
from crowdsafe.files import write_csv_atomic
from crowdsafe.perturb import read_view

HOSTILE = ["=1+1", "+cmd", "-2+3", "@SUM(A1)", "\t=1", "\r=1", "'=x", "-5", "+1.5", "plain", "", "a=b"]
ESCAPED = ["'=1+1", "'+cmd", "'-2+3", "'@SUM(A1)", "'\t=1", "'\r=1", "''=x", "-5", "+1.5", "plain", "", "a=b"]
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _rows(path) -> list[list[str]]:
    with open(path, newline="", encoding="utf-8") as handle:
        return list(csv.reader(handle))


def test_the_issue_cells_are_escaped_and_numbers_are_not():
    assert [escape_text(c) for c in HOSTILE] == ESCAPED
    assert [unescape_text(c) for c in ESCAPED] == HOSTILE


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("=+-@'\t\r 0123456789.eEabc,\"")), max_size=8))
def test_escape_is_undone_exactly_and_leaves_no_live_formula(text):
    escaped = escape_text(text)
    assert unescape_text(escaped) == text
    if escaped[:1] in FORMULA_START:  # only a plain number may start with a formula character
        float(escaped)
        assert escaped == text
    assert escape_expr(pl.lit(text)).alias("x").pipe(lambda e: pl.select(e)).item() == escaped


def test_escape_frame_touches_text_cells_and_names_only():
    frame = pl.DataFrame({
        "=h": HOSTILE,
        "n": list(range(-6, 6)),
        "x": [-5.5] * 12,
        "c": pl.Series(HOSTILE, dtype=pl.Categorical),
        "missing": [None] * 11 + ["@x"],
    })
    safe = escape_frame(frame)
    assert safe.columns == ["'=h", "n", "x", "c", "missing"]
    assert safe.get_column("'=h").to_list() == ESCAPED
    assert safe.get_column("c").to_list() == ESCAPED
    assert safe.get_column("n").to_list() == list(range(-6, 6)) and safe.get_column("n").dtype == pl.Int64
    assert safe.get_column("missing").to_list() == [None] * 11 + ["'@x"]
    assert escape_frame(frame, escape_formulas=False) is frame
    back = unescape_frame(safe.with_columns(pl.col("c").cast(pl.String)))
    assert back.columns == frame.columns and back.get_column("=h").to_list() == HOSTILE


@settings(max_examples=150, deadline=None)
@given(st.lists(st.lists(st.sampled_from(["a", "=1+2", "-3", "+x", "@h", "'=q", "1.5e3", "-4.5", "\tz", "", None]),
                         min_size=3, max_size=3), max_size=6),
       st.sampled_from([pl.String, pl.Categorical]))
def test_escape_frame_escapes_each_cell_as_escape_text(rows, dtype):
    """Columns with no cell to escape are left as they are (no copy), the others escaped: each
    cell as :func:`escape_text` escapes it, whichever columns hold one."""
    frame = pl.DataFrame(rows, schema={"a": dtype, "b": dtype, "c": pl.String}, orient="row")
    safe = escape_frame(frame)
    for name in frame.columns:
        expected = [None if v is None else escape_text(v) for v in frame.get_column(name).cast(pl.String).to_list()]
        assert safe.get_column(name).cast(pl.String).to_list() == expected, name


def _hostile_frame() -> pl.DataFrame:
    return pl.DataFrame({"@who": HOSTILE, "value": list(range(-6, 6))})


def test_data_write_csv_is_formula_safe_and_parquet_raw(tmp_path):
    write(_hostile_frame(), tmp_path / "t.csv")
    rows = _rows(tmp_path / "t.csv")
    assert rows[0] == ["'@who", "value"]
    assert [r[0] for r in rows[1:]] == ESCAPED
    assert [r[1] for r in rows[1:]] == [str(v) for v in range(-6, 6)]
    write(_hostile_frame(), tmp_path / "t.parquet")
    assert pl.read_parquet(tmp_path / "t.parquet").equals(_hostile_frame())
    write(_hostile_frame(), tmp_path / "raw.csv", escape_formulas=False)
    assert [r[0] for r in _rows(tmp_path / "raw.csv")] == ["@who", *HOSTILE]


def test_data_write_tsv_is_formula_safe(tmp_path):
    write(_hostile_frame(), tmp_path / "t.tsv")
    lines = (tmp_path / "t.tsv").read_text(encoding="utf-8").split("\n")
    assert lines[0] == "'@who\tvalue" and lines[1] == "'=1+1\t-6"


def test_write_csv_atomic_is_formula_safe(tmp_path):
    write_csv_atomic(_hostile_frame(), tmp_path / "a.csv")
    assert [r[0] for r in _rows(tmp_path / "a.csv")] == ["'@who", *ESCAPED]
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"]


def test_experiment_tables_are_formula_safe(tmp_path):
    write_csv(tmp_path / "e.csv", {"-label": HOSTILE, "score": [-1.5] * 12, "n": [-5] * 12})
    rows = _rows(tmp_path / "e.csv")
    assert rows[0] == ["'-label", "score", "n"]
    assert [r[0] for r in rows[1:]] == ESCAPED
    assert {r[1] for r in rows[1:]} == {"-1.5"} and {r[2] for r in rows[1:]} == {"-5"}
    write_csv(tmp_path / "raw.csv", {"-label": HOSTILE}, escape_formulas=False)
    assert [r[0] for r in _rows(tmp_path / "raw.csv")] == ["-label", *HOSTILE]


def test_a_release_read_back_for_an_attack_has_its_published_cells(tmp_path):
    path = tmp_path / "r.csv"
    write_csv_atomic(pl.DataFrame({"=age": ["[20, 29]", "-2+3", "=1+1"], "sex": ["F", "@x", "'+y"]}), path)
    frame = read_release(path).frame
    assert frame.columns == ["=age", "sex"]
    assert frame.get_column("=age").to_list() == ["[20, 29]", "-2+3", "=1+1"]
    assert frame.get_column("sex").to_list() == ["F", "@x", "'+y"]


def _published_cells(path) -> list[str]:
    rows = _rows(path)
    return [cell for row in rows for cell in row]


def test_a_published_release_opens_in_a_spreadsheet_as_text(tmp_path):
    rng = np.random.default_rng(0)
    n = 3000
    frame = pl.DataFrame({"=age": rng.integers(20, 23, n),
                          "note": rng.choice(["=1+1", "+cmd", "-2+3", "@SUM(A1)"], n)})
    api.publish(frame, epsilon=1, delta=1e-6, qi=["=age", "note"], seed=1, ledger=None,
                out=tmp_path / "r.csv")
    cells = _published_cells(tmp_path / "r.csv")
    live = [c for c in cells if c[:1] in FORMULA_START]
    assert "'=age" in cells and not live, live[:5]


def test_read_table_can_undo_the_escape(tmp_path):
    from crowdsafe.data import read_table

    write(_hostile_frame(), tmp_path / "t.csv")
    assert read_table(tmp_path / "t.csv", unescape_formulas=True).get_column("@who").to_list()[:4] == HOSTILE[:4]
    assert read_table(tmp_path / "t.csv").get_column("'@who").to_list()[:4] == ESCAPED[:4]


def test_a_csv_view_estimates_as_the_parquet_view(tmp_path):
    rng = np.random.default_rng(0)
    n = 300
    frame = pl.DataFrame({"ward": np.arange(n) % 50, "sex": rng.choice(["F", "M"], n),
                          "mark": rng.choice(["=1+1", "-", "ok"], n)})
    queries = ['count where mark = "-"', 'count where mark = "=1+1"']
    estimates = []
    for name in ("csv/v.csv", "parquet/v.parquet"):  # (one folder: they would share v.certificate.json)
        api.perturb(frame, gamma=0.5, d=0.05, seed=1, out=tmp_path / name, exploratory=True, ledger=None)
        estimates.append([e.estimate for e in api.estimate(tmp_path / name, queries)])
    assert estimates[0] == pytest.approx(estimates[1])


def _publish_hostile(out, **options):
    rng = np.random.default_rng(0)
    n = 3000
    frame = pl.DataFrame({"x": rng.integers(-6, -3, n), "note": rng.choice(["=1+1", "-2+3"], n)})
    return api.publish(frame, epsilon=1, delta=1e-6, qi=["x", "note"], seed=1, ledger=None, out=out, scheme="none",
                       **options)


def test_a_negative_number_stays_a_number_and_the_certificate_says_cells_are_escaped(tmp_path):
    _publish_hostile(tmp_path / "r.csv")
    rows = _rows(tmp_path / "r.csv")
    assert rows[0] == ["x", "note"]
    assert {r[0] for r in rows[1:]} <= {"-6", "-5", "-4"}  # numeric: no apostrophe
    assert {r[1] for r in rows[1:]} <= {"'=1+1", "'-2+3"}
    notes = json.loads((tmp_path / "r.certificate.json").read_text())["format_notes"]
    assert len(notes) == 1 and "formula-safe" in notes[0] and "apostrophe" in notes[0]


def test_no_escape_formulas_writes_raw_cells_and_says_so(tmp_path):
    publication = _publish_hostile(tmp_path / "r.csv", escape_formulas=False)
    rows = _rows(tmp_path / "r.csv")
    assert {r[1] for r in rows[1:]} <= {"=1+1", "-2+3"} and len({r[1] for r in rows[1:]}) >= 1
    notes = json.loads((tmp_path / "r.certificate.json").read_text())["format_notes"]
    assert len(notes) == 1 and "as they are" in notes[0] and "may run as a formula" in notes[0]
    assert list(publication.certificate.format_notes) == notes  # the returned certificate is the written one


def test_parquet_keeps_raw_values(tmp_path):
    _publish_hostile(tmp_path / "r.parquet")
    frame = pl.read_parquet(tmp_path / "r.parquet")
    assert set(frame.get_column("note").unique().to_list()) <= {"=1+1", "-2+3"}
    assert frame.get_column("x").dtype.is_integer()
    notes = json.loads((tmp_path / "r.certificate.json").read_text())["format_notes"]
    assert notes == ["Parquet keeps the raw values (no formula escaping)"]


def test_the_format_note_is_the_same_on_neighbouring_tables(tmp_path):
    rng = np.random.default_rng(3)
    n = 2000
    frame = pl.DataFrame({"x": rng.integers(0, 3, n), "note": rng.choice(["=1+1", "a"], n)})
    notes = []
    for name, table in (("full.csv", frame), ("minus.csv", frame.slice(1))):
        api.publish(table, epsilon=1, delta=1e-6, qi=["x", "note"], seed=1, ledger=None, out=tmp_path / name,
                    scheme="none")
        notes.append(json.loads((tmp_path / name.replace(".csv", ".certificate.json")).read_text())["format_notes"])
    assert notes[0] == notes[1] and notes[0]


def test_cli_publish_no_escape_formulas(tmp_path):
    from crowdsafe.cli import main

    rng = np.random.default_rng(0)
    n = 3000
    pl.DataFrame({"x": rng.integers(0, 3, n), "note": rng.choice(["@SUM(A1)", "+cmd"], n)}).write_parquet(
        tmp_path / "in.parquet")
    for flag, name in (("--escape-formulas", "safe.csv"), ("--no-escape-formulas", "raw.csv")):
        code = main(["publish", str(tmp_path / "in.parquet"), "--epsilon", "1", "--delta", "1e-6", "--scheme", "none",
                     "--no-ledger", "--seed", "1", flag, "--out", str(tmp_path / name)])
        assert code == 0
    assert {r[1] for r in _rows(tmp_path / "safe.csv")[1:]} <= {"'@SUM(A1)", "'+cmd"}
    assert {r[1] for r in _rows(tmp_path / "raw.csv")[1:]} <= {"@SUM(A1)", "+cmd"}


def test_anonymize_release_write_is_formula_safe_unless_told(tmp_path):
    frame = pl.DataFrame({"age": [30, 31, 32, 33] * 5, "=note": ["=1+1", "@x", "-2+3", "ok"] * 5})
    release = api.anonymize(frame, algorithm="mondrian", k=2, qi=["age"], out=tmp_path / "a.csv")
    rows = _rows(tmp_path / "a.csv")
    assert rows[0][1] == "'=note" and not [c for r in rows for c in r if c[:1] in FORMULA_START]
    release.write(tmp_path / "raw.csv", escape_formulas=False)
    assert _rows(tmp_path / "raw.csv")[0][1] == "=note"
    assert "as they are" in json.loads((tmp_path / "raw.certificate.json").read_text())["format_notes"][0]


def test_a_raw_view_reads_back_exactly(tmp_path):
    frame = pl.DataFrame({"mark": ["'=x", "=1+1", "ok"] * 40})
    for escape in (True, False):
        out = tmp_path / f"v-{escape}.csv"
        for seed in range(50):  # a seed whose view keeps the tuple '=x (the view deletes at random)
            result = api.perturb(frame, gamma=0.5, d=0.05, seed=seed, out=out, exploratory=True,
                                 escape_formulas=escape, ledger=None)
            if "'=x" in result.view.frame.get_column("mark").to_list():
                break
        written = {r[0] for r in _rows(out)[1:]}
        assert ("''=x" in written) == escape and ("'=x" in written) == (not escape)
        assert sorted(read_view(out).frame.get_column("mark").to_list()) == \
            sorted(result.view.frame.get_column("mark").to_list())


@pytest.mark.parametrize(("values", "expected"), [
    (["=1+1", "@x", "-5", "ok"], ["'=1+1", "'@x", "-5", "ok"]),
    (["=1+1", "line\nbreak", "+cmd", "ok"], ["'=1+1", "line\nbreak", "'+cmd", "ok"]),
], ids=["one-line-per-class", "fallback"])
def test_the_class_writer_escapes_on_both_paths(tmp_path, values, expected):
    from crowdsafe.anonymize.release import write_classes_csv

    classes = pl.DataFrame({"=q": values, "n": [-5, 1, 2, 3]})
    sizes = np.array([3, 1, 0, 2])
    write_classes_csv(classes, sizes, tmp_path / "c.csv")
    rows = _rows(tmp_path / "c.csv")
    assert rows[0] == ["'=q", "n"]
    assert [r[0] for r in rows[1:]] == [expected[i] for i in (0, 0, 0, 1, 3, 3)]
    assert [r[1] for r in rows[1:]] == ["-5", "-5", "-5", "1", "3", "3"]
    write_classes_csv(classes, sizes, tmp_path / "raw.csv", escape_formulas=False)
    assert [r[0] for r in _rows(tmp_path / "raw.csv")] == ["=q", *[values[i] for i in (0, 0, 0, 1, 3, 3)]]


def test_compare_and_check_read_a_release_with_escaped_column_names(tmp_path, capsys):
    """Found by a sweep: a column named '=cmd' or '-k' is written "'=cmd" (formula-safe); compare
    and check --original undid the escape on the frame but kept the escaped names in the schema,
    and refused the release ("column ''=cmd' is named in the schema but not in the data")."""
    from crowdsafe.cli import main

    rng = np.random.default_rng(1)
    n = 200
    table = pl.DataFrame({"age": rng.integers(20, 60, n), "=cmd": rng.choice(["a", "b"], n),
                          "-k": rng.choice(["x", "y"], n), "diag": rng.choice(["flu", "cold"], n)})
    table.write_csv(tmp_path / "d.csv")
    release = tmp_path / "m.csv"
    assert main(["anonymize", str(tmp_path / "d.csv"), "--algorithm", "mondrian", "--k", "5", "--sensitive", "diag",
                 "--out", str(release)]) == 0
    assert _rows(release)[0] == ["age", "'=cmd", "'-k", "diag"]
    capsys.readouterr()
    assert main(["compare", str(tmp_path / "d.csv"), str(release), "--k", "5"]) == 0
    assert main(["check", str(release), "--original", str(tmp_path / "d.csv"), "--sensitive", "diag"]) == 0
    assert "=cmd" in capsys.readouterr().out
