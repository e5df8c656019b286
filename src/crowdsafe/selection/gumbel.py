"""The exact Gumbel-max: the argmax of ε1-scaled exact scores plus exact standard Gumbels.

The exponential mechanism of the ε1-safe selection (:mod:`.mechanism`) is sampled as the argmax
over candidates g of the key ``scale · q_g / D + G_g`` (q_g an exact integer score, D its integer
denominator), G_g = −log(−log U_g) with U_g uniform on (0, 1) given by infinitely many random
bits, of which only as many are drawn as the comparison needs: 53 per candidate first
(:func:`crowdsafe.randomness.gumbel_enclosure` bounds G_g), then 64 more at a time for the few
candidates whose key intervals still overlap the best one, compared in ``mpmath`` interval
arithmetic with ``scale`` as the exact value of its float (:func:`_refine_argmax`). The result is
the argmax of the exact keys, so the choice has exactly the mechanism's distribution
exp(scale · q / D) / Z. Real scores (objectives with logarithms) are handled by widening each
key by the scores' rigorous error bound and enclosing the remaining ones exactly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from crowdsafe.errors import CrowdsafeError
from crowdsafe.randomness import CELL_BITS, ENCLOSURE_MARGIN, Randomness, gumbel_enclosure

#: Weights are whole numbers of these units (see :mod:`.score`).
SCORE_UNIT_BITS = 20
SCORE_UNIT = 1 << SCORE_UNIT_BITS
#: A callable (node indices, round) -> one uint64 of fresh random bits per node: the next 64 bits
#: of those nodes' uniforms (see :func:`_refine_argmax`).
MoreBits = Callable[[np.ndarray, int], np.ndarray]
#: A callable (node index, interval context) -> an enclosure of the node's score q_D in that
#: context's interval arithmetic, at its precision (objectives whose scores are not integers).
ExactScore = Callable[[int, Any], Any]


def key_bounds(x: np.ndarray | float, g_lo: np.ndarray | float, g_hi: np.ndarray | float):
    """Float (lo, hi) enclosing x_exact + G for x = the float product scale · q (a few ulp off the
    exact product) and G in [g_lo, g_hi]: the sums widened outward by 1e-9·(1 + |x| + |G|)."""
    lo = x + g_lo
    hi = x + g_hi
    lo = lo - ENCLOSURE_MARGIN * (1.0 + np.abs(x) + np.abs(g_lo))
    hi = hi + ENCLOSURE_MARGIN * (1.0 + np.abs(x) + np.abs(g_hi))
    return lo, hi


def upper_key(x: float, g_hi: float) -> float:
    """:func:`key_bounds`'s upper end for one key, in Python floats (the same float operations)."""
    return (x + g_hi) + ENCLOSURE_MARGIN * (1.0 + abs(x) + abs(g_hi))


def exact_gumbel_argmax(indices: np.ndarray, scores: np.ndarray, cells: np.ndarray, scale: float,
                        more_bits: MoreBits, denominator: int = SCORE_UNIT, score_error: float = 0.0,
                        exact_score: ExactScore | None = None) -> int:
    """argmax over ``indices`` of the exact keys scale · scores/denominator + G, G = −log(−log U) with U
    in [cell/2^53, (cell + 1)/2^53) refined by ``more_bits``: the nodes whose float key interval
    cannot reach the best lower key are dropped, the rest go to :func:`_refine_argmax`.

    Scores are exact integers, unless ``exact_score`` is given: then ``scores`` are floats within
    ``score_error`` of the exact ones (each key interval is widened by scale · score_error /
    denominator, with a relative margin), and ``exact_score(index, iv)`` encloses the exact score
    of a remaining node for the refinement."""
    indices = np.asarray(indices, dtype=np.int64)
    scores = np.asarray(scores)  # int64, or Python ints (object) past 2^63, or float64 (real scores)
    cells = np.asarray(cells, dtype=np.int64)
    g_lo, g_hi = gumbel_enclosure(cells)
    lo, hi = key_bounds(scale * (scores.astype(np.float64) / denominator), g_lo, g_hi)
    if exact_score is not None:
        spread = (1.0 + 1e-6) * float(scale) * float(score_error) / float(denominator)
        lo, hi = lo - spread, hi + spread
    keep = hi >= lo.max()
    if keep.sum() == 1:
        return int(indices[keep][0])
    return _refine_argmax(indices[keep], scores[keep], cells[keep], scale, more_bits, denominator, exact_score)


