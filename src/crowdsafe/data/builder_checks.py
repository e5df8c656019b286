"""Checks of a hierarchy specification (a schema's ``hierarchy`` table, a builder's parameters)
from the specification alone, before any data is read; each refusal is one line naming the
column and the key.

:func:`check_declaration` runs where an attribute is declared (:class:`crowdsafe.data.schema.Attribute`):
every key of a builder table must have its type (:func:`check_spec_types`: ``widths = "5"`` was an
internal ``TypeError``, ``flat = false`` a flat hierarchy, ``order = "MF"`` the two values M and
F), a group must have a label (an empty one publishes its values as an empty cell, which every
reader takes for a missing value), and the shapes no table can fix are refused (cuts with an
empty, unsorted or repeated level, an empty group, an ``order`` that repeats a value). The
builders (:mod:`crowdsafe.data.builders`) run the same checks on parameters given in code.
"""

from __future__ import annotations

import numbers
from collections.abc import Callable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import numpy as np

from crowdsafe.data.decimal_bands import nests, number_text
from crowdsafe.errors import HierarchyError, SchemaError

#: The date levels of the ``dates`` builder, from fine to coarse.
DATE_LEVELS = ("month", "quarter", "year", "decade")


def _number(x: float) -> str:
    return number_text(x)


def _is_number(value: Any) -> bool:
    return isinstance(value, numbers.Real | Decimal) and not isinstance(value, bool | np.bool_)


def _is_list(value: Any) -> bool:
    return isinstance(value, Sequence) and not isinstance(value, str | bytes)


def _is_value(value: Any) -> bool:
    """A value a list of values may hold: not a list, a table or a set."""
    return not (_is_list(value) or isinstance(value, Mapping | set | frozenset))


#: Per builder key: what it must be (in words, with an example) and the test of its type. ``mask``
#: and ``dates`` are checked with their values (:func:`mask_depth`, :func:`check_date_levels`).
SPEC_TYPES: dict[str, tuple[str, Callable[[Any], bool]]] = {
    "widths": ("a list of numbers, one width per level (e.g. widths = [5, 10])",
               lambda v: _is_list(v) and all(_is_number(x) for x in v)),
    "cuts": ("a list of lists of cut points, one list per level (e.g. cuts = [[18, 30, 65], [30]])",
             lambda v: _is_list(v) and all(_is_list(level) and all(_is_number(x) for x in level) for level in v)),
    "bottom": ("a number (e.g. bottom = 18)", _is_number),
    "top": ("a number (e.g. top = 90)", _is_number),
    "origin": ("a number (e.g. origin = 0)", _is_number),
    "fanout": ("a list of whole numbers >= 2, one per level (e.g. fanout = [3, 2])",
               lambda v: _is_list(v) and all(isinstance(x, int) and not isinstance(x, bool) for x in v)),
    "order": ('a list of values (e.g. order = ["low", "mid", "high"])',
              lambda v: _is_list(v) and all(_is_value(x) for x in v)),
    "groups": ('a list of tables, one per level, each label = [values] (e.g. groups = [{ young = [18, 19] }])',
               lambda v: _is_list(v) and all(isinstance(level, Mapping) for level in v)),
    "flat": ("true (flat = true: value -> *)", lambda v: v is True),
}


def check_spec_types(attribute: str, spec: Mapping[str, Any]) -> None:
    """Refuse a key of a builder table whose value has the wrong type (a text, a real, a boolean,
    a list or a table where another is expected), in one line naming the column, the key and what
    it must be. Unknown keys are left to the builder, which names them."""
    for key, value in spec.items():
        if key == "mask":
            mask_depth(attribute, value)
        elif key == "dates":
            check_date_levels(f"of '{attribute}'", value)
        elif key in SPEC_TYPES and not SPEC_TYPES[key][1](value):
            raise HierarchyError(f"hierarchy of '{attribute}': {key} must be {SPEC_TYPES[key][0]}, got {value!r}")


