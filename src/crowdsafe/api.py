"""The public functions of crowdsafe. Each is a thin layer over the library's layers; the
command line calls exactly these."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import polars as pl

from crowdsafe.data import (
    DEFAULT_MISSING,
    Dataset,
    MissingPolicy,
    Schema,
    class_sizes,
    frequency_table,
    load,
)
from crowdsafe.errors import ParameterError

if TYPE_CHECKING:
    from crowdsafe.anonymize import Release


@dataclass(frozen=True)
class CheckReport:
    """What ``check`` found: the table, its schema, the missing-value policy applied, and the
    equivalence classes of its quasi-identifiers (k = the smallest class)."""

    dataset: str
    rows: int
    fingerprint: str
    schema: Schema
    missing: dict[str, Any]
    attributes: list[dict[str, Any]]
    quasi_identifiers: list[str]
    sensitive: list[str]
    k: int
    classes: dict[str, Any]
    notes: list[str] = field(default_factory=list)

    @property
    def sample_uniques(self) -> int:
        """Rows whose quasi-identifier tuple occurs once in the table."""
        return int(self.classes["uniques"])

    def to_dict(self) -> dict[str, Any]:
        return {
            "dataset": self.dataset,
            "rows": self.rows,
            "fingerprint": self.fingerprint,
            "schema_source": self.schema.source,
            "missing": self.missing,
            "attributes": self.attributes,
            "quasi_identifiers": self.quasi_identifiers,
            "sensitive": self.sensitive,
            "k": self.k,
            "distinct_quasi_identifier_tuples": self.classes["groups"],
            "sample_uniques": self.sample_uniques,
            "sample_unique_share": self.sample_uniques / self.rows,
            "mean_class_size": self.classes["mean"],
            "largest_class": self.classes["largest"],
            "class_sizes": self.classes["buckets"],
            "notes": self.notes,
        }


def check(
    data: Any,
    *,
    qi: Sequence[str] | None = None,
    sensitive: Sequence[str] | str | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
) -> CheckReport:
    """Load ``data`` (a path, a bundled name, a frame or a Dataset) and report its k-anonymity.

    k is the size of the smallest group of rows sharing one quasi-identifier tuple (Sweeney
    2002); sample uniques are rows alone in their group. The default quasi-identifiers are the
    schema's (inferred: every attribute).
    """
    dataset = load(data, schema=schema, qi=qi, sensitive=sensitive, missing=missing)
    return check_dataset(dataset)


def check_dataset(dataset: Dataset) -> CheckReport:
    """:func:`check` for a loaded Dataset."""
    qis = dataset.quasi_identifiers
    if not qis:
        raise ParameterError("the data has no quasi-identifiers; name them with --qi a,b,c (qi=[...])")
    frame = dataset.frame
    distinct = frame.select(pl.all().n_unique()).row(0)
    nulls = frame.null_count().row(0)
    attributes = [
        {
            "name": a.name,
            "role": a.role.value,
            "type": a.type.value,
            "distinct": int(d),
            "missing": int(m),
            "hierarchy_levels": dataset.hierarchies[a.name].height if a.name in dataset.hierarchies else None,
        }
        for a, d, m in zip(dataset.schema, distinct, nulls)
    ]
    classes = class_sizes(frequency_table(dataset, qis).get_column("count"))
    notes = []
    if dataset.schema.source == "inferred":
        notes.append(
            "schema inferred from the data: every attribute is a quasi-identifier; "
            "declare roles with --qi/--sensitive or --schema FILE"
        )
    if dataset.n_rows == 1:
        notes.append("the table has a single row: it is its own class (k = 1)")
    return CheckReport(
        dataset=dataset.name or "data",
        rows=dataset.n_rows,
        fingerprint=dataset.fingerprint(),
        schema=dataset.schema,
        missing=dataset.missing.to_dict() | {"description": dataset.missing.describe()},
        attributes=attributes,
        quasi_identifiers=qis,
        sensitive=dataset.sensitive,
        k=int(classes["smallest"]),
        classes=classes,
        notes=notes,
    )


def anonymize(
    data: Any,
    *,
    algorithm: str = "mondrian",
    k: int = 10,
    qi: Sequence[str] | None = None,
    sensitive: str | None = None,
    l: float | None = None,
    t: float | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    out: str | os.PathLike[str] | None = None,
    **options: Any,
) -> "Release":
    """k-anonymize ``data`` with a classic algorithm: ``"mondrian"``, ``"mdav"`` or ``"lattice"``.

    The recoding is fitted to the data, so the release's certificate says "no formal guarantee"
    (use :func:`publish` for a release with one). ``l`` / ``t``: entropy ℓ-diversity and
    t-closeness on ``sensitive`` (Mondrian and lattice). ``options`` go to
    :func:`crowdsafe.anonymize.anonymize_dataset` (mode, categorical, aggregate, loss,
    suppression_limit, search, time_budget, distance). With ``out``, the table and its
    certificate (``<name>.certificate.json``) are written atomically.
    """
    from crowdsafe.anonymize import anonymize_dataset

    protected = [sensitive] if sensitive is not None else None
    dataset = load(data, schema=schema, qi=qi, sensitive=protected, missing=missing)
    release = anonymize_dataset(dataset, algorithm, k, sensitive=sensitive, l=l, t=t, **options)
    if out is not None:
        release.write(out)
    return release
