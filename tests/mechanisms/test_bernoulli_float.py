"""exact.bernoulli_float (behind Randomness.bernoulli): Bernoulli(p) exactly for the float p.

Deterministic part: the uniform U is a crafted bit string served by a stub generator (each draw
of a uniform integer on {0..2^b − 1} is U's next b bits, the main stream's 64-bit words first,
then the tie stream's bits), and every decision must equal Fraction(U) < Fraction(p) for the bits
served, whatever follows them. The float comparison it replaces, (W >> 11)/2^53 < p, gets some of
these cases wrong. Statistical part: fixed seeds, binomial tests at p > 1e-3.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest
from scipy import stats

from crowdsafe.engines import streamed_publish
from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms import exact
from crowdsafe.randomness import Randomness

P_FLOOR = 1e-3
TINY = 2.0**-70 + 2.0**-130  # 61 significant binary places, none in the first 64
MID = 2.0**-70 + 2.0**-100  # the 36 places after the first 64 fit one uniform integer (below 2^62)


class Bits:
    """A stub generator serving a fixed bit string: ``integers(0, 2^b)`` returns its next b bits."""

    def __init__(self, bits: str) -> None:
        self.bits, self.used = bits, 0

    def _take(self, width: int) -> int:
        if self.used + width > len(self.bits):
            raise AssertionError("the sampler read more bits than the crafted uniform holds")
        value = int(self.bits[self.used:self.used + width], 2)
        self.used += width
        return value

    def integers(self, low, high, size=None, dtype=np.int64):
        high = int(high)
        assert low == 0 and high & (high - 1) == 0, "only powers of two are bit strings"
        width = high.bit_length() - 1
        if size is None:
            return self._take(width)
        return np.array([self._take(width) for _ in range(size)], dtype=dtype)


def expansion(p: float, places: int) -> str:
    """p's first ``places`` binary places."""
    return format(int(Fraction(p) * 2**places), f"0{places}b")


def decide(p: float, rows: list[str]) -> tuple[np.ndarray, Bits]:
    """The sampler's decisions for rows whose uniforms are the bit strings ``rows``: 64 bits each
    from the words; the rest, for the rows whose 64 bits are p's (tied), from the tie stream in
    row order (the other rows' rest is never served: reading it fails)."""
    words = Bits("".join(r[:64] for r in rows))
    ties = Bits("".join(r[64:] for r in rows if r[:64] == expansion(p, 64)))
    return exact.bernoulli_float(words, lambda: ties, len(rows), p), ties


def value(bits: str) -> Fraction:
    return Fraction(int(bits, 2), 2 ** len(bits))


def float_comparator(bits: str, p: float) -> bool:
    """The replaced sampler: NumPy's random() is the word's top 53 bits over 2^53."""
    return (int(bits[:64], 2) >> 11) * 2.0**-53 < p


def crafted(p: float) -> list[str]:
    """Uniforms around p: p's bits with a flipped bit or a ±1 step at several depths, p itself
    followed by a one, and a few far away."""
    head = expansion(p, 200)
    cases = [head[:64] + "1" * 136, "0" * 63 + "1" + "0" * 136, "1" * 200, "0" * 200]
    for depth in (3, 52, 53, 63, 64, 65, 100, 129, 130, 131, 180):
        flipped = head[:depth] + ("1" if head[depth] == "0" else "0") + head[depth + 1:]
        cases.append(flipped)
    for place in (64, 100, 130):
        step = int(head[:place], 2)
        for moved in (step - 1, step + 1):
            if 0 <= moved < 2**place:
                cases.append(format(moved, f"0{place}b") + head[place:])
    cases.append(expansion(p, 199) + "1")  # equal to p's first 199 bits, then above
    return cases


@pytest.mark.parametrize("p", [0.3, 0.001, 1 / 3, 0.5, 2.0**-64, 1 - 2.0**-53, TINY, MID, 0.0])
def test_each_decision_is_the_exact_comparison(p):
    for bits in crafted(p):
        (drawn,), ties = decide(p, [bits])
        read = bits[:64 + ties.used]
        # the bits read decide: p is not strictly inside U's interval [read, read + 2^-len)
        assert not value(read) < Fraction(p) < value(read) + Fraction(1, 2 ** len(read))
        assert bool(drawn) == (value(read) < Fraction(p)) == (value(bits) < Fraction(p)), (p, bits)


