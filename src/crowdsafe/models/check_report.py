"""The custodian's report of ``crowdsafe check``: exact facts about a table, for the custodian only.

:func:`check_report` builds it from a loaded Dataset; :func:`streamed_check_report` from a file
read batch by batch (:mod:`crowdsafe.data.streamed_table`), with the same result: the classes and
models from the frequency table of the quasi-identifiers and sensitive attributes, the other
columns' counts from the read's domain and missing-value report.

Nothing here is an output of a DP mechanism: the report says so in its ``notice`` and is never
written beside a release (the privacy boundary, docs/privacy-boundary.md)."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crowdsafe.data import Dataset, MissingPolicy, Schema
from crowdsafe.data.frequency import SIZE_BUCKETS
from crowdsafe.data.identifiers import name_warnings
from crowdsafe.errors import ParameterError
from crowdsafe.models.classes import EquivalenceClasses, column_counts
from crowdsafe.models.report import AssessRequest, PrivacyReport, assess_classes, check_request, run_assessment

if TYPE_CHECKING:
    from crowdsafe.data.streamed_table import StreamedTable

CHECK_NOTICE = ("CUSTODIAN ONLY: exact facts about the data (counts, classes, risk), not covered by any "
                "privacy guarantee; do not publish them")


@dataclass(frozen=True)
class CheckReport:
    """What ``check`` found: the table, its schema, the missing-value policy applied, and the
    equivalence classes of its quasi-identifiers (k = the smallest class).

    Every figure is an exact fact about the data: the report is for the custodian only, not
    covered by any guarantee (``to_dict()`` says so in its ``notice``), and holds no digest of
    the data."""

    dataset: str
    rows: int
    schema: Schema
    missing: dict[str, Any]
    attributes: list[dict[str, Any]]
    quasi_identifiers: list[str]
    sensitive: list[str]
    k: int | None  # None: a table without rows, k-anonymous for every k (vacuously)
    classes: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    privacy: PrivacyReport | None = None  # k, ℓ, t, δ, β, effective anonymity and risk

    @property
    def sample_uniques(self) -> int:
        """Rows whose quasi-identifier tuple occurs once in the table."""
        return int(self.classes["uniques"])

    def __repr__(self) -> str:
        # concise (the field-by-field repr printed the whole schema and every attribute), and labelled
        qis = ", ".join(self.quasi_identifiers[:8]) + (", …" if len(self.quasi_identifiers) > 8 else "")
        return (f"CheckReport({self.dataset[:80]!r}, rows={self.rows:,}, attributes={len(self.attributes)}, "
                f"k={self.k}, quasi_identifiers=[{qis[:400]}]; CUSTODIAN ONLY: do not publish)")

    def _repr_html_(self) -> str:
        """The notebook view (:mod:`crowdsafe.report.custodian_views`), under a custodian-only banner."""
        from crowdsafe.report.custodian_views import check_html

        return check_html(self)

    def as_dict(self) -> dict[str, Any]:
        """The report as plain data (``as_dict``, as every other result of the API; ``to_dict`` is the same)."""
        return self.to_dict()

    def to_dict(self) -> dict[str, Any]:
        return {
            "notice": CHECK_NOTICE,
            "dataset": self.dataset,
            "rows": self.rows,
            "schema_source": self.schema.source,
            "missing": self.missing,
            "attributes": self.attributes,
            "quasi_identifiers": self.quasi_identifiers,
            "sensitive": self.sensitive,
            "k": self.k,
            "distinct_quasi_identifier_tuples": self.classes["groups"],
            "sample_uniques": self.sample_uniques,
            "sample_unique_share": self.sample_uniques / self.rows if self.rows else 0.0,
            "mean_class_size": self.classes["mean"],
            "largest_class": self.classes["largest"],
            "class_sizes": self.classes["buckets"],
            "privacy": self.privacy.to_dict() if self.privacy else None,
            "notes": self.notes,
        }


def check_report(
    dataset: Dataset,
    request: AssessRequest,
    *,
    original: Dataset | None = None,
    population: Dataset | None = None,
) -> CheckReport:
    """The :class:`CheckReport` of a loaded Dataset for ``request`` (what
    :func:`crowdsafe.models.run_assessment` measures); custodian only. The reference twin of
    :func:`streamed_check_report`."""
    qis = _quasi_identifiers(dataset)
    frame = dataset.frame
    if frame.height == 0:
        return _without_rows(dataset)
    rest = [c for c in frame.columns if c not in {*qis, *dataset.sensitive}]  # the classes count the others
    with ThreadPoolExecutor(max_workers=1) as pool:  # counting overlaps the models (both release the GIL)
        summary = pool.submit(column_counts, frame, rest)
        privacy = run_assessment(dataset, request, original=original, population=population)
    counts = {**summary.result(), **privacy.column_counts}
    counts.update(column_counts(frame, [c for c in frame.columns if c not in counts]))  # counted row by row
    return _assembled(dataset, dataset.n_rows, counts, privacy)


def streamed_check_report(
    table: StreamedTable, request: AssessRequest, *, population: Dataset | None = None
) -> CheckReport | None:
    """:func:`check_report` of a table read batch by batch (a file larger than memory,
    :mod:`crowdsafe.data.streamed_table`), the same report: the classes and every model from the
    frequency table of the quasi-identifiers and sensitive attributes, counted by one streaming pass
    (:meth:`EquivalenceClasses.of_frequency_table`); the other columns' distinct values from the
    table's domain and their missing values from the read's missing-value report (a function of
    each column's set of values and of its missing count). None where the classes' key would not
    fit 64 bits: the caller then holds the rows."""
    domain = table.domain
    qis = _quasi_identifiers(domain)
    check_request(request)
    attributes = list(request.sensitive) if request.sensitive is not None else domain.sensitive
    held = list(dict.fromkeys([*(request.qi or qis), *attributes]))
    tuples, weights = table.frequency(held)
    classes = EquivalenceClasses.of_frequency_table(tuples, weights, request.qi, sensitive=attributes)
    if classes is None:
        return None
    privacy = assess_classes(classes, request, attributes, population=population)
    kept = domain.missing.policy is not MissingPolicy.DROP  # dropped: no row left holds a missing value
    counts = {c: (domain.frame.get_column(c).n_unique(), domain.missing.missing_per_column.get(c, 0) if kept else 0)
              for c in domain.columns}
    counts.update(privacy.column_counts)
    return _assembled(domain, table.n_rows, counts, privacy)


#: The note of a table without rows (a release whose every row was suppressed).
NO_ROWS = ("the table has no rows (a release whose every row was suppressed?): it is k-anonymous for every k, "
           "vacuously (no class, no row to single out); k is reported as none, and no model is measured")


def _without_rows(dataset: Dataset) -> CheckReport:
    """The report of a table without rows: no class, k none (every k holds), no model measured."""
    buckets = [{"sizes": f"{low}" if low == high else (f"{low}-{high}" if high is not None else f"{low}+"),
                "low": low, "high": high, "groups": 0, "rows": 0} for low, high in SIZE_BUCKETS]
    classes = {"groups": 0, "rows": 0, "smallest": None, "largest": 0, "mean": 0.0, "uniques": 0, "buckets": buckets}
    counts = dict.fromkeys(dataset.columns, (0, 0))
    report = _assembled(dataset, 0, counts, None, classes)
    report.notes.append(NO_ROWS)
    return report


def _quasi_identifiers(dataset: Dataset) -> list[str]:
    if not dataset.quasi_identifiers:
        raise ParameterError("the data has no quasi-identifiers; name them with qi=[...]", parameter="qi")
    return dataset.quasi_identifiers


def _assembled(dataset: Dataset, rows: int, counts: dict[str, tuple[int, int]], privacy: PrivacyReport | None,
               classes: dict[str, Any] | None = None) -> CheckReport:
    """The report of a table of ``rows`` rows with ``dataset``'s schema, roles and hierarchies
    (``classes``: those of ``privacy`` when it is given)."""
    qis = dataset.quasi_identifiers
    attributes = [
        {
            "name": a.name,
            "role": a.role.value,
            "type": a.type.value,
            "distinct": int(counts[a.name][0]),
            "missing": int(counts[a.name][1]),
            "hierarchy_levels": dataset.hierarchies[a.name].height if a.name in dataset.hierarchies else None,
        }
        for a in dataset.schema
    ]
    classes = privacy.classes if privacy is not None else (classes or {})
    notes = name_warnings(dataset.schema, [*qis, *dataset.sensitive])  # names only: the same on any rows
    if dataset.schema.source == "inferred":
        notes.append(
            "schema inferred from the data: every attribute is a quasi-identifier; "
            "declare roles with --qi/--sensitive or --schema FILE"
        )
    if rows == 1:
        notes.append("the table has a single row: it is its own class (k = 1)")
    return CheckReport(
        dataset=dataset.name or "data",
        rows=rows,
        schema=dataset.schema,
        missing=dataset.missing.to_dict() | {"description": dataset.missing.describe_classes()},
        attributes=attributes,
        quasi_identifiers=qis,
        sensitive=dataset.sensitive,
        k=None if classes["smallest"] is None else int(classes["smallest"]),
        classes=classes,
        notes=notes + (privacy.notes + privacy.risk.notes if privacy is not None else []),
        privacy=privacy,
    )
