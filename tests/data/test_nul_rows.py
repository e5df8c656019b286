"""A NUL character (byte 0) in the custodian's table is refused before any charge (ds6 #3),
naming where it lies: the line of a CSV file, the column and data row of a compressed CSV or
a Parquet file. Where it lies is a fact about the data, so the refusal carries the
custodian-only label (docs/privacy-boundary.md), in one line."""

from __future__ import annotations

import gzip

import polars as pl
import pytest

from crowdsafe import cli
from crowdsafe.data.io import read_table
from crowdsafe.errors import CUSTODIAN_REFUSAL, InputError

ROWS = "".join(f"{20 + i % 50},{'FM'[i % 2]},flu\n" for i in range(30_000))  # past the sniffed 64 KiB


def _late_nul(tmp_path, name):
    text = "age,sex,disease\n" + ROWS + "31,F,fl\x00u\n"
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(text.encode()))
    elif name.endswith(".parquet"):
        pl.read_csv(text.encode(), infer_schema=False).write_parquet(path)
    else:
        path.write_text(text)
    return path


IN_A_CELL = "column 'disease' holds a NUL character (byte 0), data row 30,001"


@pytest.mark.parametrize(("name", "where"), [("t.csv", "line 30,002 holds"), ("t.csv.gz", IN_A_CELL),
                                             ("t.parquet", IN_A_CELL)])
def test_a_nul_in_the_rows_is_refused_as_a_custodian_only_fact(tmp_path, name, where):
    path = _late_nul(tmp_path, name)
    with pytest.raises(InputError) as refused:
        read_table(path)
    assert where in str(refused.value)
    assert str(refused.value).endswith(CUSTODIAN_REFUSAL)


def test_the_command_line_prints_the_labelled_refusal_in_one_line(tmp_path, capsys):
    path = _late_nul(tmp_path, "t.csv")
    assert cli.main(["check", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "line 30,002 holds a NUL character" in err
    assert err.rstrip("\n").endswith(CUSTODIAN_REFUSAL)
