"""`crowdsafe experiment utility`: a small run end to end, its options, the peers' files, and the
lattice ceiling against a node-by-node count in plain Python."""

from __future__ import annotations

import csv
import itertools
import json
from collections import Counter

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import Dataset, Hierarchy, Schema
from crowdsafe.errors import ParameterError
from crowdsafe.experiments import run
from crowdsafe.experiments.utility import (
    CEILING,
    CERTIFIED,
    LATTICE,
    MAJORITY_RATE,
    MONDRIAN,
    NON_PRIVATE,
    LatticeCodes,
    Options,
    lattice_ceiling,
    read_peers,
)


@pytest.mark.slow
def test_a_small_run(tmp_path):
    from crowdsafe.datasets import adult

    peers = tmp_path / "peers"
    peers.mkdir()
    (peers / "peers-dplr.json").write_text(json.dumps({"summary": [
        {"method": "dp-logistic", "epsilon": 1.0, "runs": 2, "accuracy_mean": 0.79, "accuracy_min": 0.78,
         "accuracy_max": 0.8, "seconds_mean": 1.5},
        {"method": "logistic (non-private)", "epsilon": None, "runs": 1, "accuracy_mean": 0.83,
         "accuracy_min": 0.83, "accuracy_max": 0.83, "seconds_mean": 0.2},
    ]}))
    result = run("utility", tmp_path / "out", 3,
                 {"seeds": "1", "epsilons": "2", "logistic": "no", "peers": str(peers),
                  "objectives": "retained,classification"})
    names = {f.name for f in result.files}
    assert names == {"utility_runs.csv", "utility_summary.csv", "utility_vs_epsilon.png"}
    with (tmp_path / "out" / "utility" / "utility_summary.csv").open() as handle:
        table = list(csv.DictReader(handle))
    labels = {row["label"] for row in table}
    assert {f"{NON_PRIVATE} · majority", MAJORITY_RATE, f"{MONDRIAN} · majority", f"{LATTICE} · majority",
            f"{CERTIFIED} (retained) · majority", f"{CERTIFIED} (classification) · majority",
            f"{CEILING} · majority", "peer: dp-logistic",
            "peer: logistic (non-private)"} <= labels
    for row in table:
        low, mean, high = float(row["accuracy_min"]), float(row["accuracy_mean"]), float(row["accuracy_max"])
        assert 0.0 <= low <= mean <= high <= 1.0, row
        assert float(row["seconds"]) >= 0.0
    by_label = {row["label"]: row for row in table}
    assert by_label[f"{CERTIFIED} (retained) · majority"]["runs"] == "1"
    assert by_label[f"{CEILING} · majority"]["runs"] == "1"
    assert by_label["peer: dp-logistic"]["source"].startswith("peers-dplr.json")
    # the majority rate is the test split's largest income share, counted here row by row
    incomes = Counter(adult("test").frame.get_column("income").to_list())
    share = max(incomes.values()) / sum(incomes.values())
    assert float(by_label[MAJORITY_RATE]["accuracy_mean"]) == pytest.approx(share)
    assert result.summary["majority_rate"] == pytest.approx(share)
    # the ceiling's nodes include the top one (everything but income generalized), which predicts
    # the train file's majority income, the test file's too: the best node is no worse
    assert float(by_label[f"{CEILING} · majority"]["accuracy_mean"]) >= share
    assert any("peers-synth.json not found" in note for note in result.summary["notes"])
    with (tmp_path / "out" / "utility" / "utility_runs.csv").open() as handle:
        runs = list(csv.DictReader(handle))
    certified = [r for r in runs if r["method"] == CERTIFIED]
    assert len(certified) == 2 and {r["seed"] for r in certified} == {"0"}
    assert {r["objective"] for r in certified} == {"retained", "classification"}
    assert all(0.0 <= float(r["suppression_rate"]) <= 1.0 for r in certified)


