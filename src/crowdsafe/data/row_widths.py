"""Ragged CSV rows: the first record whose number of fields is not the header's, from the bytes.

Polars refuses a record with more fields than the header (``found more fields than defined in
'Schema'``, without saying where) but reads one with fewer as missing values, without a word: the
fields it lacks become nulls. Both are a malformed file (``docs/hostile-input.md``), so both are
refused in one line naming the line (:func:`crowdsafe.data.io.refuse_ragged_rows`). The scan is
needed only when Polars refused the file, or when the last column holds a missing value: a short
row always leaves the last column missing, so a file whose last column is complete has none.

The rules are those Polars reads a CSV file by. A record ends at a line break (the file's own,
:mod:`crowdsafe.data.line_endings`) outside quotes; its fields are its separators outside quotes,
plus one. Quotes are matched by their parity, as in :mod:`crowdsafe.data.line_endings` (a doubled
quote ``""`` counts twice; Polars refuses a quote inside an unquoted field, so the parity is exact
on every file it reads). Empty lines before the header are skipped (Polars skips them); any other
empty line is a record of one field, so it is ragged in a file of several columns (Polars would
read it as a row of missing values) and a missing value in a file of one column. A line break
ending the file ends its last record and starts none.

Vectorised with NumPy, chunk by chunk (memory: a chunk, whatever the file's size); the line
numbers are physical lines (a line break inside a quoted value counts), 1-based, the header's
line is line 1 unless empty lines come before it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import NamedTuple

import numpy as np

__all__ = ["CHUNK_BYTES", "Ragged", "file_chunks", "first_ragged"]

#: Bytes scanned at a time (a few arrays of this many bytes are held).
CHUNK_BYTES = 1 << 21

_CR = 13


class Ragged(NamedTuple):
    """The first ragged record: its first ``line`` (1-based), its ``fields``, the header's ``width``,
    and whether the line is ``empty`` (nothing but its line break)."""

    line: int
    fields: int
    width: int
    empty: bool = False


class _State:
    """What a chunk leaves to the next: the quotes' parity, the open record's separators, line and bytes."""

    def __init__(self) -> None:
        self.parity = 0  # 1: the chunk starts inside a quoted field
        self.separators = 0  # the open record's separators outside quotes so far
        self.lines = 0  # line breaks (physical) before the chunk
        self.record_line = 1  # the open record's first line
        self.open = False  # the open record holds a byte (other than a CR)
        self.started = False  # the leading empty lines are behind
        self.width = 0  # the header's fields (0: not read yet)


def _bits(flags: np.ndarray) -> np.ndarray:
    """``flags`` (one per byte) packed as 64-bit words (bit ``k`` of word ``w``: byte ``64 w + k``),
    with one zero word more (so that the position just past the end has a word)."""
    packed = np.packbits(flags, bitorder="little")
    return np.concatenate((packed, np.zeros(-len(packed) % 8 + 8, dtype=np.uint8))).view("<u8")


def _inside(quotes: np.ndarray, parity: int) -> np.ndarray:
    """The bytes inside quotes, as words like :func:`_bits`'s: a prefix XOR of the quote bits within
    each word (six shifts), flipped where the quotes before the word, ``parity`` counted, are odd."""
    inside = quotes.copy()
    for shift in (1, 2, 4, 8, 16, 32):
        inside ^= inside << np.uint64(shift)
    odd = np.bitwise_count(quotes) & 1
    before = (np.cumsum(odd) - odd + parity) & 1  # quotes before each word, modulo 2
    return inside ^ (np.uint64(0) - before.astype(np.uint64))


def _chunk(data: np.ndarray, state: _State, separator: int, eol: int, quote: int) -> Ragged | None:
    """Scan one chunk, ``state`` carried over; the first ragged record ending in it, or None."""
    if not state.started:  # empty lines before the header (LF, or CRLF when LF ends a line)
        blank = (data == eol) | (data == _CR)
        start = int(np.argmin(blank)) if not blank.all() else len(data)
        state.lines += int((data[:start] == eol).sum())
        state.record_line = state.lines + 1
        if start == len(data):
            return None
        state.started = True
        data = data[start:]
    quotes = _bits(data == quote)
    inside = _inside(quotes, state.parity)
    state.parity = (state.parity + int(np.bitwise_count(quotes).sum())) & 1
    outside = _bits(data == separator) & ~inside  # the separators outside quotes
    running = np.concatenate(([0], np.cumsum(np.bitwise_count(outside), dtype=np.int64)))
    breaks = np.flatnonzero(data == eol)  # every line break, physical
    word, bit = breaks >> 6, (breaks & 63).astype(np.uint64)
    at_end = np.flatnonzero(((inside[word] >> bit) & np.uint64(1)) == 0)  # the line breaks ending a record
    ends, word, bit = breaks[at_end], word[at_end], bit[at_end]
    total = int(running[-1])
    if len(ends):
        before = running[word] + np.bitwise_count(outside[word] & ((np.uint64(1) << bit) - np.uint64(1)))
        fields = np.diff(before, prepend=0) + 1  # separators before each record's end, and since the last one
        fields[0] += state.separators
        if not state.width:
            state.width = int(fields[0])
        bad = np.flatnonzero(fields != state.width)
        if len(bad):
            j = int(bad[0])
            line = state.record_line if j == 0 else state.lines + int(at_end[j - 1]) + 2
            record = data[(0 if j == 0 else int(ends[j - 1]) + 1):int(ends[j])]
            empty = not (j == 0 and state.open) and not (record != _CR).any()
            return Ragged(line, int(fields[j]), state.width, bool(empty))
        state.separators = total - int(before[-1])
        state.record_line = state.lines + int(at_end[-1]) + 2
        state.open = bool((data[int(ends[-1]) + 1:] != _CR).any())
    else:
        state.separators += total
        state.open = state.open or bool((data != _CR).any())
    state.lines += len(breaks)
    return None


def first_ragged(chunks: Iterable[bytes], *, separator: str, eol: str, quote: str = '"') -> Ragged | None:
    """The first record of the CSV text in ``chunks`` (the file's bytes, in order, decompressed)
    whose number of fields is not the header's (the first record's), or None (module docstring)."""
    state = _State()
    codes = [ord(c) for c in (separator, eol, quote)]
    for chunk in chunks:
        found = _chunk(np.frombuffer(chunk, dtype=np.uint8), state, *codes)
        if found is not None:
            return found
    if state.open and state.width and state.separators + 1 != state.width:  # a last record without a line break
        return Ragged(state.record_line, state.separators + 1, state.width)
    return None


def file_chunks(path: Path, codec: str | None = None) -> Iterator[bytes]:
    """The bytes of the file at ``path``, :data:`CHUNK_BYTES` at a time, decompressed (``codec``:
    ``"gzip"``, ``"zstd"`` or None)."""
    if codec is None:
        with open(path, "rb") as handle:
            while chunk := handle.read(CHUNK_BYTES):
                yield chunk
        return
    import pyarrow as pa

    with pa.CompressedInputStream(pa.OSFile(str(path)), codec) as stream:
        while chunk := stream.read(CHUNK_BYTES):
            yield chunk