def declared_order(attribute: str, order: Any) -> tuple[Any, ...] | None:
    """A schema's ``order`` of ``attribute`` as a tuple (None when not given), refused in one line
    when it is not a list of values: ``order = "MF"`` would be the values M and F, a number an
    internal error."""
    if order is None:
        return None
    if not _is_list(order) or not all(_is_value(x) for x in order):
        raise SchemaError(f"attribute '{attribute}': order must be a list of values "
                          f'(e.g. order = ["low", "mid", "high"]), got {order!r}')
    return tuple(order)


def check_levels_of_cuts(name: str, cuts: Any) -> None:
    """Refuse ``cuts`` that are not a list of lists of numbers, one per level, naming the shape."""
    if cuts is None:
        return
    if isinstance(cuts, (str, bytes)) or not isinstance(cuts, Sequence) or any(
            isinstance(level, (str, bytes)) or not isinstance(level, Sequence) for level in cuts):
        raise HierarchyError(f"hierarchy '{name}': cuts must be a list of lists of cut points, one list per level "
                             f"(e.g. [[18, 30, 65], [30]]), got {cuts!r}")


def check_cut_order(name: str, cuts: Sequence[Sequence[Any]]) -> None:
    """Refuse a level of cut points that is empty, unsorted or repeats a point (after the
    shape and finiteness checks), naming the level: the schema says what it means."""
    for depth, level in enumerate(cuts, start=1):
        points = [float(x) for x in level]
        if not points:
            raise HierarchyError(f"hierarchy '{name}': level {depth} of cuts is empty; give at least one cut "
                                 "point per level (e.g. [[18, 30, 65], [30]])")
        bad = next((i for i in range(1, len(points)) if points[i] <= points[i - 1]), None)
        if bad is not None:
            word = "repeats" if points[bad] == points[bad - 1] else "is not sorted at"
            raise HierarchyError(f"hierarchy '{name}': level {depth} of cuts {word} {_number(points[bad])}; "
                                 f"list each cut point once, in increasing order, got {list(level)!r}")


def check_declaration(attribute: str, spec: Any, order: Sequence[Any] | None = None) -> None:
    """Refuse, from the schema alone (before any data is read), an attribute's ``order`` that is
    not a list of values or repeats one (the encoding would fail), a builder key of the wrong type
    (:func:`check_spec_types`), and a hierarchy specification whose shape no table can fix: cuts
    with an empty, unsorted or repeated level, groups with an empty group, a group without a
    label or listing a list, an ``order`` of ``fanout`` that repeats a value. Each one line naming
    the column."""
    declared_order(attribute, order)
    repeated = first_repeat(order) if order is not None else None
    if repeated is not None:
        raise SchemaError(f"attribute '{attribute}': order lists {repeated!r} twice; list each value once")
    if not isinstance(spec, Mapping):
        return
    check_spec_types(attribute, spec)
    if spec.get("cuts") is not None:
        check_levels_of_cuts(attribute, spec["cuts"])
        check_finite(attribute, cuts=spec["cuts"])
        check_cut_order(attribute, spec["cuts"])
    for depth, level in enumerate(spec.get("groups") or (), start=1):
        for label, members in level.items():
            _check_group(attribute, depth, label, members)
    repeated = first_repeat(spec["order"]) if "order" in spec else None
    if repeated is not None:
        raise HierarchyError(f"hierarchy of '{attribute}': order lists {repeated!r} twice; list each value once")


def _check_group(attribute: str, depth: int, label: Any, members: Any) -> None:
    """One group of a ``groups`` level: a non-empty list of values under a label that is not empty."""
    if not _is_list(members):
        raise HierarchyError(f"hierarchy of '{attribute}': group '{label}' of level {depth} must be "
                             f"a list of values, got {members!r}")
    if not members:
        raise HierarchyError(f"hierarchy of '{attribute}': group '{label}' of level {depth} is empty; "
                             "remove it or list its values")
    nested = next((m for m in members if not _is_value(m)), None)
    if nested is not None:
        raise HierarchyError(f"hierarchy of '{attribute}': group '{label}' of level {depth} lists {nested!r}; "
                             "list values, not lists or tables")
    if not str(label).strip():
        raise HierarchyError(f"hierarchy of '{attribute}': level {depth} has a group with an empty label "
                             f"(holding {members[0]!r}): its values would be published as empty cells, which "
                             "every reader takes for missing values; give the group a label")


