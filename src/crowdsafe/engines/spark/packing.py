"""Mixed-radix packing of code columns on Spark: the key of :mod:`crowdsafe.data.packing` as a
Column expression.

``pack([k_1, ..., k_d], [s_1, ..., s_d])`` is ``((k_1 · s_2 + k_2) · s_3 + ...) · s_d + k_d``
in Spark longs, the first column most significant: the same key :func:`crowdsafe.data.packing.pack`
computes on NumPy codes, so a key made on the executors matches one made on the driver. The
caller checks the grid fits a long (Π s_j < 2^63). It reads no data and knows nothing of privacy.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["pack"]


def pack(columns: Sequence[Any], sizes: Sequence[int]) -> Any:
    """The long key of every row of the code ``columns`` (Spark Columns, ``columns[j]`` in
    ``[0, sizes[j])``), as one Column expression."""
    from pyspark.sql import functions as F

    key = F.lit(0).cast("long")
    for column, size in zip(columns, sizes):
        key = key * size + column
    return key
