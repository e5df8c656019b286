"""Locating a target's class in a microaggregated release: the nearest centroid.

A microaggregation release (MDAV: means of numbers, modes of categories) publishes centroids,
which a target's values need not equal. The attacker takes the class whose centroid is nearest
in the standardized distance MDAV itself uses (Domingo-Ferrer and Torra 2005): a numeric
attribute contributes ``(x − y)² / (2σ²)``, a categorical one ``[x ≠ y] / (1 − Σ p²)``, with σ²
and p taken over the targets (what the attacker knows). This can miss the true class; the
intersection attack reports how often it does when the truth is known. The class tables and
target codes are :mod:`crowdsafe.attacks.locate`'s.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

import numpy as np
import polars as pl

from crowdsafe.data.cell_reader import CellCovers
from crowdsafe.data.generalized import AttributeDomain, CellKind, parse_number
from crowdsafe.errors import InputError

if TYPE_CHECKING:
    from crowdsafe.attacks.locate import ClassTable

CHUNK_PAIRS = 4_000_000  # target tuples x classes evaluated at once by the nearest-centroid search


def _numeric_cells(column: pl.Series, name: str) -> np.ndarray:
    values = []
    for text in column.to_list():
        try:
            values.append(np.nan if text is None else parse_number(text))
        except ValueError:
            raise InputError(
                f"column '{name}' of a microaggregated release holds {text!r}, not a number"
            ) from None
    return np.asarray(values, dtype=np.float64)


def locate_nearest(table: ClassTable, qi: Sequence[str], domains: Mapping[str, AttributeDomain],
                   covers: Mapping[str, CellCovers], tuple_codes: Mapping[str, np.ndarray],
                   weights_from: Mapping[str, np.ndarray]) -> np.ndarray:
    """The class with the nearest centroid for every target tuple (ties: the lowest class).

    ``covers[c]``: what each of ``table.distinct_cells[c]`` covers (:func:`crowdsafe.attacks.locate.read_classes`).
    ``weights_from[c]``: the targets' codes in column c (one per target), from which the
    standardization (σ² of numbers, Σp² of categories) is taken.
    """
    n_tuples = len(next(iter(tuple_codes.values())))
    n_classes = table.n_classes
    numeric_t, numeric_c, numeric_w = [], [], []
    categorical_t, categorical_c, categorical_w = [], [], []
    for c in qi:
        domain = domains[c]
        codes = weights_from[c]
        if domain.numbers is not None:
            x = domain.numbers[codes]
            variance = float(np.nanvar(x))
            numeric_t.append(domain.numbers[tuple_codes[c]])
            numeric_c.append(_numeric_cells(table.distinct_cells[c], c)[table.cell_of_class[c]])
            numeric_w.append(1.0 / (2.0 * variance) if variance > 0 else 0.0)
        else:
            p = np.bincount(codes, minlength=domain.size) / max(len(codes), 1)
            spread = 1.0 - float((p ** 2).sum())
            # a centroid category is one value of the domain (else it matches no target)
            cover = covers[c]
            first = np.full(len(cover.labels), -1, dtype=np.int64)
            single = (cover.size == 1) & (cover.kind != CellKind.ANY) & cover.labels.is_not_null().to_numpy()
            first[single] = cover.indices[cover.indptr[:-1][single]]
            categorical_t.append(tuple_codes[c])
            categorical_c.append(first[table.cell_of_class[c]])
            categorical_w.append(1.0 / spread if spread > 0 else 0.0)
    nearest = np.empty(n_tuples, dtype=np.int64)
    step = max(1, CHUNK_PAIRS // max(n_classes, 1))
    for start in range(0, n_tuples, step):
        stop = min(n_tuples, start + step)
        distance = np.zeros((stop - start, n_classes))
        for x, y, w in zip(numeric_t, numeric_c, numeric_w):
            distance += w * (x[start:stop, None] - y[None, :]) ** 2
        for x, y, w in zip(categorical_t, categorical_c, categorical_w):
            distance += w * (x[start:stop, None] != y[None, :])
        nearest[start:stop] = distance.argmin(axis=1)
    return nearest
