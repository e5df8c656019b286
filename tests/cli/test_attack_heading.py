"""The intersection attack's heading counts releases and targets in the singular for one
(intlsweep #10: "Intersection attack on 1 releases")."""

from __future__ import annotations

import pytest
from rich.console import Console

from crowdsafe.cli.attack import render


def _heading(releases: int, targets: int) -> str:
    summary = {"releases": releases, "targets": targets, "sensitive": "Beruf", "average_prior_anonymity": 1.0,
               "average_posterior_anonymity": 1.0, "average_drop": 0.0, "vulnerable": 0.0, "perfect_breach": 0.0,
               "partial_breach": {}, "contradictions": 0}
    console = Console(record=True, width=200)
    render({"summary": summary, "releases": []}, console)
    return console.export_text().splitlines()[0]


@pytest.mark.parametrize(("releases", "targets", "expected"), [
    (1, 1, "Intersection attack on 1 release, 1 target (sensitive: Beruf)"),
    (1, 2500, "Intersection attack on 1 release, 2,500 targets (sensitive: Beruf)"),
    (3, 1, "Intersection attack on 3 releases, 1 target (sensitive: Beruf)"),
])
def test_the_heading_counts_in_the_singular_for_one(releases, targets, expected):
    assert _heading(releases, targets) == expected
