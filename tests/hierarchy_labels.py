"""What a hierarchy's labels may say about the values under them (issue 35): a text hierarchy the
schema draft suggests labels each node with ``*``, the missing value ``?``, a mask of every value
under it (the value's start, then ``*``: ``012**``, ``THEFT*``), or a label that names no value
(``group 2``, ``groups 1-3``, bracketed when a value is spelled so). Never a range whose ends are
values (``Aachen-Berlin``) or a value standing for others."""

from __future__ import annotations

import re

from crowdsafe.data.hierarchy import Hierarchy

NEUTRAL = re.compile(r"^(\[*)(group \d+|groups \d+(-\d+)?)(\]*)$")


def is_mask_of(label: str, value: str) -> bool:
    """Whether ``label`` is ``value``'s start followed by at least one ``*``."""
    kept = label.rstrip("*")
    return label.endswith("*") and value.startswith(kept)


def labels_naming_values(hierarchy: Hierarchy) -> list[tuple[int, str, str]]:
    """(level, leaf, label) for every label above a leaf that is none of the allowed kinds; a
    neutral label that equals a value counts too."""
    leaves = [str(v) for v in hierarchy.leaves.to_list()]
    values = set(leaves)
    found = []
    for level in range(1, hierarchy.height + 1):
        above = [hierarchy.labels[level][j] for j in hierarchy.leaf_map(level)]
        for leaf, label in zip(leaves, above):
            neutral = NEUTRAL.match(label)
            if label in ("*", "?") or is_mask_of(label, leaf):
                continue
            if neutral and len(neutral.group(1)) == len(neutral.group(4)) and label not in values:
                continue
            found.append((level, leaf, label))
    return found
