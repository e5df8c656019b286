"""Generalized values in a release, and what they cover.

A release (``docs/architecture.md``, "Release representation") writes a quasi-identifier cell
either as an original value or as a generalized one:

- a numeric range ``[25, 34]`` (closed), ``[25, 35)`` (half-open; any of ``[`` ``(`` ``]`` ``)``;
  an outward bracket opens its end too, as ISO 31-11 writes it: ``[25, 35[``, ``]25, 35]``;
  a ``;`` may separate the ends),
  or top/bottom coding ``>=90``, ``>90``, ``<18``, ``<=17`` (numbers may carry a ``K``, ``M`` or
  ``B`` suffix; ISO dates ``2020-01-31`` are accepted for date attributes, and ISO timestamps
  without a zone ``2020-01-31 10:00:00.000000`` (or with ``T``) for timestamp attributes);
- a set of values ``{Divorced, Separated}`` (members separated by comma + space; a member that
  holds ``, ``, braces or ``"``, starts or ends with a space, or is empty is in double quotes,
  ``"`` doubled: ``{"a, b", a}``; module :mod:`crowdsafe.data.set_cells`);
- a masked value ``130**``: the characters kept, then one ``*`` per character masked (ARX's and
  crowdsafe's mask hierarchies write them): the values of that length that start with ``130``;
- in a numeric column, a band ``20-29`` (both ends in it) or ``90+`` (from 90 on), as hand-made
  and spreadsheet releases write them;
- the label of a hierarchy node (its leaves are read from the hierarchy);
- ``*``: fully generalized (the cell covers the whole domain).

:func:`parse_cell` reads the syntax alone. :class:`AttributeDomain` is the set of values an attribute
can take (the original column's dictionary, or its hierarchy's leaves), and
:meth:`AttributeDomain.cover` turns the distinct cells of a release column into a :class:`Cover`: for
every cell, the domain codes it stands for, its numeric bounds and, with a hierarchy, the level
of the lowest node that contains it. Models and metrics use covers, so ``[25, 34]``, a set and
``*`` are treated as what they are, and two cells that cover the same values (a node label and
the equal set) are the same published value.

Resolution order for one cell: ``*``; an original value of the domain (exact text, or the same
number); a hierarchy node label (lowest level first); range / top-bottom syntax; set syntax; a
masked value (read as the set of values it may mask); a band (numeric columns). A cell that
resolves to nothing, or covers no value of the domain, is an InputError naming the column and value.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Sequence
from dataclasses import dataclass
from enum import StrEnum
from functools import cached_property
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from crowdsafe.data.hierarchy import MISSING_LABEL, Hierarchy
from crowdsafe.data.release_roles import centroid_error
from crowdsafe.data.set_cells import SetPiece, format_set, set_members, split_set
from crowdsafe.errors import InputError

if TYPE_CHECKING:
    from crowdsafe.data.dataset import Dataset

ANY = "*"

_NUMBER = (r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?[kKmMbB]?"
           r"|\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?)?")
# an ISO timestamp: a date, then the time after 'T' or a space (as Polars and Python write them)
_TIMESTAMP = re.compile(r"(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}(?::\d{2})?)(?:\.(\d{1,9}))?")
_DAY_US = 86_400_000_000  # microseconds in a day: a timestamp is read as days since 1970, with a fraction
# an outward bracket opens an end (ISO 31-11, as ARX and many statistics offices write): ]20, 30] is
# (20, 30], [20, 30[ is [20, 30)
_RANGE = re.compile(rf"^\s*([\[(\]])\s*({_NUMBER})\s*[,;]\s*({_NUMBER})\s*([\])\[])\s*$")
_OPENING, _CLOSING = {"]": "("}, {"[": ")"}
# a masked value: the characters kept, then one '*' per character masked (130** for the five-digit ZIP
# codes 13000-13099), as ARX and crowdsafe's mask hierarchies write them
MASK_PATTERN = r"^([^*\[\](){}<>]+)(\*+)$"
_MASK = re.compile(MASK_PATTERN)
_LAST_CHAR = "\U0010ffff"
# in a numeric column only: a band written 20-29 (both ends in it) or 90+ (from 90 on), as hand-made
# and spreadsheet releases write them
BAND_PATTERN = r"^(-?[0-9]+(?:\.[0-9]+)?)\s*(?:-\s*(-?[0-9]+(?:\.[0-9]+)?)|(\+))$"
_BAND = re.compile(BAND_PATTERN)
_OPEN_END = re.compile(rf"^\s*(>=|<=|>|<)\s*({_NUMBER})\s*$")
_SUFFIX = {"k": 1e3, "m": 1e6, "b": 1e9}
_EPOCH = dt.date(1970, 1, 1)


class CellKind(StrEnum):
    VALUE = "value"  # an original value
    RANGE = "range"  # a numeric interval, possibly open at one end (top/bottom coding)
    SET = "set"  # a set of values
    NODE = "node"  # a hierarchy node label
    ANY = "any"  # '*'
    MISSING = "missing"  # an empty cell: the missing value


def parse_number(text: str) -> float:
    """A number as written in a range: plain, with a K/M/B suffix, an ISO date (days since 1970)
    or an ISO timestamp without a zone (days since 1970 with a fraction: whole microseconds
    over the microseconds of a day, as :class:`AttributeDomain` numbers a timestamp column)."""
    text = text.strip()
    if not text:
        raise ValueError("an empty text is not a number")
    if len(text) == 10 and text[4] == "-" and text[7] == "-":
        return float((dt.date.fromisoformat(text) - _EPOCH).days)
    stamp = _TIMESTAMP.fullmatch(text)
    if stamp is not None:
        day, clock, fraction = stamp.groups()
        moment = dt.datetime.fromisoformat(f"{day}T{clock}")
        micros = (moment - dt.datetime(1970, 1, 1)) // dt.timedelta(microseconds=1)
        micros += int((fraction or "").ljust(6, "0")[:6])  # below a microsecond: cut, as the column's numbers
        return float(micros) / _DAY_US
    scale = _SUFFIX.get(text[-1].lower(), 1.0)
    return float(text[:-1] if scale != 1.0 else text) * scale


def is_number(text: str) -> bool:
    """Whether ``text`` reads as a number (:func:`parse_number`)."""
    try:
        parse_number(text)
    except ValueError:
        return False
    return True


@dataclass(frozen=True)
class Cell:
    """The syntax of one release cell, read without any domain.

    ``text`` is a canonical form: ranges re-spaced, set members sorted, so equal cells written
    differently compare equal. ``low``/``high`` (with ``low_closed``/``high_closed``) bound a
    RANGE; ``members`` are the texts of a SET.
    """

    kind: CellKind
    text: str
    low: float = -np.inf
    high: float = np.inf
    low_closed: bool = True
    high_closed: bool = True
    members: tuple[str, ...] = ()

    def contains(self, values: np.ndarray) -> np.ndarray:
        """Which numbers lie in this RANGE."""
        above = values >= self.low if self.low_closed else values > self.low
        below = values <= self.high if self.high_closed else values < self.high
        return above & below


def _number_text(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else repr(float(value))


def parse_cell(text: str | None) -> Cell:
    """Read one cell's syntax (see the module docstring). Anything not generalized is a VALUE."""
    if text is None:
        return Cell(CellKind.MISSING, MISSING_LABEL)
    stripped = text.strip()
    if stripped == ANY:
        return Cell(CellKind.ANY, ANY)
    match = _RANGE.match(stripped)
    if match:
        opening, low, high, closing = match.groups()
        lo, hi = parse_number(low), parse_number(high)
        opening, closing = _OPENING.get(opening, opening), _CLOSING.get(closing, closing)
        return Cell(CellKind.RANGE, f"{opening}{low.strip()}, {high.strip()}{closing}", lo, hi,
                    opening == "[", closing == "]")
    match = _OPEN_END.match(stripped)
    if match:
        operator, bound = match.groups()
        value = parse_number(bound)
        if operator.startswith(">"):
            return Cell(CellKind.RANGE, f"{operator}{bound.strip()}", low=value, low_closed=operator == ">=")
        return Cell(CellKind.RANGE, f"{operator}{bound.strip()}", high=value, high_closed=operator == "<=")
    if len(stripped) >= 2 and stripped[0] == "{" and stripped[-1] == "}":
        members = tuple(sorted(set_members(stripped[1:-1])))
        return Cell(CellKind.SET, format_set(members), members=members)
    return Cell(CellKind.VALUE, text)


