"""Keys wider than one int64, held as a few int64 words (:class:`WordKeys`).

A wide key of :class:`.tables.KeyedTables` is the integer Σ_j c_j · 2^shift[j] (column j's
code in its bit field, the first column most significant), the same integer the reference twin
holds as a Python integer in an object array. Here it is cut into words at column boundaries:
each word holds whole fields of consecutive columns, at most :data:`WORD_BITS` bits, and the
key is Σ_w word_w · 2^offset[w] (words most significant first). No field straddles two words,
so a column's code is one shift and one mask of one int64 word.

Why every operation is exact, and the same as on the Python integers:

- the words are a canonical form: each word is below 2^width[w] and the words' bit ranges are
  disjoint, so two keys are equal exactly when every word is, and the integer order of keys is
  the lexicographic order of their words (most significant first). A stable sort on the words
  (most significant first, each pass the dense rank of the words before beside the next word:
  :func:`sorted_runs`) is therefore the stable integer sort, the permutation
  ``np.argsort(object_keys, kind="stable")`` gives, and equal keys are neighbours in it;
- a right shift by s drops the words below s and shifts the one word s falls in: the lower
  bits sum to less than 2^s, so this is ⌊key / 2^s⌋; when one word is left the result is a plain
  int64 array, the same integer;
- an AND with a Python integer (negative ones too: infinite two's complement) is the AND of
  each word with the mask's bits over that word's range.

A word that an AND cleared is marked dead (all zero, skipped by the comparisons and sorts);
writing a field into it makes it live again. The layout (which columns share a word) comes from
the bit widths alone, that is from the hierarchies (public), never from the data.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

#: Bits of one word at most (public: the layout depends on the hierarchies' widths only). A
#: word of 40 bits leaves 23 bits for a rank of up to 2^23 runs beside it in one int64, which
#: :func:`sorted_runs` sorts in one pass (more tuples: two passes, the same order).
WORD_BITS = 40


def word_layout(bits: Sequence[int], word_bits: int | None = None) -> tuple[list[int], list[int]]:
    """The (offsets, widths) of the words, most significant first, for columns of ``bits`` (the
    first column most significant): columns are taken from the last one upwards into a word while
    its fields fit in ``word_bits`` (:data:`WORD_BITS` by default; a column wider than that, at
    most 62 bits, gets a word of its own)."""
    word_bits = WORD_BITS if word_bits is None else word_bits
    offsets: list[int] = []
    widths: list[int] = []
    offset, width = 0, 0
    for b in reversed([int(b) for b in bits]):
        if width and width + b > word_bits:
            offsets.append(offset)
            widths.append(width)
            offset, width = offset + width, 0
        width += b
    offsets.append(offset)
    widths.append(width)
    return offsets[::-1], widths[::-1]


class WordKeys:
    """Non-negative integer keys as int64 words (module docstring): ``words[w]`` holds the bits
    ``offsets[w] .. offsets[w] + widths[w] − 1`` of every key; ``live[w]`` False means the word is
    all zero. The arrays are never changed in place: every operation makes new words (or shares
    unchanged ones)."""

    __slots__ = ("words", "offsets", "widths", "live")

    def __init__(self, words: Sequence[np.ndarray], offsets: Sequence[int], widths: Sequence[int],
                 live: Sequence[bool] | None = None) -> None:
        self.words = tuple(words)
        self.offsets = tuple(offsets)
        self.widths = tuple(widths)
        self.live = tuple(live) if live is not None else (True,) * len(self.words)

    @classmethod
    def pack(cls, columns: Iterable[np.ndarray], shifts: Sequence[int], bits: Sequence[int], n: int) -> WordKeys:
        """The keys of ``n`` tuples with column j's codes (each below 2^bits[j]) at ``shifts[j]``."""
        offsets, widths = word_layout(bits)
        words = [np.zeros(n, dtype=np.int64) for _ in offsets]
        for values, shift in zip(columns, shifts):
            w = _word_of(offsets, widths, int(shift))
            words[w] |= np.asarray(values, dtype=np.int64) << (int(shift) - offsets[w])
        return cls(words, offsets, widths)

    def __len__(self) -> int:
        return len(self.words[0])

    def __getitem__(self, index: np.ndarray | slice) -> WordKeys:
        first = self.words[0][index]  # a dead word (all zero) is not gathered
        words = [first if w == 0 else word[index] if alive else np.zeros(len(first), dtype=np.int64)
                 for w, (word, alive) in enumerate(zip(self.words, self.live))]
        return WordKeys(words, self.offsets, self.widths, self.live)

    def field(self, shift: int, bits: int) -> np.ndarray:
        """The ``bits``-bit field at ``shift`` (within one word) of each key, a new int64 array."""
        w = _word_of(self.offsets, self.widths, shift)
        if not self.live[w]:
            return np.zeros(len(self), dtype=np.int64)
        code = self.words[w] >> (shift - self.offsets[w])
        code &= (1 << bits) - 1
        return code

    def with_field(self, shift: int, bits: int, codes: np.ndarray) -> WordKeys:
        """The keys with the ``bits``-bit field at ``shift`` replaced by ``codes`` (each below 2^bits)."""
        w = _word_of(self.offsets, self.widths, shift)
        local = shift - self.offsets[w]
        word = np.asarray(codes, dtype=np.int64) << local
        if self.live[w]:
            word |= self.words[w] & ~(((1 << bits) - 1) << local)
        words, live = list(self.words), list(self.live)
        words[w], live[w] = word, True
        return WordKeys(words, self.offsets, self.widths, live)

    def __and__(self, mask: int) -> WordKeys:
        """The keys AND the Python integer ``mask`` (exact, negative masks too)."""
        words, live = list(self.words), list(self.live)
        for w, (offset, width) in enumerate(zip(self.offsets, self.widths)):
            full = (1 << width) - 1
            part = (mask >> offset) & full
            if part == 0:
                words[w], live[w] = np.zeros(len(self), dtype=np.int64), False
            elif part != full and live[w]:
                words[w] = words[w] & part
        return WordKeys(words, self.offsets, self.widths, live)

    def __rshift__(self, shift: int) -> WordKeys | np.ndarray:
        """⌊key / 2^shift⌋: a plain int64 array when one word is left (module docstring; it may be
        one of these keys' own words, to be read, not changed)."""
        words, offsets, widths, live = [], [], [], []
        for word, offset, width, alive in zip(self.words, self.offsets, self.widths, self.live):
            if offset + width <= shift:
                continue
            if offset >= shift:
                words.append(word)
                offsets.append(offset - shift)
                widths.append(width)
            else:
                words.append(word >> (shift - offset) if alive else word)
                offsets.append(0)
                widths.append(offset + width - shift)
            live.append(alive)
        if not words:
            return np.zeros(len(self), dtype=np.int64)
        if len(words) == 1:
            return words[0] if live[0] else np.zeros(len(self), dtype=np.int64)
        return WordKeys(words, offsets, widths, live)

    def live_words(self) -> list[tuple[np.ndarray, int]]:
        """The live words and their widths, most significant first."""
        return [(word, width) for word, width, alive in zip(self.words, self.widths, self.live) if alive]

    def to_objects(self) -> np.ndarray:
        """The keys as Python integers in an object array (for tests and the reference twin)."""
        keys = np.zeros(len(self), dtype=object)
        for word, offset in zip(self.words, self.offsets):
            keys |= word.astype(object) << offset
        return keys


