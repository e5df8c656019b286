"""The figures of a view's report: per attribute, the view's rows and the estimated counts.

Drawn with the release report's building blocks (:mod:`crowdsafe.report.plots`: Matplotlib's SVG
canvas, fixed id salt, no date), so one view and certificate always give the same bytes. Each
figure draws only what :mod:`crowdsafe.report.view_content` computed from the view: the raw
counts of the view (true and inserted tuples together) and the unbiased estimates of the data's
counts with their error bars, on separate axes because they are not on the same scale.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from crowdsafe.report.plots import AFTER_COLOUR, BEFORE_COLOUR, _drawn, _margins, _short, few_ticks

ZERO_COLOUR = "#4a5568"


def estimates_svg(name: str, labels: Sequence[str], view_rows: Sequence[int], estimates: Sequence[float],
                  errors: Sequence[float], confidence: float) -> str:
    """Two panels of horizontal bars for ``name``: left, the view's rows per value; right, the
    estimated count in the data with its error bar (an estimate may be negative: drawn as is)."""
    rows = max(len(labels), 2)
    height = 1.0 + 0.2 * rows
    longest = max([len(_short(v)) for v in labels] + [4])
    left = 0.2 + 0.075 * longest
    width = 7.0 + left + 2.5
    positions = np.arange(len(labels))

    def draw(figure: Any) -> None:
        _margins(figure, width, height, left)
        figure.subplots_adjust(wspace=(left + 0.3) / ((width - left - 0.25 - (left + 0.3)) / 2))
        raw = figure.add_subplot(1, 2, 1)
        raw.barh(positions, np.asarray(view_rows, dtype=np.float64), color=AFTER_COLOUR)
        raw.set_yticks(positions, [_short(v) for v in labels])
        raw.invert_yaxis()
        raw.set_title(f"{name}: rows in the view (true + inserted)")
        raw.set_xlabel("rows of the view")
        few_ticks(raw.xaxis)
        estimated = figure.add_subplot(1, 2, 2)
        estimated.barh(positions, np.asarray(estimates, dtype=np.float64), color=BEFORE_COLOUR,
                       xerr=np.asarray(errors, dtype=np.float64), error_kw={"elinewidth": 0.8, "capsize": 2.0})
        estimated.axvline(0.0, color=ZERO_COLOUR, linewidth=0.8)
        estimated.set_yticks(positions, [_short(v) for v in labels])
        estimated.invert_yaxis()
        estimated.set_title(f"{name}: estimated count in the data (± {confidence:.0%} bound)")
        estimated.set_xlabel("estimated distinct tuples")
        few_ticks(estimated.xaxis)

    return _drawn(draw, width, height, f"Rows in the view and estimated counts of {name}")


__all__ = ["estimates_svg"]
