"""A small SVG drawing kit for the report's charts: axes, ticks, labels, bars and lines.

The report draws three kinds of chart (a histogram with the k line, horizontal bars of shares,
horizontal bars with error bars), and needs nothing else: each is a few rectangles, lines and
text elements placed on fixed margins. Drawing them here, with plain string formatting, keeps the
report free of Matplotlib (its import alone took longer than building the whole report) and keeps
the bytes a pure function of the numbers drawn: the same release always gives the same page.

Units are points (1/72 inch), as Matplotlib's SVG backend used, so the charts keep their size.
Text is SVG text (selectable, searchable, read by screen readers); its width is estimated at
0.6 of the font size per Latin character and one em per wide (CJK) one, which is all the fixed
layout needs.
"""

from __future__ import annotations

import math
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from html import escape

FONT_SIZE = 9.0
TITLE_SIZE = 10.8  # Matplotlib's "large" at a 9-point base, as the figures had
TEXT_COLOUR = "#1a202c"
AXIS_COLOUR = "#2d3748"
#: Estimated width of one character, relative to the font size (sans-serif).
CHAR_WIDTH = 0.6
TICK = 3.5


def number(value: float) -> str:
    """A tick label: whole numbers in full (never ``1e6``), others as short as exact enough."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.6g}"


def _candidates(span: float, count: int, integer: bool) -> list[float]:
    """Steps m·10^e (m in 1, 2, 2.5, 5; whole numbers only when ``integer``) from about span/count up."""
    magnitude = 10.0 ** math.floor(math.log10(span / count))
    multiples = (1, 2, 5) if integer else (1, 2, 2.5, 5)
    steps = [m * magnitude * 10**e for e in (-1, 0, 1, 2) for m in multiples]
    return sorted(s for s in steps if not integer or (s >= 1 and float(s).is_integer())) or [1.0]


def _on_grid(low: float, high: float, step: float) -> list[float]:
    first = math.ceil(low / step - 1e-9)
    last = math.floor(high / step + 1e-9)
    return [round(i * step, 12) for i in range(first, last + 1)]


def nice_step(span: float, count: int, integer: bool = False) -> float:
    """The smallest step of the form m·10^e, m in (1, 2, 2.5, 5) (whole numbers when ``integer``),
    with at most ``count`` steps in ``span``."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    return next((s for s in _candidates(span, count, integer) if span / s <= count + 1e-9), 10.0 ** math.ceil(
        math.log10(span)))


def ticks(low: float, high: float, count: int = 5, integer: bool = False) -> list[float]:
    """Round tick values within [low, high], at most ``count`` + 1 of them: the finest round step
    that places no more."""
    span = high - low
    if span <= 0 or not math.isfinite(span):
        return [round(low, 12)] if math.isfinite(low) else []
    for step in _candidates(span, count, integer):
        values = _on_grid(low, high, step)
        if len(values) <= count + 1:
            return values
    return _on_grid(low, high, nice_step(span, count, integer))


def _units(char: str) -> float:
    """How many Latin characters' widths ``char`` takes: none for a combining mark or an invisible
    format character, 1/CHAR_WIDTH (one em) for a wide or full-width one (CJK ideographs, kana,
    Hangul), else one."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0.0
    if unicodedata.east_asian_width(char) in ("W", "F"):
        return 1.0 / CHAR_WIDTH
    return 1.0


def text_units(text: str) -> float:
    """The estimated width of ``text`` in Latin characters (0.6 of the font size each). A Japanese
    or Chinese character is drawn one em wide: counted as one Latin character, labels in those
    scripts overflowed the margin made for them and were cut off at the picture's edge."""
    if text.isascii():
        return float(len(text))
    return sum(_units(c) for c in text)


def cut_text(text: str, units: int) -> str:
    """``text`` as it is if it fits ``units`` Latin characters' widths, else its longest beginning
    that fits with an ellipsis after it."""
    if text_units(text) <= units:
        return text
    used, end = 0.0, 0
    for char in text:
        used += _units(char)
        if used > units - 1:
            break
        end += 1
    return text[:end] + "…"


def text_width(text: str, size: float = FONT_SIZE) -> float:
    return text_units(text) * size * CHAR_WIDTH


