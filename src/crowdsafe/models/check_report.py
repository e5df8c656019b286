"""The custodian's report of ``crowdsafe check``: exact facts about a table, for the custodian only.

Nothing here is an output of a DP mechanism: the report says so in its ``notice`` and is never
written beside a release (the privacy boundary, docs/privacy-boundary.md)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from crowdsafe.data import Schema
from crowdsafe.models.report import PrivacyReport

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
    k: int
    classes: dict[str, Any]
    notes: list[str] = field(default_factory=list)
    privacy: PrivacyReport | None = None  # k, ℓ, t, δ, β, effective anonymity and risk

    @property
    def sample_uniques(self) -> int:
        """Rows whose quasi-identifier tuple occurs once in the table."""
        return int(self.classes["uniques"])

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
            "sample_unique_share": self.sample_uniques / self.rows,
            "mean_class_size": self.classes["mean"],
            "largest_class": self.classes["largest"],
            "class_sizes": self.classes["buckets"],
            "privacy": self.privacy.to_dict() if self.privacy else None,
            "notes": self.notes,
        }
