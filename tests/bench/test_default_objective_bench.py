"""bench/default_objective.py's DP-histogram baseline (finding: nine 1-way histograms from
``crowdsafe query`` beat the default certified release on its own workload): with noise made
negligible it equals the TVD of the exact 1-way marginals taken as independent, computed here
directly from the table's values."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from crowdsafe.datasets.uci_adult import adult_frame, dataset_from_frame

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import default_objective  # noqa: E402

COLUMNS = ["age", "workclass", "sex", "income"]


def _independence_tvd(frame, columns) -> float:
    """Mean over pairs of ½ Σ |p(a, b) − p(a) p(b)|, every value pair of the two domains seen."""
    n = frame.height
    tvds = []
    for a, b in itertools.combinations(columns, 2):
        pa = {v: c / n for v, c in frame.group_by(a).len().iter_rows()}
        pb = {v: c / n for v, c in frame.group_by(b).len().iter_rows()}
        joint = {(x, y): c / n for x, y, c in frame.group_by([a, b]).len().iter_rows()}
        tvds.append(0.5 * sum(abs(joint.get((x, y), 0.0) - px * py) for x, px in pa.items() for y, py in pb.items()))
    return float(np.mean(tvds))


@pytest.mark.slow
def test_the_histogram_baseline_is_the_independence_tvd_when_noise_vanishes():
    data = dataset_from_frame(adult_frame("train").head(3000).clone(), "head", "keep")
    measured = default_objective.histogram_baseline(data, 1e7, 0, COLUMNS)
    assert measured == pytest.approx(_independence_tvd(data.frame, COLUMNS), abs=1e-4)
    # with real noise it is another number, and the seeds differ
    noisy = [default_objective.histogram_baseline(data, 0.05, seed, COLUMNS) for seed in (0, 1)]
    assert noisy[0] != noisy[1] and min(noisy) > measured
