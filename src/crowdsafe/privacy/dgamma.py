"""(d, γ)-privacy of the α-β algorithm: conditions, posteriors, equivalent ε, utility bounds, plan.

Rastogi, Suciu and Hong (2007), "The boundary between privacy and utility in data publishing"
(VLDB). Notation: I is the private table, a *set* of n tuples from the domain
D = D_1 × ... × D_a of m tuples; the α-β algorithm keeps each tuple of I with probability α and
inserts each tuple of D \\ I with probability β, all independently.

- **The attacker.** A d-bounded attacker has a tuple-independent prior in which every tuple t
  is in I with probability Pr[t] ≤ d (or exactly 1: tuples the attacker already knows).
- **(d, γ)-privacy.** For every d-bounded attacker, every tuple t with Pr[t] ≤ d and every
  view V: Pr[t | V] ≤ γ (no positive leakage beyond γ) and Pr[t | V] / Pr[t] ≥ d/γ (no
  negative leakage below that ratio).
- **Theorem (Rastogi et al. 2007).** For d ≤ γ < 1, the α-β algorithm is (d, γ)-private when
  α ≤ 1 − d/γ and β ≥ (d/γ)·((1 − γ)/(1 − d))·α.
- **Posterior** of one tuple with prior p, by Bayes' rule (the algorithm treats tuples
  independently, so only t's own presence in V matters): present
  αp/(αp + β(1 − p)); absent (1 − α)p/((1 − α)p + (1 − β)(1 − p)).
- **Equivalent ε.** For neighbours I, I ∪ {t} *within a fixed public domain D* the output
  likelihoods differ only in t's own coin: α vs β when t ∈ V, 1 − α vs 1 − β when not, so the
  algorithm is ε-DP (unbounded, add/remove neighbours) with
  ε = max(|ln(α/β)|, |ln((1 − β)/(1 − α))|) — for α > β: max(ln(α/β), ln((1 − β)/(1 − α))).
- **Correlated attackers.** The guarantee is for tuple-independent priors. For priors saying
  "exactly one of this set of tuples is in I" there is still no positive leakage when α = 1/2
  and β ≥ (d/γ)(1 − γ)/(1 − d) (twice the smallest β of the theorem at α = 1/2); for arbitrary
  correlations there is no guarantee at all.

**What is public.** The theorem is about a domain D fixed before the data is read; and n, which
enters d = c·n/m (hence β), the utility bound and the error bars, is not public. The functions
here are plain math in whatever n they are given; :mod:`crowdsafe.perturb` gives them a public
bound N ≥ n (``max_rows``) in place of n. That is sound: (d', γ)-privacy implies (d, γ)-privacy
for every d ≤ d' (a larger d admits more attackers and asks for a larger posterior ratio), so
d = c·N/m covers d = c·n/m; and both error bounds grow with n, so they stay valid with N.

Utility (Rastogi et al. 2007): a counting query Q is estimated by
EST = (n_V − β·n_D)/(α − β), where n_V = |Q ∩ V| and n_D = |Q ∩ D|; it is unbiased. With α ≥ 1/2
and β ≤ (r/4)(n/m), Pr[|Q(I) − EST| ≥ ρ√n] ≤ ε' for ρ = 2·sqrt(3r·ln(2/ε')).
:func:`theorem_error_bound` evaluates that bound and checks the conditions of the proof;
:func:`bernstein_error_bound` gives a per-query bound that is usually much tighter.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from crowdsafe.defaults import LARGE_VIEW_ROWS
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import rounded_down, rounded_up
from crowdsafe.privacy.loss import _as_float as as_float

THEOREM_DGAMMA = (
    "Rastogi, Suciu, Hong 2007 (VLDB), alpha-beta algorithm: (d, gamma)-private for "
    "d <= gamma when alpha <= 1 - d/gamma and beta >= (d/gamma)((1 - gamma)/(1 - d)) alpha"
)
THEOREM_UTILITY = (
    "Rastogi, Suciu, Hong 2007: with alpha >= 1/2 and beta <= (r/4)(n/m), "
    "Pr[|Q(I) - EST(Q, V)| >= rho sqrt(n)] <= eps' for rho = 2 sqrt(3 r ln(2/eps'))"
)

ASSUME_TUPLE_INDEPENDENT = (
    "the attacker is d-bounded and tuple-independent: their prior puts each tuple in the data "
    "independently, with probability at most d (or exactly 1 for tuples they already know)"
)
ASSUME_DATA_N = (
    "max_rows is not a public bound here (exploratory): N was read from the data (the exact number n "
    "of distinct tuples, or the size m of a domain read from the data, when it is the smaller), so N, "
    "d = c N/m, beta, the utility bound and the error bars are custodian-only facts that no guarantee "
    "covers; this view is NOT fit for release"
)
ASSUME_DATA_DOMAIN = (
    "the domain D of at least one attribute (the value lists published with the view) was read from "
    "the data (exploratory): it discloses which values occur, and m = |D| is a custodian-only fact "
    "that no guarantee covers; this view is NOT fit for release"
)
ASSUME_SET = (
    "the data is a set of tuples: duplicate rows are published at most once and each tuple is "
    "treated as one individual"
)
ASSUME_ONE_VIEW = (
    "the data is perturbed once: a second, independent view of the same data gives the attacker "
    "a second look at every tuple (the epsilon of the views adds up; (d, gamma) holds for one view)"
)
ASSUME_SECRET_COINS = "the random coins of deletion and insertion come from a secret source"

DEFAULT_ALPHA = 0.5
DEFAULT_FAILURE = 0.05
# β is nudged up by this relative margin so that the theorem's inequality holds in exact
# arithmetic despite floating-point rounding of the bound (a few ulps).
_BETA_MARGIN = 1e-12
# A view above either threshold is flagged as impractically large.
LARGE_VIEW_RATIO = 100.0


def _probability(value: object, name: str, *, open_low: bool = True, open_high: bool = True) -> float:
    x = as_float(value, name)
    low_ok = x > 0.0 if open_low else x >= 0.0
    high_ok = x < 1.0 if open_high else x <= 1.0
    if not (math.isfinite(x) and low_ok and high_ok):
        interval = ("(" if open_low else "[") + "0, 1" + (")" if open_high else "]")
        raise ParameterError(f"{name} must lie in {interval}, got {value!r}")
    return x


def check_d_gamma(d: float, gamma: float) -> tuple[float, float]:
    """Validate a privacy target: 0 < d < γ < 1 (the theorem needs d ≤ γ; d = γ leaves no α > 0)."""
    d = _probability(d, "d")
    gamma = _probability(gamma, "gamma")
    if d >= gamma:
        raise ParameterError(
            f"d = {d:.6g} must be below gamma = {gamma:.6g}: a posterior bound gamma <= d "
            "would forbid any release (alpha <= 1 - d/gamma <= 0); raise gamma or lower d (or c)"
        )
    return d, gamma


def max_alpha(d: float, gamma: float) -> float:
    """The largest retention probability the theorem admits: 1 − d/γ."""
    d, gamma = check_d_gamma(d, gamma)
    return 1.0 - d / gamma


def min_beta(d: float, gamma: float, alpha: float) -> float:
    """The smallest insertion probability the theorem admits: (d/γ)·((1 − γ)/(1 − d))·α."""
    d, gamma = check_d_gamma(d, gamma)
    alpha = _probability(alpha, "alpha", open_high=False)
    return (d / gamma) * ((1.0 - gamma) / (1.0 - d)) * alpha


def exclusive_correlation_beta(d: float, gamma: float) -> float:
    """The β at or above which α = 1/2 leaks nothing positive to an "exactly one of a set" prior."""
    d, gamma = check_d_gamma(d, gamma)
    return (d / gamma) * (1.0 - gamma) / (1.0 - d)


def check_alpha_beta(d: float, gamma: float, alpha: float, beta: float) -> None:
    """Raise ParameterError naming the violated condition unless (α, β) is (d, γ)-private.

    Also refuses β ≥ α: the estimator divides by α − β, and β ≥ α publishes no information
    about I that an estimator could use.
    """
    d, gamma = check_d_gamma(d, gamma)
    alpha = _probability(alpha, "alpha", open_high=False)
    beta = _probability(beta, "beta", open_high=False)
    top = 1.0 - d / gamma
    if alpha > top:
        raise ParameterError(
            f"alpha = {alpha:.6g} is above 1 - d/gamma = {top:.6g}: a tuple's absence from the "
            f"view would lower its posterior below d/gamma times its prior; use alpha <= {rounded_down(top)}"
        )
    floor = min_beta(d, gamma, alpha)
    if beta < floor:
        raise ParameterError(
            f"beta = {beta:.6g} is below (d/gamma)((1-gamma)/(1-d)) alpha = {rounded_up(floor)}: a tuple "
            f"present in the view would have a posterior above gamma = {gamma:.6g}; use beta >= {rounded_up(floor)}"
        )
    if beta >= alpha:
        raise ParameterError(
            f"beta = {beta:.6g} must be below alpha = {alpha:.6g}: the estimator divides by alpha - beta"
        )


def posterior_present(prior: Any, alpha: float, beta: float) -> Any:
    """Pr[t ∈ I | t ∈ V] for prior p: αp / (αp + β(1 − p)). Vectorised over ``prior``."""
    p = np.asarray(prior, dtype=float)
    return _scalar(alpha * p / (alpha * p + beta * (1.0 - p)))


def posterior_absent(prior: Any, alpha: float, beta: float) -> Any:
    """Pr[t ∈ I | t ∉ V] for prior p: (1 − α)p / ((1 − α)p + (1 − β)(1 − p)). Vectorised."""
    p = np.asarray(prior, dtype=float)
    return _scalar((1.0 - alpha) * p / ((1.0 - alpha) * p + (1.0 - beta) * (1.0 - p)))


def _scalar(values: np.ndarray) -> Any:
    return float(values) if values.ndim == 0 else values


def equivalent_epsilon(alpha: float, beta: float) -> float:
    """The ε of unbounded DP the α-β algorithm satisfies (for a fixed public domain).

    ε = max(|ln(α/β)|, |ln((1 − β)/(1 − α))|); infinite when α or β is 0 or 1 while the other
    is not (a tuple's presence or absence is then certain from the view).
    """
    alpha = _probability(alpha, "alpha", open_low=False, open_high=False)
    beta = _probability(beta, "beta", open_low=False, open_high=False)
    return max(_log_ratio(alpha, beta), _log_ratio(1.0 - beta, 1.0 - alpha))


def _log_ratio(a: float, b: float) -> float:
    if a == b:
        return 0.0
    if a == 0.0 or b == 0.0:
        return math.inf
    return abs(math.log(a / b))


@dataclass(frozen=True)
class TheoremBound:
    """The error bound ρ√n of the utility theorem (per query fixed in advance), or why it does not apply."""

    applies: bool
    failure: float
    r: float | None = None
    rho: float | None = None
    error: float | None = None
    reason: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"applies": self.applies, "failure_probability": self.failure, "r": self.r,
                "rho": self.rho, "error": self.error, "reason": self.reason,
                "theorem": THEOREM_UTILITY}


def failure_of(confidence: float) -> float:
    """The failure probability ε' = 1 − confidence of an error bar (confidence in (0, 1))."""
    if isinstance(confidence, bool) or not isinstance(confidence, (int, float)) or not 0.0 < confidence < 1.0:
        raise ParameterError(f"the confidence must lie in (0, 1), e.g. 0.95; got {confidence!r}")
    return round(1.0 - float(confidence), 12)


def check_failure(failure: float) -> float:
    """A failure probability ε' of an error bound: 0 < ε' < 1."""
    return _probability(failure, "the failure probability of the error bound")


def theorem_error_bound(alpha: float, beta: float, n: int, m: int, failure: float = DEFAULT_FAILURE) -> TheoremBound:
    """ρ√n such that Pr[|Q(I) − EST(Q, V)| ≥ ρ√n] ≤ ε' for each counting query Q fixed before the
    view is drawn (Rastogi, Suciu & Hong 2007 state it so).

    The probability is over the view, for one Q at a time: the bound is not simultaneous over all
    queries, and it does not cover a query chosen by looking at the view (the sup over queries of
    the error grows linearly in n: docs/alpha-beta.md).

    ρ = 2·sqrt(3r·ln(2/ε')) with r the smallest value for which the theorem's proof goes through:
    β ≤ (r/4)(n/m) (so r ≥ 4βm/n), and the Chernoff step. The proof (docs/alpha-beta.md):
    n_V is a sum of independent Bernoulli variables with mean μ ≤ μ_H = αn + βm, and the
    estimator is off by ρ√n exactly when n_V is off by t = (α − β)ρ√n. The two-sided Chernoff
    bound 2·exp(−t²/(3μ_H)) (valid for t ≤ μ_H) is at most ε' when 4r(α − β)²·n ≥ μ_H, which
    holds when 4r(α − β)² ≥ α + r/4. So r = max(4βm/n, α/(4(α − β)² − 1/4)), which needs
    α − β > 1/4. The bound is reported as not applicable (with the reason) when α < 1/2,
    α − β ≤ 1/4, or t > μ_H.
    """
    failure = check_failure(failure)
    n, m = _check_sizes(n, m)
    alpha = _probability(alpha, "alpha", open_high=False)
    beta = _probability(beta, "beta", open_low=False)
    if alpha < 0.5:
        return TheoremBound(False, failure, reason=f"alpha = {alpha:.6g} < 1/2 (the theorem needs alpha >= 1/2)")
    gap = alpha - beta
    if gap <= 0.25:
        return TheoremBound(False, failure,
                            reason=f"alpha - beta = {gap:.6g} <= 1/4: the Chernoff step of the proof fails")
    r = max(4.0 * beta * m / n, alpha / (4.0 * gap * gap - 0.25))
    log_term = math.log(2.0 / failure)
    rho = 2.0 * math.sqrt(3.0 * r * log_term)
    error = rho * math.sqrt(n)
    upper_mean = alpha * n + beta * m
    if gap * error > upper_mean:
        return TheoremBound(False, failure, r=r, rho=rho, reason=(
            "the deviation the bound needs exceeds the view's expected size (the data is too "
            "small for the Chernoff step at this failure probability)"))
    return TheoremBound(True, failure, r=r, rho=rho, error=error)


def bernstein_error_bound(
    alpha: float, beta: float, n: int, n_domain: Any, failure: float = DEFAULT_FAILURE
) -> Any:
    """Per-query half-width h with Pr[|Q(I) − EST(Q, V)| ≥ h] ≤ ε', vectorised over ``n_domain``.

    n_V = Σ_{t ∈ Q ∩ D} X_t with independent X_t ~ Bernoulli(α) (t ∈ I) or Bernoulli(β) (t ∉ I),
    so its variance is v = α(1−α)q + β(1−β)(n_D − q) with q = Q(I) ∈ [0, min(n, n_D)] unknown;
    v is linear in q and is bounded by its larger end value. Bernstein's inequality (Bernstein
    1924; increments bounded by 1): Pr[|n_V − E n_V| ≥ t] ≤ 2·exp(−t²/(2(v + t/3))), which equals
    ε' at t = L/3 + sqrt(L²/9 + 2vL), L = ln(2/ε'). The estimator's error is t/(α − β).
    """
    failure = check_failure(failure)
    if not alpha > beta:
        raise ParameterError("the estimator needs alpha > beta")
    n_d = np.asarray(n_domain, dtype=float)
    q_max = np.minimum(float(n), n_d)
    v_kept = beta * (1.0 - beta) * n_d
    v_full = alpha * (1.0 - alpha) * q_max + beta * (1.0 - beta) * (n_d - q_max)
    variance = np.maximum(v_kept, v_full)
    log_term = math.log(2.0 / failure)
    t = log_term / 3.0 + np.sqrt(log_term * log_term / 9.0 + 2.0 * variance * log_term)
    return _scalar(t / (alpha - beta))


def _check_sizes(n: int, m: int) -> tuple[int, int]:
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"the data must hold at least one tuple, got n = {n!r}")
    if isinstance(m, bool) or not isinstance(m, (int, np.integer)) or m < n:
        raise ParameterError(f"the domain size m must be a whole number >= n = {n}, got {m!r}")
    return int(n), int(m)


