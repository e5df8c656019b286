"""The figures of a view's report: per attribute, the view's rows and the estimated counts.

Drawn with the release report's building blocks (:mod:`crowdsafe.report.svg`, the margins of
:mod:`crowdsafe.report.plots`), so one view and certificate always give the same bytes. Each
figure draws only what :mod:`crowdsafe.report.view_content` computed from the view: the raw
counts of the view (true and inserted tuples together) and the unbiased estimates of the data's
counts with their error bars, on separate axes because they are not on the same scale.
"""

from __future__ import annotations

from collections.abc import Sequence

from crowdsafe.report.plots import (
    AFTER_COLOUR,
    BEFORE_COLOUR,
    BOTTOM,
    INCH,
    MARGIN,
    RIGHT,
    TOP,
    _short,
    label_room,
    panel_height,
)
from crowdsafe.report.svg import Chart, Panel, ticks

ZERO_COLOUR = "#4a5568"


def estimates_svg(name: str, labels: Sequence[str], view_rows: Sequence[int], estimates: Sequence[float],
                  errors: Sequence[float], confidence: float) -> str:
    """Two panels of horizontal bars for ``name``: left, the view's rows per value; right, the
    estimated count in the data with its error bar (an estimate may be negative: drawn as is)."""
    rows = max(len(labels), 1)
    height = panel_height(len(labels))
    left = label_room(labels)
    half = 7.0 * INCH - RIGHT
    width = 2 * half + RIGHT
    chart = Chart(width, height)
    shown = [_short(v) for v in labels]
    y_high = float(rows) + 2 * MARGIN

    raw_top = max([float(v) for v in view_rows] + [1.0]) * (1 + MARGIN)
    raw = Panel(chart, left, TOP, half - RIGHT, height - BOTTOM, 0.0, raw_top, 0.0, y_high)
    for row, value in enumerate(view_rows):
        raw.hbar(row, 0.0, float(value), AFTER_COLOUR)
    raw.frame(f"{name}: rows in the view (true + inserted)", "rows of the view")
    raw.row_labels(shown)
    raw.x_ticks(ticks(0.0, raw_top, 4, integer=True))

    lows = [e - d for e, d in zip(estimates, errors)] + [0.0]
    highs = [e + d for e, d in zip(estimates, errors)] + [0.0]
    span = (max(highs) - min(lows)) or 1.0
    x_low, x_high = min(lows) - MARGIN * span, max(highs) + MARGIN * span
    estimated = Panel(chart, half + left, TOP, width - RIGHT, height - BOTTOM, x_low, x_high, 0.0, y_high)
    for row, (estimate, error) in enumerate(zip(estimates, errors)):
        estimated.hbar(row, 0.0, float(estimate), BEFORE_COLOUR)
        estimated.error_bar(row, float(estimate) - float(error), float(estimate) + float(error))
    chart.line(estimated.x(0.0), estimated.top, estimated.x(0.0), estimated.bottom, ZERO_COLOUR, 0.8)
    estimated.frame(f"{name}: estimated count in the data (± {confidence:.0%} bound)", "estimated distinct tuples")
    estimated.row_labels(shown)
    estimated.x_ticks(ticks(x_low, x_high, 4))
    return chart.svg(f"Rows in the view and estimated counts of {name}")


__all__ = ["estimates_svg"]
