"""Reading a few plain release cells one at a time: the fast path of the attacks' cell reading.

An attack reads the distinct cells of every quasi-identifier column (and the sensitive
column) of its releases (:func:`crowdsafe.attacks.locate.read_tables`). The reference reader,
:class:`~crowdsafe.data.cell_reader.CellReader`, is one Polars query of string expressions and
joins, built for many cells; for a few hundred its fixed cost dominates (a Mondrian release of
Adult has about 560 distinct cells). :func:`read_plain` reads them in Python instead while
there are at most :data:`PLAIN_CELLS` and every one is *plain*:

- ``*``: every code of the domain (unless ``*`` is itself a value of the domain);
- a value of the domain, written as the domain writes it (spaces around it stripped);
- a hierarchy label of the domain (its leaves);
- a range ``[low, high]`` (either end open with ``(`` / ``)``, or an outward ``]`` / ``[``) of
  plain decimal numbers, in a
  numeric domain: the values it contains;
- a text naming nothing in the domain that cannot be a range, a bound, a set or a number (no
  ``[](){}<>*`` in it, not read as a number: ``?``, say): a value covering nothing.

Anything else (a missing cell, a set, a number written otherwise, a bound such as ``>=40``
that is not a label, any character outside printable ASCII, and in a numeric domain any text
that reads as a number) sends the whole read to the reference reader. Where both read, they
give the same kinds and covered codes, in the resolution order both follow (module
:mod:`crowdsafe.data.generalized`); tests/fast_paths/test_attack_cells.py runs both. Attack
code: it reads releases, never the private table, and carries no guarantee of its own.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import cast

import numpy as np
import polars as pl

from crowdsafe.data.arrays import segments, sorted_unique
from crowdsafe.data.cell_reader import CellCovers, cell_text
from crowdsafe.data.generalized import ANY, AttributeDomain, CellKind, parse_number

PLAIN_CELLS = 5_000  # cells read in Python up to this many (all plain), else by the reference reader
_RANGE = re.compile(r"([\[(\]])(-?[0-9]+(?:\.[0-9]+)?), (-?[0-9]+(?:\.[0-9]+)?)([\])\[])")
_NUMBER_START = frozenset("+-.0123456789")
_SYNTAX = frozenset("[](){}<>*")  # what a range, a bound, a set or '*' is written with
_Read = tuple[CellKind, "np.ndarray | tuple[float, float, bool, bool]"]
_UNKNOWN = object()
_NOTHING = np.zeros(0, dtype=np.int64)
_SORTED_NUMBERS: weakref.WeakKeyDictionary[AttributeDomain, tuple[np.ndarray, np.ndarray]] = weakref.WeakKeyDictionary()
_KNOWN_TEXTS: weakref.WeakKeyDictionary[AttributeDomain, dict[str, _Read | None]] = weakref.WeakKeyDictionary()
MEMO_TEXTS = 100_000  # texts a domain's memo (_Memo) remembers
MEMO_CODES = 4_000_000  # covered codes it keeps (a range of a wide numeric domain covers many)


def _no_rows() -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    none = np.zeros(0, dtype=np.int64)
    return np.empty(0, dtype=object), none, none, none


@dataclass
class _Memo:
    """Every text read so far in one domain and what it read as (a pure function of both, so
    it holds across attacks): ``entry[text]`` its row, -1 when the text is not plain. The rows
    are :meth:`tables`, the arrays :func:`read_plain` gathers from (each row's kind, count of
    covered codes and first among the codes, the codes sorted and distinct within a row); rows
    added since they were made wait in ``kinds`` and ``covered`` (as :func:`_read_one` gives
    them) and are appended in one batch at the next read, not made again with the older rows."""

    entry: dict[str, int] = field(default_factory=dict)
    n_rows: int = 0
    kinds: list[CellKind] = field(default_factory=list)
    covered: list[np.ndarray | tuple[float, float, bool, bool]] = field(default_factory=list)
    arrays: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] = field(default_factory=_no_rows)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, text: str, domain: AttributeDomain) -> int:
        """Read ``text`` (:func:`_read_one`) and remember it: its row, or -1 when not plain."""
        found = _read_one(text, domain, _known_texts(domain))
        if found is None:
            self.entry[text] = -1
            return -1
        self.entry[text] = row = self.n_rows
        self.n_rows += 1
        self.kinds.append(found[0])
        self.covered.append(found[1])
        return row

    def tables(self, domain: AttributeDomain) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """Every row's kind (objects), count of codes, first code among the codes, and the codes."""
        if not self.kinds:
            return self.arrays
        kind, size, first, codes = self.arrays
        owner, listed, ranges = [], [], []  # rows' codes as (row, code) pairs; ranges by binary search
        for row, covered in enumerate(self.covered):
            if isinstance(covered, tuple):
                ranges.append((row, *covered))
            elif len(covered):
                owner.append(row)
                listed.append(covered)
        pairs = [np.repeat(np.array(owner, dtype=np.int64), [len(c) for c in listed])] if listed else []
        found = [np.concatenate(listed)] if listed else []
        if ranges:
            values, value_codes = _sorted_numbers(domain)
            at, low, high, low_closed, high_closed = (np.array(x) for x in zip(*ranges))
            begin = np.where(low_closed, np.searchsorted(values, low, side="left"),
                             np.searchsorted(values, low, side="right"))
            stop = np.where(high_closed, np.searchsorted(values, high, side="right"),
                            np.searchsorted(values, high, side="left"))
            count = np.maximum(stop - begin, 0)
            pairs.append(np.repeat(at.astype(np.int64), count))
            found.append(value_codes[segments(begin, count)])
        width, n_new = domain.size + 1, len(self.kinds)
        key = (sorted_unique(np.concatenate(pairs) * width + np.concatenate(found), n_new * width) if pairs
               else np.zeros(0, dtype=np.int64))
        row_of, code = np.divmod(key, width)  # each new row's codes, sorted and distinct
        new_size = np.bincount(row_of, minlength=n_new).astype(np.int64)
        new_kind = np.empty(n_new, dtype=object)
        new_kind[:] = self.kinds
        self.arrays = (np.concatenate([kind, new_kind]), np.concatenate([size, new_size]),
                       np.concatenate([first, len(codes) + np.cumsum(new_size) - new_size]),
                       np.concatenate([codes, code.astype(np.int64, copy=False)]))
        self.kinds, self.covered = [], []
        return self.arrays


