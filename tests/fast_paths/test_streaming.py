"""The frequency table of a file (data/streaming): read whole (``_frequency_by_eager_read``) or
streamed (``_frequency_by_streaming``), the same table, on either side of ``reads_eagerly``
(``EAGER_BYTES`` patched to the file's size)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from polars.testing import assert_frame_equal

from crowdsafe.data import streaming
from crowdsafe.datasets.synthetic import write_synthetic_parts

COLUMNS = ["age", "sex", "native-country", "income"]


@pytest.fixture(scope="module")
def parts(tmp_path_factory):
    folder = tmp_path_factory.mktemp("parts") / "table.parquet"
    write_synthetic_parts(25_000, folder, seed=4, part_rows=10_000)
    return folder


@pytest.fixture(scope="module")
def csv_file(tmp_path_factory):
    """Blanks around names and values, missing tokens, numbers written as text two ways."""
    rng = np.random.default_rng(1)
    n = 3000
    lines = [" a , b ,c"]
    for _ in range(n):
        a = rng.choice([" x", "y ", "?", "z"])
        b = rng.choice(["1", "01", " 2", "NA", "3.0"])
        c = rng.integers(0, 4)
        lines.append(f"{a},{b},{c}")
    path = tmp_path_factory.mktemp("csv") / "t.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def _both(path, columns, monkeypatch, **options):
    size = streaming.disk_bytes(path)
    tables = []
    for limit, eager in ((size - 1, False), (size, True), (size + 1, True)):
        monkeypatch.setattr(streaming, "EAGER_BYTES", limit)
        assert streaming.reads_eagerly(path) is eager
        tables.append(streaming.frequency_table(path, columns, **options))
    assert_frame_equal(tables[0], tables[1])
    assert_frame_equal(tables[0], tables[2])
    return tables[0]


def test_parquet_folder(parts, monkeypatch):
    table = _both(parts, COLUMNS, monkeypatch)
    assert table.get_column("count").sum() == 25_000
    whole = pl.read_parquet(sorted(parts.glob("*.parquet")))
    assert table.height == whole.select(COLUMNS).unique().height


def test_parquet_file(parts, monkeypatch):
    one = sorted(parts.glob("*.parquet"))[0]
    assert _both(one, ["workclass", "age"], monkeypatch).get_column("count").sum() == 10_000


def test_csv_tidied_as_the_eager_reader(csv_file, monkeypatch):
    table = _both(csv_file, ["a", "b"], monkeypatch)
    assert table.get_column("count").sum() == 3000
    assert table.schema["b"] == pl.Float64  # "1", "01" and "3.0" as numbers, merged
    assert set(table.get_column("a").to_list()) == {"x", "y", "z", None}


def test_refuses_an_absent_column(parts):
    from crowdsafe.errors import InputError

    with pytest.raises(InputError, match="no column 'nope'"):
        streaming.frequency_table(parts, ["nope"])