@dataclass(frozen=True)
class AlphaBetaPlan:
    """A checked choice of (α, β) for a (d, γ) target on data of n tuples in a domain of m.

    ``n`` is the n the plan was made for: :mod:`crowdsafe.perturb` passes the public bound N ≥ n
    (never the exact n of a certified run), so the expected sizes are at n = N, upper bounds of
    the expected view size. ``from_data`` names which of ``"n"`` and ``"m"`` were read from the
    data (an exploratory run: :func:`read_from_data`): then they and every figure made from them
    are custodian-only.
    """

    d: float
    gamma: float
    alpha: float
    beta: float
    n: int
    m: int
    c: float | None
    epsilon: float
    expected_kept: float
    expected_inserted: float
    expected_view: float
    ratio: float
    utility: TheoremBound
    exclusive_correlations: bool
    warnings: tuple[str, ...] = ()
    notes: tuple[str, ...] = field(default=())
    from_data: tuple[str, ...] = ()

    def __repr__(self) -> str:
        # concise (the field-by-field repr ran to every figure of the utility bound); each figure
        # rounded toward what holds; N and m read from the data labelled, as the plan's printout does
        read = " and ".join(name for key, name in (("n", "N"), ("m", "m")) if key in self.from_data)
        label = f"; {read} read from the data: custodian-only" if read else ""
        return (f"AlphaBetaPlan(d={rounded_down(self.d, 4)}, gamma={rounded_up(self.gamma, 4)}, "
                f"alpha={rounded_down(self.alpha, 4)}, beta={rounded_up(self.beta, 4)}, "
                f"epsilon={rounded_up(self.epsilon, 4)}, N={self.n:,}, m={self.m:,}, "
                f"expected_view={self.expected_view:,.1f}{label})")

    @property
    def posterior_present_max(self) -> float:
        """The largest posterior of a tuple seen in the view, for a prior of at most d."""
        return float(posterior_present(self.d, self.alpha, self.beta))

    @property
    def posterior_absent_ratio_min(self) -> float:
        """The smallest posterior/prior ratio of a tuple absent from the view (prior ≤ d)."""
        return float(posterior_absent(self.d, self.alpha, self.beta)) / self.d

    def as_dict(self) -> dict[str, Any]:
        return {
            "d": self.d, "gamma": self.gamma, "c": self.c, "alpha": self.alpha, "beta": self.beta,
            "n_bound": self.n, "m": self.m, "equivalent_epsilon": self.epsilon,
            "expected_kept": self.expected_kept, "expected_inserted": self.expected_inserted,
            "expected_view": self.expected_view, "view_to_data_ratio": self.ratio,
            "posterior_present_max": self.posterior_present_max,
            "posterior_absent_ratio_min": self.posterior_absent_ratio_min,
            "exclusive_correlations": self.exclusive_correlations,
            "utility": self.utility.as_dict(), "warnings": list(self.warnings), "notes": list(self.notes),
            "from_data": list(self.from_data),
        }


