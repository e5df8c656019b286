"""The classic k-anonymization algorithms, end to end: choose g, Apply, certify.

``anonymize_dataset(dataset, "mondrian" | "mdav" | "lattice", k, ...)`` returns a
:class:`~crowdsafe.anonymize.release.Release`. Each algorithm fits its recoding to the data, so
the certificate is always "no formal guarantee — data-dependent recoding (<algorithm>)",
derived by :func:`crowdsafe.privacy.certify_k_anonymization` from the recoding's profile.
"""

from __future__ import annotations

from typing import Any, Literal

from crowdsafe.anonymize.apply import apply, check_k, check_suppression_limit
from crowdsafe.anonymize.constraints import GroundDistance, sensitive_constraints
from crowdsafe.anonymize.recoding import Recoding, with_flat_hierarchies
from crowdsafe.anonymize.release import Release
from crowdsafe.classic.lattice_search import DEFAULT_TIME_BUDGET, Search, lattice_search
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


def anonymize_dataset(
    dataset: Dataset,
    algorithm: Algorithm | str,
    k: int,
    *,
    sensitive: str | None = None,
    l: float | None = None,
    t: float | None = None,
    distance: GroundDistance | None = None,
    mode: Mode = "strict",
    categorical: CategoricalForm = "node",
    aggregate: Aggregate = "mean",
    loss: str = "gcp",
    suppression_limit: float | None = None,
    search: Search = "auto",
    time_budget: float = DEFAULT_TIME_BUDGET,
) -> Release:
    """k-anonymize ``dataset``'s quasi-identifiers with a classic algorithm.

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
    :meth:`Release.custodian_report`.
    """
    k = check_k(k)
    if algorithm not in ALGORITHMS:
        raise ParameterError(f"unknown algorithm {algorithm!r}; use one of: {', '.join(ALGORITHMS)}")
    columns = dataset.quasi_identifiers
    if not columns:
        raise ParameterError("the data has no quasi-identifiers; name them with qi=[...]", parameter="qi")
    limit = check_suppression_limit(suppression_limit) if suppression_limit is not None else None
    sensitive = _sensitive_attribute(dataset, sensitive, l is not None or t is not None)
    if algorithm == "mdav" and (l is not None or t is not None):
        raise ParameterError("MDAV has no ℓ-diversity or t-closeness constraint; use mondrian or lattice")
    notes: list[str] = []
    custodian: dict[str, Any] = {}
    parameters: dict[str, Any] = {"algorithm": algorithm, "k": k, "quasi_identifiers": list(columns)}
    if algorithm == "lattice":
        dataset, added = with_flat_hierarchies(dataset, columns)
        if added:
            notes.append(f"no hierarchy for {', '.join(added)}: each can only be kept or fully generalized (*)")
    constraints = sensitive_constraints(dataset, sensitive, l=l, t=t, distance=distance)
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
                                          constraints=constraints, metric=loss, search=search,
                                          time_budget=time_budget)
        name = "optimal lattice search" if result.optimal else "greedy lattice search"
        parameters.update(suppression_limit=limit, search=result.describe(), scheme=result.scheme_levels)
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
