"""The Spark sample counter's twins (engines/spark/sampling): the packed key looked up on the JVM
(``PackedSampleCounter``) and the raw values encoded in Python (``SampleCounter``) draw the same
sample and count it the same, on either side of the rule ``packs_on_jvm`` (``PACK_LIMIT``,
``JVM_DICTIONARY_LIMIT`` patched to the data's own values)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import packing
from crowdsafe.engines.spark import sampling
from crowdsafe.randomness import Randomness

pytestmark = pytest.mark.spark



@pytest.fixture(scope="module")
def case(spark):
    """Rows (text with nulls, integers, booleans) in 3 partitions, their dictionaries (several
    spellings share a code, codes not dense) and a map to a coarser level."""
    rng = np.random.default_rng(5)
    n = 30_000
    text = np.array(["a", "b", " c", "c", "dd", None], dtype=object)[rng.integers(0, 6, n)]
    frame = pl.DataFrame({"t": list(text), "i": rng.integers(-3, 40, n), "b": rng.random(n) < 0.3})
    data = spark.createDataFrame(frame.to_arrow()).repartition(3)  # a fixed partitioning for seeded runs
    dictionaries = (
        pl.DataFrame({"value": ["a", "b", " c", "c", "dd", None], "code": [0, 1, 2, 2, 4, 5]}),
        pl.DataFrame({"value": list(range(-3, 40)), "code": list(range(43))}),
        pl.DataFrame({"value": [False, True], "code": [1, 0]}),
    )
    coarse = (np.array([0, 0, 1, 1, 1, 2]), None, np.array([0, 0]))
    return data, dictionaries, coarse


def _run(case, maps, seed=9):
    data, dictionaries, _ = case
    streams = sampling.PartitionStreams.from_randomness(Randomness(seed=seed))
    return sampling.count_sample(data, streams, 0.4, dictionaries, maps)


def _same(a, b):
    assert np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])


@pytest.mark.parametrize("coarse", [False, True])
def test_twins_agree_at_the_pack_limit(case, coarse, monkeypatch):
    data, dictionaries, levels = case
    maps = levels if coarse else (None, None, None)
    grid = packing.span(sampling.radices_of(dictionaries))
    types = [f.dataType.simpleString() for f in data.schema.fields]
    results = {}
    for limit, fast in ((grid - 1, False), (grid, False), (grid + 1, True)):
        monkeypatch.setattr(sampling, "PACK_LIMIT", limit)
        assert sampling.packs_on_jvm(types, dictionaries) is fast
        results[limit] = _run(case, maps)
    _same(results[grid - 1], results[grid + 1])
    _same(results[grid], results[grid + 1])
    assert results[grid + 1][1].sum() > 0


def test_twins_agree_at_the_dictionary_limit(case, monkeypatch):
    data, dictionaries, _ = case
    largest = max(d.height for d in dictionaries)
    types = [f.dataType.simpleString() for f in data.schema.fields]
    results = []
    for limit, fast in ((largest - 1, False), (largest, True), (largest + 1, True)):
        monkeypatch.setattr(sampling, "JVM_DICTIONARY_LIMIT", limit)
        assert sampling.packs_on_jvm(types, dictionaries) is fast
        results.append(_run(case, (None, None, None), seed=3))
    _same(results[0], results[1])
    _same(results[0], results[2])


def test_other_types_take_the_twin():
    dictionary = pl.DataFrame({"value": [0.5, 1.5], "code": [0, 1]})
    assert not sampling.packs_on_jvm(["double"], [dictionary])
    assert sampling.packs_on_jvm(["bigint"], [dictionary.with_columns(pl.col("value").cast(pl.Int64))])
