"""Information loss: the frequency-table scorer and the release path agree with each other and
with a row-by-row reference written here from the published definitions."""

from __future__ import annotations

import itertools
import math
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import Dataset, Hierarchy, Schema, flat, intervals
from crowdsafe.datasets import adult
from crowdsafe.errors import HierarchyError, ParameterError
from crowdsafe.metrics import LOSS_METRICS, FullDomainScorer, information_loss

AGE = intervals("age", [20, 25, 30, 35, 40], widths=[10])  # [20,30) [30,40) [40,50) then *
SEX = flat("sex", ["F", "M"])
COLOUR = Hierarchy.from_columns(
    "colour", ["red", "pink", "blue", "navy", "green"],
    [["warm", "warm", "cool", "cool", "green"], ["*"] * 5],
)


def small() -> Dataset:
    frame = pl.DataFrame({
        "age": [20, 25, 30, 35, 40, 40, 20, 25, 30, 30],
        "sex": ["M", "F", "M", "F", "M", "M", "F", "M", "M", "F"],
        "colour": ["red", "pink", "blue", "navy", "green", "red", "red", "blue", "navy", "pink"],
    })
    schema = Schema.of({"age": "numeric", "sex": "categorical", "colour": "categorical"})
    return Dataset(frame, schema, {"age": AGE, "sex": SEX, "colour": COLOUR})


def reference(dataset: Dataset, levels: dict[str, int], k: int) -> dict[str, float]:
    """Row-by-row information loss from the definitions (Xu 2006, Bayardo-Agrawal 2005,
    LeFevre 2006, Sweeney 2002, Gionis-Tassa 2009 with input frequencies)."""
    rows = dataset.frame.rows(named=True)
    qis = list(levels)
    n = len(rows)

    def node_leaves(column, value, level):
        h = dataset.hierarchies[column]
        leaves = [v for v in h.leaves.to_list()]
        mapped = h.leaf_map(level)
        me = mapped[leaves.index(value)]
        return [leaves[i] for i in range(len(leaves)) if mapped[i] == me]

    def ncp(column, covered):
        h = dataset.hierarchies[column]
        domain = h.leaves.to_list()
        if len(covered) == len(domain):
            return 1.0
        if h.is_numeric:
            return (max(covered) - min(covered)) / (max(domain) - min(domain))
        return 0.0 if len(covered) == 1 else len(covered) / len(domain)

    cells = [tuple(tuple(node_leaves(c, r[c], levels[c])) for c in qis) for r in rows]
    sizes = Counter(cells)
    kept = [sizes[cell] >= k for cell in cells]
    n_kept = sum(kept)
    n_sup = n - n_kept
    value_counts = {c: Counter(r[c] for r in rows) for c in qis}
    gcp_per = {}
    entropy = 0.0
    max_entropy = 0.0
    prec_sum = 0.0
    for c in qis:
        h = dataset.hierarchies[c]
        total = 0.0
        for r, cell, keep in zip(rows, cells, kept):
            covered = cell[qis.index(c)]
            total += ncp(c, covered) if keep else 1.0
            n_x = value_counts[c][r[c]]
            n_g = sum(value_counts[c][v] for v in covered) if keep else n
            entropy += -math.log2(n_x / n_g)
            max_entropy += -math.log2(n_x / n)
            # lowest level whose node has the same leaves as the published one
            lowest = min(lv for lv in range(h.height + 1) if len(node_leaves(c, r[c], lv)) == len(covered))
            prec_sum += (lowest / h.height) if keep else 1.0
        gcp_per[c] = total / n
    classes = [s for cell, s in sizes.items() if s >= k]
    return {
        "gcp": sum(gcp_per.values()) / len(qis),
        "ncp": gcp_per,
        "discernibility": sum(s * s for s in classes) + n * n_sup,
        "c_avg": (n_kept / len(classes)) / k if classes else 0.0,
        "suppression_rate": n_sup / n,
        "precision": 1 - prec_sum / (n * len(qis)),
        "entropy": entropy,
        "entropy_normalized": entropy / max_entropy,
        "classes": len(classes),
    }


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("levels", [(0, 0, 0), (1, 0, 1), (1, 1, 0), (2, 0, 1), (0, 1, 2), (2, 1, 2)])
def test_scorer_matches_row_by_row_reference(levels, k):
    dataset = small()
    chosen = dict(zip(["age", "sex", "colour"], levels))
    expected = reference(dataset, chosen, k)
    got = FullDomainScorer.from_dataset(dataset).score(chosen, k=k)
    assert got.gcp == pytest.approx(expected["gcp"])
    for column, value in expected["ncp"].items():
        assert got.ncp[column] == pytest.approx(value)
    assert got.discernibility == expected["discernibility"]
    assert got.c_avg == pytest.approx(expected["c_avg"])
    assert got.suppression_rate == pytest.approx(expected["suppression_rate"])
    assert got.precision == pytest.approx(expected["precision"])
    assert got.entropy == pytest.approx(expected["entropy"])
    assert got.entropy_normalized == pytest.approx(expected["entropy_normalized"])
    assert got.classes == expected["classes"]
    assert got.height == sum(levels)


