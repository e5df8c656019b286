"""Checks that a declared hierarchy publishes every value as something a reader can tell apart
(:meth:`crowdsafe.data.hierarchy.Hierarchy.check_labels`), decided from the hierarchy alone.

- **No value published as another**: a leaf whose node, at a level above the leaves, is labelled
  as a *different* leaf (a cycle ``F;M;*`` with ``M;F;*``, or groups ``G = [F, M]`` then
  ``F = [G]``) would be published as that value.
- **No empty label**: a node labelled ``""`` (or white space only: a hierarchy file's cells are
  stripped) is published as an empty cell, which every reader takes for a missing value, so the
  release could not be read back (``check --original`` refused it).
- **One root** (:func:`check_one_root`, for hierarchy files): the top level must give every leaf
  the same label (usually ``*``); a file whose last column holds ``*`` and ``ROOT`` keeps M and F
  apart at its "fully generalized" level. The builders end every hierarchy in the root ``*``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from crowdsafe.errors import HierarchyError

if TYPE_CHECKING:
    from crowdsafe.data.hierarchy import Hierarchy


def check_labels(hierarchy: Hierarchy, where: str, root: str) -> None:
    """Refuse a label above the leaves that is another leaf (``root`` aside) or is empty, in one
    line naming ``where`` (the hierarchy), the level and the leaf."""
    for level, labels in enumerate(hierarchy.labels):
        joined = "".join(map(str, labels))
        if "\x00" in joined:  # (ds6 #3: published, then the release could not be read back)
            bad = next(str(label) for label in labels if "\x00" in str(label))
            raise HierarchyError(f"{where}: the label {bad!r} at level {level} holds a NUL character (byte 0), "
                                 "which no label may hold (a release could not be read back); remove it")
    own = np.asarray(hierarchy.labels[0], dtype=str)
    for level in range(1, hierarchy.height + 1):
        above = np.asarray(hierarchy.labels[level], dtype=str)[hierarchy.leaf_map(level)]
        empty = np.flatnonzero(np.char.strip(above) == "")
        if len(empty):
            raise HierarchyError(
                f"{where}: the value {str(own[empty[0]])!r} has an empty label at level {level}, so it would be "
                "published as an empty cell, which every reader takes for a missing value; give that node a label")
        wrong = np.flatnonzero(np.isin(above, own) & (above != own) & (above != root))
        if len(wrong):
            j = int(wrong[0])
            raise HierarchyError(
                f"{where}: the value {str(own[j])!r} would be published as {str(above[j])!r} at level {level}, which "
                f"is another value of '{hierarchy.name}' (a cycle, or a label reused): a release could not tell them "
                "apart; give that node a label of its own")


def check_one_root(hierarchy: Hierarchy, where: str, root: str) -> None:
    """Refuse a hierarchy whose top level has more than one node, in one line naming ``where``
    and two of its labels: its fully generalized level would still tell values apart."""
    top = hierarchy.height
    labels = hierarchy.labels[top]
    if len(labels) > 1:
        named = ", ".join(repr(label) for label in labels[:3]) + (", ..." if len(labels) > 3 else "")
        what = "has no level above the values" if top == 0 else \
            f"ends in {len(labels)} labels at its top level {top} ({named})"
        raise HierarchyError(
            f"{where} {what}: its top level must give every value one label (the fully generalized value, "
            f"usually {root!r}), else it still tells them apart; add a last column {root!r}")