#: The note of a plan whose N or m was read from the data (the same words whatever the values).
READ_FROM_DATA_NOTE = (
    "{what} read from the data (exploratory): {they} and every figure computed from {them} (d, beta, the "
    "expected sizes, the error bound) are custodian-only facts that no guarantee covers; a view made "
    "with this plan is NOT fit for release"
)


def read_from_data(plan: AlphaBetaPlan, *, n: bool, m: bool) -> AlphaBetaPlan:
    """``plan`` with its N (``n``) and domain size (``m``) marked as read from the data, and a
    note saying so: the marks and the note depend on which were read, never on their values."""
    read = sizes_read(n=n, m=m)
    if not read:
        return plan
    what = "N and m were" if len(read) == 2 else ("N was" if n else "m was")
    words = ("they", "them") if len(read) == 2 else ("it", "it")
    note = READ_FROM_DATA_NOTE.format(what=what, they=words[0], them=words[1])
    return replace(plan, from_data=read, notes=(*plan.notes, note))


@dataclass(frozen=True, slots=True)
class AlphaBetaPlanRequest:
    """The (d, γ) target an α-β plan is made for: public parameters, fixed before the data is read.

    - ``gamma``: the bound γ on an attacker's posterior (d ≤ γ < 1).
    - ``d``: the bound on an attacker's prior; or ``c``, for d = c·n/m (n: the public bound on the
      tuples). Exactly one of the two.
    - ``alpha``: the probability α of keeping a tuple (default 1/2, or 1 − d/γ when 1/2 is not
      admissible).
    - ``beta``: the probability β of inserting a tuple (default: the smallest admissible).
    - ``failure``: the failure probability ε' of the utility bound (1 − its confidence).
    - ``exclusive_correlations``: also cover priors "exactly one of a set of tuples is in I"
      (α = 1/2, β ≥ (d/γ)(1 − γ)/(1 − d)).
    - ``max_view_rows``: the largest expected view a run in memory (the Polars engine) makes: a
      plan expecting more is refused before any charge or coin (:func:`check_view_size`), where
      it would exhaust the memory after the charge (None: no limit). The Spark engine writes its
      view in parts: it checks a limit given (``perturb(..., max_view_rows=N)``, ``--max-view-rows
      N``) before anything is drawn or written, and has none by default. The plan itself only warns.

    Every field is checked by :func:`plan_alpha_beta`, where it always was (after the table's
    attributes, domains and bound are checked), with ParameterError naming the condition.
    """

    gamma: float
    d: float | None = None
    c: float | None = None
    alpha: float | None = None
    beta: float | None = None
    failure: float = DEFAULT_FAILURE
    exclusive_correlations: bool = False
    max_view_rows: int | None = LARGE_VIEW_ROWS