_MEMOS: weakref.WeakKeyDictionary[AttributeDomain, _Memo] = weakref.WeakKeyDictionary()
_MEMOS_LOCK = threading.Lock()


def fits_plain(cells: Sequence[pl.Series]) -> bool:
    """The size half of the rule: at most :data:`PLAIN_CELLS` cells in all (the other half,
    every cell plain, is known while reading them)."""
    return sum(len(c) for c in cells) <= PLAIN_CELLS


def read_plain(cells: Sequence[pl.Series], domain_of: Sequence[int], domains: Sequence[AttributeDomain]
               ) -> list[CellCovers] | None:
    """What every cell of ``cells[j]`` covers in ``domains[domain_of[j]]``, as
    :meth:`CellReader.read <crowdsafe.data.cell_reader.CellReader.read>` gives it, or None when
    some cell is not plain (module docstring): then the reference reader reads them all.

    Fast path: each text is looked up in its domain's memo (:class:`_Memo`: what a text reads
    as depends on the text and the domain only, so the next attack with the same hierarchies
    finds it there), a text not met before read once and added; every column's covers are then
    gathered from the memo's arrays by a few NumPy calls. While a memo is full
    (:data:`MEMO_TEXTS` texts or :data:`MEMO_CODES` codes: a long-running app stays bounded),
    the reference twin :func:`read_plain_by_loop`; both read the same."""
    if not fits_plain(cells):
        return None
    rows: list[tuple[pl.Series, AttributeDomain, np.ndarray, tuple[np.ndarray, ...]]] = []
    for column, j in zip(cells, domain_of):
        texts, domain = cell_text(column), domains[j]
        memo = _MEMOS.get(domain)
        if memo is None:
            with _MEMOS_LOCK:
                memo = _MEMOS.setdefault(domain, _Memo())
        with memo.lock:
            listed = texts.to_list()
            entry = memo.entry
            row = [entry.get(text, -2) for text in listed]
            if -2 in row:  # met for the first time
                if None in listed:
                    return None  # (a missing cell: not plain)
                if len(entry) + len(listed) > MEMO_TEXTS or len(memo.arrays[3]) > MEMO_CODES:
                    return read_plain_by_loop(cells, domain_of, domains)
                row = [r if r != -2 else entry[text] if text in entry else memo.add(text, domain)
                       for r, text in zip(row, listed)]
            if -1 in row:
                return None
            rows.append((texts, domain, np.array(row, dtype=np.int64), memo.tables(domain)))
    out = []
    for texts, domain, row_of, (kind, size, first, codes) in rows:
        sizes = size[row_of]
        indptr = np.zeros(len(row_of) + 1, dtype=np.int64)
        np.cumsum(sizes, out=indptr[1:])
        out.append(CellCovers(texts, kind[row_of], indptr, codes[segments(first[row_of], sizes)], domain.size))
    return out