def _word_of(offsets: Sequence[int], widths: Sequence[int], shift: int) -> int:
    """The word whose bit range holds bit ``shift``."""
    for w, (offset, width) in enumerate(zip(offsets, widths)):
        if offset <= shift < offset + max(width, 1):
            return w
    raise ValueError(f"bit {shift} is in no word")


Keys = np.ndarray | WordKeys


def neighbours_differ(values: Keys) -> np.ndarray:
    """values[1:] != values[:-1], elementwise (for words: any live word differs)."""
    if not isinstance(values, WordKeys):
        return np.not_equal(values[1:], values[:-1])
    live = values.live_words()
    differ = np.zeros(max(len(values) - 1, 0), dtype=bool)
    for word, _ in live:
        differ |= word[1:] != word[:-1]
    return differ


def stable_order(keys: Keys) -> np.ndarray:
    """``np.argsort(keys, kind="stable")`` for int64 or object keys, and the same permutation for
    :class:`WordKeys` (:func:`sorted_runs`)."""
    if not isinstance(keys, WordKeys):
        return np.argsort(keys, kind="stable")
    return sorted_runs(keys)[0]


def sorted_runs(keys: WordKeys) -> tuple[np.ndarray, np.ndarray]:
    """The stable order of ``keys`` (``np.argsort`` of the Python integers, ``kind="stable"``) and,
    in that order, whether each key differs from the one before (n − 1 flags).

    Most significant word first: after the passes over words 0..w the keys are in the stable
    order of those words, and each run of equal words 0..w has a dense rank r (its place among
    the runs); the next pass sorts ``r · 2^width + word`` stably (one int64 while rank and word
    fit in 63 bits, else the word then the rank, two stable passes). A stable pass keeps the
    order of equal values, so equal keys keep their positions' order: the result is the stable
    order, which is unique. Two keys are equal exactly when their last pass's values are (the
    rank stands for every word before). A pass over values already in order (the words above a
    raised column) is skipped; sorted runs cost NumPy's stable sort (a merge sort) about a pass."""
    live = keys.live_words()
    n = len(keys)
    order: np.ndarray | None = None  # None: the identity
    ranks: np.ndarray | None = None  # in the current order: the dense rank of words 0..w
    differ = np.zeros(max(n - 1, 0), dtype=bool)
    rank_bits = max(n - 1, 0).bit_length()
    for w, (word, width) in enumerate(live):
        values = word if order is None else word[order]
        if ranks is None:
            composite: np.ndarray | None = values
        elif rank_bits + width <= 63:
            composite = ranks << width
            composite |= values
        else:
            composite = None
        if composite is not None:
            if bool(np.all(composite[1:] >= composite[:-1])):  # already in order: nothing moves
                differ = composite[1:] != composite[:-1]
            else:
                sub = np.argsort(composite, kind="stable")
                order = sub if order is None else order[sub]
                ordered = composite[sub]
                differ = ordered[1:] != ordered[:-1]
        else:  # the word, then the rank: two stable passes (exact, slower)
            assert ranks is not None
            sub = np.argsort(values, kind="stable")
            sub = sub[np.argsort(ranks[sub], kind="stable")]
            order = sub if order is None else order[sub]
            ranks, values = ranks[sub], values[sub]
            differ = (ranks[1:] != ranks[:-1]) | (values[1:] != values[:-1])
        if w + 1 < len(live):
            ranks = np.zeros(n, dtype=np.int64)
            np.cumsum(differ, out=ranks[1:])
    return (np.arange(n, dtype=np.int64) if order is None else order), differ


