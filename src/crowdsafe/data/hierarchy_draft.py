"""Suggested generalization hierarchies for a schema draft (``crowdsafe schema draft``).

Each suggestion is a hierarchy *specification* of a schema file (the tables that
:func:`crowdsafe.data.builders.from_spec` builds) with the reasons behind it, one comment line
each. The rules, in order:

- **age** (a numeric column whose name has the word ``age``, ``Alter``, ``edad``, ...):
  intervals of 5, 10, 20 and 40 years over the public range 0-120 (nothing from the data);
- **other numbers**: intervals whose bounds are the data's range rounded *outward* to a power
  of ten, with widths a tenth, a fifth, one and two times that power (marked "from the data":
  replace the bounds with public ones, e.g. a legal range); the range of the finite values only
  (inf, -inf and NaN are left out, with a note), and no width or bound that is not finite;
- **dates**: day -> month -> year -> decade (nothing from the data);
- **codes** (a column named like a ZIP or postal code in one of the languages of
  :mod:`crowdsafe.data.column_words`: ``zip``, ``PLZ``, ``code postal``, ``CAP``, ``CEP``...;
  or text whose values all have the same length and many distinct values): trailing characters
  masked, one more per level;
- **categories** (at most :data:`MAX_LISTED` values): grouped by the first word of their values
  when values share prefixes (the label is that word masked: ``THEFT*``), else by frequency
  (the values sorted from the most to the least common, joined a few at a time, level by level,
  under labels that name no value: ``group 1``, ``groups 1-3``); the value lists are the data's,
  marked so;
- **flat** (value -> ``*``) only where nothing lies between a value and ``*``: one or two values,
  booleans, or more values than a schema file should list.

No label of a suggested text hierarchy is made of values: it is a value with its end masked, a
label that names no value, or ``*`` (never a range ``Aachen-Berlin`` whose ends are values).

The guarantee of a release assumes the schema is public: every choice taken from the data is
said to be, for the custodian to review and replace with public values before publishing, and
named in ``from_data`` (``"hierarchy bounds"``, ``"hierarchy mask depth"``, ``"hierarchy
groups"``), the schema file's marker that keeps a release using the
column unfit for release until the custodian deletes it.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data.builder_checks import MAX_MASK_LEVELS
from crowdsafe.data.column_words import is_age, is_code_name

__all__ = ["HierarchySuggestion", "is_age", "is_code_name", "suggest_hierarchy"]

AGE_WIDTHS = (5, 10, 20, 40)
AGE_RANGE = (0, 120)
DATE_LEVELS = ("month", "year", "decade")
MAX_LISTED = 100  # more distinct categories than this: not listed in a schema file (flat)
MASK = "*"  # what stands for the characters a label leaves out
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
    if column.dtype == pl.Boolean:
        return _flat("true or false: nothing lies between a value and *", counted=False)
    if distinct <= 2:
        return _flat("the data holds at most two values: nothing lies between a value and *")
    lengths = text.str.len_chars().to_numpy()
    if distinct > 20 and len(lengths) and lengths.min() == lengths.max() >= 3 \
            and bool(text.str.contains(r"^[0-9A-Za-z]+$").all()):
        return _mask(text, f"every value is a {int(lengths.max())}-character code (from the data)")
    if distinct > MAX_LISTED:
        return _flat(f"more than {MAX_LISTED} distinct values in the data: too many to list in a schema file; "
                     "give a hierarchy file (hierarchy = \"NAME.csv\") to keep more than value or *")
    grouped = _prefix_groups(text)
    if grouped is not None:
        return grouped
    return _frequency(text)


def _flat(reason: str, counted: bool = True) -> HierarchySuggestion:
    """A flat hierarchy (value -> *). ``counted``: chosen from what the data holds (how many
    values, or none, or one): marked for review like every other choice read from the data, since
    flat or grouped decides the lattice, hence ε1 and the candidates the plan and certificate show."""
    if not counted:
        return HierarchySuggestion({"flat": True}, "flat", (f"flat (value -> *): {reason}",))
    return HierarchySuggestion(
        {"flat": True}, "flat",
        (f"flat (value -> *): {reason}",
         "FROM THE DATA: flat because of the values present; keep it flat, or declare the public domain's "
         "hierarchy, and delete the from_data line"),
        ("hierarchy flat",))


def _mask(text: pl.Series, reason: str) -> HierarchySuggestion:
    lengths = text.str.len_chars().to_numpy()
    # at most the deepest mask a schema may declare (a junk value of 100 characters in a column
    # named zip would otherwise draft a schema that cannot be read back)
    levels = min(MAX_MASK_LEVELS, max(1, int(lengths.max()) - 1)) if len(lengths) else 1
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
    finite = np.isfinite(numbers)
    numbers = numbers[finite]
    if len(numbers) == 0:
        return _flat("no finite values")
    least, most = float(numbers.min()), float(numbers.max())
    if least == most:
        return _flat("a single finite value")
    integral = values.dtype.is_integer() or bool((numbers % 1 == 0).all())
    span = most - least
    if not math.isfinite(span):
        return _flat("the finite values span more than a floating-point number holds: no intervals")
    power = 10.0 ** math.floor(math.log10(span))
    widths = [w for w in (power / 10, power / 5, power, 2 * power) if not integral or (w >= 2 and w % 1 == 0)]
    if not widths:
        return _flat("too few distinct whole numbers for intervals")
    bounds = _bounds(least, most, widths)
    if bounds is None:
        return _flat("the finite values lie too near the largest floating-point number for intervals")
    widest, bottom, top = bounds
    shown = [_plain(w) for w in widths if w <= widest]
    notes = [f"intervals of width {', '.join(map(str, shown))} from {_plain(bottom)} to {_plain(top)}",
             "FROM THE DATA: the bounds are the data's range rounded outward to a multiple of "
             f"{_plain(widest)}; replace them with public bounds (a legal or published range)"]
    if not finite.all():
        notes.append("FROM THE DATA: the column holds inf, -inf or NaN; the bounds cover its finite values only, "
                     "so those values lie in no interval: drop or cap them")
    return HierarchySuggestion({"widths": shown, "bottom": _plain(bottom), "top": _plain(top)}, "intervals",
                               tuple(notes), ("hierarchy bounds",))


def _bounds(least: float, most: float, widths: list[float]) -> tuple[float, float, float] | None:
    """The widest of ``widths`` whose bounds around ``least``..``most`` (rounded outward to a
    multiple of it) are finite numbers, with those bounds; None when none is."""
    for widest in sorted(widths, reverse=True):
        bottom = _nice_floor(least, widest)
        top = _nice_floor(most, widest) + widest  # every value lies below top
        if all(math.isfinite(x) for x in (widest, bottom, top)):
            return widest, bottom, top
    return None


def _plain(x: float) -> int | float:
    """``x`` as written in a schema file: a whole number as an int (below 2^53, which a TOML
    integer and a double both hold exactly), else 12 significant digits."""
    return int(x) if float(x).is_integer() and abs(x) < 2.0**53 else float(f"{x:.12g}")


def _prefix_groups(text: pl.Series) -> HierarchySuggestion | None:
    """Values grouped by their first word, each group labelled by that word masked (``THEFT
    PETTY``, ``THEFT GRAND`` -> ``THEFT*``), when that groups the values (at least one group of
    two, fewer groups than four fifths of them) and no label is itself a value."""
    distinct = sorted(text.unique().to_list())
    groups: dict[str, list[str]] = {}
    for value in distinct:
        match = _PREFIX.match(value)
        groups.setdefault((match.group(1) if match else value) + MASK, []).append(value)
    if len(groups) < 2 or len(groups) > 0.8 * len(distinct) or set(groups) & set(distinct):
        return None
    return HierarchySuggestion(
        {"groups": [groups]}, "groups",
        ("values grouped by their first word (the label: that word, then *), then *",
         "FROM THE DATA: the values listed are those present in the data; list the public "
         "domain instead (every value that could occur) and check the groups"),
        ("hierarchy groups",))


def _frequency(text: pl.Series) -> HierarchySuggestion:
    """Values sorted from the most to the least common, joined a few at a time, level by level,
    into groups whose labels name no value (``group 1``, then ``groups 1-3``)."""
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
        {"groups": neutral_groups(order, fanout)}, "frequency",
        (f"values joined {' then '.join(map(str, fanout))} at a time from the most to the least common, "
         "then *; the labels (group 1, groups 1-3) name no value",
         "FROM THE DATA: which values share a group follows how often they occur in the data; "
         "list the public domain instead and group it by a public rule (e.g. a published classification)"),
        ("hierarchy groups",))


def neutral_groups(values: list[str], fanout: list[int]) -> list[dict[str, list[str]]]:
    """The ``groups`` levels that join ``values`` (in their order) ``fanout[0]`` at a time, then
    ``fanout[1]`` groups at a time, and so on: level 1 labelled ``group 1``, ``group 2``, ...,
    a higher level by the level-1 groups it covers (``groups 1-3``). No label names a value: one
    that a value happens to equal is bracketed (``[group 1]``), all alike, until none does."""
    taken = set(values)
    for brackets in itertools.count():
        levels: list[dict[str, list[str]]] = []
        nodes, spans = list(values), [(0, 0)] * len(values)
        for depth, step in enumerate(fanout, start=1):
            level: dict[str, list[str]] = {}
            covered = []
            for start in range(0, len(nodes), step):
                span = ((start // step + 1,) * 2 if depth == 1
                        else (spans[start][0], spans[min(start + step, len(nodes)) - 1][1]))
                level[_neutral(depth, span, brackets)] = nodes[start:start + step]
                covered.append(span)
            levels.append(level)
            nodes, spans = list(level), covered
        if not taken & {label for level in levels for label in level}:
            return levels
    raise AssertionError("unreachable")  # pragma: no cover


def _neutral(depth: int, span: tuple[int, int], brackets: int) -> str:
    """The label of a group: ``group 2`` at level 1, ``groups 1-3`` above (``[...]`` ``brackets`` times)."""
    first, last = span
    text = f"group {first}" if depth == 1 else f"groups {first}-{last}" if first != last else f"groups {first}"
    return "[" * brackets + text + "]" * brackets