def read_plain_by_loop(cells: Sequence[pl.Series], domain_of: Sequence[int], domains: Sequence[AttributeDomain]
                       ) -> list[CellCovers] | None:
    """:func:`read_plain` without the memo (its reference twin): each distinct (domain, text)
    classified in Python, the ranges' values found by binary search in each domain's sorted
    numbers, and every cell's codes sorted, in NumPy."""
    if not fits_plain(cells):
        return None
    seen: dict[int, dict[str, int]] = {}  # per domain, each distinct text -> its index
    kinds: list[CellKind] = []
    owner: list[int] = []  # (distinct, code) pairs of values, labels and '*'
    codes: list[np.ndarray] = []
    ranges: list[tuple[int, int, float, float, bool, bool]] = []  # distinct, domain, low, high, closed ends
    every_text, distinct_of = [], []
    for column, j in zip(cells, domain_of):
        texts = cell_text(column)
        every_text.append(texts)
        domain = domains[j]
        known = _known_texts(domain)
        seen_here = seen.setdefault(j, {})
        for text in texts.to_list():
            at = seen_here.get(text)
            if at is None:
                at = seen_here[text] = len(kinds)
                if text is None:
                    return None
                found = _read_one(text, domain, known)
                if found is None:
                    return None
                kind, covered = found
                kinds.append(kind)
                if isinstance(covered, tuple):
                    ranges.append((at, j, *covered))
                elif len(covered):
                    owner.append(at)
                    codes.append(covered)
            distinct_of.append(at)
    pairs_of = [np.repeat(np.array(owner, dtype=np.int64), [len(c) for c in codes])] if codes else []
    codes_of = [np.concatenate(codes)] if codes else []
    for j in sorted({r[1] for r in ranges}):  # each domain's ranges by binary search
        here = [r for r in ranges if r[1] == j]
        values, value_codes = _sorted_numbers(domains[j])
        at_, _, low, high, low_closed, high_closed = (np.array(x) for x in zip(*here))
        start = np.where(low_closed, np.searchsorted(values, low, side="left"),
                         np.searchsorted(values, low, side="right"))
        stop = np.where(high_closed, np.searchsorted(values, high, side="right"),
                        np.searchsorted(values, high, side="left"))
        count = np.maximum(stop - start, 0)
        pairs_of.append(np.repeat(at_.astype(np.int64), count))
        codes_of.append(value_codes[segments(start, count)])
    n_distinct = len(kinds)
    width = max((d.size for d in domains), default=0) + 1
    key = (sorted_unique(np.concatenate(pairs_of) * width + np.concatenate(codes_of)) if pairs_of
           else np.zeros(0, dtype=np.int64))
    pair, code = np.divmod(key, width)  # each distinct cell's codes, sorted and distinct
    size = np.bincount(pair, minlength=n_distinct)
    first = np.cumsum(size) - size
    kind_of = np.empty(n_distinct, dtype=object)
    kind_of[:] = kinds
    out, at = [], 0
    for texts, j in zip(every_text, domain_of):
        which = np.array(distinct_of[at: at + len(texts)], dtype=np.int64)
        at += len(texts)
        indptr = np.zeros(len(which) + 1, dtype=np.int64)
        np.cumsum(size[which], out=indptr[1:])
        out.append(CellCovers(texts, kind_of[which], indptr, code[segments(first[which], size[which])],
                              domains[j].size))
    return out


