"""A numeric column holds integers or reals as its schema declares, never as its values decide.

Without it a CSV column of whole numbers was read as integers until one row held 40.5, and that
one row changed what every run showed of the column: a query's mechanism and noise scale (a sum
on a grid of 2^-7 or of 1), a histogram's public cells (40.5 silently dropped), the release's
cells (``40.0`` against ``40``), an α-β view's declared domain (half the values cut), a hierarchy
refused after the charge (docs/privacy-boundary.md, "How a column holds its numbers").

D− is a table of whole numbers; D is D− plus one row. With ``type = "real"`` (D adds 40.5) or
``type = "integer"`` (D adds a row written ``40.0``) every public field but the DP outputs is
the same on both, with the same seed. A plain ``type = "numeric"`` is certified not fit for
release on both, with the same reason. What the declared type cannot hold is refused before the
charge, from the schema and the parameters alone. The broken variant (the values decide again)
is caught by the same comparison.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

SCHEMA = """[attributes.age]
type = "integer"
hierarchy = {{ widths = [10, 20] }}
[attributes.sex]
type = "categorical"
[attributes.hours]
type = "{hours}"
{hierarchy}
[attributes.income]
type = "categorical"
role = "sensitive"
"""

QUERY = ["--epsilon", "1", "--no-ledger", "--seed", "7", "--json"]
# every field a query answer computes from its noisy value (the rest must not move)
QUERY_DP = {"value", "components", "error_interval_95"}


def _base(rows: int = 300) -> pl.DataFrame:
    rng = np.random.default_rng(3)
    return pl.DataFrame({"age": rng.integers(18, 80, rows), "sex": rng.choice(["F", "M"], rows),
                         "hours": rng.integers(38, 43, rows), "income": rng.choice(["<=50K", ">50K"], rows)})


def _write(folder: Path, frame: pl.DataFrame, extra_hours: str | None, hours: str, hierarchy: str = "") -> Path:
    """``frame`` as CSV in ``folder`` (hours written as the row holds them), plus one row whose hours
    are written ``extra_hours``, and the schema."""
    folder.mkdir(parents=True)
    lines = [",".join(frame.columns)] + [",".join(str(v) for v in row) for row in frame.iter_rows()]
    if extra_hours is not None:
        lines.append(f"40,M,{extra_hours},<=50K")
    (folder / "data.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (folder / "schema.toml").write_text(SCHEMA.format(hours=hours, hierarchy=hierarchy), encoding="utf-8")
    listed = [*range(20, 60), 40.5] if hours == "integer" else [h / 2 for h in range(40, 120)]
    (folder / "domains.json").write_text(json.dumps({"sex": ["F", "M"], "hours": listed}), encoding="utf-8")
    return folder


def _run(folder: Path, argv: list[str]) -> tuple[int, Any, str]:
    from crowdsafe.cli import main

    here = os.getcwd()
    os.chdir(folder)
    out, err = io.StringIO(), io.StringIO()
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(argv)
    finally:
        os.chdir(here)
    text = out.getvalue()
    return code, json.loads(text) if code == 0 and "--json" in argv else text, err.getvalue()


def _pair(tmp_path: Path, extra_hours: str, hours: str, hierarchy: str = "", rows: int = 300) -> tuple[Path, Path]:
    base = _base(rows)
    return (_write(tmp_path / "D", base, extra_hours, hours, hierarchy),
            _write(tmp_path / "D-", base, None, hours, hierarchy))


def _public(answer: dict[str, Any], dp: set[str]) -> dict[str, Any]:
    return {k: v for k, v in answer.items() if k not in dp and "custodian" not in k}


def _query_differences(tmp_path: Path, extra_hours: str, hours: str) -> list[str]:
    """The public fields of three queries that differ between D and D− (their DP values aside);
    a histogram's cells are public (the query lists them), only their counts are DP outputs."""
    d, d_minus = _pair(tmp_path, extra_hours, hours)
    found = []
    cells = "(40, 40.5, 41)" if hours == "real" else "(40, 41, 42)"
    for text in ("sum(hours) clamp 30..50", "quantile(hours, 0.5) clamp 0..99", f"histogram hours in {cells}"):
        (code_d, d_out, _), (code_m, m_out, _) = (_run(f, ["query", "data.csv", text, "--schema", "schema.toml",
                                                            *QUERY]) for f in (d, d_minus))
        if (code_d, code_m) != (0, 0):
            found.append(f"{text}: exit {code_d} against {code_m}")
            continue
        if _public(d_out, QUERY_DP) != _public(m_out, QUERY_DP):
            found.append(f"{text}: {sorted(k for k in d_out if d_out.get(k) != m_out.get(k))}")
        mechanisms = [c["mechanism"] for c in d_out["components"].values()], \
            [c["mechanism"] for c in m_out["components"].values()]
        if mechanisms[0] != mechanisms[1]:
            found.append(f"{text}: mechanism {mechanisms}")
        if text.startswith("histogram") and [c["hours"] for c in d_out["value"]] != \
                [c["hours"] for c in m_out["value"]]:
            found.append(f"{text}: cells")
    return found


