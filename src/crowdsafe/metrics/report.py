"""The utility report of a release against its original: information loss, marginal distances,
workload error and (with a target and test rows) classifier accuracy.

Every figure compares the release with the original data, so it is an exact fact about the data,
not covered by any guarantee: the report is for the custodian only (``to_dict()`` says so in its
``notice``) and must not be published beside a release."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from crowdsafe.arguments import names, whole
from crowdsafe.data import Dataset
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.metrics.classifier import ClassifierReport, classifier_utility
from crowdsafe.metrics.information_loss import InformationLoss, information_loss
from crowdsafe.metrics.marginals import MarginalReport, marginal_distances
from crowdsafe.metrics.workload import WorkloadReport, check_scale, workload_error

UTILITY_NOTICE = ("CUSTODIAN ONLY: measured against the original data, so not covered by any guarantee; "
                  "do not publish it")


@dataclass(frozen=True)
class UtilityReport:
    """What :func:`crowdsafe.api.compare` measured of a release against its original: information
    loss, one- and two-way marginal distances, the counting-query workload's error and, with a
    target and held-out rows, classifier accuracy. CUSTODIAN ONLY: each figure is an exact fact
    about the original, covered by no guarantee (:data:`UTILITY_NOTICE`); do not publish it."""

    quasi_identifiers: list[str]
    information_loss: InformationLoss
    marginals: MarginalReport
    workload: WorkloadReport
    classifier: ClassifierReport | None
    notes: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        """The report as plain data (``as_dict``, as every other result of the API; ``to_dict`` is the same)."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {
            "notice": UTILITY_NOTICE,
            "quasi_identifiers": self.quasi_identifiers,
            "information_loss": self.information_loss.to_dict(),
            "marginals": self.marginals.to_dict(),
            "workload": self.workload.to_dict(),
            "classifier": self.classifier.to_dict() if self.classifier else None,
            "notes": self.notes,
        }

    def __repr__(self) -> str:
        # concise and labelled, as CheckReport's (the field-by-field repr printed every marginal
        # distance and workload figure, with no word that they are exact facts about the data)
        loss = self.information_loss
        qis = ", ".join(self.quasi_identifiers[:8]) + (", …" if len(self.quasi_identifiers) > 8 else "")
        return (f"UtilityReport(quasi_identifiers=[{qis[:400]}], gcp={loss.gcp:.4g}, "
                f"suppression_rate={loss.suppression_rate:.4g}, classes={loss.classes:,}; "
                "CUSTODIAN ONLY: do not publish)")


@dataclass(frozen=True, slots=True)
class UtilityRequest:
    """What :func:`utility` measures; the tables it compares (original, release, test rows) are
    passed beside it.

    - ``qi``: the quasi-identifiers measured (None: the original's that the release holds);
    - ``k`` / ``input_rows``: the k and the rows read, as in
      :func:`~crowdsafe.metrics.information_loss` (None: taken from the release);
    - ``queries``, ``max_attributes``, ``scale``: the counting-query workload (how many queries,
      over at most how many attributes, and the relative-error floor);
    - ``seed``: the seed of the workload's queries and of the classifier;
    - ``target`` / ``model``: the attribute the classifier predicts and the model trained
      (``"logistic"`` …, None: logistic); the classifier runs only with a target and test rows
      (a ``model`` given without them is refused: it would not be read).

    The report compares the release with the original: exact facts for the custodian only.
    """

    qi: tuple[str, ...] | None = None
    k: int | None = None
    input_rows: int | None = None
    queries: int = 1000
    max_attributes: int = 3
    seed: int = 0
    scale: float = 1.0
    target: str | None = None
    model: str | None = None

    def __post_init__(self) -> None:
        check_scale(self.scale)  # a public parameter: refused before any table is read