def _as_text(series: pl.Series) -> pl.Series:
    """Cells as text; integral floats print without '.0' so '25.0' and '25' agree."""
    if series.dtype.is_float():
        return pl.Series(series.name, [None if v is None else _number_text(v) for v in series.to_list()],
                         dtype=pl.String)
    if series.dtype == pl.String:
        return series
    return series.cast(pl.String)


@dataclass(frozen=True)
class Cover:
    """What each distinct cell of one release column covers in a :class:`AttributeDomain`.

    For cell ``j`` (of ``labels``): ``indices[indptr[j]:indptr[j + 1]]`` are the domain codes it
    covers (sorted), ``size[j]`` how many, ``low[j]``/``high[j]`` the smallest and largest
    covered number (NaN for text domains or when only the missing value is covered),
    ``level[j]`` the level of the lowest hierarchy node containing all of them (-1 without a
    hierarchy), ``kind[j]`` its syntax, and ``canonical[j]`` an id shared by cells that cover
    exactly the same codes.
    """

    domain: AttributeDomain
    labels: pl.Series
    kind: tuple[CellKind, ...]
    indptr: np.ndarray
    indices: np.ndarray
    low: np.ndarray
    high: np.ndarray
    level: np.ndarray
    canonical: np.ndarray

    @property
    def size(self) -> np.ndarray:
        return np.diff(self.indptr)

    def members(self, j: int) -> np.ndarray:
        return self.indices[self.indptr[j]: self.indptr[j + 1]]

    @cached_property
    def membership(self) -> tuple[np.ndarray, np.ndarray]:
        """``(cell, code)`` pairs, one per covered domain code: the cover as a sparse relation."""
        cells = np.repeat(np.arange(len(self.labels), dtype=np.int64), self.size)
        return cells, self.indices.astype(np.int64)

    def ncp(self) -> np.ndarray:
        """Normalized certainty penalty of each cell (Xu et al. 2006; Ghinita et al. 2007).

        Numeric domains: (high − low) / (domain high − domain low) of the covered values;
        text domains: 0 for a single value, else covered values / domain size. In [0, 1].
        """
        domain = self.domain
        if domain.numbers is not None:
            width = domain.numeric_span
            spread = np.nan_to_num(self.high - self.low, nan=0.0)
            penalty = spread / width if width > 0 else np.zeros(len(spread))
            penalty = np.where((self.size == domain.size) & (self.size > 1), 1.0, penalty)  # all of several values
            return np.clip(penalty, 0.0, 1.0)
        size = self.size.astype(np.float64)
        return np.where(size > 1, size / max(domain.size, 1), 0.0)


