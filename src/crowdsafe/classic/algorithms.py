"""The classic k-anonymization algorithms, end to end: choose g, Apply, certify.

``anonymize_dataset(dataset, "mondrian" | "mdav" | "lattice", k, ...)`` (keywords) or
``run_anonymization(dataset, AnonymizeRequest(...))`` returns a
:class:`~crowdsafe.anonymize.release.Release`. Each algorithm fits its recoding to the data, so
the certificate is always "no formal guarantee: data-dependent recoding (<algorithm>)",
derived by :func:`crowdsafe.privacy.certify_k_anonymization` from the recoding's profile.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from crowdsafe.anonymize.apply import apply, check_k, check_suppression_limit
from crowdsafe.anonymize.constraints import GroundDistance, sensitive_constraints
from crowdsafe.anonymize.recoding import Recoding, with_flat_hierarchies
from crowdsafe.anonymize.release import Release
from crowdsafe.classic.applicable import refuse_unused, resolved
from crowdsafe.classic.attributes import check_finite
from crowdsafe.classic.lattice_search import Search, lattice_search
from crowdsafe.classic.mdav import Aggregate, mdav
from crowdsafe.classic.mondrian import CategoricalForm, Mode, mondrian
from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError
from crowdsafe.privacy import RecodingProfile, certify_k_anonymization

Algorithm = Literal["mondrian", "mdav", "lattice"]
ALGORITHMS: tuple[str, ...] = ("mondrian", "mdav", "lattice")
ALGORITHM_NAMES = {"mondrian": "Mondrian", "mdav": "MDAV microaggregation", "lattice": "lattice search"}


def _sensitive_attribute(dataset: Dataset, sensitive: str | None, needed: bool) -> str | None:
    if sensitive is not None or not needed:
        return sensitive
    declared = dataset.sensitive
    if len(declared) == 1:
        return declared[0]
    if not declared:
        raise ParameterError(
            "ℓ-diversity and t-closeness need a sensitive attribute; name it with the sensitive parameter",
            parameter="sensitive",
        )
    raise ParameterError(
        f"the data has several sensitive attributes ({', '.join(declared)}); name the one to protect "
        "with the sensitive parameter", parameter="sensitive"
    )


@dataclass(frozen=True, slots=True)
class AnonymizeRequest:
    """A classic k-anonymization: the algorithm and its parameters. Each algorithm fits its
    recoding to the data, so a release made for any request carries no formal guarantee.

    - ``algorithm``: ``"mondrian"``, ``"mdav"`` or ``"lattice"`` (:data:`ALGORITHMS`);
    - ``k``: every output class holds at least k rows;
    - ``sensitive``: the attribute ``l`` / ``t`` protect (None: the data's one sensitive
      attribute, when ``l`` or ``t`` is asked);
    - ``l`` / ``t``: entropy ℓ-diversity and t-closeness (Mondrian and lattice; None: not asked);
    - ``distance``: the t-closeness ground distance (None: chosen from the attribute);
    - ``mode`` / ``categorical``: Mondrian's strict or relaxed cuts, and categories published as
      the lowest common hierarchy ``"node"`` or the ``"set"`` of values present;
    - ``aggregate``: MDAV's value for numbers, the group's ``"mean"`` or ``"median"``;
    - ``loss``, ``suppression_limit``, ``search``, ``time_budget``: the lattice search's
      measure (gcp, entropy, precision, height, discernibility), the share of rows it may
      suppress (None: 0), optimal / greedy / auto, and the greedy search's seconds.

    The algorithm's own options are None when not given (their defaults, strict, node, mean,
    gcp, auto and 30 s, are taken where they are read); one given to an algorithm that does not
    read it is refused (:mod:`crowdsafe.classic.applicable`).
    """

    algorithm: Algorithm | str
    k: int
    sensitive: str | None = None
    l: float | None = None
    t: float | None = None
    distance: GroundDistance | None = None
    mode: Mode | None = None
    categorical: CategoricalForm | None = None
    aggregate: Aggregate | None = None
    loss: str | None = None
    suppression_limit: float | None = None
    search: Search | None = None
    time_budget: float | None = None


def anonymize_dataset(
    dataset: Dataset,
    algorithm: Algorithm | str,
    k: int,
    *,
    sensitive: str | None = None,
    l: float | None = None,
    t: float | None = None,
    distance: GroundDistance | None = None,
    mode: Mode | None = None,
    categorical: CategoricalForm | None = None,
    aggregate: Aggregate | None = None,
    loss: str | None = None,
    suppression_limit: float | None = None,
    search: Search | None = None,
    time_budget: float | None = None,
) -> Release:
    """k-anonymize ``dataset``'s quasi-identifiers with a classic algorithm (no formal
    guarantee: the recoding is fitted to the data).

    - ``"mondrian"``: Mondrian multidimensional partitioning (``mode`` strict or relaxed;
      ``categorical`` values published as the lowest common hierarchy ``"node"`` or the
      ``"set"`` of values present); optional entropy ℓ-diversity ``l`` and t-closeness ``t``
      on ``sensitive``, checked at every cut.
    - ``"mdav"``: MDAV microaggregation (numbers by their group's ``aggregate``, mean or median;
      categories by their mode).
    - ``"lattice"``: full-domain generalization over the hierarchies minimizing ``loss`` (a
      :mod:`crowdsafe.metrics` measure: gcp, entropy, precision, height, discernibility) with
      at most ``suppression_limit`` of the rows suppressed (default 0), ``search`` optimal,
      greedy (within ``time_budget`` seconds) or auto; ``l`` / ``t`` as constraints.
      Quasi-identifiers without a hierarchy get the flat one (kept or ``*``).

    Every output class holds at least k rows (and satisfies ℓ / t when asked). The certificate
    and :meth:`Release.summary` hold the parameters and what the release itself shows; exact
    facts about the input (rows read and suppressed, the search's counts and timing) are in
    :meth:`Release.custodian_report`. The keyword form of :func:`run_anonymization` (it builds
    the :class:`AnonymizeRequest`).
    """
    request = AnonymizeRequest(
        algorithm=algorithm, k=k, sensitive=sensitive, l=l, t=t, distance=distance, mode=mode,
        categorical=categorical, aggregate=aggregate, loss=loss, suppression_limit=suppression_limit,
        search=search, time_budget=time_budget,
    )
    return run_anonymization(dataset, request)


def run_anonymization(dataset: Dataset, request: AnonymizeRequest) -> Release:
    """The release of ``dataset`` for ``request`` (see :func:`anonymize_dataset`); its
    certificate says "no formal guarantee: data-dependent recoding (<algorithm>)"."""
    algorithm, l, t = request.algorithm, request.l, request.t
    k = check_k(request.k)
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"unknown algorithm {algorithm!r}; use one of: {', '.join(ALGORITHMS)}")
    refuse_unused(request)
    mode, categorical, aggregate = (resolved(request, o) for o in ("mode", "categorical", "aggregate"))
    columns = dataset.quasi_identifiers
    if not columns:
        raise ParameterError("the data has no quasi-identifiers; name them with qi=[...]", parameter="qi")
    check_finite(dataset, columns)
    limit = (check_suppression_limit(request.suppression_limit) if request.suppression_limit is not None
             else None)
    sensitive = _sensitive_attribute(dataset, request.sensitive, l is not None or t is not None)
    if algorithm == "mdav" and (l is not None or t is not None):
        raise ParameterError("MDAV has no ℓ-diversity or t-closeness constraint; use mondrian or lattice")
    notes: list[str] = []
    custodian: dict[str, Any] = {}
    parameters: dict[str, Any] = {"algorithm": algorithm, "k": k, "quasi_identifiers": list(columns)}
    if algorithm == "lattice":
        dataset, added = with_flat_hierarchies(dataset, columns)
        if added:
            notes.append(f"no hierarchy for {', '.join(added)}: each can only be kept or fully generalized (*)")
    constraints = sensitive_constraints(dataset, sensitive, l=l, t=t, distance=request.distance)
    if constraints.active:
        parameters.update(constraints.describe())
    recoding: Recoding
    if algorithm == "mondrian":
        recoding = mondrian(dataset, k, columns=columns, mode=mode, categorical=categorical, constraints=constraints)
        name = "Mondrian"
        parameters.update(mode=mode, categorical=categorical)
    elif algorithm == "mdav":
        recoding = mdav(dataset, k, columns=columns, aggregate=aggregate)
        name = "MDAV microaggregation"
        parameters.update(aggregate=aggregate)
    else:
        limit = 0.0 if limit is None else limit
        recoding, result = lattice_search(dataset, k, columns=columns, suppression_limit=limit,
                                          constraints=constraints, metric=resolved(request, "loss"),
                                          search=resolved(request, "search"),
                                          time_budget=resolved(request, "time_budget"))
        name = "optimal lattice search" if result.optimal else "greedy lattice search"
        parameters.update(suppression_limit=limit, search=result.describe(), scheme=result.scheme_levels,
                          scheme_level_descriptions=recoding.describe().get("level_descriptions", {}))
        custodian["search"] = result.diagnostics()
    applied = apply(dataset, recoding, k, constraints=constraints, suppression_limit=limit)
    certificate = certify_k_anonymization(
        sampling=None,
        recoding=RecodingProfile.unsafe(name),
        k=k,
        parameters=parameters,
    )
    return Release(
        rows=applied.frame,
        certificate=certificate,
        algorithm=name,
        k=k,
        quasi_identifiers=tuple(columns),
        sensitive=sensitive,
        recoding=recoding,
        applied=applied,
        source=dataset,
        parameters=parameters,
        notes=tuple(notes),
        custodian=custodian,
    )
