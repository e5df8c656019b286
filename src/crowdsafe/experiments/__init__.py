"""Reproductions of the papers' tables and figures: ``crowdsafe experiment NAME``.

Each experiment writes CSV (the numbers, computed by the library) and PNG (a figure) under a
results folder. See :mod:`crowdsafe.experiments.registry` to add one.
"""

from __future__ import annotations

from crowdsafe.experiments.registry import (
    Experiment,
    ExperimentContext,
    ExperimentResult,
    available,
    experiment,
    get,
    run,
)

__all__ = ["Experiment", "ExperimentContext", "ExperimentResult", "available", "experiment", "get", "run"]
