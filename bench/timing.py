"""The benchmark scripts' timing helper."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


def best_of(repeat: int, job: Callable[[], T]) -> tuple[float, T]:
    """Run ``job`` ``repeat`` times; return the best wall time (seconds) and the last result."""
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = job()
        best = min(best, time.perf_counter() - start)
    return best, result