@pytest.mark.parametrize("k", [1, 2, 3])
@pytest.mark.parametrize("levels", [(0, 0, 0), (1, 0, 1), (1, 1, 0), (2, 0, 1), (0, 1, 2), (2, 1, 2)])
def test_release_path_matches_row_by_row_reference(levels, k):
    """The release path reduces the release to its distinct tuples of cells, each weighted by
    its rows: the sums must be those of the rows one by one."""
    dataset = small()
    chosen = dict(zip(["age", "sex", "colour"], levels))
    expected = reference(dataset, chosen, k)
    release = dataset.recode(chosen).filter(pl.len().over(["age", "sex", "colour"]) >= k)
    got = information_loss(dataset, release, k=k)
    for name in ("gcp", "discernibility", "c_avg", "suppression_rate", "precision", "classes"):
        assert getattr(got, name) == pytest.approx(expected[name]), name
    for column, value in expected["ncp"].items():
        assert got.ncp[column] == pytest.approx(value), column
    if got.suppressed_rows == 0:
        assert got.entropy == pytest.approx(expected["entropy"])


def test_hand_computed_values_on_the_small_table():
    dataset = small()
    loss = FullDomainScorer.from_dataset(dataset).score({"age": 1})
    # age at 10-year bands: [20,30) covers 20..25 -> 5/20; [30,40) covers 30..35 -> 5/20;
    # [40,50) covers only 40 -> 0. Rows: 4 + 4 in the first two bands, 2 at 40.
    assert loss.ncp["age"] == pytest.approx((8 * 0.25) / 10)
    assert loss.ncp["sex"] == 0.0 and loss.ncp["colour"] == 0.0
    assert loss.gcp == pytest.approx(0.2 / 3)
    everything = FullDomainScorer.from_dataset(dataset).score({"age": 0}, k=11)  # k > rows
    assert everything.suppressed_rows == 10
    assert everything.gcp == 1.0 and everything.precision == 0.0 and everything.entropy_normalized == 1.0
    assert everything.discernibility == 10 * 10
    nothing = FullDomainScorer.from_dataset(dataset).score([0, 0, 0])
    assert nothing.gcp == 0.0 and nothing.precision == 1.0 and nothing.entropy == 0.0


LEVELS = [
    {"age": 2, "workclass": 1, "education": 1, "marital-status": 2, "occupation": 1, "race": 0, "sex": 0,
     "native-country": 2},
    {"age": 1, "workclass": 0, "education": 2, "marital-status": 1, "occupation": 2, "race": 1, "sex": 0,
     "native-country": 1},
    {"age": 4, "workclass": 2, "education": 3, "marital-status": 3, "occupation": 3, "race": 1, "sex": 1,
     "native-country": 3},
]


@pytest.mark.parametrize("levels", LEVELS)
@pytest.mark.parametrize("k", [1, 10])
def test_release_path_agrees_with_scorer_on_adult(levels, k):
    data = adult()
    release = data.recode(levels)
    release = release.filter(pl.len().over(data.quasi_identifiers) >= k)
    from_table = FullDomainScorer.from_dataset(data).score(levels, k=k)
    from_release = information_loss(data, release, k=k)
    for name in ("gcp", "discernibility", "c_avg", "suppression_rate", "precision", "height", "classes",
                 "released_rows"):
        assert getattr(from_release, name) == pytest.approx(getattr(from_table, name), rel=1e-9), name
    for column in data.quasi_identifiers:
        assert from_release.ncp[column] == pytest.approx(from_table.ncp[column], rel=1e-9, abs=1e-12)
    if from_table.suppressed_rows == 0:
        assert from_release.entropy == pytest.approx(from_table.entropy, rel=1e-9)
        assert not from_release.notes
    else:
        assert from_release.notes  # the entropy is an estimate and says so


def test_release_written_as_sets_and_ranges_equals_its_node_labels():
    """A release whose cells are sets / closed ranges covering the same values as the nodes."""
    dataset = small()
    as_nodes = dataset.recode({"age": 1, "colour": 1})
    rewritten = as_nodes.with_columns(
        pl.col("age").cast(pl.String).replace({"[20, 30)": "[20, 25]", "[30, 40)": "[30, 35]", "[40, 50)": "40"}),
        pl.col("colour").cast(pl.String).replace({"warm": "{pink, red}", "cool": "{blue, navy}"}),
    )
    a = information_loss(dataset, as_nodes)
    b = information_loss(dataset, rewritten)
    assert a == b