def test_declared_real_reads_both_tables_alike_in_every_query(tmp_path):
    assert _query_differences(tmp_path, "40.5", "real") == []


def test_declared_integer_reads_a_whole_number_written_with_a_point_as_an_integer(tmp_path):
    assert _query_differences(tmp_path, "40.0", "integer") == []


def test_the_values_deciding_again_is_caught(tmp_path, monkeypatch):
    """The broken variant: the declared kind ignored (the loader's own guess kept), so the row
    with 40.5 makes the column reals on D only. The comparison above must see it."""
    from crowdsafe.data import coerce, pipeline

    monkeypatch.setattr(coerce, "declared_numbers", lambda frame, schema, source: frame)
    monkeypatch.setattr(pipeline, "declared_numbers", lambda frame, schema, source: frame)
    assert _query_differences(tmp_path, "40.5", "real")  # the sum's grid and noise scale move


def _release(folder: Path) -> tuple[int, dict[str, Any], pl.DataFrame | None]:
    code, out, _ = _run(folder, ["publish", "data.csv", "--schema", "schema.toml", "--epsilon", "1", "--delta",
                                 "1e-6", "--scheme", "age=3,sex=1", "--no-ledger", "--seed", "7", "--out",
                                 "out/r.csv", "--json", "--no-report"])
    return code, out, pl.read_csv(folder / "out" / "r.csv", infer_schema=False) if code == 0 else None


def test_a_release_shows_a_declared_real_column_alike_on_both_tables(tmp_path):
    """The 40.5 row is published or not (a DP outcome), but every other cell of the column is
    written the same way on both tables: as a real."""
    d, d_minus = _pair(tmp_path, "40.5", "real", rows=3000)
    (code_d, d_out, d_rows), (code_m, m_out, m_rows) = _release(d), _release(d_minus)
    assert code_d == code_m == 0
    assert d_rows is not None and m_rows is not None
    for rows in (d_rows, m_rows):
        assert rows.height > 0 and rows.get_column("hours").str.contains(r"^\d+\.\d+$").all()
    whole = d_rows.filter(pl.col("hours") != "40.5")
    assert sorted(whole.get_column("hours").unique()) == sorted(m_rows.get_column("hours").unique())
    for out in (d_out, m_out):  # what the release's rows decide: the DP output
        out.pop("custodian_only")
        for release in out["releases"]:
            del release["dp_output"]["rows_published"], release["dp_output"]["classes"]
    assert d_out == m_out


def test_a_plain_numeric_column_is_not_fit_for_release_on_either_table(tmp_path):
    from crowdsafe.data.schema import NUMBERS_FROM_DATA

    d, d_minus = _pair(tmp_path, "40.5", "numeric")
    reasons = []
    for folder in (d, d_minus):
        code, out, _ = _run(folder, ["query", "data.csv", "sum(hours) clamp 30..50", "--schema", "schema.toml",
                                     *QUERY])
        assert code == 0 and out["unreviewed_schema"] == {"hours": [NUMBERS_FROM_DATA]}
        reasons.append(out["unfit_reasons"])
    assert reasons[0] == reasons[1] and any('declare type = "integer" or type = "real"' in r for r in reasons[0])
    # a query that does not read the column is not marked
    code, out, _ = _run(d, ["query", "data.csv", "count where sex = 'F'", "--schema", "schema.toml", *QUERY])
    assert code == 0 and not out.get("unreviewed_schema") and "unfit_reasons" not in out