def check_view_size(plan: AlphaBetaPlan, max_view_rows: int | None, *, in_memory: bool = True) -> None:
    """Refuse a plan whose expected view (α·N + β·(m − N), public) holds more than
    ``max_view_rows`` rows (None: no limit), naming what makes it smaller (``in_memory``: the
    limit is the in-memory engine's, else one the caller gave)."""
    if max_view_rows is None:
        return
    check_max_view_rows(max_view_rows)
    if plan.expected_view > max_view_rows:  # (a figure from an N or m read from the data is labelled so)
        raise ParameterError(
            f"the view would hold about {plan.expected_view:,.0f} rows, more than max_view_rows={max_view_rows:,} "
            f"({'a view is made in memory' if in_memory else 'the limit given'}): raise gamma, lower c (or d), "
            "publish fewer attributes, or allow it with "
            "max_view_rows=N" + (SIZES_FROM_DATA if plan.from_data else ""), parameter="max_view_rows")


def check_max_view_rows(max_view_rows: int | None) -> None:
    """``max_view_rows``: None or a whole number >= 1 (checked before the data is read)."""
    if max_view_rows is not None and (isinstance(max_view_rows, bool) or not isinstance(max_view_rows, int)
                                      or max_view_rows < 1):
        raise ParameterError(f"the max_view_rows parameter must be a whole number >= 1, got {max_view_rows!r}",
                             parameter="max_view_rows")