def test_only_rows_tied_on_a_word_of_a_long_p_read_the_tie_stream():
    ones, ties = decide(0.3, [expansion(0.3, 64) + "1" * 10])
    assert ties.used == 0 and not ones[0]  # 0.3·2^64 is an integer: a tie means U ≥ p
    below, ties = decide(TINY, ["0" * 64 + expansion(TINY, 200)[64:]])
    assert ties.used > 0 and not below[0]


def test_rows_tied_on_their_word_are_continued_in_row_order():
    rng = np.random.default_rng(5)
    rows = []
    for i in range(40):
        word = "0" * 64 if i % 3 else format(int(rng.integers(0, 2**63)), "064b")  # P = 0 for MID
        rows.append(word + format(int(rng.integers(0, 2**36)), "036b"))
    rows[7] = "0" * 64 + expansion(MID, 100)[64:]  # equal to p: fails
    drawn, ties = decide(MID, rows)
    assert ties.used == 36 * sum(1 for r in rows if r[:64] == "0" * 64)
    assert drawn.tolist() == [value(r) < Fraction(MID) for r in rows]
    assert 0 < drawn.sum() < len(rows)


def test_the_float_comparison_it_replaces_is_wrong_where_this_is_right():
    wrong = []
    for p in (0.3, TINY, MID, 2.0**-64):
        for bits in crafted(p):
            (drawn,), _ = decide(p, [bits])
            if float_comparator(bits, p) != bool(drawn):
                wrong.append((p, bits))
    assert {p for p, _ in wrong} == {0.3, TINY, MID, 2.0**-64}
    for p, bits in wrong:
        assert float_comparator(bits, p) != (value(bits) < Fraction(p))


@pytest.mark.parametrize("p", [0.3, 0.001, 2.0**-12 + 2.0**-70, 0.999])
def test_frequencies_follow_p(p):
    n = 400_000
    mask = Randomness(20).bernoulli(n, p)
    assert stats.binomtest(int(mask.sum()), n, p).pvalue > P_FLOOR


def test_certain_and_impossible_and_bad_probabilities():
    assert Randomness(1).bernoulli(1000, 1.0).all()
    assert not Randomness(1).bernoulli(1000, 0.0).any()
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(ParameterError):
            Randomness(1).bernoulli(3, bad)


class FewWords:
    """A generator whose 64-bit words take only the values 0, 1, 2 (ties with p < 2^-62 galore),
    drawn entry by entry from a seeded stream, so a split draw concatenates as the real one does."""

    def __init__(self, seed: int) -> None:
        self.inner = np.random.default_rng(seed)

    def integers(self, low, high, size=None, dtype=np.int64):
        return self.inner.integers(0, 3, size=size).astype(np.uint64)

    def random(self):
        return self.inner.random()


@pytest.mark.parametrize("p", [0.3, TINY])
def test_a_mask_drawn_in_batches_with_ties_is_the_one_draw(monkeypatch, p):
    monkeypatch.setattr(streamed_publish, "DRAW_ROWS", 16)
    one, batched = Randomness(seed=4), Randomness(seed=4)
    one.generator, batched.generator = FewWords(9), FewWords(9)  # type: ignore[assignment]
    n = 301
    expected = one.bernoulli(n, p)
    packed = streamed_publish.draw_mask(n, p, batched)
    assert packed is not None
    assert np.array_equal(np.unpackbits(packed)[:n].astype(bool), expected)
    assert one.ties().random() == batched.ties().random()  # the tie streams end at the same place
    if p == TINY:
        assert 0 < expected.sum() < n  # some tied rows succeeded, some failed


def test_the_tie_stream_is_the_seeds_and_apart_from_the_main_stream():
    a, b = Randomness(seed=8), Randomness(seed=8)
    a.generator.random(1000)
    assert a.ties().random() == b.ties().random()  # made late or early: the same stream
    assert Randomness(seed=8).generator.random() != Randomness(seed=8).ties().random()
    assert Randomness().ties().random() != Randomness().ties().random()
