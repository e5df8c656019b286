"""Why "differential privacy under sampling" does not compose: the counter-example, simulated.

Li, Qardaji and Su (2012, "On sampling, anonymization, and differential privacy", the remark
that DPS is not closed under composition): two mechanisms that are each private when run on a
random sample can, run on the *same* sample, reveal whether a given tuple is in the data.

Setting. D holds ``n`` tuples, half male, half female; D' = D plus one specific male tuple t.
One Bernoulli sample T (rate β) is drawn, and both mechanisms run on T:

- A1 outputs r(T) XOR s(T) when |T| ≥ ``minimum`` (else false), where r(T) = "T holds more
  males than females" and s(T) = "t is in T". On its own it is private: s is a fair coin under
  D', r is close to a fair coin, so A1 is close to a fair coin under both.
- A2 outputs the share of males with Laplace noise, (M + Z₁) / (M + F + Z₂) with Z₁, Z₂
  discrete Laplace of scale 2/ε (each count ε/2-DP, the ratio is post-processing): ε-DP.

Together: under D, s is false, so A1 = r, and A2 ≥ 1/2 essentially means r: Pr[A2 ≥ 1/2 and
A1 = false] ≈ 0. Under D', A1 = false with A2 ≥ 1/2 means r and s: probability ≈ 1/2 · 1/2 =
1/4. The event has probability ≈ 0 under D and ≈ 1/4 under D': no finite ε bounds the pair.
This is why :class:`~crowdsafe.privacy.ledger.Ledger` refuses a second use of a sample.

Simulation. A1 and A2 read the sample only through M (males in T), F (females in T) and s, so
each run draws M ~ Binomial(n_m, β), F ~ Binomial(n_f, β) and s ~ Bernoulli(β) under D' —
exactly the distribution a row-by-row Bernoulli sample gives — and all runs are one vector.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import Any

import numpy as np
from scipy import stats

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.exact import discrete_laplace
from crowdsafe.randomness import Randomness, as_randomness

EPSILON_DENOMINATOR = 10**6


@dataclass(frozen=True)
class MechanismOutputs:
    """``runs`` simulated samples of one dataset and what each mechanism output on them."""

    dataset: str
    a1: np.ndarray  # bool
    a2: np.ndarray  # float

    @property
    def joint(self) -> np.ndarray:
        """The revealing event: A2 ≥ 1/2 and A1 = false."""
        return (self.a2 >= 0.5) & ~self.a1


def _check(n: int, rate: float, epsilon: float, runs: int, minimum: int) -> None:
    if n < 2 or n % 2:
        raise ParameterError(f"the dataset size must be an even number >= 2 (half male, half female), got {n}")
    if not 0.0 < rate < 1.0:
        raise ParameterError(f"the sampling rate must lie in (0, 1), got {rate}")
    if not epsilon > 0.0:
        raise ParameterError(f"epsilon must be > 0, got {epsilon}")
    if runs < 1:
        raise ParameterError(f"the number of runs must be >= 1, got {runs}")
    if minimum < 0:
        raise ParameterError(f"the minimum sample size must be >= 0, got {minimum}")


def simulate(with_tuple: bool, *, n: int = 10_000, rate: float = 0.5, epsilon: float = 1.0, runs: int = 100_000,
             minimum: int = 1_000, randomness: Randomness | int | None = None) -> MechanismOutputs:
    """Run A1 and A2 on ``runs`` independent samples of D (``with_tuple=False``) or D'."""
    _check(n, rate, epsilon, runs, minimum)
    generator = as_randomness(randomness).generator
    males = generator.binomial(n // 2, rate, runs)
    females = generator.binomial(n // 2, rate, runs)
    if with_tuple:
        contains = generator.random(runs) < rate
        males = males + contains
    else:
        contains = np.zeros(runs, dtype=bool)
    size = males + females
    more_males = males > females
    a1 = np.where(size >= minimum, more_males ^ contains, False)
    half = Fraction(epsilon / 2).limit_denominator(EPSILON_DENOMINATOR)  # scale 2/ε = t/s
    noisy_males = males + discrete_laplace(generator, half.numerator, half.denominator, runs)
    noisy_size = size + discrete_laplace(generator, half.numerator, half.denominator, runs)
    with np.errstate(divide="ignore", invalid="ignore"):
        a2 = np.clip(np.where(noisy_size > 0, noisy_males / noisy_size, 0.0), 0.0, 1.0)
    return MechanismOutputs("D'" if with_tuple else "D", a1.astype(bool), a2)


def proportion(hits: int, trials: int, confidence: float = 0.95) -> dict[str, float]:
    """A share with its two-sided Clopper–Pearson interval."""
    alpha = 1.0 - confidence
    low = 0.0 if hits == 0 else float(stats.beta.ppf(alpha / 2, hits, trials - hits + 1))
    high = 1.0 if hits == trials else float(stats.beta.ppf(1 - alpha / 2, hits + 1, trials - hits))
    return {"estimate": hits / trials, "low": low, "high": high, "hits": hits, "trials": trials}


def _epsilon_seen(p: dict[str, float], q: dict[str, float]) -> float:
    """The largest |ln(p/q)| the intervals allow to be certain of: a lower bound on ε (0 if none)."""
    bounds = [0.0]
    if p["low"] > 0 and q["high"] > 0:
        bounds.append(np.log(p["low"] / q["high"]))
    if q["low"] > 0 and p["high"] > 0:
        bounds.append(np.log(q["low"] / p["high"]))
    return float(max(bounds))


def non_composition(*, n: int = 10_000, rate: float = 0.5, epsilon: float = 1.0, runs: int = 200_000,
                    minimum: int = 1_000, confidence: float = 0.95,
                    randomness: Randomness | int | None = None) -> dict[str, Any]:
    """Estimate, under D and D', the probability of A1's, A2's and the joint revealing event.

    Returns per event the estimate with its Clopper–Pearson interval under each dataset and the
    ε lower bound the two intervals prove (``inf`` when the event never happens under D but
    surely does under D'). Each mechanism alone stays near 0; together they do not.
    """
    streams = as_randomness(randomness).spawn(2)
    without = simulate(False, n=n, rate=rate, epsilon=epsilon, runs=runs, minimum=minimum, randomness=streams[0])
    with_t = simulate(True, n=n, rate=rate, epsilon=epsilon, runs=runs, minimum=minimum, randomness=streams[1])
    events = {
        "A1 = true": lambda r: r.a1,
        "A2 >= 0.5": lambda r: r.a2 >= 0.5,
        "A2 >= 0.5 and A1 = false": lambda r: r.joint,
    }
    rows = []
    for name, event in events.items():
        d = proportion(int(event(without).sum()), runs, confidence)
        d_prime = proportion(int(event(with_t).sum()), runs, confidence)
        rows.append({"event": name, "D": d, "D'": d_prime, "epsilon_lower_bound": _epsilon_seen(d_prime, d)})
    return {
        "n": n, "rate": rate, "epsilon": epsilon, "runs": runs, "minimum_sample": minimum,
        "confidence": confidence, "theory": {"D": 0.0, "D'": 0.25}, "events": rows,
    }
