"""Atomic CSV and PNG writers for experiment results."""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

from crowdsafe.errors import ParameterError
from crowdsafe.files import atomic_path


def _cell(value: Any) -> Any:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    return value


def write_csv(target: str | os.PathLike[str], columns: dict[str, list[Any]]) -> Path:
    """Write equal-length ``columns`` as CSV (floats at full precision) atomically."""
    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        raise ParameterError(f"CSV columns have different lengths: {sorted(lengths)}")
    names = list(columns)
    with atomic_path(target) as tmp:
        with tmp.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow(names)
            for row in zip(*(columns[n] for n in names)):
                writer.writerow([_cell(v) for v in row])
    return Path(target)


def write_png(target: str | os.PathLike[str], figure: Any) -> Path:
    """Save a Matplotlib ``Figure`` as PNG atomically."""
    with atomic_path(target) as tmp:
        figure.savefig(tmp, format="png", dpi=130, bbox_inches="tight")
    return Path(target)
