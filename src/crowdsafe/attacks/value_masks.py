"""Candidate sets as bit masks: the intersection attack's step 2 when the sensitive domain is small.

A candidate set S_ij (the sensitive values release j leaves possible for target tuple i) is a
subset of the sensitive domain. While the domain has at most :data:`MASK_VALUES` (64) values,
each set is one unsigned 64-bit word, bit v standing for value v: a class's set is the OR of
what its sensitive cells cover, a tuple's set the OR over its located classes, the
intersection over releases an AND, and |S| a population count. This is the fast path of
:mod:`crowdsafe.attacks.intersection_tables`; its reference twin keeps the sets as sorted
integer keys ``tuple * n_values + value`` (``_read_release`` and ``_intersect`` there), and the
rule choosing between them is :func:`fits_masks`. Both give the same sets, sizes and metrics
(tests/fast_paths/test_attack_masks.py). Attack code: it reads releases and the attacker's
targets, never the private table, and carries no guarantee of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from crowdsafe.data.cell_reader import CellCovers

MASK_VALUES = 64  # candidate sets as one 64-bit mask per tuple up to this many sensitive values, else sorted keys
_ONE = np.uint64(1)


def fits_masks(n_values: int) -> bool:
    """The rule: masks while the sensitive domain has at most :data:`MASK_VALUES` values."""
    return n_values <= MASK_VALUES


def class_masks(n_classes: int, held: tuple[np.ndarray, np.ndarray], cover: CellCovers) -> np.ndarray:
    """Each class's set of sensitive values, as a mask: the OR over the (class, cell) pairs of
    ``held`` of what the cell covers (``cover``: the sensitive cells read in the domain)."""
    size = cover.size
    cell_mask = np.zeros(len(size), dtype=np.uint64)
    filled = np.flatnonzero(size > 0)
    if len(filled):
        bits = np.left_shift(_ONE, cover.indices.astype(np.uint64))
        cell_mask[filled] = np.bitwise_or.reduceat(bits, cover.indptr[filled])
    holder, cell = held
    masks = np.zeros(n_classes, dtype=np.uint64)
    np.bitwise_or.at(masks, holder, cell_mask[cell])
    return masks


def tuple_masks(n_tuples: int, tuples: np.ndarray, classes: np.ndarray, masks: np.ndarray
                ) -> tuple[np.ndarray, np.ndarray]:
    """Every tuple's candidate set in one release, and its size |S_ij| (the prior anonymity):
    the OR of its located classes' ``masks`` (``tuples``/``classes``: the located pairs, sorted
    by tuple); a tuple located nowhere gets every value the release publishes, and so does the
    size of a located tuple whose classes hold no value (its set stays empty)."""
    published = np.bitwise_or.reduce(masks) if len(masks) else np.uint64(0)
    candidates = np.full(n_tuples, published, dtype=np.uint64)
    if len(tuples):
        first = np.flatnonzero(np.concatenate([[True], tuples[1:] != tuples[:-1]]))
        candidates[tuples[first]] = np.bitwise_or.reduceat(masks[classes], first)
    count = np.bitwise_count(candidates).astype(np.int64)
    prior = np.where(count > 0, count, int(np.bitwise_count(published)))
    return candidates, prior


def intersect_masks(candidates: Sequence[np.ndarray]) -> np.ndarray:
    """Step 2: S_i = ∩_j S_ij, one mask per tuple."""
    common = candidates[0].copy()
    for other in candidates[1:]:
        np.bitwise_and(common, other, out=common)
    return common


def sizes_and_only(common: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|S_i| per tuple, and the one value of each set of size 1 (meaningless elsewhere)."""
    return np.bitwise_count(common).astype(np.int64), np.bitwise_count(common - _ONE).astype(np.int64)


def holds(common: np.ndarray, value: np.ndarray) -> np.ndarray:
    """Whether each set ``common[i]`` holds ``value[i]`` (values in ``[0, 64)``)."""
    return (np.right_shift(common, value.astype(np.uint64)) & _ONE).astype(bool)
