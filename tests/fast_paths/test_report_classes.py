"""The release report read as its class lines (crowdsafe.report.classes.class_rows, fast path)
against the release file scanned row by row (crowdsafe.report.build.read_release, reference twin):
the same columns, the same tuple table, the same report content, and after a publish the same page
as ``crowdsafe report`` rebuilds from the files.

The switch is a byte match, not a size: the fast path runs only when the file is exactly the
header and each class line repeated by its size. Its one constant, COMPARE_CHUNK (how many bytes
are compared per read), is set to a class's bytes − 1, equal and + 1, so the comparison's runs end
inside, at and past a class. Every way the match can fail (another escape, a changed byte, a
missing or extra line, a line break in a value, Parquet) must give None, so the twin runs.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsafe.anonymize.release import write_classes_csv
from crowdsafe.csv_safety import format_note
from crowdsafe.report import build, classes
from crowdsafe.report.classes import WrittenClasses, class_rows
from crowdsafe.report.content import ROWS, report_content, tuple_table

CELLS = st.one_of(st.none(), st.sampled_from(["", "=1+1", "'=x", "''@y", "-5", "+1.5", "@home", "a,b", 'say "hi"',
                                               " lead", "\ttab", "é", "[20, 40)", ">=90", "*", "0"]),
                  st.text(alphabet="ab=+-@',\" ", max_size=4))


def written(folder: Path, frame: pl.DataFrame, sizes: list[int], escape: bool) -> tuple[Path, dict]:
    path = folder / "r.csv"
    write_classes_csv(frame, np.asarray(sizes, dtype=np.int64), path, escape_formulas=escape)
    certificate = {"format": "crowdsafe-certificate", "version": 2, "guarantee": "dps", "epsilon": 1.0, "delta": 1e-6,
                   "format_notes": [format_note(path, escape_formulas=escape)],
                   "parameters": {"k": 2, "quasi_identifiers": [c for c in frame.columns if c != "income"]},
                   "theorem": "Li, Qardaji, Su 2012, Theorem 6", "reason": None, "mechanisms": [], "assumptions": [],
                   "neighbours": "add-remove", "sample": {"rate": 0.5, "release_id": "ab" * 16}, "randomness": None,
                   "accounting": None, "components": [], "crowdsafe_version": "0.1.0"}  # read_certificate checks it
    path.with_name("r.certificate.json").write_text(json.dumps(certificate), encoding="utf-8")
    return path, certificate


def scanned(path: Path) -> tuple[tuple[str, ...], pl.DataFrame]:
    frame, _ = build.read_release(path)
    names = tuple(frame.collect_schema().names())
    return names, frame.collect()


def same_tables(path: Path, certificate: dict, wrote: WrittenClasses) -> bool:
    """Assert the fast path and the twin agree; return whether the fast path ran."""
    rows = class_rows(path, wrote, certificate)
    names, whole = scanned(path)
    if rows is None:
        return False
    assert tuple(c for c in rows.columns if c != ROWS) == names
    assert int(rows.get_column(ROWS).sum()) == whole.height
    for qi in ([names[0]], list(names)):
        fast = tuple_table(rows, qi, weighted=True).sort(qi, nulls_last=True)
        slow = tuple_table(whole, qi).sort(qi, nulls_last=True)
        assert fast.equals(slow)
    return True


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), width=st.integers(1, 3), height=st.integers(1, 6), escape=st.booleans())
def test_class_lines_read_as_the_file(tmp_path, data, width, height, escape):
    frame = pl.DataFrame({f"c{j}": data.draw(st.lists(CELLS, min_size=height, max_size=height))
                          for j in range(width)}, schema={f"c{j}": pl.String for j in range(width)})
    sizes = data.draw(st.lists(st.integers(1, 7), min_size=height, max_size=height))
    path, certificate = written(tmp_path, frame, sizes, escape)
    ran = same_tables(path, certificate, WrittenClasses(frame, np.asarray(sizes), escape))
    if width > 1:  # a row of several columns is never an empty line: only a line break stops the fast path
        breaks = any(v is not None and ("\n" in v or "\r" in v) for col in frame.iter_columns() for v in col)
        assert ran or breaks


FRAME = pl.DataFrame({"age": [25, 25, 40, 70], "sex": ["F", "M", "=F", None], "income": ["<=50K", ">50K", "-", "x"]})
SIZES = [3, 2, 4, 5]


@pytest.mark.parametrize("offset", [-1, 0, 1])
def test_compare_chunk_around_a_class(tmp_path, monkeypatch, offset):
    path, certificate = written(tmp_path, FRAME, SIZES, True)
    line = path.read_bytes().split(b"\n")[1] + b"\n"
    monkeypatch.setattr(classes, "COMPARE_CHUNK", 2 * len(line) + offset)
    assert same_tables(path, certificate, WrittenClasses(FRAME, np.asarray(SIZES), True))


@pytest.mark.parametrize("change", ["escape", "byte", "extra line", "missing line", "sizes", "header"])
def test_a_file_that_is_not_the_classes_is_scanned(tmp_path, change):
    path, certificate = written(tmp_path, FRAME, SIZES, True)
    wrote = WrittenClasses(FRAME, np.asarray(SIZES), True)
    text = path.read_bytes()
    if change == "escape":
        wrote = WrittenClasses(FRAME, np.asarray(SIZES), False)
    elif change == "byte":
        path.write_bytes(text[:-3] + (b"y" if text[-3:-2] != b"y" else b"z") + text[-2:])
    elif change == "extra line":
        path.write_bytes(text + text.split(b"\n")[1] + b"\n")
    elif change == "missing line":
        path.write_bytes(text[: text.rindex(b"\n", 0, len(text) - 1) + 1])
    elif change == "sizes":
        wrote = WrittenClasses(FRAME, np.asarray([2, 3, 4, 5]), True)
    else:
        path.write_bytes(text.replace(b"age", b"Age", 1))
    assert class_rows(path, wrote, certificate) is None


def test_line_breaks_empty_lines_and_parquet_are_scanned(tmp_path):
    broken = pl.DataFrame({"a": ["x\ny", "z"], "b": ["1", "2"]})
    path, certificate = written(tmp_path, broken, [2, 3], True)
    assert class_rows(path, WrittenClasses(broken, np.asarray([2, 3]), True), certificate) is None
    single = pl.DataFrame({"a": [None, "z"]}, schema={"a": pl.String})  # a null class is an empty line
    path, certificate = written(tmp_path, single, [2, 3], True)
    same_tables(path, certificate, WrittenClasses(single, np.asarray([2, 3]), True))  # agree, whichever ran
    parquet = tmp_path / "r.parquet"
    FRAME.write_parquet(parquet)
    assert class_rows(parquet, WrittenClasses(FRAME, np.asarray(SIZES), True), {"format_notes": []}) is None


@pytest.mark.parametrize("escape", [True, False])
def test_report_content_is_the_twins(tmp_path, escape):
    path, certificate = written(tmp_path, FRAME, SIZES, escape)
    rows = class_rows(path, WrittenClasses(FRAME, np.asarray(SIZES), escape), certificate)
    assert rows is not None
    frame, _ = build.read_release(path)
    fast, slow = report_content(rows, certificate, "r.csv", weighted=True), report_content(frame, certificate, "r.csv")
    for name in ("rows", "columns", "quasi_identifiers", "attributes", "utility", "risk"):
        assert getattr(fast, name) == getattr(slow, name)
    assert np.array_equal(fast.class_sizes, slow.class_sizes)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_publish_writes_the_page_the_files_rebuild(tmp_path, monkeypatch, suffix):
    from crowdsafe import api

    used: list[bool] = []
    original = classes.class_rows

    def spy(*args, **kwargs):
        rows = original(*args, **kwargs)
        used.append(rows is not None)
        return rows

    monkeypatch.setattr(classes, "class_rows", spy)
    out = tmp_path / f"adult{suffix}"
    api.publish("adult", epsilon=1.0, delta=1e-6, out=str(out), seed=4, ledger=None)
    assert used == [suffix == ".csv"]
    page = out.with_name("adult.report.html").read_text("utf-8")
    assert page == build.build_report(out)  # the twin: the file scanned row by row


def test_a_release_without_classes(tmp_path):
    empty = FRAME.clear()
    path, certificate = written(tmp_path, empty, [], True)
    assert same_tables(path, certificate, WrittenClasses(empty, np.zeros(0, dtype=np.int64), True))
    frame, _ = build.read_release(path)
    rows = class_rows(path, WrittenClasses(empty, np.zeros(0, dtype=np.int64), True), certificate)
    assert report_content(rows, certificate, "r.csv", weighted=True).rows == 0
    assert report_content(frame, certificate, "r.csv").rows == 0
