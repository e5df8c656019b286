"""The generalization lattice of full-domain schemes: its nodes and their indexing.

A *node* is one hierarchy level per quasi-identifier; node B generalizes node A (A ≤ B) when
every level of B is at least A's. The candidates of the ε1-safe selection
(:mod:`crowdsafe.selection.mechanism`) are the nodes of this lattice, fixed by the hierarchies'
heights alone. (The classic, uncertified searches over it are in
:mod:`crowdsafe.classic.lattice_search`.)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from crowdsafe.data import packing


@dataclass(frozen=True)
class Lattice:
    """All level vectors of ``columns`` with the given hierarchy ``heights``.

    Node i has levels ``nodes[i]``; the index is mixed-radix (the last column varies fastest).
    """

    columns: tuple[str, ...]
    heights: tuple[int, ...]

    @property
    def size(self) -> int:
        """The number of nodes, exact (a Python int: past 63 columns of two levels an int64 product wraps)."""
        return math.prod(h + 1 for h in self.heights)

    @cached_property
    def strides(self) -> np.ndarray:
        return packing.strides([h + 1 for h in self.heights])

    def nodes(self) -> np.ndarray:
        grids = np.meshgrid(*[np.arange(h + 1, dtype=np.int16) for h in self.heights], indexing="ij")
        return np.stack([g.ravel() for g in grids], axis=1)

    def index(self, levels: Sequence[int]) -> int:
        return int(np.dot(np.asarray(levels, dtype=np.int64), self.strides))

    @property
    def top(self) -> tuple[int, ...]:
        return tuple(self.heights)
