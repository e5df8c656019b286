"""mechanisms/query_aggregates.public_table: a public histogram's grid of cells joined with the
counts, over Python lists (`_public_table_by_python`, up to PYTHON_GRID cells, text, integer or
boolean keys) or as one Polars query (`_public_table_by_polars`, the reference). Deterministic:
the same frame (values, dtypes, order), with missing keys, keys outside the domain, empty cells,
at the limit's −1, at it and +1."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from crowdsafe.mechanisms import query_aggregates as qa

NAMES = ["__crowdsafe_cell_a", "__crowdsafe_cell_b", "__crowdsafe_cell_c"]


def _case(seed: int, dims: int, dtype: pl.DataType) -> tuple[pl.DataFrame, list[str], list[pl.Series]]:
    rng = np.random.default_rng(seed)
    names = NAMES[:dims]
    pools = {pl.String: ["x", "y", "z", "w", "é", ""], pl.Int64: [3, -1, 0, 7, 12, 5], pl.Boolean: [True, False]}
    pool = pools[dtype]
    parts = []
    for name in names:
        size = int(rng.integers(1, len(pool) + 1))
        values = [pool[i] for i in rng.permutation(len(pool))[:size]]
        if rng.random() < 0.3:
            values.append(None)  # a public domain may hold the missing value
        parts.append(pl.Series(name, values, dtype=dtype))
    # counts of distinct cells, some outside the domain (other values, or missing ones)
    rows = set()
    for _ in range(int(rng.integers(0, 25))):
        rows.add(tuple(pool[int(rng.integers(len(pool)))] if rng.random() > 0.1 else None for _ in names))
    listed = sorted(rows, key=repr)
    counts = pl.DataFrame({n: pl.Series(n, [r[j] for r in listed], dtype=dtype) for j, n in enumerate(names)}
                          | {"count": pl.Series("count", rng.integers(1, 50, len(listed)), dtype=pl.UInt32)})
    return counts, names, parts


@pytest.mark.parametrize("dtype", [pl.String, pl.Int64, pl.Boolean])
@pytest.mark.parametrize("dims", [1, 2, 3])
@pytest.mark.parametrize("seed", range(8))
def test_python_and_polars_grids_agree(dtype, dims, seed):
    counts, names, parts = _case(seed, dims, dtype)
    fast = qa._public_table_by_python(counts, names, parts)
    reference = qa._public_table_by_polars(counts, names, parts)
    assert fast is not None
    assert fast.schema == reference.schema and fast.equals(reference, null_equal=True)


def test_a_cell_counted_twice_is_left_to_the_join():
    parts = [pl.Series(NAMES[0], ["x", "y"])]
    counts = pl.DataFrame({NAMES[0]: ["x", "x"], "count": pl.Series([1, 2], dtype=pl.UInt32)})
    assert qa._public_table_by_python(counts, NAMES[:1], parts) is None
    table = qa.public_table(counts, NAMES[:1], parts)
    assert table.equals(qa._public_table_by_polars(counts, NAMES[:1], parts))


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_public_table_switches_at_python_grid(monkeypatch, shift):
    counts, names, parts = _case(3, 3, pl.String)
    cells = math.prod(len(p) for p in parts)
    monkeypatch.setattr(qa, "PYTHON_GRID", max(cells, counts.height) + shift)
    used = []
    real = qa._public_table_by_python
    monkeypatch.setattr(qa, "_public_table_by_python", lambda *a: used.append(1) or real(*a))
    table = qa.public_table(counts, names, parts)
    assert table.equals(qa._public_table_by_polars(counts, names, parts), null_equal=True)
    assert bool(used) == (shift >= 0)


@pytest.mark.parametrize("key", ["float", "categorical"])
def test_float_and_categorical_keys_take_the_join(monkeypatch, key):
    if key == "float":
        parts = [pl.Series(NAMES[0], [0.0, 1.5, float("nan")])]
        counts = pl.DataFrame({NAMES[0]: [float("nan"), 1.5, 2.0], "count": pl.Series([1, 2, 3], dtype=pl.UInt32)})
    else:
        parts = [pl.Series(NAMES[0], ["a", "b"], dtype=pl.Categorical)]
        counts = pl.DataFrame({NAMES[0]: pl.Series(["b", "c"], dtype=pl.Categorical),
                               "count": pl.Series([1, 2], dtype=pl.UInt32)})
    used = []
    real = qa._public_table_by_python
    monkeypatch.setattr(qa, "_public_table_by_python", lambda *a: used.append(1) or real(*a))
    table = qa.public_table(counts, NAMES[:1], parts)
    assert not used and table.equals(qa._public_table_by_polars(counts, NAMES[:1], parts), null_equal=True)
