"""The report's figures: inline SVG drawn by :mod:`crowdsafe.report.svg` (no file, no external
resource, no plotting library).

Each figure is a pure function of the numbers :mod:`crowdsafe.report.content` computed from the
release and its certificate (or a labelled DP answer): one release always gives the same bytes, so
the report rebuilt by ``crowdsafe report`` equals the one written at publish. Sizes are in points,
the margins fixed (no layout engine measures the labels).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from crowdsafe.number_text import quantity, rounded_up
from crowdsafe.report.before_rows import BeforeBar
from crowdsafe.report.svg import Chart, Panel, cut_text, text_units, ticks

AFTER_COLOUR = "#2b6cb0"
BEFORE_COLOUR = "#c05621"
LIMIT_COLOUR = "#9b2c2c"
NOTE_COLOUR = "#4a5568"
INCH = 72.0
#: Margins around each panel, in points: right, top (the title sits in it), bottom (ticks, label).
RIGHT, TOP, BOTTOM = 0.25 * INCH, 0.3 * INCH, 0.5 * INCH
#: Data margins beyond the drawn values, as a share of their span (what plotting libraries add).
MARGIN = 0.05


def label_room(labels: Sequence[str]) -> float:
    """The left margin, in points, that holds the longest category label (about 0.075 inch a
    character at 9 points)."""
    longest = max([text_units(_short(v)) for v in labels] + [4])
    return (0.2 + 0.075 * longest) * INCH


def share_ticks(largest: float) -> tuple[float, list[float], list[str]]:
    """The x axis of a bar chart of shares: its top (5% past the largest share) and at most five
    ticks at round percentages with their labels."""
    top = 1.05 * largest if largest > 0 else 1.0
    step = next((s for s in (0.25, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001) if top / s >= 2), top / 2)
    values = [round(i * step, 12) for i in range(int(top / step) + 1)]
    return top, values, [f"{100 * t:g}%" for t in values]


def class_size_svg(sizes: np.ndarray, k: int | None) -> str:
    """Histogram of the release's class sizes (records per class), with k marked."""
    width, height = 7.0 * INCH, 3.2 * INCH
    chart = Chart(width, height)
    label = "Histogram of class sizes in the release"
    left = 0.6 * INCH
    if len(sizes) == 0:
        Panel(chart, left, TOP, width - RIGHT, height - BOTTOM, 0, 1, 0, 1).message(
            "no classes: the release is empty")
        return chart.svg(label)
    low, high = int(sizes.min()), int(sizes.max())
    edges = np.arange(low, high + 2) - 0.5 if high - low < 40 else np.linspace(low, high, 31)
    counts, edges = np.histogram(sizes, bins=edges)
    span = float(edges[-1] - edges[0]) or 1.0
    x_low, x_high = float(edges[0]) - MARGIN * span, float(edges[-1]) + MARGIN * span
    if k:
        x_low, x_high = min(x_low, k - MARGIN * span), max(x_high, k + MARGIN * span)
    y_high = float(counts.max()) * (1 + MARGIN)
    panel = Panel(chart, left, TOP, width - RIGHT, height - BOTTOM, x_low, x_high, 0.0, y_high)
    for count, start, end in zip(counts.tolist(), edges[:-1].tolist(), edges[1:].tolist()):
        if count:
            chart.rect(panel.x(start) + 0.25, panel.y(count), max(panel.x(end) - panel.x(start) - 0.5, 0.5),
                       panel.y(0) - panel.y(count), AFTER_COLOUR)
    panel.frame("Class sizes in the release", "class size (records sharing one quasi-identifier tuple)", "classes")
    panel.x_ticks([t for t in ticks(x_low, x_high, 5, integer=True) if x_low <= t <= x_high])
    panel.y_ticks(ticks(0.0, y_high, 4, integer=True))
    if k:
        chart.line(panel.x(k), panel.top, panel.x(k), panel.bottom, LIMIT_COLOUR, 1.2, "4 3")
        legend_x = panel.right - 60
        chart.line(legend_x, TOP - 8, legend_x + 16, TOP - 8, LIMIT_COLOUR, 1.2, "4 3")
        chart.text(legend_x + 20, TOP - 8, f"k = {k}", anchor="start")
    return chart.svg(label)


