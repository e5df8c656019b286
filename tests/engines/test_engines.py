"""The engine switch and the per-partition streams (no Spark needed)."""

import pickle

import numpy as np
import pytest

from crowdsafe.engines import check_engine
from crowdsafe.engines.spark.streams import PartitionStreams
from crowdsafe.errors import ParameterError
from crowdsafe.randomness import Randomness


def test_engine_names():
    assert check_engine(None) == "polars"
    assert check_engine(" Spark ") == "spark"
    with pytest.raises(ParameterError, match="unknown engine 'dask'"):
        check_engine("dask")


def test_seeded_partition_streams_are_reproducible_and_distinct():
    recipe = PartitionStreams.from_randomness(Randomness(seed=7))
    again = PartitionStreams.from_randomness(Randomness(seed=7))
    assert recipe == again and not recipe.fit_for_release
    shipped = pickle.loads(pickle.dumps(recipe))
    first = shipped.for_partition(0).generator.integers(0, 2**62, 8)
    assert np.array_equal(first, recipe.for_partition(0).generator.integers(0, 2**62, 8))
    second = recipe.for_partition(1).generator.integers(0, 2**62, 8)
    assert not np.array_equal(first, second)
    assert recipe.for_partition(3).seeded


def test_release_partition_streams_carry_no_key():
    recipe = PartitionStreams.from_randomness(Randomness())
    assert recipe.fit_for_release and recipe.entropy is None
    a = recipe.for_partition(0).generator.integers(0, 2**62, 4)
    b = recipe.for_partition(0).generator.integers(0, 2**62, 4)
    assert not np.array_equal(a, b)  # each call keys itself from the OS
    assert recipe.for_partition(0).fit_for_release


def test_hash_limb_sums_give_the_sum_modulo_2_64():
    """The table pass sums each 64-bit hash as three unsigned limbs (longs, not decimals); put
    back together they are the signed hashes' sum modulo 2^64, as the digest takes it."""
    import random

    from crowdsafe.engines.spark import fingerprint as fp

    rng = random.Random(3)
    for n in (0, 1, 1000):
        columns = [[rng.randrange(-2**63, 2**63) for _ in range(n)] for _ in fp.HASH_COLUMNS]
        if n:
            columns[0][0], columns[1][0] = -1, -2**63  # the extremes
        limbs = []
        for values in columns:
            for shift, width in ((0, 21), (21, 21), (42, 22)):
                limbs.append(sum(((v & (2**64 - 1)) >> shift) & ((1 << width) - 1) for v in values) if n else None)
        assert fp.combine_sums(limbs) == [sum(values) & (2**64 - 1) for values in columns]
