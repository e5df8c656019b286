"""Marginal distances, workload error and classifier utility against row-by-row references."""

from __future__ import annotations

import itertools
import math
from collections import Counter, defaultdict

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import Dataset, Hierarchy, Schema, intervals
from crowdsafe.data.generalized import CellTable
from crowdsafe.datasets import adult
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.metrics import classifier_utility, make_workload, marginal_distances, utility, workload_error
from crowdsafe.metrics.marginals import spread_marginal

AGE = intervals("age", [20, 25, 30, 35, 40], widths=[10])
JOB = Hierarchy.from_columns("job", ["nurse", "doctor", "clerk", "cook"],
                             [["health", "health", "office", "kitchen"], ["*"] * 4])


def original() -> Dataset:
    frame = pl.DataFrame({
        "age": [20, 25, 30, 35, 40, 40, 20, 25, 30, 30],
        "job": ["nurse", "doctor", "clerk", "cook", "nurse", "nurse", "doctor", "clerk", "clerk", "cook"],
    })
    return Dataset(frame, Schema.of({"age": "numeric", "job": "categorical"}), {"age": AGE, "job": JOB})


RELEASE = pl.DataFrame({  # a local recoding with ranges, sets, node labels and '*'; one row suppressed
    "age": ["[20, 25]", "[20, 25]", "[30, 35]", "[30, 35]", "40", "40", "*", "[20, 30)", "[30, 40)"],
    "job": ["health", "health", "{clerk, cook}", "{clerk, cook}", "nurse", "nurse", "*", "clerk", "clerk"],
})
AGES = [20, 25, 30, 35, 40]
JOBS = ["nurse", "doctor", "clerk", "cook"]


def covers(cell: str, column: str) -> list:
    """What a release cell covers, read by hand."""
    if cell == "*":
        return AGES if column == "age" else JOBS
    if column == "age":
        if cell.startswith("["):
            low, high = cell[1:-1].split(", ")
            upper = (lambda v: v <= int(high)) if cell.endswith("]") else (lambda v: v < int(high))
            return [v for v in AGES if int(low) <= v and upper(v)]
        return [int(cell)]
    if cell.startswith("{"):
        return cell[1:-1].split(", ")
    return {"health": ["nurse", "doctor"], "office": ["clerk"], "kitchen": ["cook"]}.get(cell, [cell])


def reference_marginal(rows: list[tuple], columns: list[int], generalized: bool) -> dict:
    mass = defaultdict(float)
    names = ["age", "job"]
    for row in rows:
        options = [covers(str(row[i]), names[i]) if generalized else [row[i]] for i in columns]
        share = 1.0 / math.prod(len(o) for o in options)
        for combo in itertools.product(*options):
            mass[combo] += share
    total = sum(mass.values())
    return {key: value / total for key, value in mass.items()}


def test_marginals_match_a_hand_spread():
    data = original()
    report = marginal_distances(data, RELEASE)
    truth_rows = data.frame.rows()
    release_rows = RELEASE.rows()
    for distance_entry in report.one_way + report.two_way:
        idx = [["age", "job"].index(a) for a in distance_entry.attributes]
        p = reference_marginal(truth_rows, idx, generalized=False)
        q = reference_marginal(release_rows, idx, generalized=True)
        keys = set(p) | set(q)
        tv = 0.5 * sum(abs(p.get(x, 0) - q.get(x, 0)) for x in keys)
        assert distance_entry.total_variation == pytest.approx(tv)
        if all(q.get(x, 0) > 0 for x in p):
            assert distance_entry.kl == pytest.approx(sum(v * math.log(v / q[x]) for x, v in p.items()))
        else:
            assert distance_entry.kl is None
    assert len(report.one_way) == 2 and len(report.two_way) == 1


def test_spread_marginal_sums_to_one_and_identity_release_has_zero_distance():
    data = original()
    table = CellTable.of_release(RELEASE, data, ["age", "job"])
    assert spread_marginal(table, ["age", "job"]).get_column("mass").sum() == pytest.approx(1.0)
    same = marginal_distances(data, data.frame)
    assert all(m.total_variation == pytest.approx(0, abs=1e-12) and m.kl == pytest.approx(0, abs=1e-12)
               for m in same.one_way + same.two_way)