def first_repeat(values: Sequence[Any]) -> Any:
    """The first value of ``values`` whose text an earlier one has (as an Enum would see them), or None."""
    seen: set[str] = set()
    for value in values:
        text = str(value)
        if text in seen:
            return value
        seen.add(text)
    return None


def check_finite(name: str, **numbers: Any) -> None:
    """Refuse a NaN, an infinity or a non-number (a text, a boolean) among the interval
    parameters, naming it."""
    for key, value in numbers.items():
        if value is None:
            continue
        shape_ok = _is_list(value) and (key != "cuts" or all(_is_list(level) for level in value))
        if key in ("cuts", "widths") and not shape_ok:
            raise HierarchyError(f"hierarchy '{name}': {key} must be {SPEC_TYPES[key][0]}, got {value!r}")
        items = [x for level in value for x in level] if key == "cuts" else value if key == "widths" else [value]
        if not all(_is_number(x) for x in items):
            raise HierarchyError(f"hierarchy '{name}': {key} must be numbers, got {value!r}")
        bad = next((x for x in items if not np.isfinite(float(x))), None)
        if bad is not None:
            raise HierarchyError(f"hierarchy '{name}': {key} holds {bad!r}; interval bounds must be finite numbers")


def check_widths(name: str, widths: Sequence[float]) -> None:
    """Refuse widths that are not positive or do not nest (each a whole multiple of the one
    before, exactly, in the decimals written): decided from the widths alone."""
    if not _is_list(widths) or not all(_is_number(w) for w in widths):
        raise HierarchyError(f"hierarchy '{name}': widths must be {SPEC_TYPES['widths'][0]}, got {widths!r}")
    if not len(widths) or min(widths) <= 0:
        raise HierarchyError(f"hierarchy '{name}': interval widths must be positive, got {list(widths)}")
    for i in range(1, len(widths)):
        if not nests(widths[i - 1], widths[i]):  # in the decimals written: 0.1 then 0.3 nest, 0.1 then 0.25 not
            raise HierarchyError(
                f"hierarchy '{name}' is not a tree: width {_number(widths[i])} of level {i + 1} is not a whole "
                f"multiple of width {_number(widths[i - 1])} of level {i} (widths must divide each other)"
            )



#: The most characters a mask hierarchy may mask (a fixed, public bound: each level is a column of
#: every value, so a depth of a billion would take the machine's memory).
MAX_MASK_LEVELS = 64


def mask_depth(attribute: str, levels: Any) -> int:
    """The depth of a schema's ``mask`` builder: a whole number of characters from 1 to
    :data:`MAX_MASK_LEVELS`, fixed by the schema. Without it the depth would be the longest value
    present, so the hierarchy's height (the lattice, hence ε1 and β) would depend on one row."""
    if isinstance(levels, bool) or not isinstance(levels, int) or not 1 <= levels <= MAX_MASK_LEVELS:
        raise HierarchyError(f"hierarchy of '{attribute}': mask must be a whole number of characters from 1 to "
                             f"{MAX_MASK_LEVELS} (e.g. mask = 4 for 5-digit codes), got {levels!r}; the depth "
                             "is not taken from the longest value, which would make the height depend on the data")
    return levels



def check_date_levels(named: str, levels: Any) -> None:
    """Refuse date levels that are not a list of known levels from fine to coarse (from the
    levels alone). ``named``: how the message names the hierarchy."""
    if isinstance(levels, (str, bytes)) or not isinstance(levels, Sequence):
        raise HierarchyError(f"hierarchy {named}: dates must be a list of levels from fine to coarse "
                             f"(e.g. [\"month\", \"year\"]), got {levels!r}")
    unknown = [lvl for lvl in levels if not isinstance(lvl, str) or lvl not in DATE_LEVELS]
    if unknown:
        raise HierarchyError(f"hierarchy {named}: unknown date level {unknown[0]!r}; use {', '.join(DATE_LEVELS)}")
    ranks = [DATE_LEVELS.index(lvl) for lvl in levels]
    if ranks != sorted(set(ranks)):
        raise HierarchyError(f"hierarchy {named}: date levels must go from fine to coarse, got {list(levels)}")