#: Refinement rounds before giving up: each round narrows every contender's key interval about
#: 2^64-fold, so keys still overlapping after r rounds have probability of order 2^(-64 r).
_MAX_ROUNDS = 64


def _refine_argmax(indices: np.ndarray, scores: np.ndarray, cells: np.ndarray, scale: float,
                   more_bits: MoreBits, denominator: int = SCORE_UNIT, exact_score: ExactScore | None = None) -> int:
    """The exact argmax of scale · scores/denominator + G among contenders whose float intervals overlap.

    Each round appends 64 fresh bits (``more_bits(indices, round)``) to each contender's uniform,
    U ∈ [c/2^b, (c + 1)/2^b) with b = 53 + 64·round, and encloses G = −log(−log U) and the key in
    ``mpmath`` interval arithmetic at more than b bits (outward rounding; ``scale`` is its float's
    exact value, the score an exact integer). It stops when one lower key exceeds every other
    upper key; contenders whose upper key is below the best lower key are dropped. The bits drawn
    are those of U itself, so the result is argmax of the exact keys: exactly exp(scale·q)/Z.
    A real score (``exact_score`` given; ``scores`` then only size the precision) is enclosed anew
    each round at that round's precision, so its interval narrows with the Gumbels' and ties in
    the score are still decided by the bits.
    """
    from mpmath.ctx_iv import MPIntervalContext  # imported only on this rare path

    iv = MPIntervalContext()  # a private context: its precision is not mpmath's global one
    alive = [(int(i), int(q) if exact_score is None else int(abs(float(q))) + 1, int(c))
             for i, q, c in sorted(zip(indices, scores, cells))]
    bits = CELL_BITS
    for round_ in range(_MAX_ROUNDS):
        extra = np.asarray(more_bits(np.array([i for i, _, _ in alive], dtype=np.int64), round_), dtype=np.uint64)
        alive = [(i, q, (c << 64) | int(e)) for (i, q, c), e in zip(alive, extra)]
        bits += 64
        # the cell ends, the score, the denominator and the scale (53 bits) are exact at this precision
        iv.prec = bits + 128 + max(int(abs(q)).bit_length() for _, q, _ in alive) + int(denominator).bit_length()
        exact_scale = iv.mpf(float(scale))
        keys = []
        for i, q, c in alive:
            u = iv.mpf([c, c + 1]) / 2**bits  # [c/2^b, (c + 1)/2^b], exact ends
            score = q if exact_score is None else exact_score(i, iv)
            keys.append(exact_scale * score / denominator - iv.log(-iv.log(u)))
        best = max(range(len(alive)), key=lambda n: keys[n].a)
        floor = keys[best].a
        if all(keys[n].b < floor for n in range(len(alive)) if n != best):
            return alive[best][0]
        alive = [a for a, key in zip(alive, keys) if key.b >= floor]
    raise CrowdsafeError("the exponential mechanism's exact comparison did not separate two keys "
                         f"after {_MAX_ROUNDS} rounds of 64 bits (probability of order 2^-4096)")


def random_bits(randomness: Randomness) -> MoreBits:
    """:data:`MoreBits` drawing 64 fresh uniform bits per node from ``randomness``."""
    def more_bits(indices: np.ndarray, round_: int) -> np.ndarray:
        return randomness.generator.integers(0, 2**64, size=len(indices), dtype=np.uint64)
    return more_bits