def test_workload_matches_brute_force_and_is_reproducible():
    data = original()
    workload = make_workload(data, ["age", "job"], queries=200, max_attributes=2, seed=7)
    again = make_workload(data, ["age", "job"], queries=200, max_attributes=2, seed=7)
    assert all(np.array_equal(workload.allowed[c], again.allowed[c]) for c in workload.columns)
    dictionaries = {c: data.encoded(c).dictionary.to_list() for c in ["age", "job"]}
    truth, estimate = [], []
    for q in range(workload.size):
        accepted = {c: {dictionaries[c][i] for i in np.nonzero(workload.allowed[c][q])[0]} for c in ["age", "job"]}
        truth.append(sum(1 for age, job in data.frame.rows() if age in accepted["age"] and job in accepted["job"]))
        total = 0.0
        for age_cell, job_cell in RELEASE.rows():
            fraction = 1.0
            for column, cell in (("age", age_cell), ("job", job_cell)):
                covered = covers(cell, column)
                fraction *= sum(v in accepted[column] for v in covered) / len(covered)
            total += fraction
        estimate.append(total)
    truth, estimate = np.array(truth, dtype=float), np.array(estimate)
    error = np.abs(estimate - truth) / np.maximum(truth, 0.001 * 10)
    report = workload_error(data, RELEASE, ["age", "job"], queries=200, max_attributes=2, seed=7)
    assert report.mean_relative_error == pytest.approx(error.mean())
    assert report.median_relative_error == pytest.approx(np.median(error))
    exact = workload_error(data, data.frame, ["age", "job"], queries=200, seed=7)
    assert exact.mean_relative_error == 0.0
    assert workload.describe(data, 0).startswith("count where ")
    with pytest.raises(ParameterError, match="from 1 to 10,000,000"):
        make_workload(data, queries=0)


def test_workload_ranges_are_contiguous_in_value_order():
    data = original()
    workload = make_workload(data, ["age"], queries=100, seed=1)
    values = np.asarray(data.encoded("age").dictionary.to_list())
    for row in workload.allowed["age"]:
        chosen = np.sort(values[row])
        between = values[(values >= chosen.min()) & (values <= chosen.max())]
        assert len(chosen) == len(between)


@pytest.mark.slow
def test_classifier_on_adult():
    train, test = adult(), adult("test")
    columns = ["age", "workclass", "education", "marital-status", "occupation", "sex", "hours-per-week", "income"]
    raw = classifier_utility(train, train.frame.select(columns), test, "income", model="tree", seed=0)
    assert raw.accuracy_release == pytest.approx(raw.accuracy_original)  # the same rows train both
    assert raw.accuracy_original > raw.majority_rate + 0.05
    blank = train.frame.select(columns).with_columns(pl.lit("*").alias(c) for c in columns if c != "income")
    suppressed = classifier_utility(train, blank, test, "income", model="tree", seed=0)
    counts = Counter(train.frame.get_column("income").to_list())
    majority = counts.most_common(1)[0][0]
    assert suppressed.accuracy_release == pytest.approx(
        (test.frame.get_column("income") == majority).mean())  # constant features: the majority class


def test_classifier_errors():
    data = original().with_roles(qi=["age"], sensitive=["job"])
    with pytest.raises(ParameterError, match="no target column"):
        classifier_utility(data, RELEASE, data, "salary")
    with pytest.raises(ParameterError, match="unknown classifier"):
        classifier_utility(data, RELEASE, data, "job", model="svm")
    with pytest.raises(ParameterError, match="is generalized"):
        classifier_utility(data, RELEASE, data, "job")


def test_utility_report_and_bad_release():
    data = original()
    report = utility(data, RELEASE)
    assert report.classifier is None and report.notes
    assert report.information_loss.suppressed_rows == 1
    assert set(report.to_dict()) >= {"information_loss", "marginals", "workload", "classifier"}
    with pytest.raises(InputError, match="'plumber'"):
        utility(data, RELEASE.with_columns(pl.lit("plumber").alias("job")))


@pytest.mark.parametrize("scale", [0, 0.0, -1, float("nan"), float("inf"), -float("inf")])
def test_a_scale_not_above_zero_or_not_finite_is_refused_before_reading(scale, tmp_path, monkeypatch):
    """compare --scale 0 and -1 were accepted and multiplied every estimate into nonsense."""
    from crowdsafe import api
    from crowdsafe.errors import ParameterError
    from crowdsafe.metrics import report as report_module
    from crowdsafe.metrics.workload import workload_error

    def unread(*args, **kwargs):
        raise AssertionError("a table was read")

    from crowdsafe import measures

    monkeypatch.setattr(measures, "load", unread)  # compare lives in crowdsafe.measures (api re-exports it)
    with pytest.raises(ParameterError, match="scale parameter must be a finite number above 0"):
        api.compare("adult", tmp_path / "r.csv", scale=scale)
    with pytest.raises(ParameterError, match="scale parameter must be a finite number above 0"):
        report_module.UtilityRequest(scale=scale)
    with pytest.raises(ParameterError, match="scale parameter must be a finite number above 0"):
        workload_error(None, None, scale=scale)  # type: ignore[arg-type]


def test_compare_says_scale_in_one_line(capsys, tmp_path):
    from crowdsafe.cli import main

    for value in ("0", "-1"):
        assert main(["compare", "adult", str(tmp_path / "r.csv"), "--scale", value]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "--scale must be a finite number above 0" in err, err
