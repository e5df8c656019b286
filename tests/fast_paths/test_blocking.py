"""Computations done block by block to bound memory: the block size changes nothing.

- models/closeness: hierarchical and ordered EMD over blocks of classes (_BLOCK_CELLS entries);
- metrics/workload.answer: the workload's queries in blocks of (query x cell) entries (_BLOCK).
Each is run with blocks of one class / query, of a few, at the sizes around the whole table,
and with the default.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import Dataset, Hierarchy, Schema
from crowdsafe.data.generalized import CellTable
from crowdsafe.metrics import make_workload, workload
from crowdsafe.models import closeness, syntactic

LEAVES = ["a", "b", "c", "d", "e", "f"]
DISEASE = Hierarchy.from_columns("disease", LEAVES, [["ab", "ab", "cd", "cd", "ef", "ef"], ["*"] * 6])


def frame(n: int = 90) -> pl.DataFrame:
    rng = np.random.default_rng(9)
    return pl.DataFrame({"zip": rng.integers(0, 20, n).tolist(), "age": rng.integers(20, 30, n).tolist(),
                         "disease": rng.choice(LEAVES, n).tolist()})


@pytest.mark.parametrize("ground", ["hierarchical", "ordered"])
def test_emd_does_not_depend_on_the_block_size(monkeypatch, ground):
    schema = Schema.of({"zip": "numeric", "age": "numeric", "disease": "ordinal" if ground == "ordered"
                        else "categorical"}, qi=["zip"], sensitive=["disease"])
    data = Dataset(frame(), schema, {"disease": DISEASE})
    _, counts = syntactic._sensitive(data, "disease", ["zip"], None)
    hierarchy = DISEASE if ground == "hierarchical" else None
    expected = closeness.emd_per_class(counts, ground, hierarchy)
    width = len(LEAVES)
    n = counts.n_classes
    for classes_per_block in (1, 2, 3, n - 1, n, n + 1):
        for extra in (-1, 0, 1):  # entries just below, at and above a whole number of classes
            monkeypatch.setattr(closeness, "_BLOCK_CELLS", max(classes_per_block * width + extra, 1))
            assert np.array_equal(closeness.emd_per_class(counts, ground, hierarchy), expected)


def test_workload_answers_do_not_depend_on_the_block_size(monkeypatch):
    schema = Schema.of({"zip": "numeric", "age": "numeric", "disease": "categorical"},
                       qi=["zip", "age"], sensitive=["disease"])
    data = Dataset(frame(), schema, {})
    queries = make_workload(data, ["zip", "age"], queries=40, max_attributes=2, seed=3)
    table = CellTable.of_original(data, ["zip", "age"])
    expected = workload.answer(table, queries)
    cells = len(table.counts)
    for queries_per_block in (1, 2, 3, 39, 40, 41):
        for extra in (-1, 0, 1):
            monkeypatch.setattr(workload, "_BLOCK", max(queries_per_block * cells + extra, 1))
            assert np.array_equal(workload.answer(table, queries), expected)


@pytest.mark.parametrize("chunk_rows", [1, 2, 4, 5, 6, 9, 10, 11, 8192])
def test_spark_chunk_plan_writes_every_class_whole(chunk_rows):
    """engines/spark/write.class_rows explodes each class in pieces of at most CHUNK_ROWS rows:
    the pieces of a class add up to its size, classes in order, around the sizes (5, 10)."""
    from crowdsafe.engines.spark.write import chunk_plan

    sizes = np.array([5, 0, 10, 1, 11, 4], dtype=np.int64)
    which, repeat = chunk_plan(sizes, chunk_rows)
    assert np.all(np.diff(which) >= 0) and np.all((repeat >= 1) & (repeat <= chunk_rows))
    assert np.bincount(which, weights=repeat, minlength=len(sizes)).astype(np.int64).tolist() == sizes.tolist()


# the last: the best n lies 4 past the first candidate
@pytest.mark.parametrize("k, beta, epsilon", [(5, 0.1, 1.0), (20, 0.3, 0.5), (50, 0.6, 2.0)])
def test_dps_delta_does_not_depend_on_the_search_block(monkeypatch, k, beta, epsilon):
    """privacy/dps._search scans candidate n in blocks of _BLOCK: the δ found is the same for
    blocks of 1, a few, and the default."""
    import functools

    from crowdsafe.privacy import dps

    def fresh(block):
        monkeypatch.setattr(dps, "_BLOCK", block)
        for name in dir(dps):  # no cached δ from another block size
            cached = getattr(dps, name)
            if isinstance(cached, functools._lru_cache_wrapper):
                cached.cache_clear()
        return dps.dps_delta(k, beta, epsilon), dps.dps_delta(k, beta, epsilon, epsilon1=epsilon / 10)

    expected = fresh(2048)
    for block in (1, 2, 3, 7, 64, 2047, 2049):
        assert fresh(block) == expected, block
