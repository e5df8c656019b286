"""bench/selection_search.py counts what the choice's branch and bound does without changing it:
the instrumented search chooses the node the plain one chooses, a search seeded with the final best
key (the oracle) chooses it too and opens no more blocks, and a seed above the best key (an
incumbent no node reaches) breaks the choice, so the script's same-choice check can fail."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from crowdsafe.anonymize.publish import PlanRequest, choose_recoding, count_sample, plan_for_dataset, prepare_dataset
from crowdsafe.datasets import adult
from crowdsafe.randomness import Randomness
from crowdsafe.sampling import sample_of

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH))

import selection_search  # noqa: E402

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def adult_sample():
    data = adult()
    plan = plan_for_dataset(data, PlanRequest(1.0, 1e-6, objective="retained"))
    prepared, columns, _ = prepare_dataset(data)
    return count_sample(sample_of(prepared, plan.beta, Randomness(3)), columns), columns, plan


def _choose(adult_sample, seed_best=-math.inf):
    table, columns, plan = adult_sample
    with selection_search.instrumented(seed_best) as record:
        chosen = choose_recoding(table, columns, plan, None, Randomness(5))
    return dict(chosen[0].levels), record


def test_the_counts_leave_the_choice_alone_and_the_oracle_opens_no_more_blocks(adult_sample):
    table, columns, plan = adult_sample
    plain = dict(choose_recoding(table, columns, plan, None, Randomness(5))[0].levels)
    counted, record = _choose(adult_sample)
    assert counted == plain
    visits = sum(record["visits"].values())
    assert visits > 0 and record["rows"][0] == len(table.counts)
    best = max(record["lower_keys"])
    assert best - record["lower_keys"][0] >= 0
    seeded, oracle = _choose(adult_sample, best)
    assert seeded == plain
    assert sum(oracle["visits"].values()) <= visits


def test_a_seed_above_the_best_key_breaks_the_choice(adult_sample):
    _, record = _choose(adult_sample)
    best = max(record["lower_keys"])
    try:
        broken, _ = _choose(adult_sample, best + 1000.0)
    except (ValueError, IndexError):
        return  # nothing is left to choose from
    assert broken != _choose(adult_sample)[0]