def test_options_are_checked():
    assert Options.parse({}).seeds == 5 and Options.parse({}).deltas == (1e-6,)
    parsed = Options.parse({"epsilons": "0.5,1,2,4", "deltas": "1e-6,1e-4", "seeds": "3"})
    assert parsed.epsilons == (0.5, 1.0, 2.0, 4.0) and parsed.deltas == (1e-6, 1e-4) and parsed.seeds == 3
    with pytest.raises(ParameterError, match="unknown option"):
        Options.parse({"seed": "3"})
    with pytest.raises(ParameterError, match="whole number"):
        Options.parse({"seeds": "0"})
    with pytest.raises(ParameterError, match="option epsilons: 'one' is not a number"):
        Options.parse({"epsilons": "one"})
    with pytest.raises(ParameterError, match=r"option seeds: '１' is not a whole number \(write it as 1\)"):
        Options.parse({"seeds": "１"})  # str.isdigit() took full-width digits
    with pytest.raises(ParameterError, match="option epsilons: 'nan' is not a finite number"):
        Options.parse({"epsilons": "1,nan"})


def test_missing_or_broken_peer_files_are_notes(tmp_path):
    (tmp_path / "peers-synth.json").write_text("{not json")
    rows, notes = read_peers(tmp_path)
    assert rows == []
    assert any("peers-dplr.json not found" in n for n in notes)
    assert any("peers-synth.json could not be read" in n for n in notes)


A = Hierarchy.from_columns("a", ["a1", "a2", "a3", "a4"], [["x", "x", "y", "y"], ["*"] * 4])
B = Hierarchy.from_columns("b", ["b1", "b2", "b3"], [["*"] * 3])


def tiny(rows: list[tuple[str, str, str]], hierarchies: bool = True) -> Dataset:
    a, b, income = zip(*rows)
    frame = pl.DataFrame({"a": list(a), "b": list(b), "income": list(income)})
    return Dataset(frame, Schema.of({"a": "categorical", "b": "categorical", "income": "categorical"}),
                   {"a": A, "b": B} if hierarchies else {})


def reference_ceiling(train_rows, test_rows, k):
    """Node by node with dictionaries: the accuracy of every node (income kept)."""
    up_a = {"a1": ["a1", "x", "*"], "a2": ["a2", "x", "*"], "a3": ["a3", "y", "*"], "a4": ["a4", "y", "*"]}
    accuracies = {}
    for la, lb in itertools.product(range(3), range(2)):
        def node(a, b, la=la, lb=lb):  # a value outside the hierarchy ("a9") is in no class
            return (up_a[a][la] if a in up_a else None), (b if lb == 0 else "*")
        classes = Counter((node(a, b), y) for a, b, y in train_rows)
        kept = {key: n for key, n in classes.items() if n >= k}
        votes: dict = {}
        for (tup, y), n in kept.items():
            votes.setdefault(tup, Counter())[y] += n
        overall_votes = Counter()
        for (_, y), n in kept.items():
            overall_votes[y] += n
        # ties: the smaller income code ("<=50K" < ">50K")
        def pick(counter):
            return min(counter, key=lambda value: (-counter[value], value)) if counter else "<=50K"
        overall = pick(overall_votes)
        right = sum(pick(votes[node(a, b)]) == y if node(a, b) in votes else overall == y for a, b, y in test_rows)
        accuracies[(la, lb)] = right / len(test_rows)
    return accuracies


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_ceiling_matches_a_node_by_node_count(seed):
    rng = np.random.default_rng(seed)
    incomes = ["<=50K", ">50K"]
    def draw(n):
        return [(str(rng.choice(A.leaves.to_list())), str(rng.choice(B.leaves.to_list())),
                 str(rng.choice(incomes, p=[0.6, 0.4]))) for _ in range(n)]
    train_rows, test_rows = draw(60), draw(40) + [("a9", "b1", "<=50K"), ("a9", "b2", ">50K")]
    k = 3
    expected = reference_ceiling(train_rows, test_rows, k)
    found = lattice_ceiling(LatticeCodes.of(tiny(train_rows), tiny(test_rows, hierarchies=False), ["a", "b"]),
                            {"a": A, "b": B}, k, threshold=0.5)
    best = max(expected.values())
    assert found["accuracy"] == pytest.approx(best)
    assert expected[(found["node"]["a"], found["node"]["b"])] == pytest.approx(best)
    assert found["nodes"] == 6
    assert found["accuracy_of"] == pytest.approx(expected)
    assert found["share_reaching"] == pytest.approx(np.mean([v >= 0.5 for v in expected.values()]))


def test_the_command_line_reads_options_as_key_value():
    from crowdsafe.cli.experiment import _options

    assert _options(["seeds=2", " epsilons = 0.5,1 "]) == {"seeds": "2", "epsilons": "0.5,1"}
    assert _options(None) == {}
    with pytest.raises(ParameterError, match="KEY=VALUE"):
        _options(["seeds"])
