"""Suggested generalization hierarchies for a schema draft (``crowdsafe schema draft``).

Each suggestion is a hierarchy *specification* of a schema file (the tables that
:func:`crowdsafe.data.builders.from_spec` builds) with the reasons behind it, one comment line
each. The rules, in order:

- **age** (a numeric column whose name has the word ``age``): intervals of 5, 10, 20 and 40
  years over the public range 0-120 (nothing from the data);
- **other numbers**: intervals whose bounds are the data's range rounded *outward* to a power
  of ten, with widths a tenth, a fifth, one and two times that power (marked "from the data":
  replace the bounds with public ones, e.g. a legal range);
- **dates**: day -> month -> year -> decade (nothing from the data);
- **codes** (a column named like a ZIP or postal code, or text whose values all have the same
  length and many distinct values): trailing characters masked, one more per level;
- **categories**: grouped by the first word of their values when values share prefixes, else
  by frequency (a fan-out over the values sorted from the most to the least common); the value
  lists are the data's, marked so;
- **flat** (value -> ``*``) only where nothing lies between a value and ``*``: one or two values,
  booleans, or more values than a schema file should list.

The guarantee of a release assumes the schema is public: every choice taken from the data is
said to be, for the custodian to review and replace with public values before publishing, and
named in ``from_data`` (``"hierarchy bounds"``, ``"hierarchy mask depth"``, ``"hierarchy
groups"``, ``"hierarchy order"``), the schema file's marker that keeps a release using the
column unfit for release until the custodian deletes it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data.identifiers import name_tokens

__all__ = ["HierarchySuggestion", "is_age", "is_code_name", "suggest_hierarchy"]

AGE_WIDTHS = (5, 10, 20, 40)
AGE_RANGE = (0, 120)
DATE_LEVELS = ("month", "year", "decade")
MAX_LISTED = 500  # more distinct categories than this: not listed in a schema file (flat)
_CODE_WORDS = frozenset({"zip", "zipcode", "zip5", "postcode", "postal", "postalcode", "plz", "fips",
                         "cap", "areacode"})
_PREFIX = re.compile(r"^([^\s\-_/:.]+)[\s\-_/:.]")


@dataclass(frozen=True)
class HierarchySuggestion:
    """A hierarchy specification for a schema file and the reasons for it (comment lines);
    ``from_data``: what of it was taken from the data (empty: nothing), the schema file's
    ``from_data`` markers (:attr:`crowdsafe.data.schema.Attribute.from_data`), to review: the
    schema is public."""

    spec: dict[str, Any]
    kind: str  # "intervals", "dates", "mask", "groups", "frequency", "flat"
    notes: tuple[str, ...]
    from_data: tuple[str, ...] = ()


_OTHER_UNITS = frozenset({"month", "months", "week", "weeks", "day", "days", "hour", "hours", "minutes"})


def is_age(name: str) -> bool:
    """Whether ``name`` reads as an age in years (``age``, ``age_at_arrest``, ``AgeYears``; not
    ``age_months``)."""
    tokens = name_tokens(name)
    return "age" in tokens and not set(tokens) & _OTHER_UNITS


def is_code_name(name: str) -> bool:
    """Whether ``name`` reads as a ZIP / postal / area code (masked, kept as text)."""
    tokens = name_tokens(name)
    return bool(set(tokens) & _CODE_WORDS) or "".join(tokens) in _CODE_WORDS


def suggest_hierarchy(name: str, column: pl.Series, kind: str) -> HierarchySuggestion:
    """The suggested hierarchy of attribute ``name`` of type ``kind`` (numeric, date, ordinal,
    categorical) over ``column`` (custodian-only: reads the data; the notes say what it took)."""
    values = column.drop_nulls()
    if kind == "date":
        return HierarchySuggestion(
            {"dates": list(DATE_LEVELS)}, "dates",
            ("day -> month -> year -> decade -> * (public calendar levels)",))
    if kind == "numeric":
        return _numeric(name, values)
    if is_code_name(name):
        return _mask(values.cast(pl.String), f"'{name}' reads as a postal/area code (by name)")
    text = values.cast(pl.String)
    distinct = text.n_unique()
    if column.dtype == pl.Boolean or distinct <= 2:
        return _flat(f"{distinct} distinct value(s): nothing lies between a value and *")
    lengths = text.str.len_chars().to_numpy()
    if distinct > 20 and len(lengths) and lengths.min() == lengths.max() >= 3 \
            and bool(text.str.contains(r"^[0-9A-Za-z]+$").all()):
        return _mask(text, f"every value is a {int(lengths.max())}-character code (from the data)")
    if distinct > MAX_LISTED:
        return _flat(f"{distinct} distinct values: too many to list in a schema file; give a "
                     "hierarchy file (hierarchy = \"NAME.csv\") to keep more than value or *")
    grouped = _prefix_groups(text)
    if grouped is not None:
        return grouped
    return _frequency(text)


def _flat(reason: str) -> HierarchySuggestion:
    return HierarchySuggestion({"flat": True}, "flat", (f"flat (value -> *): {reason}",))


def _mask(text: pl.Series, reason: str) -> HierarchySuggestion:
    lengths = text.str.len_chars().to_numpy()
    levels = max(1, int(lengths.max()) - 1) if len(lengths) else 1
    notes = (f"masking: {reason}; up to {levels} trailing character(s) replaced by *",
             "FROM THE DATA: the mask depth is the longest value's length less one; a public "
             "code format (e.g. 5-digit ZIP: mask = 4) gives the same")
    return HierarchySuggestion({"mask": levels}, "mask", notes, ("hierarchy mask depth",))


def _nice_floor(x: float, step: float) -> float:
    return math.floor(x / step) * step


def _numeric(name: str, values: pl.Series) -> HierarchySuggestion:
    if is_age(name):
        low, high = AGE_RANGE
        return HierarchySuggestion(
            {"widths": list(AGE_WIDTHS), "bottom": low, "top": high}, "intervals",
            (f"age: intervals of {', '.join(map(str, AGE_WIDTHS))} years over the public range "
             f"{low}-{high} (not the data's minimum and maximum)",))
    numbers = values.cast(pl.Float64).to_numpy()
    numbers = numbers[np.isfinite(numbers)]
    if len(numbers) == 0:
        return _flat("no values")
    least, most = float(numbers.min()), float(numbers.max())
    if least == most:
        return _flat("a single value")
    integral = values.dtype.is_integer() or bool((values.cast(pl.Float64) % 1 == 0).all())
    power = 10.0 ** math.floor(math.log10(most - least))
    widths = [w for w in (power / 10, power / 5, power, 2 * power) if not integral or (w >= 2 and w % 1 == 0)]
    if not widths:
        return _flat("too few distinct whole numbers for intervals")
    widest = max(widths)
    bottom = _nice_floor(least, widest)
    top = _nice_floor(most, widest) + widest  # every value lies below top
    shown = [_plain(w) for w in widths]
    return HierarchySuggestion(
        {"widths": shown, "bottom": _plain(bottom), "top": _plain(top)}, "intervals",
        (f"intervals of width {', '.join(map(str, shown))} from {_plain(bottom)} to {_plain(top)}",
         "FROM THE DATA: the bounds are the data's range rounded outward to a multiple of "
         f"{_plain(widest)}; replace them with public bounds (a legal or published range)"),
        ("hierarchy bounds",))


def _plain(x: float) -> int | float:
    """``x`` as written in a schema file: a whole number as an int, else 12 significant digits."""
    return int(x) if float(x).is_integer() else float(f"{x:.12g}")


def _prefix_groups(text: pl.Series) -> HierarchySuggestion | None:
    """Values grouped by their first word (``THEFT PETTY``, ``THEFT GRAND`` -> ``THEFT``), when
    that groups the values (at least one group of two, fewer groups than four fifths of them)."""
    distinct = sorted(text.unique().to_list())
    groups: dict[str, list[str]] = {}
    for value in distinct:
        match = _PREFIX.match(value)
        groups.setdefault(match.group(1) if match else value, []).append(value)
    if len(groups) < 2 or len(groups) > 0.8 * len(distinct):
        return None
    return HierarchySuggestion(
        {"groups": [groups]}, "groups",
        ("values grouped by their first word, then *",
         "FROM THE DATA: the values listed are those present in the data; list the public "
         "domain instead (every value that could occur) and check the groups"),
        ("hierarchy groups",))


def _frequency(text: pl.Series) -> HierarchySuggestion:
    """Values sorted from the most to the least common, joined a few at a time, level by level."""
    counts = text.alias("value").value_counts(name="rows").sort(["rows", "value"], descending=[True, False])
    order = [str(v) for v in counts.get_column("value").to_list()]
    fanout: list[int] = []
    nodes = len(order)
    while nodes > 3:
        step = max(2, round(math.sqrt(nodes)))
        fanout.append(step)
        nodes = math.ceil(nodes / step)
    if not fanout:
        fanout = [2]
    return HierarchySuggestion(
        {"fanout": fanout, "order": order}, "frequency",
        (f"values joined {' then '.join(map(str, fanout))} at a time in the order listed, then *",
         "FROM THE DATA: the order is the values sorted by how often they occur in the data; "
         "replace it with a public order (e.g. a published classification) before publishing"),
        ("hierarchy order",))