#: The end of a refusal of a plan whose figures come from an N or m read from the data (an exploratory
#: run): like the plan's N and m, they are custodian-only (docs/privacy-boundary.md)
SIZES_FROM_DATA = (" (a custodian-only fact about the data: computed from N or m read from the data (exploratory); "
                   "keep this message to the custodian)")


def sizes_read(*, n: bool, m: bool) -> tuple[str, ...]:
    """The names (``"n"``, ``"m"``) of the plan's sizes read from the data."""
    return tuple(name for name, yes in (("n", n), ("m", m)) if yes)


def check_plan_request(request: AlphaBetaPlanRequest) -> None:
    """Every check of ``request`` that needs neither n nor m, so it is made before the data is
    read and refuses a parameter mistake the same way on every table: ``max_view_rows``, d and c
    (exactly one; c > 0), γ, α and β in range, the failure probability, and with d given every condition of the theorem
    (the plan's α and β follow from d and γ alone)."""
    gamma, d, c, alpha, beta = request.gamma, request.d, request.c, request.alpha, request.beta
    check_max_view_rows(request.max_view_rows)
    if (d is None) == (c is None):
        raise ParameterError("give exactly one of d (the prior bound) and c (for d = c*n/m)")
    if c is not None and (isinstance(c, bool) or not isinstance(c, (int, float)) or not math.isfinite(c) or c <= 0):
        raise ParameterError(f"c must be a positive number, got {c!r}")
    check_failure(request.failure)
    if d is not None:
        _choose(*check_d_gamma(d, gamma), request)
        return
    _probability(gamma, "gamma")
    alpha = None if alpha is None else _probability(alpha, "alpha", open_high=False)
    beta = None if beta is None else _probability(beta, "beta", open_high=False)
    if request.exclusive_correlations and alpha is not None and alpha != 0.5:
        raise ParameterError("the guarantee against 'exactly one of a set' correlations needs alpha = 1/2")
    if alpha is not None and beta is not None and beta >= alpha:
        raise ParameterError(
            f"beta = {beta:.6g} must be below alpha = {alpha:.6g}: the estimator divides by alpha - beta"
        )


