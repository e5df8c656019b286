"""A hierarchy level in words: what publishing a column at that level does to it.

``level 4`` or ``groups 2`` says nothing; ``age in ranges of 10``, ``zip: last 2 digits masked``,
``education: 3 groups`` and ``suppressed (*)`` do. The words are read from public information
only (docs/privacy-boundary.md):

- a *declared* hierarchy (:class:`~crowdsafe.data.hierarchy.Hierarchy`: its leaves and nodes fixed
  before the data was read) is described from its labels: interval widths, masked characters,
  the number of groups (the missing-value node ``?`` that every published hierarchy carries is
  not counted: it is there whatever the data holds);
- an *observed* one (:class:`~crowdsafe.data.hierarchy.ObservedHierarchy`: a public rule over the
  values the data holds) from its height and level names only, which its rule fixes
  (``width 10``, ``2 masked``, ``month``, ``*``): never from its labels, which are data.

:func:`level_words` is what :meth:`Hierarchy.describe_level` returns; the safe pipeline writes it
into the certificate (``parameters.scheme_level_descriptions``) and the report shows it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crowdsafe.data.hierarchy import Hierarchy

MISSING = "?"
ROOT = "*"
#: A level with at most this many nodes is described with their labels.
LISTED_NODES = 4
_NUMBER = r"([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
_BAND = re.compile(rf"^\[\s*{_NUMBER}\s*,\s*{_NUMBER}\s*\)$")
_TAIL = re.compile(rf"^(?:<|>=)\s*{_NUMBER}$")
_WIDTH = re.compile(rf"^width {_NUMBER}$")
_MASKED = re.compile(r"^(\d+) masked$")
_DATE_UNITS = ("day", "month", "quarter", "year", "decade")


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def level_words(hierarchy: Hierarchy, level: int) -> str:
    """What publishing ``hierarchy``'s column at ``level`` does, in a few words, from public
    information only (the module's rules)."""
    name, height = hierarchy.name, hierarchy.height
    if level == 0:
        return f"{name}: exact values"
    if hierarchy.observed:  # its labels are data: the rule's level name only
        return by_level_name(name, hierarchy.level_names[level], level, height)
    nodes = [label for label in hierarchy.labels[level] if label != MISSING]
    leaves = [label for label in hierarchy.labels[0] if label != MISSING]
    return (_suppressed(name, nodes) or _ranges(name, nodes) or _masked(name, nodes, leaves)
            or _dates(name, hierarchy.level_names[level])
            or f"{name}: {len(nodes):,} group{'' if len(nodes) == 1 else 's'}")


def by_level_name(name: str, level_name: str, level: int, height: int | None = None) -> str:
    """The words for a level known by its name alone (the names the builders give); ``height``:
    the hierarchy's, when known."""
    if level == 0 or level_name in ("value", "day"):
        return f"{name}: exact values"
    if level_name == ROOT:
        return f"{name}: suppressed (*)"
    width = _WIDTH.match(level_name)
    if width:
        return f"{name} in ranges of {_number(float(width.group(1)))}"
    masked = _MASKED.match(level_name)
    if masked:
        count = int(masked.group(1))
        return f"{name}: last {count} character{'' if count == 1 else 's'} masked"
    if level_name in _DATE_UNITS:
        return f"{name} by {level_name}"
    of = f"level {level}" if height is None else f"level {level} of {height}"
    if level_name.startswith("intervals "):
        return f"{name} in intervals (the cut points of {of})"
    return f"{name}: {level_name} ({of})"


def _suppressed(name: str, nodes: Sequence[str]) -> str | None:
    return f"{name}: suppressed (*)" if list(nodes) == [ROOT] else None


def _ranges(name: str, nodes: Sequence[str]) -> str | None:
    """Intervals ``[a, b)`` and open ends ``<a``, ``>=b``: their common width, else how many."""
    bands: list[tuple[float, float]] = []
    tails: list[str] = []
    for node in nodes:
        band = _BAND.match(node)
        if band:
            bands.append((float(band.group(1)), float(band.group(2))))
        elif _TAIL.match(node):
            tails.append(node)
        else:
            return None
    if not bands:
        return None
    bands.sort()
    inner = bands[1:-1] if len(bands) > 2 else bands  # the end bands may be cut by a bottom or top code
    widths = {round(high - low, 9) for low, high in inner}
    if len(bands) >= 3 and len(widths) == 1:
        ends = f"; {' and '.join(tails)} as one group each" if len(tails) > 1 else \
            f"; {tails[0]} as one group" if tails else ""
        return f"{name} in ranges of {_number(widths.pop())}{ends}"
    ranges = f"{len(nodes):,} range{'' if len(nodes) == 1 else 's'}"
    if len(nodes) <= LISTED_NODES:
        return f"{name} in {ranges}: {', '.join(_ordered(nodes))}"
    return f"{name} in {ranges}"


def _ordered(nodes: Sequence[str]) -> list[str]:
    def low(node: str) -> float:
        found = re.search(_NUMBER, node)
        value = float(found.group(1)) if found else 0.0
        return value - 0.5 if node.startswith("<") else value
    return sorted(nodes, key=low)


def _masked(name: str, nodes: Sequence[str], leaves: Sequence[str]) -> str | None:
    """Every node ends in the same number of ``*`` (and is not all ``*``): trailing characters masked."""
    counts = {len(node) - len(node.rstrip("*")) for node in nodes}
    if len(counts) != 1 or 0 in counts or any(not node.rstrip("*") for node in nodes):
        return None
    count = counts.pop()
    unit = "digit" if leaves and all(leaf.isdigit() for leaf in leaves) else "character"
    return f"{name}: last {count} {unit}{'' if count == 1 else 's'} masked"


def _dates(name: str, level_name: str) -> str | None:
    return f"{name} by {level_name}" if level_name in _DATE_UNITS else None


__all__ = ["by_level_name", "level_words"]
