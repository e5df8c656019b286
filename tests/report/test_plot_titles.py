"""The report's figures put each title on the top of its axes (``axes.titley`` in
crowdsafe.report.plots.SVG_SETTINGS) instead of letting Matplotlib measure every tick label to
place it: the same page as the automatic placement, and no multiplier ("1e6") on a count axis
that the automatic placement would have had to avoid."""

from __future__ import annotations

import re

import numpy as np

from crowdsafe.report import plots
from crowdsafe.report.build import build_report


def test_fixed_title_position_gives_the_automatic_page(published, monkeypatch):
    fixed = build_report(published)
    settings = {**plots.SVG_SETTINGS}
    settings.pop("axes.titley")
    settings.pop("axes.formatter.limits")
    monkeypatch.setattr(plots, "SVG_SETTINGS", settings)
    assert build_report(published) == fixed


def test_a_million_classes_are_counted_in_plain_numbers():
    svg = plots.class_size_svg(np.full(2_000_000, 40, dtype=np.int64), 33)
    labels = re.findall(r">([^<>]{1,20})</text>", svg)
    assert "1e6" not in labels and "1800000" in labels
