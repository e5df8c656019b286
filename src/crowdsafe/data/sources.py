"""The read step of the load pipeline: whatever ``data`` is, a :class:`Source`.

``data`` may be a file path (read by :func:`crowdsafe.data.io.read_table`), a Polars or pandas
frame, a loaded :class:`~crowdsafe.data.Dataset`, or the name of a *named table* (a bundled
dataset such as ``"adult"``). A Source is the table as read, with what came with it (a bundled
dataset's schema and hierarchies, a Dataset's policy); the later steps of
:mod:`crowdsafe.data.pipeline` apply the schema, coerce, apply the missing-value policy and
attach hierarchies.

Named tables are registered here by the packages that provide them (:func:`register_named`;
``crowdsafe.datasets`` registers the bundled Adult). The data layer imports no provider: the
package root lists them (``crowdsafe.TABLE_PROVIDERS``) and they are imported the first time a
name is looked up, so ``datasets/`` depends on ``data/`` and never the reverse.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import polars as pl

from crowdsafe.arguments import kind
from crowdsafe.data import decimal_comma as comma
from crowdsafe.data.column_types import usable_frame
from crowdsafe.data.dataset import Dataset
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.data.io import as_frame, read_file
from crowdsafe.data.missing import DEFAULT_MISSING_TOKENS, dotted_columns, dotted_note
from crowdsafe.data.schema import AttributeType, Schema
from crowdsafe.errors import EMPTY_TABLE, InputError
from crowdsafe.files import literal_path
from crowdsafe.identity import note_line

__all__ = ["Source", "named", "open_named", "read_source", "register_named"]


@dataclass(frozen=True)
class Source:
    """A table as read, before the schema, the missing-value policy and the hierarchies.

    ``label`` names it in messages (a path, a bundled name, ``"the data"``); ``name`` becomes the
    Dataset's name. ``schema`` and ``hierarchies`` are those that come with the table (a bundled
    dataset's, a Dataset's); without a schema one is inferred or declared by the caller.
    ``typed``: its columns already have their types, so a declared schema sets roles and types
    only (no coercion, its hierarchy specifications are not built). ``missing_leaves``: each of
    its hierarchies gets a missing-value leaf when its column keeps missing values after the
    policy. ``loaded``: the Dataset it was given as (its policy was applied when it was loaded).
    ``unusable``: the columns set aside for their type, with what each is
    (:mod:`crowdsafe.data.column_types`; the load refuses or drops each by its role).
    """

    frame: pl.DataFrame
    label: str
    name: str | None = None
    schema: Schema | None = None
    hierarchies: Mapping[str, Hierarchy] = field(default_factory=dict)
    typed: bool = False
    missing_leaves: bool = False
    loaded: Dataset | None = None
    unusable: Mapping[str, str] = field(default_factory=dict)
    #: columns whose reading an undeclared ``;`` file leaves to the data (a decimal comma or not):
    #: the schema marks them (:meth:`~crowdsafe.data.schema.Schema.marked_read`)
    read_by_data: tuple[str, ...] = ()


_NAMED: dict[str, Callable[[], Source]] = {}
_discovered = False


def register_named(name: str, opener: Callable[[], Source]) -> None:
    """Make ``name`` a table that :func:`read_source` (and so ``load``) reads with ``opener()``."""
    _NAMED[name] = opener


def _discover() -> None:
    """Import the providers of named tables listed by the package root (once)."""
    global _discovered
    if not _discovered:
        _discovered = True
        import crowdsafe

        for module in getattr(crowdsafe, "TABLE_PROVIDERS", ()):
            importlib.import_module(module)


def named() -> list[str]:
    """The names of the registered named tables (the bundled datasets), in registration order."""
    _discover()
    return list(_NAMED)


def open_named(name: str) -> Source | None:
    """The named table ``name`` as a Source, or None when no table has that name."""
    _discover()
    opener = _NAMED.get(name)
    return opener() if opener is not None else None


def _without_bom(frame: pl.DataFrame) -> pl.DataFrame:
    """``frame`` with a byte-order mark (U+FEFF) removed from the start of its first column's name,
    as the CSV reader removes it: a frame built by ``csv.DictReader(open(f, encoding="utf-8"))``
    keeps the mark of a file Excel saved, and its first column was not found by its name."""
    first = frame.columns[0] if frame.width else ""
    bare = first.lstrip("\ufeff")
    if bare == first or not bare or bare in frame.columns:  # (a name taken: the refusal names both, escaped)
        return frame
    return frame.rename({first: bare})


#: What to give instead of a thing a user may try to load (a function's result, an array).
UNLOADABLE = {
    "Publication": " (a Publication holds its releases: give one, publication.releases[0])",
    "ndarray": " (an array has no column names: make it one, pandas.DataFrame(array, columns=[...]))",
}


def read_source(
    data: Any,
    *,
    declared: Schema | None = None,
    separator: str | None = None,
    missing_tokens: Sequence[str] = DEFAULT_MISSING_TOKENS,
    name: str | None = None,
    decimal_comma: bool | None = None,
    empty: bool = False,
) -> Source:
    """Read ``data`` (a path, a named table, a frame or a Dataset) as a :class:`Source`.

    A file's columns that ``declared`` makes categorical or ordinal are read as text;
    ``decimal_comma`` as :func:`crowdsafe.data.io.read_table`. A column of a type crowdsafe
    cannot use (a file's or a frame's) is set aside in ``unusable``. Raises
    :class:`~crowdsafe.errors.InputError` for what cannot be read, a table without columns and
    (unless ``empty``: a release whose every row was suppressed, read by ``check`` and ``compare``,
    which charge nothing) a table with a header but no rows.
    """
    if isinstance(data, Dataset):
        return Source(data.frame, data.name or "the data", data.name, data.schema, data.hierarchies,
                      typed=True, loaded=data)
    label = name or "the data"
    frame = as_frame(data)
    unusable: Mapping[str, str] = {}
    decided: tuple[str, ...] = ()
    if frame is not None:
        frame, unusable = usable_frame(_without_bom(frame))
    else:
        if not isinstance(data, (str, os.PathLike)):
            raise InputError(f"cannot load {kind(data)}: give a file path, a bundled dataset name, or a Polars/pandas "
                             f"DataFrame{UNLOADABLE.get(type(data).__name__, '')}")
        path = literal_path(data)  # a leading '~' is a folder of that name (Polars would expand it)
        if path.is_symlink() and not path.exists():  # a file was meant, not the bundled table of that name
            raise InputError(f"{path} is a symbolic link to a missing file ({os.readlink(path)})")
        if not path.exists():
            source = open_named(data) if isinstance(data, str) else None
            if source is not None:
                return source
            raise InputError(
                f"file not found: {path} (and no bundled dataset of that name; bundled: "
                f"{', '.join(named())})"
            )
        text_columns = [
            a.name for a in (declared or ())
            if a.type in (AttributeType.CATEGORICAL, AttributeType.ORDINAL)
        ]
        read = read_file(path, separator=separator, missing_tokens=missing_tokens, text_columns=text_columns,
                         decimal_comma=decimal_comma, empty=empty)
        frame, unusable, decided = read.frame, read.unusable, read.decided
        unread = comma.unread(frame, [a.name for a in declared or ()], decimal_comma) if read.csv else []
        if unread:  # a comma-separated file's quoted "72,5": read as text, and said
            print(note_line(comma.unread_note(str(path), unread)), file=sys.stderr)
        dotted = dotted_columns(frame, [a.name for a in declared or ()]) if read.csv else []
        if dotted:  # SAS's and SPSS's missing '.': read as text, and said
            print(note_line(dotted_note(str(path), dotted)), file=sys.stderr)
        label = str(path)
        name = name or path.name
    if frame.width == 0:
        kinds = ", ".join(f"'{c}' is {k}" for c, k in unusable.items())
        raise InputError(f"{label} has no column crowdsafe can use ({kinds})" if unusable
                         else f"{label} has no columns")
    if frame.height == 0 and not empty:
        raise InputError(f"{label} has a header but no rows" + EMPTY_TABLE)
    return Source(frame, label, name, unusable=unusable, read_by_data=decided)