@dataclass
class Chart:
    """An SVG picture of ``width`` × ``height`` points, built element by element."""

    width: float
    height: float
    parts: list[str] = field(default_factory=list)

    def rect(self, x: float, y: float, w: float, h: float, fill: str, stroke: str | None = None) -> None:
        if w > 0 and h > 0:
            outline = f' stroke="{stroke}" stroke-width="0.8"' if stroke else ""
            self.parts.append(f'<rect x="{x:.2f}" y="{y:.2f}" width="{w:.2f}" height="{h:.2f}" fill="{fill}"'
                              f"{outline}/>")

    def hatch(self, name: str, colour: str) -> str:
        """Define a diagonal hatch of ``colour`` named ``name`` (unique on the page: every chart's
        definitions share the page's ids) and return the fill that paints with it."""
        self.parts.append(f'<defs><pattern id="{name}" patternUnits="userSpaceOnUse" width="4" height="4" '
                          f'patternTransform="rotate(45)"><rect width="4" height="4" fill="#ffffff"/>'
                          f'<line x1="1" y1="0" x2="1" y2="4" stroke="{colour}" stroke-width="1.6"/></pattern></defs>')
        return f"url(#{name})"

    def line(self, x1: float, y1: float, x2: float, y2: float, colour: str = AXIS_COLOUR, width: float = 0.8,
             dash: str | None = None) -> None:
        dashed = f' stroke-dasharray="{dash}"' if dash else ""
        self.parts.append(f'<line x1="{x1:.2f}" y1="{y1:.2f}" x2="{x2:.2f}" y2="{y2:.2f}" stroke="{colour}" '
                          f'stroke-width="{width}"{dashed}/>')

    def text(self, x: float, y: float, content: str, *, anchor: str = "middle", size: float = FONT_SIZE,
             rotate: bool = False, colour: str = TEXT_COLOUR) -> None:
        turn = f' transform="rotate(-90 {x:.2f} {y:.2f})"' if rotate else ""
        self.parts.append(f'<text x="{x:.2f}" y="{y:.2f}" font-size="{size}" text-anchor="{anchor}" '
                          f'dominant-baseline="middle" fill="{colour}"{turn}>{escape(content)}</text>')

    def svg(self, label: str) -> str:
        """The picture as an ``<svg>`` element, labelled for screen readers."""
        return (f'<svg role="img" aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg" '
                f'width="{self.width:g}pt" height="{self.height:g}pt" viewBox="0 0 {self.width:g} {self.height:g}" '
                f'font-family="DejaVu Sans, Helvetica, Arial, sans-serif"><title>{escape(label)}</title>'
                + "".join(self.parts) + "</svg>")


@dataclass
class Panel:
    """One set of axes on a chart: the box [left, right] × [top, bottom] in points, showing data
    x in [x_low, x_high] and y in [y_low, y_high] (y grows upwards; ``rows``: categories from the
    top, each a band of height 1)."""

    chart: Chart
    left: float
    top: float
    right: float
    bottom: float
    x_low: float
    x_high: float
    y_low: float
    y_high: float

    def x(self, value: float) -> float:
        span = (self.x_high - self.x_low) or 1.0
        return self.left + (value - self.x_low) / span * (self.right - self.left)

    def y(self, value: float) -> float:
        span = (self.y_high - self.y_low) or 1.0
        return self.bottom - (value - self.y_low) / span * (self.bottom - self.top)

    def frame(self, title: str, x_label: str, y_label: str = "") -> None:
        """The left and bottom axis lines, the title above and the axis labels."""
        chart = self.chart
        chart.line(self.left, self.top, self.left, self.bottom)
        chart.line(self.left, self.bottom, self.right, self.bottom)
        chart.text((self.left + self.right) / 2, self.top - 8, title, size=TITLE_SIZE)
        if x_label:
            chart.text((self.left + self.right) / 2, self.bottom + 25, x_label)
        if y_label:
            chart.text(self.left - 28, (self.top + self.bottom) / 2, y_label, rotate=True)

    def x_ticks(self, values: Sequence[float], labels: Sequence[str] | None = None) -> None:
        for i, value in enumerate(values):
            at = self.x(value)
            self.chart.line(at, self.bottom, at, self.bottom + TICK)
            self.chart.text(at, self.bottom + TICK + 7, labels[i] if labels is not None else number(value))

    def y_ticks(self, values: Sequence[float]) -> None:
        for value in values:
            at = self.y(value)
            self.chart.line(self.left - TICK, at, self.left, at)
            self.chart.text(self.left - TICK - 2, at, number(value), anchor="end")

    def row_labels(self, labels: Sequence[str]) -> None:
        """Category names beside horizontal bars, the first row at the top."""
        for i, label in enumerate(labels):
            at = self.row_centre(i)
            self.chart.line(self.left - TICK, at, self.left, at)
            self.chart.text(self.left - TICK - 2, at, label, anchor="end")

    def row_centre(self, row: int) -> float:
        return self.y(self.y_high - row - 0.5)

    def hbar(self, row: int, start: float, end: float, colour: str, thickness: float = 0.8,
             stroke: str | None = None) -> None:
        """A horizontal bar of row ``row`` from ``start`` to ``end`` (data x), ``thickness`` of the
        row; ``stroke``: an outline of that colour."""
        low, high = sorted((self.x(start), self.x(end)))
        half = thickness / 2 * abs(self.y(0) - self.y(1))
        centre = self.row_centre(row)
        self.chart.rect(low, centre - half, high - low, 2 * half, colour, stroke)

    def error_bar(self, row: int, low: float, high: float, colour: str = AXIS_COLOUR) -> None:
        centre = self.row_centre(row)
        self.chart.line(self.x(low), centre, self.x(high), centre, colour, 0.8)
        for end in (low, high):
            self.chart.line(self.x(end), centre - 2, self.x(end), centre + 2, colour, 0.8)

    def message(self, content: str) -> None:
        """A line of text in the middle of the panel (drawn instead of axes)."""
        self.chart.text((self.left + self.right) / 2, (self.top + self.bottom) / 2, content)


__all__ = ["Chart", "Panel", "cut_text", "nice_step", "number", "text_units", "text_width", "ticks"]