@pytest.mark.parametrize("command", ["histogram", "hierarchy", "domains"])
def test_what_a_declared_integer_cannot_hold_is_refused_before_the_charge(tmp_path, command):
    """A histogram cell, a hierarchy leaf or an α-β domain value of 40.5 on a column declared
    integer: refused with one line naming the value, the same on both tables, nothing charged."""
    hierarchy = 'hierarchy = "hours.csv"' if command == "hierarchy" else ""
    d, d_minus = _pair(tmp_path, "41", "integer", hierarchy)
    argv = {
        "histogram": ["query", "data.csv", "histogram hours in (40, 40.5, 41)", "--schema", "schema.toml",
                      "--epsilon", "1", "--ledger", "ledger.sqlite3", "--budget", "10,1e-5", "--seed", "7"],
        "hierarchy": ["publish", "data.csv", "--schema", "schema.toml", "--epsilon", "1", "--delta", "1e-6",
                      "--ledger", "ledger.sqlite3", "--budget", "10,1e-5", "--seed", "7", "--out", "out/r.csv"],
        "domains": ["perturb", "data.csv", "--schema", "schema.toml", "--gamma", "0.2", "--d", "0.1",
                    "--attributes", "sex,hours", "--domains", "domains.json", "--max-rows", "1000",
                    "--ledger", "ledger.sqlite3", "--budget", "10,1e-5", "--seed", "7", "--out", "out/view.csv"],
    }[command]
    messages = []
    for folder in (d, d_minus):
        leaves = [*range(20, 70), 40.5]  # whole numbers, and one the column cannot hold
        (folder / "hours.csv").write_text("".join(f"{h};{int(h) // 10 * 10}s;*\n" for h in leaves), encoding="utf-8")
        code, out, err = _run(folder, argv)
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "40.5" in err and ("nothing was charged" in err or "drop it" in err), err
        assert not (folder / "out").exists()
        messages.append(err)
        if (folder / "ledger.sqlite3").exists():
            _, listed, _ = _run(folder, ["ledger", "show", "--ledger", "ledger.sqlite3", "--json"])
            assert "dps-release" not in json.dumps(listed) and "query" not in json.dumps(listed).replace(
                '"queries"', "")
    assert messages[0] == messages[1]


def test_a_declared_integer_refuses_a_value_with_a_fraction_naming_its_row(tmp_path):
    d, _ = _pair(tmp_path, "40.5", "integer")
    code, _, err = _run(d, ["query", "data.csv", "count", "--schema", "schema.toml", *QUERY])
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "declared integer" in err and "row 301" in err and "40.5" in err and 'type = "real"' in err


def test_intervals_take_the_columns_type_not_the_values():
    """A ``widths`` builder over a column of reals whose values are all whole gives real leaves
    (it gave integer ones, so the release's type hung on whether some value had a fraction)."""
    from crowdsafe.data.builders import intervals

    reals = intervals("x", [20.0, 30.0, 40.0], widths=[10], dtype=pl.Float64)
    whole = intervals("x", [20, 30, 40], widths=[10], dtype=pl.Int64)
    assert reals.leaves.dtype == pl.Float64 and whole.leaves.dtype == pl.Int64
    assert intervals("x", range(3), widths=[10]).leaves.dtype == pl.Int64  # values given in code: as before


@pytest.mark.parametrize("kind, extra", [("real", "40.5"), ("integer", "40.0")])
def test_a_file_read_batch_by_batch_holds_the_declared_type_too(tmp_path, monkeypatch, kind, extra):
    """Every file streamed (the reader's batches typed from its distinct values): the same."""
    import crowdsafe.data.streaming as streaming

    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    assert _query_differences(tmp_path, extra, kind) == []