def plan_alpha_beta(n: int, m: int, request: AlphaBetaPlanRequest, *,
                    from_data: tuple[str, ...] = ()) -> AlphaBetaPlan:
    """Choose and check (α, β) for the (d, γ) target of ``request``; d is given, or d = c·n/m.

    ``n`` is the number of tuples or, for a release, a public upper bound on it (see the
    module docs: the exact n is not public).

    α defaults to 1/2 (or 1 − d/γ when 1/2 is not admissible, with a note); β defaults to the
    smallest admissible value. With ``exclusive_correlations`` the plan also covers priors of
    the form "exactly one of a set of tuples is in I": α = 1/2 and β ≥ (d/γ)(1 − γ)/(1 − d).
    Parameters outside the theorem's conditions raise ParameterError naming the condition: those
    :func:`check_plan_request` decides first, unlabelled; then those that depend on n and m, which
    end :data:`SIZES_FROM_DATA` when ``from_data`` names a size read from the data (and the plan is
    marked so: :func:`read_from_data`).
    """
    check_plan_request(request)
    try:
        plan = _plan(n, m, request)
    except ParameterError as exc:
        if not from_data:
            raise
        raise ParameterError(f"{exc}{SIZES_FROM_DATA}", parameter=exc.parameters) from None
    return read_from_data(plan, n="n" in from_data, m="m" in from_data)


