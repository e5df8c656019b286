"""mechanisms/exact: uniform draws by scalar calls (`_uniform_by_scalars`, up to SCALAR_DRAWS
entries or a bound of 1) or in one array call (`_uniform_by_array`, the reference), and the
discrete Laplace over Python lists (`_discrete_laplace_by_lists`, up to LIST_DRAWS draws) or over
arrays (`_discrete_laplace_by_arrays`, the reference). Deterministic given the stream: with the
same seed both twins return the same values and leave the stream at the same place, at the
limits' −1, at them and +1."""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from crowdsafe.mechanisms import exact
from crowdsafe.mechanisms.noise import DiscreteLaplaceNoise
from crowdsafe.randomness import Randomness


def _after(generator: np.random.Generator) -> int:
    """The next 62-bit draw: equal for two generators only if they stand at the same place."""
    return int(generator.integers(0, 1 << 62))


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 5, 40])
@pytest.mark.parametrize("high", [1, 2, 3, 1000, 1 << 31, (1 << 32) - 1, 1 << 32, 1 << 40, 1 << 62])
def test_scalar_and_array_uniforms_read_the_same_bits(n, high):
    a, b = Randomness(11).generator, Randomness(11).generator
    scalars = np.array(exact._uniform_by_scalars(a, high, n), dtype=np.int64)
    array = exact._uniform_by_array(b, high, n)
    assert scalars.tolist() == array.tolist()
    assert _after(a) == _after(b)


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_uniform_below_switches_at_scalar_draws(monkeypatch, shift):
    limit = 3
    monkeypatch.setattr(exact, "SCALAR_DRAWS", limit)
    n = limit + shift
    a, b, c = (Randomness(5).generator for _ in range(3))
    got = exact.uniform_below(a, 7, n)
    listed = exact.uniform_list(b, 7, n)
    reference = exact._uniform_by_array(c, 7, n)
    assert got.dtype == np.int64 and got.tolist() == listed == reference.tolist()
    assert _after(a) == _after(b) == _after(c)


SCALES = [(1, 1), (1, 10), (3, 7), (7, 2**40), (2**29 + 1, 2**30), (5, 2**55 + 3)]


@pytest.mark.parametrize("s, t", SCALES)
@pytest.mark.parametrize("size", [0, 1, 2, 3, 4, 5, 20, 100])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_list_and_array_discrete_laplace_draw_the_same(s, t, size, seed):
    a, b = Randomness(seed).generator, Randomness(seed).generator
    lists = exact._discrete_laplace_by_lists(a, s, t, size)
    arrays = exact._discrete_laplace_by_arrays(b, s, t, size)
    assert lists.dtype == arrays.dtype == np.int64
    assert lists.tolist() == arrays.tolist()
    assert _after(a) == _after(b)


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_discrete_laplace_switches_at_list_draws(monkeypatch, shift):
    limit = 6
    monkeypatch.setattr(exact, "LIST_DRAWS", limit)
    noise = DiscreteLaplaceNoise.for_privacy(0.3, 1)
    a, b = Randomness(9).generator, Randomness(9).generator
    got = exact.discrete_laplace(a, noise.s, noise.t, limit + shift)
    reference = exact._discrete_laplace_by_arrays(b, noise.s, noise.t, limit + shift)
    assert got.tolist() == reference.tolist() and _after(a) == _after(b)


@pytest.mark.parametrize("numerator, denominator", [(1, 3), (2**61, 2**62 + 5), (5, 2**63), (2**69, 3 * 2**68),
                                                    (0, 2**70), (2**70, 2**70)])
@pytest.mark.parametrize("n", [1, 2, 4, 9])
def test_list_fractions_draw_as_bernoulli_fraction(numerator, denominator, n):
    a, b = Randomness(4).generator, Randomness(4).generator
    lists = exact._fraction_by_lists(a, [numerator] * n, denominator)
    arrays = exact.bernoulli_fraction(b, np.array([numerator] * n, dtype=object), denominator)
    assert lists == arrays.tolist() and _after(a) == _after(b)


@pytest.mark.parametrize("denominator", [1, 7, 2**40, 2**62 + 1])
def test_list_exp_neg_draws_as_bernoulli_exp_neg(denominator):
    numerators = [x % denominator for x in (0, 1, 3, denominator - 1, 5 * denominator // 7, 2)]
    a, b = Randomness(6).generator, Randomness(6).generator
    lists = exact._exp_neg_fractions_by_lists(a, numerators, denominator)
    arrays = exact.bernoulli_exp_neg(b, np.array(numerators, dtype=object), denominator)
    assert lists == arrays.tolist() and _after(a) == _after(b)


def test_list_exp_minus_one_draws_as_the_unit_k_loop():
    a, b = Randomness(8).generator, Randomness(8).generator
    firsts = exact._exp_minus_one_by_lists(a, 50)
    unit = exact._bernoulli_exp_minus_one_unit(b, 50)
    assert [k % 2 == 1 for k in firsts] == unit.tolist() and _after(a) == _after(b)


def test_discrete_gaussian_is_unchanged_by_the_list_laplace(monkeypatch):
    sigma2 = Fraction(153755460017, 8589934592)
    a = exact.discrete_gaussian(Randomness(3).generator, sigma2, 30)
    monkeypatch.setattr(exact, "LIST_DRAWS", -1)
    monkeypatch.setattr(exact, "SCALAR_DRAWS", -1)
    b = exact.discrete_gaussian(Randomness(3).generator, sigma2, 30)
    assert a.tolist() == b.tolist()