def test_classes_and_suppression_mask_for_a_search():
    dataset = small()
    scorer = FullDomainScorer.from_dataset(dataset)
    ids, sizes = scorer.classes({"age": 1})
    assert sizes.sum() == 10
    mask = np.zeros(len(scorer.counts), dtype=bool)
    mask[0] = True
    loss = scorer.score({"age": 1}, suppressed=mask, classes=(ids, sizes))
    assert loss.suppressed_rows == int(scorer.counts[0])


def test_sampled_release_and_input_rows():
    dataset = small()
    release = dataset.recode({"age": 2}).head(6)
    loss = information_loss(dataset, release, input_rows=8)
    assert loss.suppressed_rows == 2 and loss.suppression_rate == 0.25
    with pytest.raises(ParameterError, match="only 5 went in"):
        information_loss(dataset, release, input_rows=5)


def test_loss_names_and_errors():
    loss = FullDomainScorer.from_dataset(small()).score({"age": 1, "colour": 2}, k=2)
    for name in LOSS_METRICS:
        assert loss.loss(name) >= 0
    assert loss.loss("precision") == pytest.approx(1 - loss.precision)
    with pytest.raises(ParameterError, match="unknown loss metric"):
        loss.loss("accuracy")
    scorer = FullDomainScorer.from_dataset(small())
    with pytest.raises(HierarchyError, match="levels 0..2"):
        scorer.score({"age": 3})
    with pytest.raises(ParameterError, match="not a scored column"):
        scorer.score({"height": 1})
    with pytest.raises(ParameterError, match="k must be"):
        scorer.score({}, k=0)
    with pytest.raises(ParameterError, match="weight"):
        FullDomainScorer.from_dataset(small(), weights={"nope": 1.0})


def test_release_without_hierarchies_has_no_precision():
    frame = pl.DataFrame({"age": [20, 25, 30, 35], "zip": ["a", "b", "a", "b"]})
    dataset = Dataset(frame, Schema.infer(frame))
    release = pl.DataFrame({"age": ["[20, 25]", "[20, 25]", "[30, 35]", "[30, 35]"], "zip": ["*"] * 4})
    loss = information_loss(dataset, release)
    assert loss.precision is None and loss.height is None
    assert loss.ncp == {"age": pytest.approx(5 / 15), "zip": 1.0}
    with pytest.raises(ParameterError, match="precision needs"):
        loss.loss("precision")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.sampled_from([20, 25, 30, 35, 40]), st.sampled_from(["F", "M"]),
                          st.sampled_from(["red", "pink", "blue", "navy", "green"])), min_size=1, max_size=30),
       st.integers(1, 4))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_loss_is_monotone_in_the_levels_without_suppression(rows, k):
    """Without suppression, a coarser node never loses less (nodes nest), and values stay in range."""
    frame = pl.DataFrame(rows, schema=["age", "sex", "colour"], orient="row")
    dataset = Dataset(frame, Schema.of({"age": "numeric", "sex": "categorical", "colour": "categorical"}),
                      {"age": AGE, "sex": SEX, "colour": COLOUR})
    scorer = FullDomainScorer.from_dataset(dataset)
    grid = list(itertools.product(range(3), range(2), range(3)))
    results = {levels: scorer.score(levels) for levels in grid}
    for levels, loss in results.items():
        assert 0.0 <= loss.gcp <= 1.0 and 0.0 <= loss.entropy_normalized <= 1.0 + 1e-12
        for i in range(3):
            finer = list(levels)
            if finer[i] == 0:
                continue
            finer[i] -= 1
            smaller = results[tuple(finer)]
            assert smaller.gcp <= loss.gcp + 1e-12
            assert smaller.entropy <= loss.entropy + 1e-9
            assert smaller.discernibility <= loss.discernibility
        suppressed = scorer.score(levels, k=k)
        assert suppressed.gcp >= loss.gcp - 1e-12
        assert suppressed.released_rows + suppressed.suppressed_rows == len(rows)


def test_a_single_value_domain_loses_nothing_when_kept():
    frame = pl.DataFrame({"age": [30, 30, 30], "sex": ["F", "F", "M"]})
    dataset = Dataset(frame, Schema.of({"age": "numeric", "sex": "categorical"}),
                      {"age": intervals("age", [30], widths=[10]), "sex": SEX})
    kept = FullDomainScorer.from_dataset(dataset).score({"age": 0})
    assert kept.ncp["age"] == 0.0
    assert information_loss(dataset, frame).ncp["age"] == 0.0
