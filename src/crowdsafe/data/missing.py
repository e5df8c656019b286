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

from collections.abc import Collection, Sequence
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


def dotted_columns(frame: pl.DataFrame, declared: Collection[str]) -> list[str]:
    """The text columns of a CSV file read as ``frame`` (other than ``declared``) that hold the
    cell ``.`` and, besides it, numbers only (with a decimal point or comma): SAS and SPSS write
    ``.`` for a missing number, which is no missing token here (reading it as one would change the
    identity of every table holding one), so such a column is read as text. Decided by the set of
    a column's values (read whole or batch by batch alike); said by :func:`dotted_note`."""
    from crowdsafe.data.decimal_comma import PATTERN

    text = [c for c, t in frame.schema.items() if t == pl.String and c not in declared]
    if text:
        held = frame.select((pl.col(c) == ".").any().alias(c) for c in text).row(0)
        text = [c for c, has in zip(text, held) if has]
    if not text:
        return []
    number = [pl.col(c).cast(pl.Float64, strict=False).is_not_null() | pl.col(c).str.contains(PATTERN) for c in text]
    facts = frame.select(((pl.col(c) == ".") | pl.col(c).is_null() | n).all() & n.any()
                         for c, n in zip(text, number)).row(0)
    return [c for c, dotted in zip(text, facts) if dotted]


def dotted_note(label: str, names: Sequence[str]) -> str:
    """The note naming the columns :func:`dotted_columns` found."""
    which = ", ".join(f"'{n}'" for n in names)
    one = len(names) == 1
    holds = "it holds" if one else "they hold"
    return (f"{label}: column{'' if one else 's'} {which} read as text: besides numbers, {holds}"
            " cells '.', which SAS and SPSS write for a missing value and crowdsafe does not (a custodian-only fact "
            f"about the data); empty those cells to read {'it' if one else 'them'} as numbers with missing values "
            f"(in Python: load(..., missing_tokens=[*DEFAULT_MISSING_TOKENS, '.']))")


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
