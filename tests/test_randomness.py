"""Randomness: secure by default, reproducible only when seeded, and labelled accordingly."""

from __future__ import annotations

import numpy as np
import pytest

from crowdsafe.errors import ParameterError
from crowdsafe.randomness import Randomness, as_randomness


def test_default_stream_is_secure_and_fit_for_release():
    r = Randomness()
    assert not r.seeded and r.fit_for_release
    assert r.describe()["fit_for_release"] is True


def test_two_secure_streams_differ():
    assert not np.array_equal(Randomness().generator.random(8), Randomness().generator.random(8))


def test_seeded_stream_is_reproducible_and_not_fit_for_release():
    a, b = Randomness(7), Randomness(7)
    assert np.array_equal(a.generator.random(16), b.generator.random(16))
    assert a.seeded and not a.fit_for_release
    assert a.describe() == {
        "source": "ChaCha20, seeded",
        "seeded": True,
        "reproducible": True,
        "fit_for_release": False,
    }


def test_spawned_streams_are_distinct_and_reproducible():
    first = [s.generator.random(4) for s in Randomness(3).spawn(3)]
    again = [s.generator.random(4) for s in Randomness(3).spawn(3)]
    for x, y in zip(first, again):
        assert np.array_equal(x, y)
    assert not np.array_equal(first[0], first[1])


def test_bernoulli_rate_matches_probability():
    # 200k draws: the standard error of the rate is about 0.001; allow 5 standard errors.
    mask = Randomness(11).bernoulli(200_000, 0.3)
    assert abs(mask.mean() - 0.3) < 0.005


@pytest.mark.parametrize("bad", [-1, 1.5, "x", True])
def test_bad_seed_is_a_parameter_error(bad):
    with pytest.raises(ParameterError):
        Randomness(bad)


def test_bad_probability_is_a_parameter_error():
    with pytest.raises(ParameterError):
        Randomness(1).bernoulli(3, 1.2)


def test_as_randomness_accepts_seed_none_or_object():
    r = Randomness(1)
    assert as_randomness(r) is r
    assert as_randomness(5).seed == 5
    assert as_randomness(None).fit_for_release
