"""Turn a chain of privacy profiles into a certificate, and compose certificates.

- :func:`certify_k_anonymization` — sampling + recoding + suppression (Li, Qardaji, Su 2012,
  Theorems 5 and 6), or "no formal guarantee" when the recoding is fitted to the data or there
  is no sampling;
- :func:`certify_mechanism` — an (ε, δ)-DP mechanism, amplified when run on a sample;
- :func:`certify_chain` — either of the above, read from a list of profiles;
- :func:`no_guarantee` — the honest certificate of a release without a formal guarantee;
- :func:`compose_certificates` — several releases of the same data. A DP-under-sampling
  guarantee rests on the attacker's uncertainty about *which* rows were sampled; any other
  output computed on the same sample can remove that uncertainty (see docs/privacy-calculus.md
  for a two-predicate XOR example). So a DPS certificate is never composed with another
  release on the same sample (:class:`~crowdsafe.errors.SampleReuseError`); releases on fresh,
  independent samples are each (ε, δ)-DP and compose as such.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from crowdsafe.errors import ParameterError, SampleReuseError
from crowdsafe.privacy.amplification import amplify, sampling_floor
from crowdsafe.privacy.certificate import Certificate, Guarantee, Neighbours
from crowdsafe.privacy.composition import compose_homogeneous, sequential
from crowdsafe.privacy.dps import delta_bound
from crowdsafe.privacy.loss import PrivacyLoss, check_delta
from crowdsafe.privacy.planning import smallest_epsilon
from crowdsafe.privacy.profiles import (
    MechanismProfile,
    Profile,
    RecodingProfile,
    SamplingProfile,
    SuppressionProfile,
    new_sample_id,
)

if TYPE_CHECKING:  # NumPy's and randomgen's generators: a classic anonymization certifies without them
    from crowdsafe.randomness import Randomness

THEOREM_STRONGLY_SAFE = (
    "Li, Qardaji, Su 2012, Theorem 5: strongly-safe k-anonymization after Bernoulli(beta) "
    "sampling is (beta, epsilon, d(k, beta, epsilon))-DPS for epsilon >= -ln(1 - beta)"
)
THEOREM_EPSILON_SAFE = (
    "Li, Qardaji, Su 2012, Theorem 6: epsilon1-safe k-anonymization after Bernoulli(beta) "
    "sampling is (beta, epsilon, d(k, beta, epsilon - epsilon1))-DPS for "
    "epsilon >= -ln(1 - beta) + epsilon1"
)
THEOREM_TABLE_CHOICE = (
    "sequential composition (Dwork, Roth 2014, Theorem 3.16, adaptive) of an epsilon1-DP choice of the "
    "recoding on the table and, for the recoding chosen, strongly-safe k-anonymization after Bernoulli(beta) "
    "sampling, (beta, epsilon - epsilon1, d(k, beta, epsilon - epsilon1))-DPS by Li, Qardaji, Su 2012, Theorem 5: "
    "(epsilon, d(k, beta, epsilon - epsilon1))-DP for epsilon >= -ln(1 - beta) + epsilon1"
)
THEOREM_AMPLIFICATION = (
    "amplification by sampling (Li, Qardaji, Su 2012, Theorem 1): an (epsilon, delta)-DP "
    "algorithm on a Bernoulli(beta) sample is (ln(1 + beta(e^epsilon - 1)), beta*delta)-DP"
)
THEOREM_GROUP = (
    "group privacy for change-one neighbours (a change is a removal and an addition): "
    "(epsilon, delta) becomes (2 epsilon, (1 + e^epsilon) delta) (Dwork & Roth 2014, Thm 2.2)"
)

ASSUME_ONE_ROW = "each person contributes at most one row (otherwise bound contributions first)"
ASSUME_SECRET_SAMPLE = (
    "the Bernoulli sample is drawn from a secret random source and is never disclosed"
)
ASSUME_SAMPLE_ONCE = (
    "the sample is used for no other release or query: DPS does not compose on one sample"
)
ASSUME_ADD_REMOVE = "neighbouring datasets differ by one added or removed row"
ASSUME_CHANGE = "neighbouring datasets differ by one changed row"


def _describe(randomness: Randomness | dict[str, Any] | None) -> dict[str, Any] | None:
    if randomness is None:
        return None
    from crowdsafe.randomness import Randomness

    if isinstance(randomness, Randomness):
        return randomness.describe()
    if isinstance(randomness, dict) and "fit_for_release" in randomness:
        return dict(randomness)
    raise ParameterError("randomness must be a Randomness or its describe() dictionary")


def _accounting(accounting: dict[str, Any] | None) -> dict[str, Any] | None:
    """What recorded the run: ``{"ledger": bool, ...}`` (None: not stated)."""
    if accounting is None:
        return None
    if not isinstance(accounting, dict) or not isinstance(accounting.get("ledger"), bool):
        raise ParameterError('accounting must be a dictionary with a boolean "ledger"')
    return dict(accounting)


def _neighbour_assumption(neighbours: Neighbours) -> str:
    if neighbours == "add-remove":
        return ASSUME_ADD_REMOVE
    if neighbours == "change":
        return ASSUME_CHANGE
    raise ParameterError(f"neighbours must be 'add-remove' or 'change', got {neighbours!r}")


def to_change_neighbours(loss: PrivacyLoss) -> PrivacyLoss:
    """An add/remove (ε, δ) guarantee restated for change-one neighbours: (2ε, (1 + e^ε)δ)."""
    delta = (1.0 + math.exp(loss.epsilon)) * loss.delta if loss.delta else 0.0
    if delta >= 1.0:
        raise ParameterError(
            f"{loss} restated for change-one neighbours has delta >= 1: no guarantee"
        )
    return PrivacyLoss(2.0 * loss.epsilon, delta)


def no_guarantee(
    reason: str,
    *,
    mechanisms: Sequence[dict[str, Any]] = (),
    parameters: dict[str, Any] | None = None,
    neighbours: Neighbours = "add-remove",
    randomness: Randomness | dict[str, Any] | None = None,
    accounting: dict[str, Any] | None = None,
) -> Certificate:
    """The certificate of a release without a formal guarantee, stating why."""
    return Certificate(
        guarantee="none",
        epsilon=None,
        delta=None,
        theorem=None,
        mechanisms=tuple(mechanisms),
        parameters=dict(parameters or {}),
        assumptions=(),
        neighbours=neighbours,
        reason=reason,
        randomness=_describe(randomness),
        accounting=_accounting(accounting),
    )


def certify_k_anonymization(
    *,
    sampling: SamplingProfile | float | None,
    recoding: RecodingProfile,
    k: int,
    epsilon: float | None = None,
    delta: float | None = None,
    neighbours: Neighbours = "add-remove",
    randomness: Randomness | dict[str, Any] | None = None,
    accounting: dict[str, Any] | None = None,
    parameters: dict[str, Any] | None = None,
) -> Certificate:
    """Certify ``Apply(Am(D), Sample_β(D), k)`` from the profiles of its pieces.

    - unsafe recoding (fitted to the data): no formal guarantee, with the recoding's reason;
    - no sampling (β = 1): no formal guarantee (the sampling floor −ln(1 − β) is infinite);
    - strongly safe: (β, ε, d(k, β, ε))-DPS (Li, Qardaji, Su 2012, Theorem 5);
    - ε1-safe: (β, ε, d(k, β, ε − ε1))-DPS (Theorem 6);
    - chosen by an ε1-DP mechanism on the whole table (``recoding.reads == "table"``): the choice
      composed with the chosen recoding's strongly safe release (Theorem 5 at ε − ε1), the same
      (ε, d(k, β, ε − ε1)) (selection/PROOF.md §8).

    Give ``epsilon`` (the total ε, selection included) to certify at that ε, or only ``delta`` to
    certify at the smallest ε reaching it; with both, δ at ε must not exceed ``delta``. When
    d(k, β, ε) ≥ β the result is "no formal guarantee" (DPS needs β > δ). ``randomness`` (the
    one that drew the sample) is required when sampling ran. With ``neighbours="change"`` the
    guarantee is restated by group privacy. A DPS certificate names its release by
    ``sample = {"rate": beta, "release_id": ...}``: ``sampling.sample_id``, which the caller draws
    from the run's randomness before any data-dependent draw (random bits, never a hash of the
    data), or a fresh random id. ``accounting`` (``{"ledger": bool}``) states what recorded the
    run; without a ledger the certificate is not fit for release.
    """
    if not isinstance(recoding, RecodingProfile):
        raise ParameterError("recoding must be a RecodingProfile")
    suppression = SuppressionProfile(k)
    if sampling is None:
        sampling = SamplingProfile(1.0)
    elif not isinstance(sampling, SamplingProfile):
        sampling = SamplingProfile(sampling)
    _neighbour_assumption(neighbours)
    chain = (sampling.step(), recoding.step(), suppression.step())
    params: dict[str, Any] = {"k": suppression.k, "beta": sampling.rate, **(parameters or {})}
    if recoding.safety == "epsilon-safe":
        params["epsilon1"] = recoding.epsilon1
    common: dict[str, Any] = dict(mechanisms=chain, parameters=params, neighbours=neighbours,
                  randomness=randomness, accounting=accounting)
    if recoding.safety == "unsafe":
        assert recoding.reason is not None
        return no_guarantee(recoding.reason, **common)
    if sampling.rate >= 1.0:
        return no_guarantee(
            "no sampling (beta = 1): k-anonymization alone is not differentially private, "
            "even with a safe recoding; sample with beta < 1",
            **common,
        )
    if randomness is None:
        raise ParameterError("certifying a sampled release needs the Randomness that drew the sample")
    beta, epsilon1 = sampling.rate, recoding.epsilon1
    if epsilon is None:
        if delta is None:
            raise ParameterError("give epsilon (to certify at it) or delta (to find the least epsilon)")
        epsilon = smallest_epsilon(suppression.k, beta, delta, epsilon1).epsilon
    bound = delta_bound(suppression.k, beta, epsilon, epsilon1)
    if delta is not None and bound.delta > check_delta(delta):
        raise ParameterError(
            f"d(k, beta, epsilon - epsilon1) = {bound.delta:.3g} exceeds the requested "
            f"delta = {delta:g} at k = {k}, beta = {beta:g}, epsilon = {epsilon:g}"
        )
    params.update(
        epsilon_anon=epsilon - epsilon1,
        sampling_floor=sampling_floor(beta, epsilon1),
        gamma=bound.gamma,
        n_min=bound.n_min,
        n_at_max=bound.n_at_max,
    )
    if not bound.delta < beta:
        return no_guarantee(
            f"d(k, beta, epsilon) = {bound.delta:.3g} is not below beta = {beta:g}, and DPS "
            "needs beta > delta; raise k or epsilon, or lower beta",
            **common,
        )
    loss = PrivacyLoss(epsilon, bound.delta)
    theorem = THEOREM_STRONGLY_SAFE if recoding.safety == "strongly-safe" else \
        THEOREM_TABLE_CHOICE if recoding.reads == "table" else THEOREM_EPSILON_SAFE
    assumptions = [ASSUME_SECRET_SAMPLE, ASSUME_SAMPLE_ONCE, ASSUME_ONE_ROW]
    if recoding.safety == "strongly-safe":
        assumptions.append("the recoding was fixed without looking at the data")
    elif recoding.reads == "table":
        assumptions.append("the recoding was chosen by an epsilon1-DP mechanism on the table, with randomness "
                           "independent of the sample's")
    else:
        assumptions.append(
            "the recoding was chosen by an epsilon1-DP mechanism that saw only the sample"
        )
    if neighbours == "change":
        params["epsilon_add_remove"], params["delta_add_remove"] = loss.epsilon, loss.delta
        loss = to_change_neighbours(loss)
        theorem = f"{theorem}; {THEOREM_GROUP}"
    assumptions.append(_neighbour_assumption(neighbours))
    return Certificate(
        guarantee="dps",
        epsilon=loss.epsilon,
        delta=loss.delta,
        theorem=theorem,
        mechanisms=chain,
        parameters=params,
        assumptions=tuple(assumptions),
        neighbours=neighbours,
        sample={"release_id": sampling.sample_id or new_sample_id(), "rate": beta},
        randomness=_describe(randomness),
        accounting=_accounting(accounting),
    )


def certify_mechanism(
    mechanisms: MechanismProfile | Sequence[MechanismProfile],
    *,
    sampling: SamplingProfile | float | None = None,
    neighbours: Neighbours = "add-remove",
    randomness: Randomness | dict[str, Any] | None = None,
    accounting: dict[str, Any] | None = None,
    parameters: dict[str, Any] | None = None,
) -> Certificate:
    """Certify one or more (ε, δ)-DP mechanisms run on the same data (or the same sample).

    Several mechanisms compose sequentially. Run on a Bernoulli(β) sample, the composed
    guarantee is amplified once, as a whole: (ln(1 + β(e^ε − 1)), βδ) (Li, Qardaji, Su 2012,
    Theorem 1), and the certificate becomes DPS for that sample: amplifying each query on one
    sample separately and then composing would be unsound.
    """
    items = [mechanisms] if isinstance(mechanisms, MechanismProfile) else list(mechanisms)
    if not items or not all(isinstance(m, MechanismProfile) for m in items):
        raise ParameterError("certify_mechanism needs one or more MechanismProfile values")
    _neighbour_assumption(neighbours)
    if randomness is None:
        raise ParameterError("certifying a randomized mechanism needs the Randomness that ran")
    loss = sequential(m.loss for m in items)
    theorems = sorted({m.theorem for m in items})
    theorem = "; ".join(theorems)
    if len(items) > 1:
        theorem += "; basic sequential composition (Dwork et al. 2006)"
    chain = [m.step() for m in items]
    params = dict(parameters or {})
    assumptions = [ASSUME_ONE_ROW, _neighbour_assumption(neighbours)]
    sample = None
    guarantee: Guarantee = "dp"
    if sampling is not None:
        profile = sampling if isinstance(sampling, SamplingProfile) else SamplingProfile(sampling)
        if profile.rate < 1.0:
            if neighbours != "add-remove":
                raise ParameterError(
                    "amplification by Bernoulli sampling is stated for add/remove neighbours"
                )
            params.update(beta=profile.rate, epsilon_before_sampling=loss.epsilon,
                          delta_before_sampling=loss.delta)
            loss = amplify(loss, profile.rate)
            theorem += f"; {THEOREM_AMPLIFICATION}"
            chain.insert(0, profile.step())
            sample = {"release_id": profile.sample_id or new_sample_id(), "rate": profile.rate}
            guarantee = "dps"
            assumptions[:0] = [ASSUME_SECRET_SAMPLE, ASSUME_SAMPLE_ONCE]
    return Certificate(
        guarantee=guarantee,
        epsilon=loss.epsilon,
        delta=loss.delta,
        theorem=theorem,
        mechanisms=tuple(chain),
        parameters=params,
        assumptions=tuple(assumptions),
        neighbours=neighbours,
        sample=sample,
        randomness=_describe(randomness),
        accounting=_accounting(accounting),
    )


def certify_chain(
    profiles: Iterable[Profile],
    *,
    epsilon: float | None = None,
    delta: float | None = None,
    neighbours: Neighbours = "add-remove",
    randomness: Randomness | dict[str, Any] | None = None,
    accounting: dict[str, Any] | None = None,
    parameters: dict[str, Any] | None = None,
) -> Certificate:
    """Certify a pipeline from the profiles its pieces declare, in order.

    Recognized chains: [sampling?, recoding, suppression?] (k-anonymization; no suppression
    means k = 1) and [sampling?, mechanism, ...]. An unsafe recoding anywhere gives "no formal
    guarantee". Anything else is a ParameterError naming what was not understood.
    """
    items = list(profiles)
    samplings = [p for p in items if isinstance(p, SamplingProfile)]
    recodings = [p for p in items if isinstance(p, RecodingProfile)]
    suppressions = [p for p in items if isinstance(p, SuppressionProfile)]
    mechanisms = [p for p in items if isinstance(p, MechanismProfile)]
    unknown = [type(p).__name__ for p in items
               if not isinstance(p, (SamplingProfile, RecodingProfile, SuppressionProfile,
                                     MechanismProfile))]
    if unknown:
        raise ParameterError(f"not a privacy profile: {', '.join(unknown)}")
    if len(samplings) > 1 or len(recodings) > 1 or len(suppressions) > 1:
        raise ParameterError("a chain has at most one sampling, one recoding and one suppression step")
    if samplings and items[0] is not samplings[0]:
        raise ParameterError("sampling must be the first step of a chain")
    sampling = samplings[0] if samplings else None
    context: dict[str, Any] = dict(neighbours=neighbours, randomness=randomness,
                   accounting=accounting, parameters=parameters)
    if recodings:
        if mechanisms:
            raise ParameterError(
                "a chain mixes a recoding with other mechanisms; certify them as separate "
                "releases on separate samples and compose the certificates"
            )
        k = suppressions[0].k if suppressions else 1
        return certify_k_anonymization(sampling=sampling, recoding=recodings[0], k=k,
                                       epsilon=epsilon, delta=delta, **context)
    if suppressions:
        raise ParameterError("a suppression step needs the recoding it applies")
    if not mechanisms:
        raise ParameterError("an empty chain has nothing to certify")
    return certify_mechanism(mechanisms, sampling=sampling, **context)


def check_sample_independence(certificates: Sequence[Certificate]) -> None:
    """Raise SampleReuseError when a DPS certificate shares its sample with another release."""
    owners: dict[str, list[int]] = {}
    for index, cert in enumerate(certificates):
        for part in _leaves(cert):
            if part.release_id:
                owners.setdefault(part.release_id, []).append(index)
    for index, cert in enumerate(certificates):
        for part in _leaves(cert):
            if part.guarantee != "dps":
                continue
            sample_id = part.release_id
            assert sample_id is not None
            users = sorted(set(owners[sample_id]))
            if len(users) > 1 or owners[sample_id].count(index) > 1:
                error = SampleReuseError(
                    f"releases {', '.join(str(u + 1) for u in users)} all use sample {sample_id}, "
                    "and one is DP-under-sampling: its guarantee rests on the sample being used "
                    "for nothing else; draw a fresh independent sample for each release"
                )
                error.exit_code = 2  # certificates that contradict each other: bad input, not a ledger's refusal
                raise error


def _leaves(cert: Certificate) -> list[Certificate]:
    if not cert.components:
        return [cert]
    return [leaf for c in cert.components for leaf in _leaves(c)]


def compose_certificates(
    certificates: Iterable[Certificate], *, delta_slack: float = 0.0
) -> Certificate:
    """The certificate of several releases of the same data.

    Refuses (SampleReuseError) when a DPS release shares its sample with any other release.
    Releases on fresh independent samples are each (ε, δ)-DP: they compose sequentially, or by
    the best of the k-fold bounds when all have the same (ε, δ) (then ``delta_slack`` is the
    extra δ the advanced bounds may spend). A release without guarantee makes the whole
    "no formal guarantee". Neighbour notions must agree.
    """
    items = list(certificates)
    if not items:
        raise ParameterError("nothing to compose")
    if not all(isinstance(c, Certificate) for c in items):
        raise ParameterError("compose_certificates needs Certificate values")
    if len({c.neighbours for c in items}) > 1:
        raise ParameterError("cannot compose certificates stated for different neighbour notions")
    check_sample_independence(items)
    chain = tuple({**step, "release": i + 1} for i, c in enumerate(items) for step in c.mechanisms)
    neighbours = items[0].neighbours
    without = [i for i, c in enumerate(items) if not c.has_guarantee]
    if without:
        first = items[without[0]]
        return Certificate(
            guarantee="none", epsilon=None, delta=None, theorem=None, mechanisms=chain,
            parameters={"releases": len(items)}, assumptions=(), neighbours=neighbours,
            reason=f"release {without[0] + 1} has no formal guarantee: {first.reason}",
            randomness=composed_randomness(items), components=tuple(items),
        )
    losses: list[PrivacyLoss] = []
    for c in items:
        assert c.loss is not None  # every item has a guarantee (checked above)
        losses.append(c.loss)
    params: dict[str, Any] = {"releases": len(items)}
    if len(items) > 1 and len(set(losses)) == 1:
        composed = compose_homogeneous(losses[0].epsilon, losses[0].delta, len(items), delta_slack)
        total = composed.loss
        theorem = composed.theorem
        params.update(bound=composed.bound, delta_slack=delta_slack,
                      candidates=[c.as_dict() for c in composed.candidates])
    else:
        total = sequential(losses)
        theorem = "basic sequential composition (Dwork et al. 2006)"
        params["bound"] = "summation"
    assumptions = ["every DP-under-sampling release used its own fresh, independent sample"]
    assumptions += sorted({a for c in items for a in c.assumptions if a != ASSUME_SAMPLE_ONCE})
    return Certificate(
        guarantee="dp", epsilon=total.epsilon, delta=total.delta, theorem=theorem,
        mechanisms=chain, parameters=params, assumptions=tuple(assumptions),
        neighbours=neighbours, randomness=composed_randomness(items), components=tuple(items),
    )


def composed_randomness(items: Sequence[Certificate]) -> dict[str, Any] | None:
    """The randomness of several releases together: None when no release recorded any; the one
    description when all recorded the same; otherwise seeded (and reproducible) when any release
    was, fit for release only when every release that recorded its randomness was."""
    described = [dict(c.randomness) for c in items if c.randomness is not None]
    if not described:
        return None
    if len(described) == len(items) and all(d == described[0] for d in described):
        return described[0]
    return {
        "source": "per release (see components)",
        "seeded": any(bool(d.get("seeded")) for d in described),
        "reproducible": any(bool(d.get("reproducible", d.get("seeded"))) for d in described),
        "fit_for_release": all(bool(d.get("fit_for_release", False)) for d in described),
    }
