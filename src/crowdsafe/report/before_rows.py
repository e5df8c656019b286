"""Which bars a "before" panel shows, in which order, and how its noise is marked.

A before-distribution (:mod:`crowdsafe.report.before`) is a noisy DP histogram: at small ε its
noise can be as large as the counts. The panel therefore never chooses or orders its bars by the
noisy counts (a top 20 by noisy count picks the cells whose noise went up, and leaves the ones
whose noise went down to "other"). It uses public information only:

- the values the release publishes, in the order of the release's own panel (the release is a
  DP output: public), so the two panels line up row by row;
- then the rest of the histogram's cells in the answer's order: the declared domain's order, or
  for a histogram without a public domain the released cells sorted by value;
- beyond :data:`~crowdsafe.report.content.TOP_VALUES` bars the rest is summed as "other"; many
  numbers or intervals are binned by their (public) midpoints instead.

The noisy counts are post-processed only: each cell is clipped at 0 before cells are summed into
a group (so "other" is never negative), and each bar carries whether all its cells lie within
the answer's own 95% error interval of 0 (``within_noise``: an empty cell could give that count)
and whether its noisy count was below 0 (drawn as a zero bar, and said so, never silently 0%).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from crowdsafe.number_text import quantity, rounded_up
from crowdsafe.report.content import APART, TOP_VALUES, BeforeDistribution, _number, numeric_ends


@dataclass(frozen=True)
class BeforeBar:
    """One bar of a before panel: its label, the sum of its cells' noisy counts each clipped at
    0 (``count``), how many cells it sums, whether every cell's noisy count is at most the upper
    end of the 95% error interval (``within_noise``: indistinguishable from an empty cell) and
    whether its count was clipped to 0 from below (``below_zero``)."""

    label: str
    count: float
    cells: int
    within_noise: bool
    below_zero: bool


def _bar(label: str, raw: np.ndarray, noise_high: float | None) -> BeforeBar:
    clipped = float(np.clip(raw, 0.0, None).sum())
    within = noise_high is not None and len(raw) > 0 and bool((raw <= noise_high).all())
    return BeforeBar(label, clipped, len(raw), within, clipped == 0.0 and bool((raw < 0).any()))


def _binned(cells: Sequence[tuple[str, float]], noise_high: float | None) -> list[BeforeBar]:
    """Many numeric cells: :data:`TOP_VALUES` equal bins of the cells' midpoints (public: the
    cells' labels), each bin the sum of its clipped cells; '*' and missing kept apart, at the end."""
    inside = [(v, c) for v, c in cells if v not in APART]
    points = np.array([sum(numeric_ends(v) or (0.0, 0.0)) / 2 for v, _ in inside])
    raw = np.array([c for _, c in inside], dtype=np.float64)
    edges = np.linspace(points.min(), points.max(), TOP_VALUES + 1)
    where = np.clip(np.searchsorted(edges, points, side="right") - 1, 0, TOP_VALUES - 1)  # last bin closed
    bars = [_bar(f"{_number(float(a), 4)} – {_number(float(b), 4)}", raw[where == i], noise_high)
            for i, (a, b) in enumerate(zip(edges[:-1], edges[1:]))]
    apart = sorted(((v, c) for v, c in cells if v in APART), key=lambda item: APART.index(item[0]))
    return bars + [_bar(v, np.array([c], dtype=np.float64), noise_high) for v, c in apart]


def _many_numbers(cells: Sequence[tuple[str, float]]) -> bool:
    """More cells than bars, all numbers or intervals (or '*' and missing): binned by value."""
    numeric = all(v in APART or numeric_ends(v) is not None for v, _ in cells)
    return numeric and len(cells) > TOP_VALUES + 1 and any(v not in APART for v, _ in cells)


