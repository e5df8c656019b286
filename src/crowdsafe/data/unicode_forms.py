"""Text that differs only in its Unicode normalisation form.

``München`` can be written with one code point for ``ü`` (NFC, what most tools write) or with
``u`` and a combining diaeresis (NFD, what some macOS tools write). The two look the same and
are canonically equivalent, but they are different strings: a hierarchy file in one form does
not list the data's values in the other, and those values are published as missing. crowdsafe
matches values exactly (changing them would change what is published and the table's ledger
identity); it says when an unmatched value has a twin in the other form, so the custodian can
write both the same way.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable
from typing import Final

import polars as pl

FORM: Final = "NFC"  # what most tools write


def normal(text: str) -> str:
    """``text`` in :data:`FORM`."""
    return unicodedata.normalize(FORM, text)


def forms(text: str) -> list[str]:
    """``text`` as written, in NFC and in NFD (each once): what a query's text literal matches,
    so that a filter typed in one form counts the values written in the other (the ledger's
    identity already takes the two tables for one)."""
    return list(dict.fromkeys((text, unicodedata.normalize("NFC", text), unicodedata.normalize("NFD", text))))


def twins(values: pl.Series, leaves: pl.Series) -> pl.Series:
    """The ``values`` (text) that are not ``leaves`` but equal one of them once both are put in
    the same normalisation form."""
    if values.dtype != pl.String or leaves.dtype != pl.String:
        return values.clear()
    listed = leaves.drop_nulls().str.normalize(FORM).implode()
    return values.filter(values.str.normalize(FORM).is_in(listed) & ~values.is_in(leaves.drop_nulls().implode()))


def twin_note(value: object, leaves: pl.Series) -> str:
    """A clause for a message about ``value`` missing from ``leaves``: empty, unless it differs
    from one of them only in its normalisation form."""
    if not isinstance(value, str) or not len(twins(pl.Series([value]), leaves.cast(pl.String, strict=False))):
        return ""
    return (" (a leaf of the hierarchy is the same text in another Unicode normalisation form, as NFD and "
            "NFC text differ: write the data and the hierarchy in the same form, NFC as most tools do)")


def _looks(text: str) -> str:
    """``text`` as it looks: in NFC, without invisible format characters (a byte-order mark,
    zero-width spaces and joiners, direction marks: Unicode category Cf)."""
    return unicodedata.normalize(FORM, "".join(c for c in text if unicodedata.category(c) != "Cf"))


def name_note(name: str, names: Iterable[str]) -> str:
    """A clause for a message saying that ``name`` is not one of ``names``: empty, unless one of
    them looks the same and differs only in its Unicode normalisation form or by an invisible
    character, which the clause names (escaped, so the two no longer look alike)."""
    key = _looks(name)
    twin = next((n for n in names if n != name and _looks(n) == key), None)
    if twin is None:
        return ""
    if unicodedata.normalize(FORM, twin) == unicodedata.normalize(FORM, name):
        return (f" (the data's {ascii(twin)} and the given {ascii(name)} are the same text in different Unicode "
                "normalisation forms, NFD and NFC: write both in the same form, NFC as most tools do)")
    return (f" (the data's {ascii(twin)} and the given {ascii(name)} differ only by an invisible character such "
            "as a byte-order mark U+FEFF: remove it)")