class AttributeDomain:
    """The values one attribute can take: ``values`` (a Series; ``values[code]``) and, when
    given, the hierarchy whose leaves they are (then codes are leaf codes).

    Build it from a Dataset (:meth:`of`: the column's encoding dictionary, i.e. its hierarchy's
    leaves when it has one) or from values (:meth:`from_values`).
    """

    def __init__(self, name: str, values: pl.Series, hierarchy: Hierarchy | None = None) -> None:
        self.name = name
        self.values = values
        self.hierarchy = hierarchy
        self.size = len(values)
        dtype = values.dtype
        self.numbers: np.ndarray | None = None
        if dtype.is_numeric() or dtype == pl.Date:
            self.numbers = values.to_physical().cast(pl.Float64).to_numpy().astype(np.float64)
        elif isinstance(dtype, pl.Datetime) and dtype.time_zone is None:  # days with a fraction, as parse_number
            self.numbers = values.dt.epoch("us").cast(pl.Float64).to_numpy().astype(np.float64) / _DAY_US
        self._null_code = int(values.is_null().arg_true()[0]) if values.null_count() else None
        listed = values.to_list()
        texts = [MISSING_LABEL if v is None else _number_text(v) if isinstance(v, float) else str(v) for v in listed]
        self._code_of_text = {t: i for i, (t, v) in enumerate(zip(texts, listed)) if v is not None}
        self._node_of_text: dict[str, tuple[int, int]] = {}
        if hierarchy is not None:
            for level in range(hierarchy.height, -1, -1):  # lower levels overwrite: lowest wins
                for node, label in enumerate(hierarchy.labels[level]):
                    self._node_of_text[label] = (level, node)

    @classmethod
    def of(cls, dataset: Dataset, column: str) -> AttributeDomain:
        return cls(column, dataset.encoded(column).dictionary, dataset.hierarchies.get(column))

    @classmethod
    def from_values(cls, values: pl.Series, hierarchy: Hierarchy | None = None) -> AttributeDomain:
        """The domain of a column: its distinct values (sorted, missing last) or the hierarchy's leaves."""
        if hierarchy is not None:
            return leaf_domain(values.name, hierarchy) if cls is AttributeDomain else cls(values.name,
                                                                                           hierarchy.leaves, hierarchy)
        distinct = values.unique().sort(nulls_last=True)
        return cls(values.name, distinct, None)

    @cached_property
    def numeric_span(self) -> float:
        finite = self.numbers[~np.isnan(self.numbers)] if self.numbers is not None else np.array([])
        return float(finite.max() - finite.min()) if len(finite) else 0.0

    @cached_property
    def _node_leaves(self) -> list[tuple[np.ndarray, np.ndarray]]:
        """Per level: (leaf codes sorted by node, start offsets per node)."""
        assert self.hierarchy is not None
        out = []
        for level in range(self.hierarchy.height + 1):
            node = self.hierarchy.leaf_map(level)
            order = np.argsort(node, kind="stable").astype(np.uint32)
            starts = np.searchsorted(node[order], np.arange(self.hierarchy.size(level) + 1))
            out.append((order, starts))
        return out

    @cached_property
    def _sorted_texts(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The values' texts sorted (the missing value left out), their codes and their lengths."""
        texts = np.array(list(self._code_of_text), dtype=str)
        codes = np.fromiter(self._code_of_text.values(), dtype=np.int64, count=len(texts))
        order = np.argsort(texts, kind="stable")
        return texts[order], codes[order], np.char.str_len(texts[order]).astype(np.int64)

    def masked_codes(self, kept: Sequence[str], width: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """The values masked cells may stand for: for cell i, every value whose text starts with
        ``kept[i]`` and has ``width[i]`` characters (the prefix found by binary search in the
        sorted texts). Returns (cell, code) pairs, by cell, codes ascending within each."""
        texts, codes, lengths = self._sorted_texts
        if not len(kept) or not len(texts):
            return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
        prefixes = np.array(kept, dtype=str)
        start = np.searchsorted(texts, prefixes, side="left")
        stop = np.searchsorted(texts, np.char.add(prefixes, _LAST_CHAR), side="right")
        count = np.maximum(stop - start, 0)
        cell = np.repeat(np.arange(len(prefixes), dtype=np.int64), count)
        at = np.repeat(start - (np.cumsum(count) - count), count) + np.arange(int(count.sum()), dtype=np.int64)
        keep = lengths[at] == np.asarray(width, dtype=np.int64)[cell]
        cell, code = cell[keep], codes[at[keep]]
        order = np.lexsort((code, cell))
        return cell[order], code[order]

    def _lowest_levels(self, indptr: np.ndarray, indices: np.ndarray, sizes: np.ndarray) -> np.ndarray:
        """Per cell (codes ``indices[indptr[j]:indptr[j + 1]]``), the level of the lowest node holding
        all its codes (0 for one; -1 for none or with no hierarchy; the top level if none does: several
        roots). Level by level for every cell: its codes share a node when least and greatest agree."""
        level, several = np.where(sizes == 1, 0 if self.hierarchy is not None else -1, -1).astype(np.int64), sizes > 1
        if self.hierarchy is None or not several.any():
            return level
        cells, starts = np.flatnonzero(sizes), indptr[:-1][sizes > 0]  # reduceat: non-empty cells
        level[several], searching = self.hierarchy.height, several[cells]
        for height in range(self.hierarchy.height + 1):
            nodes = self.hierarchy.leaf_map(height)[indices]
            found = searching & (np.minimum.reduceat(nodes, starts) == np.maximum.reduceat(nodes, starts))
            level[cells[found]], searching = height, searching & ~found
        return level

    def _resolve(self, text: str | None, strict: bool = True) -> tuple[CellKind, np.ndarray]:
        """Kind and covered codes of one cell (``strict=False``: unknown values cover nothing)."""
        if text is None:
            if self._null_code is None:
                if not strict:
                    return CellKind.MISSING, np.zeros(0, dtype=np.uint32)
                raise InputError(
                    f"column '{self.name}' of the release has a missing value, but the original has none "
                    f"(write '{ANY}' for a suppressed cell)"
                )
            return CellKind.MISSING, np.array([self._null_code], dtype=np.uint32)
        stripped = text.strip()
        if stripped == ANY:
            return CellKind.ANY, np.arange(self.size, dtype=np.uint32)
        code = self._code_of_text.get(stripped)
        if code is None and self.numbers is not None:
            try:
                number = parse_number(stripped)
            except ValueError:
                number = None
            if number is not None:
                hits = np.nonzero(self.numbers == number)[0]
                code = int(hits[0]) if len(hits) else None
        if code is not None:
            return CellKind.VALUE, np.array([code], dtype=np.uint32)
        if stripped == MISSING_LABEL and self._null_code is not None:  # how a set shows its missing member
            return CellKind.MISSING, np.array([self._null_code], dtype=np.uint32)
        node = self._node_of_text.get(stripped)
        if node is not None:
            order, starts = self._node_leaves[node[0]]
            return CellKind.NODE, np.sort(order[starts[node[1]]: starts[node[1] + 1]])
        cell = parse_cell(stripped)
        if cell.kind is CellKind.RANGE:
            if self.numbers is None:
                raise InputError(
                    f"column '{self.name}' holds the range {text!r}, but the original values are not numbers"
                )
            return CellKind.RANGE, np.nonzero(cell.contains(self.numbers))[0].astype(np.uint32)
        if cell.kind is CellKind.SET:
            return CellKind.SET, self.set_codes(stripped[1:-1], strict)
        masked = _MASK.match(stripped)
        if masked:  # the set of values it may mask (strict: a masked value of the original masks one at least)
            kept, stars = masked.groups()
            codes = self.masked_codes([kept], [len(kept) + len(stars)])[1].astype(np.uint32)
            if len(codes) or not strict:
                return CellKind.SET, codes
        numbers = self.numbers
        band = _BAND.match(stripped) if numbers is not None else None
        if numbers is not None and band and (band.group(3) or float(band.group(1)) <= float(band.group(2))):
            low, high = float(band.group(1)), np.inf if band.group(3) else float(band.group(2))
            return CellKind.RANGE, np.flatnonzero((numbers >= low) & (numbers <= high)).astype(np.uint32)
        if not strict:
            return CellKind.VALUE, np.zeros(0, dtype=np.uint32)
        if numbers is not None and is_number(stripped):  # a centroid (MDAV), not a value of the original
            raise centroid_error(self.name, text)
        raise InputError(
            f"column '{self.name}' of the release holds {text!r}, which is neither a value of the original, "
            "a hierarchy node, a range, a set, a masked value nor '*'"
        )

    def _known(self, text: str) -> bool:
        return text in self._code_of_text or text in self._node_of_text or text == ANY

    def _member(self, text: str) -> bool:
        return self._known(text) or text == MISSING_LABEL and self._null_code is not None

    def set_codes(self, inner: str, strict: bool = True) -> np.ndarray:
        """The codes a set covers, read from the text between its braces (module
        :mod:`crowdsafe.data.set_cells`): quoted members by :meth:`quoted_codes`, the others
        split by :meth:`_split_members` and read by :meth:`_resolve`."""
        pieces = split_set(inner) or [SetPiece(inner, inner, False)]
        parts = [self.quoted_codes(p.text, p.raw, strict) if p.quoted else self._resolve(member, strict)[1]
                 for p in pieces for member in ([p.text] if p.quoted else self._split_members(p.text))]
        return np.unique(np.concatenate([np.zeros(0, dtype=np.uint32), *parts])).astype(np.uint32)

    def quoted_codes(self, member: str, raw: str, strict: bool) -> np.ndarray:
        """A quoted set member: a value of the domain written exactly as ``member`` (nothing
        stripped), a hierarchy label, or in a numeric domain the same number; else, for a set
        written before quoting, ``raw`` (the member with its quotes) as a value or a label."""
        for text, exact in ((member, False), (raw, True)):
            code = self._code_of_text.get(text)
            if code is None and not exact and self.numbers is not None:
                try:
                    hits = np.flatnonzero(self.numbers == parse_number(member))
                except ValueError:
                    hits = np.zeros(0, dtype=np.int64)
                code = int(hits[0]) if len(hits) else None
            if code is not None:
                return np.array([code], dtype=np.uint32)
            node = self._node_of_text.get(text)
            if node is not None:
                order, starts = self._node_leaves[node[0]]
                return np.sort(order[starts[node[1]]: starts[node[1] + 1]]).astype(np.uint32)
        if strict:
            raise InputError(f"column '{self.name}' of the release holds the set member {raw}, which is "
                             "neither a value of the original nor a hierarchy node")
        return np.zeros(0, dtype=np.uint32)

    def _split_members(self, inner: str) -> list[str]:
        """Split a set's unquoted members at ', ', keeping together members that themselves hold
        ', ' (hierarchy labels such as 'Technical, sales and clerical', written unquoted before
        quoting): the longest known run of tokens wins, unless each of its tokens is itself a
        member (then they are, as a set written with quotes means them: ``{a, b}``)."""
        tokens = [t.strip() for t in inner.split(", ")]
        members: list[str] = []
        i = 0
        while i < len(tokens):
            for j in range(len(tokens), i, -1):
                candidate = ", ".join(tokens[i:j])
                if j == i + 1 or self._known(candidate) and not all(map(self._member, tokens[i:j])):
                    members.append(candidate)
                    i = j
                    break
        return [m for m in members if m]

    def identity_cover(self) -> Cover:
        """The cover in which every domain value is its own cell (an original column)."""
        n = self.size
        codes = np.arange(n, dtype=np.uint32)
        numbers = self.numbers if self.numbers is not None else np.full(n, np.nan)
        level = np.zeros(n, dtype=np.int64) if self.hierarchy is not None else np.full(n, -1, dtype=np.int64)
        kind = tuple(CellKind.MISSING if v is None else CellKind.VALUE for v in self.values.to_list())
        return Cover(self, _as_text(self.values), kind, np.arange(n + 1, dtype=np.int64), codes,
                     numbers.copy(), numbers.copy(), level, np.arange(n, dtype=np.int64))

    def cover(self, cells: pl.Series, *, strict: bool = True) -> Cover:
        """Resolve the distinct cells ``cells`` (any dtype; read as text) into a :class:`Cover`.

        ``strict=False`` lets a cell cover nothing (e.g. matching a release against a population
        table that lacks some of its values) instead of raising.
        """
        texts = _as_text(cells)
        kinds: list[CellKind] = []
        pieces: list[np.ndarray] = []
        single = np.empty(1, dtype=np.uint32)
        for text in texts.to_list():
            code = self._code_of_text.get(text.strip()) if text is not None else None
            if code is not None:  # an original value: the common case, kept cheap
                kinds.append(CellKind.VALUE)
                piece = single.copy()
                piece[0] = code
                pieces.append(piece)
                continue
            kind, codes = self._resolve(text, strict)
            if len(codes) == 0 and strict:
                raise InputError(
                    f"the value {text!r} in column '{self.name}' of the release covers no value of the original"
                )
            kinds.append(kind)
            pieces.append(codes)
        sizes = np.array([len(p) for p in pieces], dtype=np.int64)
        indptr = np.concatenate([[0], np.cumsum(sizes)]).astype(np.int64)
        indices = np.concatenate(pieces).astype(np.uint32) if pieces else np.zeros(0, np.uint32)
        low = np.full(len(pieces), np.nan)
        high = np.full(len(pieces), np.nan)
        filled = sizes > 0
        if self.numbers is not None and filled.any():
            numbers = self.numbers[indices]
            starts = indptr[:-1][filled]
            low[filled] = np.fmin.reduceat(numbers, starts)  # fmin/fmax skip the missing value's NaN
            high[filled] = np.fmax.reduceat(numbers, starts)
        level = self._lowest_levels(indptr, indices, sizes)
        keys: dict[bytes, int] = {}
        canonical = np.array([keys.setdefault(p.tobytes(), len(keys)) for p in pieces], dtype=np.int64)
        return Cover(self, texts, tuple(kinds), indptr, indices, low, high, level, canonical)


def leaf_domain(name: str, hierarchy: Hierarchy) -> AttributeDomain:
    """``AttributeDomain(name, hierarchy.leaves, hierarchy)``, made once per hierarchy and name
    (:attr:`Hierarchy.derived <crowdsafe.data.hierarchy.Hierarchy.derived>`): its dictionaries
    of value and label texts and its node leaves are then built once, not at every attack."""
    key = ("leaf_domain", name)
    domain = hierarchy.derived.get(key)
    if domain is None:
        domain = hierarchy.derived[key] = AttributeDomain(name, hierarchy.leaves, hierarchy)
    return domain


def canonical_cells(cells: pl.Series) -> pl.Series:
    """Cells rewritten in canonical syntax (no domain needed): ranges re-spaced, sets sorted,
    a one-member set as its member. Used to group a release's rows when no original is given."""
    texts = _as_text(cells)
    distinct = texts.unique()
    canonical = []
    for text in distinct.to_list():
        cell = parse_cell(text)
        canonical.append(cell.members[0] if cell.kind is CellKind.SET and len(cell.members) == 1 else
                         None if cell.kind is CellKind.MISSING else cell.text)
    mapping = pl.DataFrame({"cell": distinct, "canonical": pl.Series(canonical, dtype=pl.String)})
    return (
        texts.to_frame("cell").join(mapping, on="cell", how="left", nulls_equal=True, maintain_order="left")
        .get_column("canonical").alias(cells.name)
    )


def is_generalized(cells: pl.Series) -> bool:
    """True when any cell uses range, set or '*' syntax."""
    for text in _as_text(cells).unique().drop_nulls().to_list():
        if parse_cell(text).kind in (CellKind.RANGE, CellKind.SET, CellKind.ANY):
            return True
    return False


def release_codes(release: pl.DataFrame, domains: Sequence[AttributeDomain]
                  ) -> tuple[dict[str, np.ndarray], dict[str, Cover]]:
    """Per column, the cell index of each release row and the column's :class:`Cover`.

    Cells are resolved once per distinct value, so this costs one dictionary encoding per column.
    """
    from crowdsafe.data.encoding import encode_series

    rows: dict[str, np.ndarray] = {}
    covers: dict[str, Cover] = {}
    for domain in domains:
        if domain.name not in release.columns:
            raise InputError(f"the release has no column '{domain.name}'; "
                             f"its columns are: {', '.join(release.columns)}")
        codes, dictionary = encode_series(release.get_column(domain.name))
        rows[domain.name] = codes
        covers[domain.name] = domain.cover(dictionary)
    return rows, covers


@dataclass(frozen=True)
class CellTable:
    """A table reduced to the distinct tuples of its cells, with counts.

    ``cells[c]`` holds, per distinct tuple, the index of its cell in ``covers[c]`` (what it
    covers in the original's domain), and ``counts`` the rows holding the tuple. An original
    table is the special case where every cell is one value (:meth:`of_original`), so utility
    metrics compute the truth and the release's estimate with the same code.
    """

    columns: list[str]
    covers: dict[str, Cover]
    cells: dict[str, np.ndarray]
    counts: np.ndarray

    @property
    def rows(self) -> int:
        return int(self.counts.sum())

    @classmethod
    def of_release(cls, release: pl.DataFrame, original: Dataset, columns: Sequence[str]) -> CellTable:
        from crowdsafe.data.encoding import EncodedColumn, Encoding
        from crowdsafe.data.frequency import COUNT, code_frequencies

        domains = [AttributeDomain.of(original, c) for c in columns]
        rows, covers = release_codes(release, domains)
        encoding = Encoding({c: EncodedColumn(c, rows[c], covers[c].labels) for c in columns})
        table = code_frequencies(encoding)
        return cls(list(columns), covers, {c: table.get_column(c).to_numpy().astype(np.int64) for c in columns},
                   table.get_column(COUNT).to_numpy().astype(np.int64))

    @classmethod
    def of_original(cls, original: Dataset, columns: Sequence[str]) -> CellTable:
        from crowdsafe.data.encoding import encode
        from crowdsafe.data.frequency import COUNT, code_frequencies

        table = code_frequencies(encode(original, columns))
        covers = {c: AttributeDomain.of(original, c).identity_cover() for c in columns}
        return cls(list(columns), covers, {c: table.get_column(c).to_numpy().astype(np.int64) for c in columns},
                   table.get_column(COUNT).to_numpy().astype(np.int64))

