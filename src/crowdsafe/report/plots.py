"""The report's figures: Matplotlib drawn to inline SVG (no file, no external resource).

Matplotlib is imported here only, and only when a report is drawn, so ``crowdsafe --help`` and
the other commands do not load it. Figures are built on :class:`matplotlib.figure.Figure` with
the SVG canvas (no pyplot, no global state), with a fixed id salt and no date in the metadata,
so one release always gives the same bytes: the report rebuilt by ``crowdsafe report`` equals the
one written at publish. Every figure draws only what :mod:`crowdsafe.report.content` computed
from the release and its certificate (or a labelled DP answer).
"""

from __future__ import annotations

import io
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

#: rcParams that make the SVG reproducible and small (text kept as text). A title sits on the
#: top of its axes (``axes.titley``), which is where Matplotlib's automatic placement puts it on
#: these plots (no tick labels above the axes, and, with ``axes.formatter.limits``, no multiplier
#: such as "1e6" above a count axis): the same bytes, without measuring every tick label of every
#: figure to place the titles.
SVG_SETTINGS: dict[str, Any] = {"svg.hashsalt": "crowdsafe-report", "svg.fonttype": "none", "font.size": 9.0,
                "font.family": "sans-serif", "axes.spines.top": False, "axes.spines.right": False,
                "axes.titley": 1.0, "axes.formatter.limits": (-5, 15)}
AFTER_COLOUR = "#2b6cb0"
BEFORE_COLOUR = "#c05621"
LIMIT_COLOUR = "#9b2c2c"


def _figure(width: float, height: float) -> Any:
    from matplotlib.backends.backend_svg import FigureCanvasSVG
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    FigureCanvasSVG(figure)
    return figure


def _margins(figure: Any, width: float, height: float, left: float) -> None:
    """Fixed margins, in inches (a layout engine would measure every label: slow on many plots)."""
    figure.subplots_adjust(left=left / width, right=1 - 0.25 / width, bottom=0.5 / height, top=1 - 0.3 / height,
                           wspace=0.9)


def _svg(figure: Any, label: str) -> str:
    """The figure as an ``<svg>`` element (no XML prolog), labelled for screen readers."""
    buffer = io.StringIO()
    figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    text = buffer.getvalue()
    start = text.index("<svg")
    element = text[start:]
    from html import escape

    return element.replace("<svg ", f'<svg role="img" aria-label="{escape(label)}" ', 1)


def _drawn(draw: Any, width: float, height: float, label: str) -> str:
    from crowdsafe.report.matplotlib_import import import_matplotlib

    import_matplotlib()
    import matplotlib

    with matplotlib.rc_context(cast(Any, SVG_SETTINGS)):
        figure = _figure(width, height)
        draw(figure)
        return _svg(figure, label)


def few_ticks(axis: Any, bins: int = 4) -> None:
    """At most ``bins`` + 1 ticks on ``axis`` (whole numbers): each tick is a handful of artists
    that Matplotlib builds and measures, the bulk of a small figure's drawing time."""
    from matplotlib.ticker import MaxNLocator

    axis.set_major_locator(MaxNLocator(nbins=bins, integer=True))


def share_ticks(axes: Any, largest: float) -> None:
    """The x axis of a bar chart of shares: from 0 to 5% past the largest share (Matplotlib's own
    margin), with at most five fixed ticks at round percentages, labelled once."""
    from matplotlib.ticker import FixedFormatter, FixedLocator

    top = 1.05 * largest if largest > 0 else 1.0
    step = next((s for s in (0.25, 0.1, 0.05, 0.02, 0.01, 0.005, 0.002, 0.001) if top / s >= 2), top / 2)
    ticks = [round(i * step, 12) for i in range(int(top / step) + 1)]
    axes.set_xlim(0.0, top)
    axes.xaxis.set_major_locator(FixedLocator(ticks))
    axes.xaxis.set_major_formatter(FixedFormatter([f"{100 * t:g}%" for t in ticks]))


def class_size_svg(sizes: np.ndarray, k: int | None) -> str:
    """Histogram of the release's class sizes (records per class), with k marked."""

    def draw(figure: Any) -> None:
        _margins(figure, 7.0, 3.2, 0.6)
        axes = figure.add_subplot()
        if len(sizes) == 0:
            axes.text(0.5, 0.5, "no classes: the release is empty", ha="center", va="center",
                      transform=axes.transAxes)
            axes.set_axis_off()
            return
        low, high = int(sizes.min()), int(sizes.max())
        bins: Any = np.arange(low, high + 2) - 0.5 if high - low < 40 else 30
        axes.hist(sizes, bins=bins, color=AFTER_COLOUR, edgecolor="white", linewidth=0.5)
        few_ticks(axes.xaxis, 5)
        few_ticks(axes.yaxis)
        if k:
            axes.axvline(k, color=LIMIT_COLOUR, linestyle="--", linewidth=1.2, label=f"k = {k}")
            axes.legend(frameon=False, loc="upper right", bbox_to_anchor=(1.0, 1.12))
        axes.set_xlabel("class size (records sharing one quasi-identifier tuple)")
        axes.set_ylabel("classes")
        axes.set_title("Class sizes in the release")

    return _drawn(draw, 7.0, 3.2, "Histogram of class sizes in the release")


def distribution_svg(name: str, after: Sequence[tuple[str, int]],
                     before: Sequence[tuple[str, float]] | None = None, before_epsilon: float | None = None) -> str:
    """Horizontal bars of the published values of ``name`` (share of records), and beside them,
    when given, the noisy "before" histogram of the original values with its ε."""
    panels = 2 if before is not None else 1
    rows = max(len(after), len(before or ()))
    height = 1.0 + 0.2 * max(rows, 2)

    def bars(axes: Any, values: Sequence[tuple[str, float]], colour: str, title: str) -> None:
        axes.set_title(title)
        if not values:
            axes.text(0.5, 0.5, "no cell passed the noisy threshold", ha="center", va="center",
                      transform=axes.transAxes)
            axes.set_axis_off()
            return
        labels = [_short(v) for v, _ in values]
        counts = np.array([max(float(c), 0.0) for _, c in values])
        total = counts.sum()
        shares = counts / total if total > 0 else counts
        positions = np.arange(len(values))
        axes.barh(positions, shares, color=colour)
        axes.set_yticks(positions, labels)
        axes.invert_yaxis()
        share_ticks(axes, float(shares.max()))
        axes.set_xlabel("share of records")

    # room for the longest label (about 0.075 inch a character at 9 points), per panel
    longest = max([len(_short(v)) for v, _ in after] + [len(_short(v)) for v, _ in before or ()] + [4])
    left = 0.2 + 0.075 * longest
    width = 7.0 if panels == 1 else 7.0 + left + 2.5

    def draw(figure: Any) -> None:
        _margins(figure, width, height, left)
        if panels == 2:
            figure.subplots_adjust(wspace=(left + 0.3) / ((width - left - 0.25 - (left + 0.3)) / 2))
        first = figure.add_subplot(1, panels, panels)
        bars(first, after, AFTER_COLOUR, f"{name}: published (after)")
        if before is not None:
            second = figure.add_subplot(1, panels, 1)
            bars(second, before, BEFORE_COLOUR, f"{name}: original, noisy (ε = {before_epsilon:g})")

    return _drawn(draw, width, height, f"Distribution of {name}")


def _short(label: str, width: int = 32) -> str:
    return label if len(label) <= width else label[: width - 1] + "…"


__all__ = ["class_size_svg", "distribution_svg", "few_ticks", "share_ticks"]