def _choose(d: float, gamma: float, request: AlphaBetaPlanRequest) -> tuple[float, float, list[str]]:
    """α, β and the plan's notes for a checked (d, γ): from them and ``request`` alone."""
    alpha, beta, exclusive_correlations = request.alpha, request.beta, request.exclusive_correlations
    notes: list[str] = []
    top = 1.0 - d / gamma
    if exclusive_correlations:
        if alpha is not None and alpha != 0.5:
            raise ParameterError("the guarantee against 'exactly one of a set' correlations needs alpha = 1/2")
        if top < 0.5:
            raise ParameterError(
                f"alpha = 1/2 is above 1 - d/gamma = {top:.6g}; the correlation-robust plan needs "
                "d/gamma <= 1/2"
            )
        alpha = 0.5
    if alpha is None:
        alpha = DEFAULT_ALPHA if DEFAULT_ALPHA <= top else top
        if alpha != DEFAULT_ALPHA:
            notes.append(f"alpha = 1/2 is not admissible (1 - d/gamma = {rounded_down(top)}); using alpha = "
                         f"{rounded_down(alpha)}")
    floor = min_beta(d, gamma, alpha)
    if exclusive_correlations:
        floor = max(floor, exclusive_correlation_beta(d, gamma))
    if beta is None:
        beta = min(floor * (1.0 + _BETA_MARGIN), 1.0)
    check_alpha_beta(d, gamma, alpha, beta)
    if exclusive_correlations and beta < exclusive_correlation_beta(d, gamma):
        raise ParameterError(
            f"beta = {beta:.6g} is below (d/gamma)(1-gamma)/(1-d) = "
            f"{rounded_up(exclusive_correlation_beta(d, gamma))}, "
            "which the guarantee against 'exactly one of a set' correlations needs"
        )
    return alpha, beta, notes