def _sorted_numbers(domain: AttributeDomain) -> tuple[np.ndarray, np.ndarray]:
    """The domain's numbers (the missing value left out), sorted, and their codes (made once
    per domain object)."""
    made = _SORTED_NUMBERS.get(domain)
    if made is None:
        numbers = cast(np.ndarray, domain.numbers)
        valid = np.flatnonzero(~np.isnan(numbers))
        order = np.argsort(numbers[valid], kind="stable")
        made = _SORTED_NUMBERS[domain] = numbers[valid][order], valid[order].astype(np.int64)
    return made


def _read_one(text: str, domain: AttributeDomain, known: dict[str, _Read | None]) -> _Read | None:
    """One plain cell's kind and covered codes (sorted int64), a range's bounds and closed
    ends, or None when it is not plain. ``known``: :func:`_known_texts` of the domain."""
    if not (text.isascii() and text.isprintable()):
        return None
    stripped = text.strip()
    hit = known.get(stripped, _UNKNOWN)
    if hit is not _UNKNOWN:  # '*', a value or a label
        return cast("_Read | None", hit)
    if domain.numbers is not None and stripped[:1] not in ("[", "(") and _reads_as_number(stripped):
        return None
    matched = _RANGE.fullmatch(stripped)
    if matched is None:
        if _SYNTAX.isdisjoint(stripped) and not _reads_as_number(stripped):
            return CellKind.VALUE, _NOTHING  # names nothing in the domain
        return None
    if domain.numbers is None:
        return None
    opening, low, high, closing = matched.groups()
    return CellKind.RANGE, (float(low), float(high), opening == "[", closing == "]")


def _known_texts(domain: AttributeDomain) -> dict[str, _Read | None]:
    """What every text naming something in ``domain`` reads as, in the order the cells are
    resolved: ``*`` (None, not plain, when ``*`` is itself a value), a value, then a label
    (None in a numeric domain when the label reads as a number: the reference reads it as
    one). Built once per domain object (a hierarchy's leaf domain is itself made once)."""
    known = _KNOWN_TEXTS.get(domain)
    if known is not None:
        return known
    known = {}
    for label, (level, node) in domain._node_of_text.items():  # lowest priority first: overwritten below
        if domain.numbers is not None and label[:1] not in ("[", "(") and _reads_as_number(label):
            known[label] = None
        else:
            order, starts = domain._node_leaves[level]
            known[label] = CellKind.NODE, np.sort(order[starts[node]: starts[node + 1]]).astype(np.int64)
    for value, code in domain._code_of_text.items():
        known[value] = CellKind.VALUE, np.array([code], dtype=np.int64)
    known[ANY] = None if ANY in domain._code_of_text else (CellKind.ANY, np.arange(domain.size, dtype=np.int64))
    _KNOWN_TEXTS[domain] = known
    return known


def _reads_as_number(text: str) -> bool:
    """Whether either reader might read ``text`` as a number (then it is not plain)."""
    if not text or text[0] in _NUMBER_START:
        return True
    try:
        parse_number(text)
    except ValueError:
        return False
    return True
