"""Composition: the privacy loss of several mechanisms run on the same data.

- :func:`sequential` — basic composition: losses add up (Dwork, Kenthapadi, McSherry, Mironov,
  Naor 2006; Dwork & Lei 2009), for any adaptively chosen sequence.
- :func:`parallel` — mechanisms on *disjoint* parts of the data, split by a rule that does not
  look at the data: the maximum (McSherry 2009).
- :func:`compose_homogeneous` — k-fold adaptive composition of one (ε, δ)-DP mechanism, by three
  bounds, certified with the one that gives the smallest ε:

  * ``summation``: (kε, kδ);
  * ``drv``: Dwork, Rothblum, Vadhan (2010), Theorem III.3:
    (ε·sqrt(2k·ln(1/δ')) + k·ε·(e^ε − 1), kδ + δ') for a slack δ' > 0;
  * ``kov``: the optimal composition theorem of Kairouz, Oh, Viswanath (2015), Theorem 3.3,
    evaluated on its exact privacy curve (see :func:`kov_epsilon`), with the same total δ,
    kδ + δ', as DRV.

These bounds are for (ε, δ)-DP guarantees. A DP-under-sampling guarantee relies on the attacker's
uncertainty about who was sampled and must not be composed with anything else computed on the
same sample: see :mod:`crowdsafe.privacy.certificate`, which refuses to.
"""

from __future__ import annotations

import functools
import math
import sys
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Literal

import numpy as np

from crowdsafe.errors import ParameterError
from crowdsafe.privacy.logspace import logsumexp
from crowdsafe.privacy.loss import PrivacyLoss, check_delta, check_epsilon

Bound = Literal["summation", "drv", "kov"]
#: The most compositions the optimal (KOV) bound is computed for: its exact curve sums k terms.
KOV_MAX_K = 10_000_000

#: ln of the largest double: e^ε overflows beyond it.
_EXP_LIMIT = math.log(sys.float_info.max)
Neighbours = Literal["add-remove", "change"]

#: The theorem each bound comes from, as printed in certificates and reports.
BOUND_THEOREMS: dict[str, str] = {
    "summation": "basic composition (Dwork, Kenthapadi, McSherry, Mironov, Naor 2006)",
    "drv": "advanced composition (Dwork, Rothblum, Vadhan 2010, Theorem III.3)",
    "kov": "optimal composition (Kairouz, Oh, Viswanath 2015, Theorem 3.3)",
}


def _total_delta(delta: float, what: str) -> float:
    if delta >= 1.0:
        raise ParameterError(
            f"{what} gives delta = {delta:.6g} >= 1, which guarantees nothing; "
            "use fewer releases or smaller per-release delta"
        )
    return delta


def _finite_epsilon(total: float, what: str) -> float:
    """``total`` if it is finite, else a ParameterError: a summed ε beyond the largest double is
    stated by no finite ε, and ε = inf would be no guarantee at all."""
    if not math.isfinite(total):
        raise ParameterError(
            f"{what} gives an epsilon beyond the largest double ({sys.float_info.max:g}), which no guarantee "
            "can state; the summed epsilon must be at most that: compose fewer or smaller epsilons"
        )
    return total


def _total_epsilon(epsilons: Iterable[float], what: str) -> float:
    """The exact sum of finite ε ≥ 0 (math.fsum); a ParameterError when it exceeds the largest double."""
    try:
        total = math.fsum(epsilons)
    except OverflowError:  # fsum raises where the exact sum is not a finite double
        total = math.inf
    return _finite_epsilon(total, what)


def sequential(losses: Iterable[PrivacyLoss]) -> PrivacyLoss:
    """Basic sequential composition: (Σ εᵢ, Σ δᵢ).

    Holds for any sequence of mechanisms on the same data, each possibly chosen after seeing the
    previous outputs (Dwork et al. 2006; Dwork & Lei 2009). An empty sequence costs (0, 0).
    Raises ParameterError when the summed δ reaches 1 (no guarantee left) or the summed ε exceeds
    the largest double (about 1.8e308: no finite ε states it).
    """
    items = losses_checked(losses)
    eps = _total_epsilon((loss.epsilon for loss in items), "sequential composition")
    delta = math.fsum(loss.delta for loss in items)
    return PrivacyLoss(eps, _total_delta(delta, "sequential composition"))