def _plan(n: int, m: int, request: AlphaBetaPlanRequest) -> AlphaBetaPlan:
    d, c = request.d, request.c
    n, m = _check_sizes(n, m)
    if c is not None:
        d = c * n / m
        if d >= 1.0:
            raise ParameterError(
                f"d = c*n/m = {d:.6g} is not below 1 (n = {n:,}, the bound on the rows taken for n, at most the "
                f"domain's m = {m:,} tuples): "
                f"use a smaller c (c < m/n = {rounded_down(m / n)}), "
                "or publish more attributes (the domain is too small for the data)"
            )
    assert d is not None
    d, gamma = check_d_gamma(d, request.gamma)
    alpha, beta, notes = _choose(d, gamma, request)
    kept = alpha * n
    inserted = beta * (m - n)
    view = kept + inserted
    ratio = view / n
    warnings = []
    if view > LARGE_VIEW_ROWS:
        warnings.append(
            f"the view would hold about {view:,.0f} rows: impractically large; raise gamma, lower c "
            "(or d), or publish fewer attributes"
        )
    if ratio > LARGE_VIEW_RATIO:
        warnings.append(
            f"the view would be about {ratio:,.0f} times the data: inserted tuples dominate it; "
            "raise gamma or lower c (or d)"
        )
    utility = theorem_error_bound(alpha, beta, n, m, request.failure)
    return AlphaBetaPlan(
        d=d, gamma=gamma, alpha=alpha, beta=beta, n=n, m=m, c=c,
        epsilon=equivalent_epsilon(alpha, beta), expected_kept=kept, expected_inserted=inserted,
        expected_view=view, ratio=ratio, utility=utility,
        exclusive_correlations=request.exclusive_correlations, warnings=tuple(warnings), notes=tuple(notes),
    )


def correlation_assumption(alpha: float, beta: float, d: float, gamma: float) -> str:
    """The certificate's statement about correlated attackers, for this (α, β)."""
    needed = exclusive_correlation_beta(d, gamma)
    covered = alpha == 0.5 and beta >= needed
    status = (
        "this release meets that condition"
        if covered
        else f"this release does not (alpha = {alpha:.6g}, beta = {beta:.6g}; "
        f"it needs alpha = 1/2 and beta >= {rounded_up(needed)})"
    )
    return (
        "against correlated attackers the guarantee weakens: for priors of the form 'exactly one "
        "of a set of tuples is in the data' there is no positive leakage only when alpha = 1/2 and "
        f"beta >= (d/gamma)(1-gamma)/(1-d) = {rounded_up(needed)} ({status}); for arbitrary correlations "
        "there is no guarantee"
    )
