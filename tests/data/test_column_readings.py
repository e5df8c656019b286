"""Column types a Parquet file or a frame may hold beyond the usual ones (sweep ds5, items 3, 4, 9):
extension types (an Arrow ``json_``, a registered type, a pandas ``Period``) are refused in one line
or dropped like the other unusable types, before any charge (they were internal errors, a 500 in
the app, or months read as counts); ``UInt64`` values beyond int64 are read as text, exactly (they
were an OverflowError); ``Decimal`` of more than 15 digits and 128-bit integers, read as floats,
say so in a note (40 distinct amounts became 20 without a word)."""

from __future__ import annotations

import decimal
import sqlite3

import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from crowdsafe import api, cli
from crowdsafe.data import load
from crowdsafe.data.column_types import unusable_kind
from crowdsafe.data.streamed_table import load_or_stream
from crowdsafe.errors import SchemaError

N = 40
SEX = ["M", "F"] * (N // 2)
BIG = [2**64 - 1 - i for i in range(N)]


def _json_parquet(path):
    pq.write_table(pa.table({"x": pa.array(['{"a":1}', '{"b":2}'] * (N // 2), pa.json_()), "sex": SEX}), path)
    return path


def _ledger_entries(path) -> int:
    if not path.exists():
        return 0
    with sqlite3.connect(path) as db:
        tables = {r[0] for r in db.execute("select name from sqlite_master where type='table'")}
        counts = [db.execute(f"select count(*) from {t}").fetchone()[0] for t in ("datasets", "entries") if t in tables]
        return sum(counts)


def test_an_extension_type_is_unusable(tmp_path):
    dtype = pl.read_parquet(_json_parquet(tmp_path / "j.parquet")).schema["x"]
    assert unusable_kind(dtype) == ("a column of the extension type 'arrow.json' (stored as String; "
                                    "convert it to plain text or numbers to use it)")


@pytest.mark.parametrize("argv", [
    ["anonymize", "{p}", "--k", "2", "--out", "{d}/a.csv"],
    ["schema", "draft", "{p}", "--out", "{d}/s.toml"],
    ["query", "{p}", "count where x = 'a'", "--epsilon", "0.1", "--budget", "10,0"],  # (a query names it)
    ["ledger", "init", "{p}", "--epsilon", "1", "--delta", "1e-6"],
    ["perturb", "{p}", "--exploratory", "--d", "0.01", "--gamma", "0.5", "--max-rows", "100", "--out", "{d}/v.csv"],
    ["check", "{p}"],
])
def test_commands_refuse_an_extension_column_before_any_charge(tmp_path, monkeypatch, capsys, argv):
    ledger = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv("CROWDSAFE_LEDGER", str(ledger))
    path = _json_parquet(tmp_path / "j.parquet")
    code = cli.main([a.format(p=path, d=tmp_path) for a in argv])
    err = capsys.readouterr().err
    if argv[0] == "schema":  # the draft declares it an identifier, saying why
        draft = (tmp_path / "s.toml").read_text()
        assert code == 0 and "extension type 'arrow.json'" in draft, err
        assert 'role = "identifier"' in draft.split("[attributes.x]")[1]
        return
    assert code == 2, err
    line = [x for x in err.splitlines() if x.startswith("crowdsafe: error:")]
    assert line == [f"crowdsafe: error: column 'x' of {path} is a column of the extension type 'arrow.json' "
                    "(stored as String; convert it to plain text or numbers to use it), which crowdsafe cannot "
                    "publish, measure or query; declare it role = \"identifier\" in a schema, leave it out of "
                    "--qi/--sensitive, or drop it from the file"]
    assert _ledger_entries(ledger) == 0
    assert not (tmp_path / "a.csv").exists() and not (tmp_path / "v.csv").exists()


def test_an_extension_column_the_run_does_not_use_is_dropped(tmp_path, monkeypatch, capsys):
    path = _json_parquet(tmp_path / "j.parquet")
    assert load(path, qi=["sex"]).columns == ["sex"]
    assert "column 'x' of" in capsys.readouterr().err
    monkeypatch.setattr("crowdsafe.data.streaming.EAGER_BYTES", 0)  # the lazy scan decides the same
    with pytest.raises(SchemaError, match="extension type 'arrow.json'"):
        load_or_stream(path)


def test_a_pandas_period_is_not_read_as_month_counts():
    frame = pd.DataFrame({"month": pd.period_range("2020-01", periods=N, freq="M"), "sex": SEX})
    with pytest.raises(SchemaError, match="column 'month' of the data is a column of the extension type "
                                          "'pandas.period' \\(stored as Int64"):
        api.load(frame)
    with pytest.raises(SchemaError, match="pandas.period"):
        api.anonymize(frame, k=2)
    assert api.load(frame, qi=["sex"]).columns == ["sex"]


def _u64_parquet(path):
    pq.write_table(pa.table({"u": pa.array(BIG, pa.uint64()), "sex": SEX}), path)
    return path


def test_unsigned_values_beyond_int64_are_read_exactly_as_text(tmp_path, monkeypatch, capsys):
    path = _u64_parquet(tmp_path / "u.parquet")
    frame = load(path).frame
    assert frame.get_column("u").to_list() == [str(v) for v in BIG]
    note = capsys.readouterr().err
    assert f"{path}: column 'u' read as text: whole numbers beyond 64 bits" in note
    monkeypatch.setattr("crowdsafe.data.streaming.EAGER_BYTES", 0)
    streamed = load_or_stream(path)
    assert streamed.rows.collect().get_column("u").to_list() == [str(v) for v in BIG]
    capsys.readouterr()
    small = tmp_path / "small.parquet"  # values that fit are numbers, as before
    pq.write_table(pa.table({"u": pa.array(range(N), pa.uint64()), "sex": SEX}), small)
    assert load(small).frame.schema["u"] == pl.UInt64 and "read as text" not in capsys.readouterr().err


def test_unsigned_values_beyond_int64_in_the_commands(tmp_path, capsys):
    path = _u64_parquet(tmp_path / "u.parquet")
    assert cli.main(["check", str(path)]) == 0
    assert cli.main(["anonymize", str(path), "--k", "2", "--out", str(tmp_path / "a.csv")]) == 0
    capsys.readouterr()
    released = pl.read_csv(tmp_path / "a.csv", infer_schema=False).get_column("u").to_list()
    assert any(str(2**64 - 1) in cell for cell in released)
    assert api.check(pl.DataFrame({"u": pl.Series(BIG, dtype=pl.UInt64), "sex": SEX}), qi=["u", "sex"]
                     ).to_dict()["rows"] == N
    integer = tmp_path / "i.toml"
    integer.write_text('[attributes.u]\ntype = "integer"\n[attributes.sex]\ntype = "categorical"\n')
    assert cli.main(["check", str(path), "--schema", str(integer)]) == 2  # as a CSV's wide whole numbers
    assert "column 'u' is declared integer but row 1" in capsys.readouterr().err


def test_wide_decimals_and_128_bit_integers_say_they_are_rounded(tmp_path, capsys):
    amounts = [decimal.Decimal("12345678901234567.89") + i for i in range(N)]
    path = tmp_path / "d.parquet"
    pq.write_table(pa.table({"amount": pa.array(amounts, pa.decimal128(38, 2)), "sex": SEX}), path)
    frame = load(path).frame
    assert frame.get_column("amount").n_unique() < N  # rounded (floats): the note says so
    err = capsys.readouterr().err
    assert (f"{path}: column 'amount' (Decimal(38, 2)) read as 64-bit floats, which keep 15 significant digits: "
            "a value with more is rounded, and distinct values may become equal") in err
    wide = pl.DataFrame({"big": pl.Series([2**70 + i for i in range(N)], dtype=pl.Int128), "sex": SEX})
    api.load(wide, qi=["big"])
    assert "the data: column 'big' (Int128) read as 64-bit floats" in capsys.readouterr().err
    short = tmp_path / "short.parquet"  # 15 digits or fewer: floats keep them, no note
    pq.write_table(pa.table({"amount": pa.array([decimal.Decimal("1.25")] * N, pa.decimal128(10, 2)),
                             "sex": SEX}), short)
    load(short)
    assert "64-bit floats" not in capsys.readouterr().err