def parallel(losses: Iterable[PrivacyLoss], neighbours: Neighbours = "add-remove") -> PrivacyLoss:
    """Parallel composition over disjoint parts of the data: (max εᵢ, max δᵢ) (McSherry 2009).

    Conditions: each mechanism reads only its own part, and the parts are cut by a rule applied
    to each record alone (e.g. by the value of an attribute), never by looking at the data as a
    whole. Under add/remove neighbours (the default) one person touches one part, hence the
    maximum. Under change-one neighbours (``neighbours="change"``) a changed record can leave
    one part and enter another, so the bound is the sum of the two largest ε (and δ).
    An empty collection costs (0, 0).
    """
    items = losses_checked(losses)
    if neighbours == "add-remove":
        eps = max((loss.epsilon for loss in items), default=0.0)
        delta = max((loss.delta for loss in items), default=0.0)
    elif neighbours == "change":
        eps = _total_epsilon(sorted((loss.epsilon for loss in items), reverse=True)[:2], "parallel composition")
        delta = math.fsum(sorted((loss.delta for loss in items), reverse=True)[:2])
    else:
        raise ParameterError(f"neighbours must be 'add-remove' or 'change', got {neighbours!r}")
    return PrivacyLoss(eps, _total_delta(delta, "parallel composition"))


def losses_checked(losses: Iterable[PrivacyLoss]) -> list[PrivacyLoss]:
    """The losses as a list, each checked to be a :class:`PrivacyLoss`."""
    items = list(losses)
    for item in items:
        if not isinstance(item, PrivacyLoss):
            raise ParameterError(f"expected PrivacyLoss values, got {type(item).__name__}")
    return items


@dataclass(frozen=True)
class BoundCandidate:
    """One bound's answer for a k-fold composition; ``epsilon`` is None where it does not apply."""

    bound: Bound
    epsilon: float | None
    delta: float | None
    theorem: str
    note: str = ""

    def as_dict(self) -> dict[str, object]:
        return {
            "bound": self.bound,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "theorem": self.theorem,
            "note": self.note,
        }


@dataclass(frozen=True)
class ComposedLoss:
    """The certified loss of k runs of one mechanism: the best of the candidate bounds."""

    epsilon: float
    delta: float
    bound: Bound
    candidates: tuple[BoundCandidate, ...]
    k: int
    per_step: PrivacyLoss
    delta_slack: float = 0.0
    theorem: str = field(default="")

    @property
    def loss(self) -> PrivacyLoss:
        return PrivacyLoss(self.epsilon, self.delta)

    def as_dict(self) -> dict[str, object]:
        return {
            "epsilon": self.epsilon,
            "delta": self.delta,
            "bound": self.bound,
            "theorem": self.theorem,
            "k": self.k,
            "per_step": self.per_step.as_dict(),
            "delta_slack": self.delta_slack,
            "candidates": [c.as_dict() for c in self.candidates],
        }


def drv_epsilon(epsilon: float, k: int, delta_slack: float) -> float:
    """The Dwork–Rothblum–Vadhan bound: ε·sqrt(2k·ln(1/δ')) + k·ε·(e^ε − 1).

    The k-fold adaptive composition of (ε, δ)-DP mechanisms is (this, kδ + δ')-DP for every
    δ' > 0 (Dwork, Rothblum, Vadhan 2010, Theorem III.3). The textbook form
    2ε·sqrt(2k·ln(1/δ')) is a small-ε simplification of the same bound. ``math.inf`` where the
    bound exceeds the largest double (e^ε overflows beyond ε ≈ 709.78): then it certifies nothing.
    """
    epsilon = check_epsilon(epsilon)
    k = _check_k(k)
    if not 0.0 < delta_slack < 1.0:
        raise ParameterError(f"the DRV bound needs a slack delta' in (0, 1), got {delta_slack!r}")
    if epsilon > _EXP_LIMIT:
        return math.inf
    return epsilon * math.sqrt(2.0 * k * math.log(1.0 / delta_slack)) + k * epsilon * math.expm1(
        epsilon
    )