def utility(
    original: Dataset,
    release: pl.DataFrame | Dataset,
    *,
    qi: Sequence[str] | None = None,
    k: int | None = None,
    input_rows: int | None = None,
    queries: int = 1000,
    max_attributes: int = 3,
    seed: int = 0,
    scale: float = 1.0,
    target: str | None = None,
    test: Dataset | None = None,
    model: str | None = None,
) -> UtilityReport:
    """Compare ``release`` with ``original`` (see each metric's module for its definition).

    ``qi``: the quasi-identifiers (default: the original's that the release holds); ``k`` and
    ``input_rows`` as in :func:`~crowdsafe.metrics.information_loss`; ``queries``,
    ``max_attributes``, ``seed``, ``scale`` for the workload; ``target`` and ``test`` (held-out
    original rows) for the classifier, which is skipped (with a note) without both. Marginals
    are taken over the quasi-identifiers and the sensitive attributes the release holds. The
    keyword form of :func:`measure_utility` (it builds the :class:`UtilityRequest`).
    """
    request = UtilityRequest(
        qi=names(qi, "qi"), k=k,  # one name is the list of that name input_rows=input_rows, queries=queries,
        max_attributes=max_attributes, seed=seed, scale=scale, target=target, model=model,
    )
    return measure_utility(original, release, request, test=test)


#: The note of a release without rows (:func:`measure_utility`).
EMPTY_RELEASE_NOTE = ("the release has no rows (every row suppressed: 100% suppression); its marginal "
                      "distributions are undefined and not compared, and every counting query answers 0")


def measure_utility(
    original: Dataset,
    release: pl.DataFrame | Dataset,
    request: UtilityRequest,
    *,
    test: Dataset | None = None,
) -> UtilityReport:
    """The :class:`UtilityReport` of ``release`` against ``original`` for ``request`` (see
    :func:`utility`); ``test``: held-out original rows for the classifier. For the custodian
    only."""
    for value, parameter, least in ((request.k, "k", 1), (request.input_rows, "input_rows", 0),
                                    (request.queries, "queries", 1), (request.max_attributes, "max_attributes", 1)):
        if value is not None:  # a text raised a TypeError inside; k=2.5 and input_rows="10" were taken
            whole(value, parameter, least)
    frame = release.frame if isinstance(release, Dataset) else release
    qi, target, seed = request.qi, request.target, request.seed
    columns = list(qi) if qi is not None else [c for c in original.quasi_identifiers if c in frame.columns]
    if not columns:
        raise ParameterError("the release holds none of the original's quasi-identifiers; name them with qi=[...]",
                             parameter="qi")
    if target is not None and target not in original.frame.columns:
        raise InputError(f"the original has no target column {target!r} for the classifier; its columns are: "
                         f"{', '.join(original.frame.columns)}")
    sensitive = [c for c in original.sensitive if c in frame.columns and c not in columns]
    notes = []
    classifier = None
    if frame.height == 0 and target is not None and test is not None:
        notes.append("classifier utility skipped: a release without rows trains no classifier")
    elif target is not None and test is not None:
        classifier = classifier_utility(original, frame, test, target, model=request.model or "logistic", seed=seed)
    elif request.model is not None:  # accepted without a classifier, it was not read: a one-line refusal
        raise ParameterError("the model parameter applies to the classifier, which runs with both a target attribute "
                             "(the target parameter; default: the one sensitive attribute) and held-out test rows "
                             "(the test parameter)",
                             parameter=("model", "target", "test"))
    elif target is not None or test is not None:
        notes.append("classifier utility needs both a target attribute and held-out test rows")
    else:
        notes.append("classifier utility skipped: give a target (--target) and test rows (--test)")
    if frame.height == 0:  # every row suppressed: a valid release, whose distributions are undefined
        marginals = MarginalReport([], [])
        notes.append(EMPTY_RELEASE_NOTE)
    else:
        marginals = marginal_distances(original, frame, [*columns, *sensitive])
    return UtilityReport(
        quasi_identifiers=columns,
        information_loss=information_loss(original, frame, qi=columns, k=request.k, input_rows=request.input_rows),
        marginals=marginals,
        workload=workload_error(original, frame, columns, queries=request.queries,
                                max_attributes=request.max_attributes, seed=seed, scale=request.scale),
        classifier=classifier,
        notes=notes,
    )
