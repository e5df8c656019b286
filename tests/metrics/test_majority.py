"""The majority lookup classifier (model "majority") on tiny tables, every expected value read by hand.

The target's codes follow its sorted values: "no" < "yes", so a tie predicts "no".
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import Dataset, Hierarchy, Schema
from crowdsafe.data.generalized import CellTable
from crowdsafe.errors import ParameterError
from crowdsafe.metrics import classifier_utility, majority_lookup, release_accuracy
from crowdsafe.metrics.classifier import MODELS, _test_table

JOB = Hierarchy.from_columns("job", ["nurse", "doctor", "clerk", "cook"],
                             [["health", "health", "office", "kitchen"], ["*"] * 4])
SCHEMA = Schema.of({"age": "numeric", "job": "categorical", "y": "categorical"})


def dataset(rows: list[tuple]) -> Dataset:
    age, job, y = zip(*rows)
    return Dataset(pl.DataFrame({"age": list(age), "job": list(job), "y": list(y)}), SCHEMA, {"job": JOB})


# the original (training) table: every age 20..40 by 5 and every job occur
ORIGINAL = dataset([
    (20, "nurse", "yes"), (20, "nurse", "yes"), (20, "nurse", "no"),  # (20, nurse): yes
    (20, "doctor", "no"),  # (20, doctor): no
    (25, "clerk", "no"), (25, "clerk", "yes"),  # (25, clerk): tie -> no
    (30, "cook", "yes"),  # (30, cook): yes
    (35, "doctor", "yes"), (35, "doctor", "yes"),  # (35, doctor): yes
    (40, "clerk", "no"),  # (40, clerk): no
])  # overall: yes 6, no 4 -> yes

# a full-domain release: age kept, job at level 1 (node labels)
FULL_DOMAIN = pl.DataFrame({
    "age": ["20"] * 4 + ["30"] * 4 + ["40"] * 2,
    "job": ["health"] * 4 + ["office"] * 4 + ["kitchen"] * 2,
    "y": ["yes", "yes", "yes", "no", "no", "no", "yes", "no", "yes", "no"],
})  # (20, health): yes 3/1; (30, office): no 3/1; (40, kitchen): tie -> no; overall yes 5, no 5 -> no

# a release generalizing age into ranges (and job into a set), whose ranges overlap at 30
RANGES = pl.DataFrame({
    "age": ["[20, 30]", "[20, 30]", "[30, 40]", "[30, 40]", "[30, 40]", "[30, 40]"],
    "job": ["health", "health", "health", "health", "health", "{clerk, cook}"],
    "y": ["yes", "yes", "no", "no", "no", "yes"],
})  # overall: yes 3, no 3 -> no

TEST = dataset([
    (20, "doctor", "yes"),
    (20, "nurse", "no"),
    (30, "clerk", "no"),
    (40, "cook", "no"),
    (25, "nurse", "yes"),
    (30, "cook", "no"),
    (40, "cook", "yes"),
    (35, "clerk", "yes"),
    (45, "nurse", "no"),  # 45 is no value of the original: nothing covers it
    (30, "nurse", "no"),
])
TRUTH = ["yes", "no", "no", "no", "yes", "no", "yes", "yes", "no", "no"]

# by hand, row by row (see each release's comments)
FULL_DOMAIN_PREDICTS = [
    "yes",  # (20, doctor) -> (20, health)
    "yes",  # (20, nurse) -> (20, health)
    "no",  # (30, clerk) -> (30, office)
    "no",  # (40, cook) -> (40, kitchen): tie
    "no",  # (25, nurse): no release cell holds age 25 -> overall (tie -> no)
    "no",  # (30, cook) -> (30, kitchen): not in the release -> overall
    "no",  # (40, cook) -> (40, kitchen): tie
    "no",  # (35, clerk): 35 not covered -> overall
    "no",  # 45: not covered -> overall
    "no",  # (30, nurse) -> (30, health): not in the release -> overall
]
RANGES_PREDICTS = [
    "yes",  # (20, doctor) -> ([20, 30], health): yes 2
    "yes",  # (20, nurse) -> same
    "yes",  # (30, clerk) -> ([30, 40], {clerk, cook}): yes 1
    "yes",  # (40, cook) -> ([30, 40], {clerk, cook})
    "yes",  # (25, nurse) -> ([20, 30], health)
    "yes",  # (30, cook) -> ([30, 40], {clerk, cook})
    "yes",  # (40, cook) -> same
    "yes",  # (35, clerk) -> same
    "no",  # 45: not covered -> overall (tie -> no)
    "no",  # (30, nurse): both ([20, 30], health) and ([30, 40], health) cover it: yes 2 + no 3
]
ORIGINAL_PREDICTS = [
    "no",  # (20, doctor): no
    "yes",  # (20, nurse): yes 2/1
    "yes",  # (30, clerk): not in the original -> overall yes
    "yes",  # (40, cook): not in the original -> overall
    "yes",  # (25, nurse): not in the original -> overall
    "yes",  # (30, cook): yes
    "yes",  # (40, cook): overall
    "yes",  # (35, clerk): overall
    "yes",  # 45: overall
    "yes",  # (30, nurse): not in the original -> overall
]


def hand_accuracy(predicted: list[str]) -> float:
    return sum(p == t for p, t in zip(predicted, TRUTH)) / len(TRUTH)


def lookup(train: CellTable) -> list[str]:
    """Predictions per test row (the test rows are distinct tuples here)."""
    columns = ["age", "job", "y"]
    test = _test_table(TEST, ORIGINAL, columns)
    codes = majority_lookup(train, test, ["age", "job"], "y")
    # map the distinct test tuples back to the rows, by their values
    values = {c: test.covers[c].labels.to_list() for c in columns}
    target = ["no", "yes"]
    predicted = {(int(values["age"][test.cells["age"][i]]), values["job"][test.cells["job"][i]],
                  values["y"][test.cells["y"][i]]): target[codes[i]] for i in range(len(codes))}
    return [predicted[row] for row in TEST.frame.rows()]


def test_majority_is_a_model():
    assert "majority" in MODELS


@pytest.mark.parametrize(("release", "expected"), [(FULL_DOMAIN, FULL_DOMAIN_PREDICTS), (RANGES, RANGES_PREDICTS)])
def test_each_generalized_tuple_predicts_its_majority(release, expected):
    assert lookup(CellTable.of_release(release, ORIGINAL, ["age", "job", "y"])) == expected
    accuracy = release_accuracy(ORIGINAL, release, TEST, "y", features=["age", "job"], model="majority")
    assert accuracy == pytest.approx(hand_accuracy(expected))


def test_trained_on_the_original_it_is_the_per_tuple_majority():
    assert lookup(CellTable.of_original(ORIGINAL, ["age", "job", "y"])) == ORIGINAL_PREDICTS
    report = classifier_utility(ORIGINAL, FULL_DOMAIN, TEST, "y", features=["age", "job"], model="majority")
    assert report.accuracy_original == pytest.approx(hand_accuracy(ORIGINAL_PREDICTS))
    assert report.accuracy_release == pytest.approx(hand_accuracy(FULL_DOMAIN_PREDICTS))
    assert report.majority_rate == pytest.approx(6 / 10)


def test_repeated_test_rows_count_each_time():
    test = dataset([(20, "doctor", "yes")] * 3 + [(30, "clerk", "yes")])
    # (20, doctor) -> yes: right 3 times; (30, clerk) -> no: wrong once
    assert release_accuracy(ORIGINAL, FULL_DOMAIN, test, "y", features=["age", "job"], model="majority") == 0.75


def test_without_features_it_predicts_the_overall_majority():
    train = CellTable.of_original(ORIGINAL, ["y"])
    test = _test_table(TEST, ORIGINAL, ["y"])
    assert (majority_lookup(train, test, [], "y") == 1).all()  # yes 6, no 4


def test_a_generalized_target_is_refused():
    release = FULL_DOMAIN.with_columns(pl.Series("y", ["*"] + FULL_DOMAIN["y"].to_list()[1:]))
    with pytest.raises(ParameterError, match="generalized"):
        release_accuracy(ORIGINAL, release, TEST, "y", features=["age", "job"], model="majority")


def test_a_large_lookup_matches_a_dictionary_of_tuples():
    """Random raw tables: the lookup equals a plain per-tuple vote counted with a dict."""
    rng = np.random.default_rng(7)
    ages, jobs = [20, 25, 30, 35, 40], ["nurse", "doctor", "clerk", "cook"]
    rows = [(int(rng.choice(ages)), str(rng.choice(jobs)), str(rng.choice(["no", "yes"], p=[0.3, 0.7])))
            for _ in range(400)]
    train = dataset(rows)
    votes: dict = {}
    for a, j, y in rows:
        votes.setdefault((a, j), {"no": 0, "yes": 0})[y] += 1
    overall = "yes" if sum(y == "yes" for *_, y in rows) > 200 else "no"
    test_rows = [(a, j, str(rng.choice(["no", "yes"]))) for a in [*ages, 45] for j in jobs for _ in range(3)]
    right = 0
    for a, j, y in test_rows:
        v = votes.get((a, j))
        right += (overall if v is None else ("yes" if v["yes"] > v["no"] else "no")) == y
    test = dataset(test_rows)
    accuracy = release_accuracy(train, train.frame.cast(pl.String), test, "y", features=["age", "job"],
                                model="majority")
    assert accuracy == pytest.approx(right / len(test_rows))


@pytest.mark.parametrize("model", ["majority", "logistic"])
def test_a_release_that_suppressed_everything_predicts_nothing(model):
    """An empty release (every class suppressed) teaches nothing: no value is predicted and every
    test row counts as wrong, for the lookup as for a fitted model (the lookup used to fail on the
    majority of no rows)."""
    empty = FULL_DOMAIN.head(0)
    assert release_accuracy(ORIGINAL, empty, TEST, "y", features=["age", "job"], model=model) == 0.0