def _log_rr_hockey_stick(epsilon: float, k: int, eps_total: float) -> float:
    """log of δ(ε_g) for the k-fold composition of ε-randomized response (−inf when it is 0).

    δ(ε_g) = Σ_{l: (k−2l)ε > ε_g} C(k, l)·(e^{(k−l)ε} − e^{ε_g + lε}) / (1 + e^ε)^k is the
    hockey-stick divergence of the k-fold product of randomized response, the dominating pair of
    every ε-DP mechanism; at ε_g = (k − 2i)ε it is the δ_i of KOV Theorem 3.3.
    """
    from scipy.special import gammaln  # imported on first use: keeps start-up fast

    top = (k - eps_total / epsilon) / 2.0  # terms with l < top are positive
    count = min(k + 1, max(0, math.ceil(top) + 1))
    if count == 0:
        return -math.inf
    l = np.arange(count, dtype=np.float64)
    # The gap is a difference of two numbers near kε: widen it by its rounding error so the
    # curve is never under-estimated (a term is ≈ gap when the gap is tiny).
    gap = (k - 2.0 * l) * epsilon - eps_total + 8.0 * math.ulp(max(k * epsilon, eps_total, 1.0))
    keep = gap > 0.0
    if not keep.any():
        return -math.inf
    l, gap = l[keep], gap[keep]
    log_terms = (
        gammaln(k + 1.0) - gammaln(l + 1.0) - gammaln(k - l + 1.0)
        + (k - l) * epsilon
        + np.log(-np.expm1(-gap))
    )
    return logsumexp(log_terms) - k * float(np.logaddexp(0.0, epsilon))