def _shares(values: Sequence[tuple[str, float]]) -> np.ndarray:
    """Each value's share of the total. The counts are never negative here: a before panel's
    noisy cells were clipped at 0 before they reached it (:mod:`crowdsafe.report.before_rows`),
    and a negative count is refused rather than drawn as 0% without a word."""
    counts = np.array([float(c) for _, c in values])
    if (counts < 0).any():
        raise ValueError("a bar chart of shares got a negative count: clip noisy cells (and say so) first")
    total = counts.sum()
    return counts / total if total > 0 else counts


def _bars(chart: Chart, left: float, right: float, height: float, values: Sequence[tuple[str, float]],
          colour: str, title: str, empty: str, bars: Sequence[BeforeBar] = (), hatch: str = "") -> None:
    """One panel of horizontal bars of shares, between ``left`` and ``right`` (its axis lines);
    ``empty``: the panel's message when there is no value. ``bars``: the before panel's marks,
    one per value: a bar within the noise of 0 is hatched (the pattern named ``hatch``), a bar
    whose noisy count was below 0 is labelled "< 0"."""
    if not values:
        panel = Panel(chart, left, TOP, right, height - BOTTOM, 0, 1, 0, 1)
        chart.text((left + right) / 2, TOP - 8, title)
        panel.message(empty)
        return
    shares = _shares(values)
    top, tick_values, tick_labels = share_ticks(float(shares.max()))
    rows = len(values)
    panel = Panel(chart, left, TOP, right, height - BOTTOM, 0.0, top, 0.0, float(rows) + 2 * MARGIN)
    pattern = chart.hatch(hatch, colour) if any(bar.within_noise for bar in bars) else ""
    for row, share in enumerate(shares.tolist()):
        mark = bars[row] if bars else None
        if mark is not None and mark.within_noise:
            panel.hbar(row, 0.0, share, pattern, stroke=colour)
        else:
            panel.hbar(row, 0.0, share, colour)
        if mark is not None and mark.below_zero:
            chart.text(panel.x(share) + 3, panel.row_centre(row), "< 0", anchor="start", colour=NOTE_COLOUR)
    panel.frame(title, "share of records (hatched: within noise of 0)" if pattern else "share of records")
    panel.row_labels([_short(v) for v, _ in values])
    panel.x_ticks(tick_values, tick_labels)


def panel_height(rows: int) -> float:
    return (1.0 + 0.2 * max(rows, 2)) * INCH


def distribution_svg(name: str, after: Sequence[tuple[str, int]], before: Sequence[BeforeBar] | None = None,
                     before_epsilon: float | None = None, note: str | None = None, figure: int = 0,
                     before_note: str = "") -> str:
    """Horizontal bars of the published values of ``name`` (share of records), and beside them,
    when given, the noisy "before" histogram of the original values with its ε (its bars chosen
    and marked by :func:`crowdsafe.report.before_rows.before_bars`). ``note``: added to the text
    alternative (e.g. what the missing-value bar means), and ``before_note`` too (which before
    bars are within noise). ``figure``: the figure's number on the page (names its hatch)."""
    before_values = [(bar.label, bar.count) for bar in before] if before is not None else None
    rows = max(len(after), len(before_values or ()))
    height = panel_height(rows)
    left = label_room([v for v, _ in after] + [v for v, _ in before_values or ()])
    empty_after = "no records: the release is empty"
    if before is None or before_values is None:
        width = 7.0 * INCH
        chart = Chart(width, height)
        _bars(chart, left, width - RIGHT, height, after, AFTER_COLOUR, f"{name}: published (after)", empty_after)
    else:
        half = 7.0 * INCH - RIGHT
        width = 2 * half + RIGHT
        chart = Chart(width, height)
        shown = rounded_up(before_epsilon) if before_epsilon is not None else "?"  # a loss: never stated below
        _bars(chart, left, half - RIGHT, height, before_values, BEFORE_COLOUR,
              f"{name}: original, noisy (ε = {shown})", "no cell passed the noisy threshold", before,
              f"within-noise-{figure}")
        _bars(chart, half + left, width - RIGHT, height, after, AFTER_COLOUR, f"{name}: published (after)",
              empty_after)
    notes = "".join(f"; {n}" for n in (note, before_note) if n)
    return chart.svg(f"Distribution of {name}{notes}")


