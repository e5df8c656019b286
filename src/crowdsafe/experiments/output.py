"""Atomic CSV and PNG writers for experiment results."""

from __future__ import annotations

import csv
import math
import os
from pathlib import Path
from typing import Any

from crowdsafe.csv_safety import escape_text
from crowdsafe.errors import ParameterError
from crowdsafe.files import atomic_path


def _cell(value: Any, escape_formulas: bool) -> Any:
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else str(value)
    if isinstance(value, str) and escape_formulas:
        return escape_text(value)
    return value


def write_csv(target: str | os.PathLike[str], columns: dict[str, list[Any]], *,
              escape_formulas: bool = True) -> Path:
    """Write equal-length ``columns`` as CSV (floats at full precision) atomically.

    Text cells and column names that a spreadsheet would run as a formula get a leading
    apostrophe unless ``escape_formulas`` is False (:mod:`crowdsafe.csv_safety`); numbers are
    written as numbers.
    """
    lengths = {len(values) for values in columns.values()}
    if len(lengths) > 1:
        raise ParameterError(f"CSV columns have different lengths: {sorted(lengths)}")
    names = list(columns)
    with atomic_path(target) as tmp:
        with tmp.open("w", newline="", encoding="utf-8") as handle:
            writer = csv.writer(handle)
            writer.writerow([_cell(str(n), escape_formulas) for n in names])
            for row in zip(*(columns[n] for n in names)):
                writer.writerow([_cell(v, escape_formulas) for v in row])
    return Path(target)


def write_png(target: str | os.PathLike[str], figure: Any) -> Path:
    """Save a Matplotlib ``Figure`` as PNG atomically."""
    with atomic_path(target) as tmp:
        figure.savefig(tmp, format="png", dpi=130, bbox_inches="tight")
    return Path(target)
