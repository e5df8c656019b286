"""What to do with missing values.

Policies:

- ``keep`` (the default): a missing value is a value of its own. It is counted, grouped and
  generalized like any other value (a hierarchy may give it a leaf), so the number of rows and
  every equivalence class are those of the table as given. This is the honest default for
  privacy: dropping rows silently changes the table the guarantee is about, and an attacker
  sees a blank as clearly as any other value.
- ``drop``: rows with a missing value in any column are removed (the count is reported). This is
  the convention of most published Adult experiments (30,162 training rows).
- ``error``: refuse data with missing values.

Every report states the policy applied and how many rows it affected.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import polars as pl

from crowdsafe.errors import EMPTY_TABLE, InputError, ParameterError
from crowdsafe.number_text import quantity


class MissingPolicy(StrEnum):
    KEEP = "keep"
    DROP = "drop"
    ERROR = "error"

    @classmethod
    def parse(cls, value: MissingPolicy | str) -> MissingPolicy:
        try:
            return cls(str(value).strip().lower())
        except ValueError:
            raise ParameterError(
                f"unknown missing-value policy {value!r}; use one of: keep, drop, error"
            ) from None


DEFAULT_MISSING = MissingPolicy.KEEP
# Tokens read as missing in CSV files (besides an empty field).
DEFAULT_MISSING_TOKENS = ("", "?", "NA", "N/A", "NULL")


@dataclass(frozen=True)
class MissingReport:
    """The missing-value policy applied to a table and its effect."""

    policy: MissingPolicy = DEFAULT_MISSING
    missing_per_column: dict[str, int] = field(default_factory=dict)
    rows_with_missing: int = 0
    rows_dropped: int = 0

    def describe(self) -> str:
        if self.rows_with_missing == 0 and self.rows_dropped == 0:
            return f"{self.policy.value} (no missing values)"
        columns = ", ".join(f"{k} {v:,}" for k, v in self.missing_per_column.items() if v)
        if self.policy is MissingPolicy.DROP:
            return f"drop: {quantity(self.rows_dropped, 'row')} with a missing value removed ({columns})"
        return (
            f"keep: missing is a value of its own; {quantity(self.rows_with_missing, 'row')} "
            f"{'has' if self.rows_with_missing == 1 else 'have'} one "
            f"({columns})"
        )

    def describe_classes(self) -> str:
        """:meth:`describe`, plus, when kept missing values form classes (``check``), that they are
        no wildcard: sdcMicro's frequency counts match a missing key value to every value, so its
        k on the same table can be larger."""
        if self.policy is MissingPolicy.KEEP and self.rows_with_missing:
            return self.describe() + "; not a wildcard matching every value, as sdcMicro's fk counts it"
        return self.describe()

    def to_dict(self) -> dict[str, Any]:
        return {
            "policy": self.policy.value,
            "rows_with_missing": self.rows_with_missing,
            "rows_dropped": self.rows_dropped,
            "missing_per_column": {k: v for k, v in self.missing_per_column.items() if v},
        }


def missing_refusal(source: str, rows: int, column: str) -> InputError:
    """The refusal of ``missing='error'``: a check of the data the custodian asked for by name, so
    its message (a count on the data) says it is custodian-only."""
    return InputError(
        f"{source} has {quantity(rows, 'row')} with missing values (first in column '{column}'); choose "
        "missing='keep' or "
        "missing='drop' (a custodian-only fact about the data: missing='error' checks the data itself; nothing "
        "was charged)"
    )


def emptied_by_drop(source: str) -> InputError:
    """The refusal of a table that ``missing='drop'`` leaves without rows: whether one complete row
    is added decides it, so, like every refusal of a table with no rows, it says it is custodian-only
    (:data:`crowdsafe.errors.EMPTY_TABLE`; every reader and both engines)."""
    return InputError(f"{source}: every row has a missing value, nothing is left after missing='drop'" + EMPTY_TABLE)


def nan_as_missing(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with every floating-point NaN made null (missing, as every policy reads it)."""
    floats = [c for c, t in frame.schema.items() if t.is_float()]
    return frame.with_columns(pl.col(floats).fill_nan(None)) if floats else frame


def apply_missing_policy(
    frame: pl.DataFrame, policy: MissingPolicy | str = DEFAULT_MISSING, *, source: str = "the data"
) -> tuple[pl.DataFrame, MissingReport]:
    """Apply ``policy`` to every column of ``frame``; return the new frame and a report.

    Floating-point NaN counts as missing too (it is converted to null, so it groups as one value).
    """
    policy = MissingPolicy.parse(policy)
    frame = nan_as_missing(frame)
    counts = frame.null_count().row(0, named=True) if frame.width else {}
    if not any(counts.values()):
        return frame, MissingReport(policy, {k: 0 for k in counts})
    any_missing = pl.any_horizontal(pl.all().is_null())
    rows_with_missing = int(frame.select(any_missing.sum()).item())
    if policy is MissingPolicy.ERROR:
        column = next(c for c, v in counts.items() if v)
        raise missing_refusal(source, rows_with_missing, column)
    if policy is MissingPolicy.DROP:
        kept = frame.filter(~any_missing)
        return kept, MissingReport(policy, counts, rows_with_missing, frame.height - kept.height)
    return frame, MissingReport(policy, counts, rows_with_missing, 0)