@functools.lru_cache(maxsize=4096)  # pure; the budget ledger asks the same questions often
def kov_epsilon(
    epsilon: float,
    delta: float,
    k: int,
    total_delta: float,
    *,
    grid_only: bool = False,
) -> float | None:
    """The smallest total ε the optimal composition theorem gives at a total δ.

    Kairouz, Oh, Viswanath (2015), Theorem 3.3: k-fold adaptive composition of (ε, δ)-DP
    mechanisms is ((k − 2i)ε, 1 − (1 − δ)^k (1 − δ_i))-DP for every i = 0..⌊k/2⌋, and this region
    is exactly achieved. Its proof shows that every composition is dominated by the k-fold
    composition of the canonical (ε, δ) mechanism (randomized response plus a δ-chance of
    disclosure), whose tight δ at any total ε_g is 1 − (1 − δ)^k (1 − δ_RR(ε_g)), δ_RR being the
    hockey-stick divergence computed in :func:`_log_rr_hockey_stick`. By default this function
    inverts that exact curve (Brent's method, then verified on the conservative side); with
    ``grid_only=True`` it returns the best grid point (k − 2i)ε, which is the theorem as
    printed and what Google's ``dp_accounting.pld.accountant.advanced_composition`` computes.

    Returns None when ``total_delta`` < 1 − (1 − δ)^k: no ε then suffices.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = _check_k(k)
    total_delta = check_delta(total_delta, "total delta")
    if epsilon == 0.0:
        return 0.0 if total_delta >= -math.expm1(k * math.log1p(-delta)) else None
    # 1 − (1−δ)^k (1 − δ_RR) ≤ T  ⇔  δ_RR ≤ (T − 1 + (1−δ)^k) / (1−δ)^k
    log_keep = k * math.log1p(-delta)
    room = total_delta + math.expm1(log_keep)
    if room < 0.0:
        return None
    if room == 0.0:
        return k * epsilon
    # A hair of margin so floating-point error in the curve can never make the answer too small.
    log_budget = math.log(room) - log_keep + math.log1p(-1e-12)

    def ok(eps_total: float) -> bool:
        return _log_rr_hockey_stick(epsilon, k, eps_total) <= log_budget

    if grid_only:
        for i in range(k // 2, -1, -1):
            if ok((k - 2 * i) * epsilon):
                return (k - 2 * i) * epsilon
        return k * epsilon  # i = 0 always holds: δ_RR(kε) = 0
    if ok(0.0):
        return 0.0
    # log δ_RR falls continuously in ε_g: Brent's method finds the crossing, then the answer is
    # nudged up until it is verified (never below the true optimum's feasible side).
    from scipy.optimize import brentq

    top = k * epsilon * (1.0 - 1e-13)
    if not ok(top):
        return k * epsilon
    root = float(brentq(lambda x: _log_rr_hockey_stick(epsilon, k, x) - log_budget, 0.0, top,
                        xtol=1e-14, rtol=1e-13))
    step = max(root, 1e-300) * 1e-13
    while not ok(root):
        root, step = root + step, step * 2.0
    return min(root, k * epsilon)


def compose_homogeneous(
    epsilon: float, delta: float, k: int, delta_slack: float = 0.0
) -> ComposedLoss:
    """k-fold adaptive composition of one (ε, δ)-DP mechanism, certified by the smallest bound.

    Candidates (each reported in ``candidates``):
      * summation: (kε, kδ) — always valid;
      * DRV: (ε·sqrt(2k·ln(1/δ')) + kε(e^ε − 1), kδ + δ'), only when δ' = ``delta_slack`` > 0;
      * KOV: the optimal bound at total δ kδ + δ' (:func:`kov_epsilon`), for k up to
        :data:`KOV_MAX_K` (past it the others certify: valid, less tight).
    The chosen certificate has the smallest ε; ties (within 1e-9 relative) go to the smaller δ,
    then to the simpler theorem. DRV is worse than summation for larger ε: at ε = 0.5, k = 50, δ' = 1e-6 it gives
    about 34.8 against 25, and KOV is never worse than either at the same δ.
    """
    epsilon = check_epsilon(epsilon)
    delta = check_delta(delta)
    k = _check_k(k)
    delta_slack = check_delta(delta_slack, "delta_slack")
    per_step = PrivacyLoss(epsilon, delta)
    summed_delta = _total_delta(k * delta, f"{k}-fold composition")
    summed = _finite_epsilon(k * epsilon, f"{k}-fold composition")
    candidates = [BoundCandidate("summation", summed, summed_delta, BOUND_THEOREMS["summation"])]
    advanced_delta = k * delta + delta_slack
    if delta_slack == 0.0:
        candidates.append(
            BoundCandidate("drv", None, None, BOUND_THEOREMS["drv"], "needs delta_slack > 0")
        )
    elif advanced_delta >= 1.0:
        candidates.append(
            BoundCandidate("drv", None, None, BOUND_THEOREMS["drv"], "k*delta + delta_slack >= 1")
        )
    elif not math.isfinite(drv := drv_epsilon(epsilon, k, delta_slack)):
        candidates.append(
            BoundCandidate("drv", None, None, BOUND_THEOREMS["drv"], "exceeds the largest double")
        )
    else:
        candidates.append(BoundCandidate("drv", drv, advanced_delta, BOUND_THEOREMS["drv"]))
    if k > KOV_MAX_K:  # its exact curve sums k terms: 15 s and 0.3 GB at 10^7, 20 GB at 10^9
        candidates.append(BoundCandidate("kov", None, None, BOUND_THEOREMS["kov"],
                                         f"computed for k up to {KOV_MAX_K:,} (its exact curve sums k terms)"))
    elif advanced_delta < 1.0:
        kov = kov_epsilon(epsilon, delta, k, advanced_delta)
        candidates.append(BoundCandidate("kov", kov, advanced_delta, BOUND_THEOREMS["kov"]))
    order = {"summation": 0, "drv": 1, "kov": 2}
    usable = [c for c in candidates if c.epsilon is not None and c.delta is not None]
    # Differences below 1e-9 relative in ε are ties: then the smaller δ, then the simpler theorem.
    least = min(c.epsilon for c in usable if c.epsilon is not None)
    near = [c for c in usable if c.epsilon is not None and c.epsilon <= least * (1.0 + 1e-9) + 1e-15]
    best = min(near, key=lambda c: (c.delta, order[c.bound]))
    assert best.epsilon is not None and best.delta is not None
    return ComposedLoss(
        epsilon=best.epsilon,
        delta=best.delta,
        bound=best.bound,
        candidates=tuple(candidates),
        k=k,
        per_step=per_step,
        delta_slack=delta_slack,
        theorem=best.theorem,
    )


def _check_k(k: int) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise ParameterError(f"the number of compositions k must be a whole number >= 1, got {k!r}")
    return int(k)