#: Bins of the compact histogram of the notebook views (:func:`compact_histogram_svg`).
COMPACT_BINS = 16


def compact_histogram_svg(sizes: np.ndarray, k: int | None, title: str = "Class sizes (records per class)") -> str:
    """A small histogram of class sizes for the notebook views (:mod:`crowdsafe.report.views`): at
    most :data:`COMPACT_BINS` bars, the smallest and largest size under the axis, k marked. About
    2 kB whatever the number of classes."""
    width, height = 300.0, 96.0
    chart = Chart(width, height)
    left, top, right, bottom = 8.0, 18.0, width - 8.0, height - 16.0
    chart.text(left, 8.0, title, anchor="start")
    if len(sizes) == 0:
        Panel(chart, left, top, right, bottom, 0, 1, 0, 1).message("no classes: the release is empty")
        return chart.svg(title)
    low, high = int(sizes.min()), int(sizes.max())
    edges = np.linspace(low, high + 1, min(COMPACT_BINS, high - low + 1) + 1)
    counts, _ = np.histogram(sizes, bins=edges)
    panel = Panel(chart, left, top, right, bottom, float(edges[0]), float(edges[-1]), 0.0, float(counts.max()))
    for count, start, end in zip(counts.tolist(), edges[:-1].tolist(), edges[1:].tolist()):
        if count:
            chart.rect(panel.x(start) + 0.5, panel.y(count), max(panel.x(end) - panel.x(start) - 1.0, 0.5),
                       panel.y(0) - panel.y(count), AFTER_COLOUR)
    chart.line(left, bottom, right, bottom)
    chart.text(left, bottom + 8, f"{low:,}", anchor="start")
    chart.text(right, bottom + 8, quantity(high, "record"), anchor="end")
    chart.text(right, 8.0, quantity(len(sizes), "class", "classes"), anchor="end")
    if k and low <= k <= high + 1:
        chart.line(panel.x(k), top, panel.x(k), bottom, LIMIT_COLOUR, 1.2, "4 3")
        chart.text((left + right) / 2 + 40, 8.0, f"k = {k} (dashed)", anchor="middle", colour=LIMIT_COLOUR)
    return chart.svg(f"{title}: {quantity(len(sizes), 'class', 'classes')} of {low:,} to {quantity(high, 'record')}")


def compact_bars_svg(title: str, values: Sequence[tuple[str, float]], labels: Sequence[str] | None = None,
                     top: float | None = None) -> str:
    """Small horizontal bars for the notebook views: one row per (label, value), the value's text
    (``labels``, else the number) beside its bar; ``top``: the value of a full bar (default: the
    largest). About 200 bytes a row."""
    rows = len(values)
    room = min(max([text_units(_short(v, 24)) for v, _ in values] + [4]), 24) * 5.4 + 6
    width, height = 300.0, 16.0 + 13.0 * max(rows, 1)
    chart = Chart(width, height)
    chart.text(4.0, 7.0, title, anchor="start")
    largest = top if top else max([v for _, v in values] + [0.0]) or 1.0
    span = width - room - 70.0
    for i, (label, value) in enumerate(values):
        y = 16.0 + 13.0 * i
        chart.text(room - 3, y + 6, _short(label, 24), anchor="end")
        chart.rect(room, y + 1.5, span * max(min(value / largest, 1.0), 0.0), 9.0, AFTER_COLOUR)
        chart.text(room + span * max(min(value / largest, 1.0), 0.0) + 3, y + 6,
                   labels[i] if labels is not None else f"{value:,.4g}", anchor="start")
    return chart.svg(title)


def _short(label: str, width: int = 32) -> str:
    """``label`` cut to ``width`` Latin characters' widths (a Japanese character takes about two)."""
    return cut_text(label, width)


__all__ = ["class_size_svg", "compact_bars_svg", "compact_histogram_svg", "distribution_svg", "label_room",
           "panel_height", "share_ticks"]
