"""Release cells an attack could not read: what it tells the user about under-reporting.

A cell that names nothing in its column's domain covers no value (module
:mod:`crowdsafe.data.generalized`). In a text column that is legitimate: the release may hold a
value no target has. In a numeric column it is not: a cell that is no number, range, bound,
set, masked value, hierarchy label or ``*`` (``20to29``, ``NA`` written by another tool for a
suppressed cell) is syntax the attack does not read, and the classes holding it locate no
target. The attack then under-reports what the release reveals, so it names those cells.
Attack code: it reads published cells only.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from crowdsafe.data.cell_reader import CellCovers
from crowdsafe.data.generalized import AttributeDomain, CellKind, is_number

EXAMPLES = 3  # cells named per column


def unread_cells(covers: Mapping[str, CellCovers], domains: Mapping[str, AttributeDomain]) -> dict[str, list[str]]:
    """Per numeric quasi-identifier column, the distinct cells read as covering nothing that are
    not numbers (module docstring), sorted; columns without any are left out."""
    found: dict[str, list[str]] = {}
    for column, cover in covers.items():
        if domains[column].numbers is None:
            continue
        empty = np.flatnonzero(cover.indptr[1:] == cover.indptr[:-1])  # (most columns: none)
        if not len(empty):
            continue
        empty = empty[cover.kind[empty] == CellKind.VALUE]
        texts = [t for t in cover.labels.gather(empty).to_list() if t is not None and not is_number(t)]
        if texts:
            found[column] = sorted(texts)
    return found


def describe_unread(unread: Mapping[str, list[str]]) -> str | None:
    """The unread cells in a few words (``age: '20to29', 'NA' and 3 more``), or None."""
    if not unread:
        return None
    parts = []
    for column, texts in unread.items():
        shown = ", ".join(repr(t) for t in texts[:EXAMPLES])
        more = f" and {len(texts) - EXAMPLES} more" if len(texts) > EXAMPLES else ""
        parts.append(f"{column}: {shown}{more}")
    return "; ".join(parts)
