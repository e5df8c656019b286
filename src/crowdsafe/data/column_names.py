"""Column names a table can be addressed by: the stable rename applied when a file is read.

A CSV header may hold duplicate names, empty names or names with blanks around them. Polars
would rename a second ``a`` to ``a_duplicated_0`` (and fail when that name exists too); crowdsafe
applies its own rule instead, the same every time the file is read, so a schema file written
for the renamed table (e.g. by ``crowdsafe schema draft``) keeps matching it:

1. blanks around a name are removed (``" age "`` -> ``age``);
2. an empty name becomes ``column_<position>`` (1-based: the third column -> ``column_3``); a
   first column without a name is, most often, the row index R's ``write.csv`` and pandas'
   ``to_csv`` write by default, and its note says so (row numbers tell every row apart);
3. a name seen before (after steps 1 and 2) gets the first free suffix ``_2``, ``_3``, ...
   (``name, name`` -> ``name, name_2``); the first occurrence keeps its name.

Other names (spaces or punctuation inside, case) are kept as they are: they are valid schema
keys, and renaming them would break schemas written for the file. Column names are part of the
schema (public), so the renames may be printed.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

__all__ = ["Rename", "describe_renames", "spare_name", "stable_names"]


def spare_name(taken: Iterable[str], stem: str) -> str:
    """A name for a column crowdsafe adds for itself (a count, a key, a join helper) that none of
    ``taken`` (the user's columns it sits beside) has: ``stem`` after a NUL, which no header
    plausibly holds, with ``_`` appended until it is free. The same for the same arguments."""
    used = set(taken)
    name = "\x00" + stem
    while name in used:
        name += "_"
    return name


@dataclass(frozen=True)
class Rename:
    """One column renamed: its 1-based ``position``, the ``original`` and ``new`` names, why."""

    position: int
    original: str
    new: str
    reason: str

    def describe(self) -> str:
        text = f"{self.original!r} (column {self.position}) -> {self.new!r} ({self.reason})"
        if self.position == 1 and self.reason == "empty name":  # read from the header: public
            text += (f" (a first column without a name is usually the row index that R's write.csv and pandas' "
                     f"to_csv write: it tells every row apart, so declare {self.new!r} role = \"identifier\" or "
                     f"write the file without it)")
        return text


def stable_names(names: Sequence[str]) -> tuple[list[str], list[Rename]]:
    """The addressable names of ``names`` by the module's rule, and the renames made."""
    stripped = [str(n).strip() for n in names]
    taken = set(stripped)
    seen: set[str] = set()
    result: list[str] = []
    renames: list[Rename] = []
    for position, (original, name) in enumerate(zip(names, stripped), start=1):
        reason = "blanks around the name" if name != original else ""
        if not name:
            name, reason = f"column_{position}", "empty name"
            suffix = 2
            while name in taken or name in seen:  # a real column already has that name
                name, suffix = f"column_{position}_{suffix}", suffix + 1
        elif name in seen:
            base, suffix = name, 2
            while f"{base}_{suffix}" in taken or f"{base}_{suffix}" in seen:
                suffix += 1
            name, reason = f"{base}_{suffix}", f"duplicate of an earlier '{base}'"
        seen.add(name)
        result.append(name)
        if name != original:
            renames.append(Rename(position, str(original), name, reason))
    return result, renames


def describe_renames(label: str, renames: Sequence[Rename]) -> str:
    """One line naming every rename, for standard error when a file is read."""
    return f"{label}: column names renamed: " + "; ".join(r.describe() for r in renames)