@pytest.mark.spark
def test_the_spark_engine_holds_the_declared_type_too(tmp_path):
    """A Parquet file of D (hours Float64: it holds 40.5) and of D− (Int64), declared real: the
    Spark engine's query and release read both as reals, as the Polars engine does."""
    d, d_minus = _pair(tmp_path, "40.5", "real", rows=3000)
    seen = []
    for folder in (d, d_minus):
        pl.read_csv(folder / "data.csv", infer_schema_length=None).write_parquet(folder / "data.parquet")
        code, out, _ = _run(folder, ["query", "data.parquet", "sum(hours) clamp 30..50", "--schema", "schema.toml",
                                     "--engine", "spark", *QUERY])
        assert code == 0
        code, _, err = _run(folder, ["publish", "data.parquet", "--schema", "schema.toml", "--engine", "spark",
                                     "--epsilon", "1", "--delta", "1e-6", "--scheme", "age=3,sex=1", "--no-ledger",
                                     "--seed", "7", "--out", "out/r.parquet", "--no-report"])
        assert code == 0, err
        released = pl.read_parquet(folder / "out" / "r.parquet")
        seen.append((out["mechanism"], out["noise_scale"], released.schema["hours"]))
    assert seen[0] == seen[1] and seen[0][2] == pl.Float64


def _undeclared_runs(folder: Path) -> dict[str, Any]:
    """A query and an α-β view of ``folder``'s CSV with no schema (every type inferred from the
    values), unseeded: what each says of its fitness for release."""
    found: dict[str, Any] = {}
    for text in ("sum(hours) clamp 30..50", "quantile(hours, 0.5) clamp 0..99"):
        code, out, err = _run(folder, ["query", "data.csv", text, "--epsilon", "1", "--no-ledger", "--json"])
        assert code == 0, err
        fit = out["randomness"]["fit_for_release"] and "unfit_reasons" not in out
        found[text] = (fit, out.get("unreviewed_schema"), out.get("unfit_reasons"))
    # whole hours: a list both an inferred integer and an inferred real column can hold
    (folder / "whole.json").write_text(json.dumps({"sex": ["F", "M"], "hours": list(range(20, 60))}), encoding="utf-8")
    code, _, err = _run(folder, ["perturb", "--no-ledger", "data.csv", "--gamma", "0.2", "--d", "0.1",
                                 "--attributes", "sex,hours",
                                 "--domains", "whole.json", "--max-rows", "1000", "--out", "out/view.csv"])
    assert code == 0, err
    certificate = json.loads((folder / "out" / "view.certificate.json").read_text(encoding="utf-8"))
    found["perturb"] = (certificate["fit_for_release"], certificate.get("unreviewed_schema"),
                        certificate.get("unfit_reasons"))
    return found


def test_without_a_schema_queries_and_views_are_not_fit_for_release_on_either_table(tmp_path):
    """With no schema, one row of 40.5 makes the inferred column reals: the query's grid, its
    sensitivity and candidates, the view's domain type and cells all follow the values. Nothing
    can make that data-independent, so both tables' runs say the same thing: not fit for
    release, schema inferred (as publish says of an inferred schema)."""
    d, d_minus = _pair(tmp_path, "40.5", "real")
    on_d, on_minus = _undeclared_runs(d), _undeclared_runs(d_minus)
    assert on_d == on_minus
    for fit, markers, reasons in on_d.values():
        assert fit is False and "hours" in markers
        assert any(r.startswith("schema inferred from the data") for r in reasons)


def test_the_inferred_types_passing_as_declared_is_caught(tmp_path, monkeypatch):
    """The broken variant: the runs ask only for the reading markers, not the inferred type (as
    before this check): D's unseeded query and view then claim to be fit for release."""
    from crowdsafe.data.schema import Schema

    real = Schema.unreviewed
    monkeypatch.setattr(Schema, "unreviewed", lambda self, names, keys=None: real(
        self, names, [k for k in keys if k != "type"] if keys is not None else None))
    d, _ = _pair(tmp_path, "40.5", "real")
    assert any(fit for fit, _, _ in _undeclared_runs(d).values())