def dense_ranks(keys: Keys) -> np.ndarray:
    """Each key's rank among the distinct keys (0 for the smallest; int64): the inverse of
    ``np.unique(keys, return_inverse=True)``. Ranks keep the keys' order and equality, so a
    grouping or a sort by them is the one by the keys."""
    if not isinstance(keys, WordKeys):
        return np.unique(keys, return_inverse=True)[1].reshape(-1).astype(np.int64)
    order, differ = sorted_runs(keys)
    ranks = np.empty(len(keys), dtype=np.int64)
    if len(keys):
        new = np.empty(len(keys), dtype=bool)
        new[0] = True
        new[1:] = differ
        ranks[order] = np.cumsum(new) - 1
    return ranks


def field_of(keys: Keys, shift: int, bits: int) -> np.ndarray:
    """The ``bits``-bit field at ``shift`` of each key (int64), for int64, object or word keys."""
    if isinstance(keys, WordKeys):
        return keys.field(shift, bits)
    code = keys >> shift
    code &= (1 << bits) - 1
    return code.astype(np.int64) if code.dtype == object else code


def with_field_of(keys: Keys, shift: int, bits: int, codes: np.ndarray, fresh: bool = False) -> Keys:
    """The keys with the ``bits``-bit field at ``shift`` replaced by ``codes`` (int64, each below
    2^bits): new keys, for int64, object or word keys. ``fresh``: ``codes`` is the caller's own
    new int64 array, shifted in place into the int64 keys (no copy)."""
    if isinstance(keys, WordKeys):
        return keys.with_field(shift, bits, codes)
    if keys.dtype == object:
        placed = codes.astype(object)
    else:
        placed = codes if fresh and codes.dtype == np.int64 else codes.astype(np.int64)
    placed <<= shift
    placed |= keys & ~(((1 << bits) - 1) << shift)
    return placed
