"""How every benchmark script names a workload size: ``adult`` (the bundled data) or a row count
for the synthetic generator, written ``1000000``, ``1m``, ``1M``, ``250k`` or ``1e6``."""

from __future__ import annotations

_SUFFIXES = {"k": 1_000, "m": 1_000_000, "g": 1_000_000_000}


def rows_of(size: str) -> int | None:
    """None for ``adult``; otherwise the number of synthetic rows the size names."""
    text = size.strip().lower()
    if text == "adult":
        return None
    try:
        if text[-1:] in _SUFFIXES:
            return int(float(text[:-1]) * _SUFFIXES[text[-1]])
        return int(float(text))
    except ValueError:
        raise SystemExit(f"bench: unknown size {size!r}: use 'adult' or a row count such as 1m, 10M, 250k") from None
