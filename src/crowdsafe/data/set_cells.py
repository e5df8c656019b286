"""The members of a set cell ``{a, b}``: how they are written and split.

A release writes a set of categorical values as its members, sorted, separated by ``, ``
(comma + space) between braces. A member is written as it is unless a reader could not tell
where it ends: one that holds ``, ``, starts or ends with white space, holds ``{``, ``}`` or
``"``, or is empty is written in double quotes, each ``"`` in it doubled: the categories
``a, b`` and ``a`` make ``{"a, b", a}`` (written ``{a, a, b}`` before, where nobody could tell
whether ``b`` is a category). Every other member is written as before, so ordinary releases
did not change. A set whose cell would read as a value of its column (the categories ``a``,
``b`` and ``{a, b}``) has every member quoted: ``{"a", "b"}``.

Reading (:func:`split_set`): a member that starts with ``"`` (after white space) and whose
quotes close before ``, `` or the end is a quoted member, read as the text inside its quotes
(``""`` is ``"``), exactly, nothing stripped. The unquoted members between them are split at
``, `` as before (with a domain, by the longest known run: hierarchy labels such as
``Technical, sales and clerical`` written before quotes existed). A set whose quotes do not
close that way, or without any ``"``, is read as before: the form releases were written in
before quoting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

import polars as pl

QUOTE = '"'
SEPARATOR = ", "
# the characters Python's str.strip() strips (what the readers strip off a member), for Polars'
# regular expressions; tests/data/test_set_cells.py checks the list against str.isspace
SPACES = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008"
          "\u2009\u200a\u2028\u2029\u202f\u205f\u3000")
_SPACE_CLASS = "[" + "".join(f"\\x{{{ord(c):x}}}" for c in SPACES) + "]"
_NEEDS_QUOTES = f'^{_SPACE_CLASS}|{_SPACE_CLASS}$|, |[{{}}"]|^$'  # Polars (Rust) syntax
_QUOTED = re.compile(r'"((?:[^"]|"")*)"')


def needs_quotes(member: str) -> bool:
    """Whether ``member`` is written in quotes in a set (module docstring)."""
    return (member == "" or member != member.strip() or SEPARATOR in member
            or "{" in member or "}" in member or QUOTE in member)


def quote_member(member: str) -> str:
    """``member`` as a set writes it: in quotes (``"`` doubled) when it needs them, else as it is."""
    return QUOTE + member.replace(QUOTE, QUOTE * 2) + QUOTE if needs_quotes(member) else member


def format_set(members: Iterable[str]) -> str:
    """The set cell of ``members`` (in the order given): ``{a, "b, c"}``."""
    return "{" + SEPARATOR.join(quote_member(m) for m in members) + "}"


def needs_quotes_expr(members: pl.Expr) -> pl.Expr:
    """:func:`needs_quotes` of every text of ``members``, as a Polars expression."""
    return members.str.contains(_NEEDS_QUOTES)


def quote_members(members: pl.Expr, *, always: bool = False) -> pl.Expr:
    """:func:`quote_member` of every text of ``members``, as a Polars expression (``always``:
    every member in quotes)."""
    quoted = pl.concat_str(pl.lit(QUOTE), members.str.replace_all(QUOTE, QUOTE * 2, literal=True), pl.lit(QUOTE))
    return quoted if always else pl.when(needs_quotes_expr(members)).then(quoted).otherwise(members)


@dataclass(frozen=True)
class SetPiece:
    """A piece of a set's members: a quoted member (``text`` inside its quotes, ``raw`` as
    written with them), or a run of unquoted members as written (``text`` = ``raw``), to be
    split at ``, ``."""

    text: str
    raw: str
    quoted: bool


def split_set(inner: str) -> list[SetPiece] | None:
    """The pieces of the text between a set's braces, in order, or None when it has no quoted
    member (no ``"`` at all, or a quote that does not close before ``, `` or the end): then it
    is read as before quoting, every member unquoted."""
    if QUOTE not in inner:
        return None
    pieces: list[SetPiece] = []
    run: list[str] = []  # unquoted members since the last quoted one
    n, at = len(inner), 0
    while True:
        start = at
        while start < n and inner[start].isspace():
            start += 1
        if start < n and inner[start] == QUOTE:
            match = _QUOTED.match(inner, start)
            if match is None:
                return None
            end = match.end()
            while end < n and inner[end].isspace():
                end += 1
            if end < n and not inner.startswith(SEPARATOR, end):
                return None
            if run:
                pieces.append(SetPiece(SEPARATOR.join(run), SEPARATOR.join(run), False))
                run = []
            pieces.append(SetPiece(match.group(1).replace(QUOTE * 2, QUOTE), match.group(0), True))
            if end >= n:
                break
            at = end + len(SEPARATOR)
        else:
            comma = inner.find(SEPARATOR, at)
            if comma < 0:
                run.append(inner[at:])
                break
            run.append(inner[at:comma])
            at = comma + len(SEPARATOR)
    if run:
        pieces.append(SetPiece(SEPARATOR.join(run), SEPARATOR.join(run), False))
    if not any(piece.quoted for piece in pieces):
        return None
    return pieces


def set_members(inner: str) -> list[str]:
    """The members of a set read without a domain: quoted members as written inside their
    quotes, the others split at ``, `` and stripped, empty ones dropped."""
    pieces = split_set(inner)
    if pieces is None:
        pieces = [SetPiece(inner, inner, False)]
    members: list[str] = []
    for piece in pieces:
        if piece.quoted:
            members.append(piece.text)
        else:
            members.extend(m.strip() for m in piece.text.split(SEPARATOR) if m.strip())
    return members
