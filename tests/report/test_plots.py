"""The report's figures are drawn by crowdsafe.report.svg, a pure function of the numbers:
whole numbers on a count axis in full (never "1e6"), the same bytes for the same numbers, round
ticks, and no plotting library imported to draw them."""

from __future__ import annotations

import re
import subprocess
import sys

import numpy as np

from crowdsafe.report import plots
from crowdsafe.report.before_rows import BeforeBar
from crowdsafe.report.svg import nice_step, number, ticks
from crowdsafe.report.view_plots import estimates_svg


def test_a_million_classes_are_counted_in_plain_numbers():
    svg = plots.class_size_svg(np.full(2_000_000, 40, dtype=np.int64), 33)
    labels = re.findall(r">([^<>]{1,20})</text>", svg)
    assert "1e6" not in " ".join(labels) and any(label.replace("0", "") == "2" for label in labels)


def test_the_same_numbers_give_the_same_bytes():
    sizes = np.array([33, 34, 40, 40, 51, 120], dtype=np.int64)
    assert plots.class_size_svg(sizes, 33) == plots.class_size_svg(sizes.copy(), 33)
    before = [BeforeBar("[0, 40)", 9.5, 1, False, False), BeforeBar(">=40", 6.1, 1, True, False)]
    one = plots.distribution_svg("age", [("[0, 40)", 10), (">=40", 5)], before, 0.5)
    assert one == plots.distribution_svg("age", [("[0, 40)", 10), (">=40", 5)], list(before), 0.5)


def test_ticks_are_round_and_cover_the_range():
    assert ticks(0, 10, 5) == [0, 2, 4, 6, 8, 10]
    assert ticks(0, 37, 4, integer=True) == [0, 10, 20, 30]
    assert ticks(-3.2, 7.9, 4) == [-2, 0, 2, 4, 6] and ticks(-3.2, 7.9, 2) == [0, 5]
    assert ticks(0, 0.9, 4, integer=True) == [0]
    assert nice_step(1e6, 4, integer=True) == 500_000 and nice_step(3, 5, integer=True) == 1
    assert [number(v) for v in (2_000_000.0, 0.25, 12.0)] == ["2000000", "0.25", "12"]


def test_every_figure_is_labelled_and_draws_its_bars():
    sizes = np.array([33, 34, 40, 40, 51, 60], dtype=np.int64)  # a span under 40: one bar per size
    histogram = plots.class_size_svg(sizes, 33)
    assert histogram.startswith('<svg role="img" aria-label="Histogram of class sizes in the release"')
    assert histogram.count("<rect") == len(set(sizes.tolist())) and "k = 33" in histogram
    bars = plots.distribution_svg("sex", [("F", 30), ("M", 70)])
    assert bars.count("<rect") == 2 and ">F<" in bars and ">M<" in bars and ">70%<" not in bars
    assert "no classes" in plots.class_size_svg(np.zeros(0, dtype=np.int64), 5)
    assert "no cell passed" in plots.distribution_svg("sex", [("F", 3)], [], 0.5)
    view = estimates_svg("sex", ["F", "M"], [10, 12], [8.0, -1.0], [2.0, 3.0], 0.95)
    assert view.count("<rect") == 4 and "± 95% bound" in view


def test_drawing_a_report_imports_no_plotting_library(published):
    code = ("import sys; from crowdsafe.report.build import build_report; "
            f"build_report({str(published)!r}); print('matplotlib' in sys.modules)")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


def test_japanese_labels_fit_inside_the_picture():
    # an ideograph is one em wide; counted as 0.6 em like a Latin letter, a label of 12 of them
    # began about 34 points left of the picture's edge, and its first characters were cut off
    whole, long = "急性上気道感染症（合併症）", "慢性閉塞性肺疾患" * 4
    svg = plots.distribution_svg("診断名", [(whole, 10), (long, 5), ("other", 3)])
    for x, label in re.findall(r'<text x="([0-9.]+)"[^>]*text-anchor="end"[^>]*>([^<]*)</text>', svg):
        wide = sum(1 for c in label if "\u3000" <= c <= "\u9fff" or "\uff00" <= c <= "\uffef")
        assert float(x) - 9.0 * wide - 5.4 * (len(label) - wide) >= 0, label
    shown = re.findall(r">([^<]*)</text>", svg)
    assert whole in shown and long not in shown and any(s.startswith("慢性閉塞性") and s.endswith("…") for s in shown)
    assert plots._short("a" * 40) == "a" * 31 + "…" and plots._short("a" * 32) == "a" * 32