def before_bars(before: BeforeDistribution, published: Sequence[str] = ()) -> list[BeforeBar]:
    """The bars of ``before``'s panel: its cells (in the answer's order) chosen and ordered by
    public information only, ``published`` (the release's values for the column, in the order of
    its panel) first (see the module docstring). The noisy counts choose nothing: for fixed
    labels the bars' labels and order are the same whatever the counts."""
    high = before.interval[1] if before.interval is not None else None
    cells = list(before.values)
    if _many_numbers(cells):
        return _binned(cells, high)
    counts = dict(cells)
    first = [v for v in dict.fromkeys(published) if v in counts]
    chosen = set(first)
    ordered = first + [v for v, _ in cells if v not in chosen]
    shown, rest = (ordered, []) if len(ordered) <= TOP_VALUES + 1 else (ordered[:TOP_VALUES], ordered[TOP_VALUES:])
    bars = [_bar(v, np.array([counts[v]], dtype=np.float64), high) for v in shown]
    if rest:
        rest_counts = np.array([counts[v] for v in rest], dtype=np.float64)
        bars.append(_bar(f"other ({quantity(len(rest), 'value')})", rest_counts, high))
    return bars


def _amount(value: float) -> str:
    """A count of the error interval: whole numbers with thousands separators, else 3 digits."""
    return f"{value:,.0f}" if float(value).is_integer() or abs(value) >= 100 else f"{value:.3g}"


def interval_text(interval: tuple[float, float]) -> str:
    """The 95% error interval of one cell in words: "±270" when symmetric, else "−12 to +15"."""
    low, high = interval
    if low == -high:
        return f"±{_amount(high)}"
    return f"{'−' if low < 0 else '+'}{_amount(abs(low))} to {'−' if high < 0 else '+'}{_amount(abs(high))}"


def before_total_words(before: Sequence[BeforeDistribution]) -> str:
    """The distributions section's note on the before-distributions: each is labelled with its own
    (ε, δ); together they are (Σε, Σδ)-DP by sequential composition (Dwork, Roth 2014, Theorem
    3.16), rounded up, charged in addition to the release, so the page as a whole reveals what
    the release and these answers reveal together (for a DP release, their ε and δ add up)."""
    epsilon = math.fsum(b.epsilon for b in before)
    delta = math.fsum(b.delta for b in before)
    return (f"Before: DP answers on the original data, each labelled with its ε; together (ε = {rounded_up(epsilon)}, "
            f"δ = {rounded_up(delta)}) by sequential composition, charged to the data's budget in addition to the "
            "release: this page as a whole reveals what the release and these answers reveal together (for a DP "
            "release, their ε and δ add up).")


def noise_words(before: BeforeDistribution, bars: Sequence[BeforeBar]) -> str:
    """The caption's sentences on ``before``: its ε and δ, the 95% interval of a cell, which bars
    are hatched, how counts below 0 are drawn, and how the bars were chosen."""
    words = [f"Original values: a noisy DP histogram (ε = {rounded_up(before.epsilon)}, "
             f"δ = {rounded_up(before.delta)}), charged to the ledger."]
    if before.interval is not None:
        scale = f" ({before.mechanism}, scale {before.noise_scale:.3g})" if before.mechanism else ""
        words.append(f"Each noisy count is within {interval_text(before.interval)} of the true count with 95% "
                     f"probability{scale}.")
        if any(bar.within_noise for bar in bars):
            words.append(f"Hatched: every cell of the bar is at most {_amount(before.interval[1])}, so an empty cell "
                         "could give it.")
    words.append("Cells are clipped at 0 before shares and sums are taken; \"< 0\" marks a bar whose noisy count was "
                 "below 0.")
    if _many_numbers(before.values):
        chosen = f"the histogram's values, binned by value into {TOP_VALUES} ranges"
    else:
        chosen = "the values the release publishes, in its order, then the other cells in the domain's order"
        if any(bar.label.startswith("other (") and bar.cells > 1 for bar in bars):
            chosen += f"; beyond {TOP_VALUES}, the rest summed as \"other\""
    words.append(f"Bars are chosen by public information, never by the noisy counts: {chosen}.")
    return " ".join(words)


def noise_note(bars: Sequence[BeforeBar]) -> str:
    """The text alternative's note on the before panel: which bars are within noise or below 0."""
    within = [bar.label for bar in bars if bar.within_noise]
    below = [bar.label for bar in bars if bar.below_zero]
    parts = []
    if within:
        parts.append("within the noise of an empty cell (hatched): " + ", ".join(within))
    if below:
        parts.append("noisy count below 0, drawn empty: " + ", ".join(below))
    return "; ".join(parts)


__all__ = ["BeforeBar", "before_bars", "interval_text", "noise_note", "noise_words"]
