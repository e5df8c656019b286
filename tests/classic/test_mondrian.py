"""Mondrian against a slow reference implementation on Adult, and its documented behaviour."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reference import ref_attributes, reference_mondrian, reference_ncp
from strategies import tables

from crowdsafe.anonymize import apply, cell_table
from crowdsafe.anonymize.constraints import NO_CONSTRAINTS, sensitive_constraints
from crowdsafe.classic import anonymize_dataset, mondrian
from crowdsafe.classic.attributes import describe_attributes
from crowdsafe.classic.mondrian_partition import _Partitioner, partition
from crowdsafe.data import Dataset, Schema, grouping
from crowdsafe.datasets import adult
from crowdsafe.errors import ParameterError, SchemaError

QIS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]


@pytest.fixture(scope="module")
def adult_complete():
    return adult(drop_missing=True)


@pytest.fixture(scope="module")
def reference_input(adult_complete):
    rows = list(adult_complete.frame.select(QIS).iter_rows())
    return rows, ref_attributes(adult_complete, QIS)


@pytest.mark.slow
@pytest.mark.parametrize("k, relaxed", [(5, False), (10, False), (50, False), (10, True)])
def test_partitions_and_ncp_match_the_reference_on_adult(adult_complete, reference_input, k, relaxed):
    rows, attrs = reference_input
    expected = reference_mondrian(rows, attrs, k, relaxed=relaxed)
    release = anonymize_dataset(adult_complete, "mondrian", k, mode="relaxed" if relaxed else "strict")
    assert release.recoding.details["partitions"] == len(expected)
    sizes = np.bincount(release.recoding.class_of_row)
    assert sorted(sizes.tolist()) == sorted(len(p) for p in expected)
    assert release.utility().gcp == pytest.approx(reference_ncp(expected, attrs), abs=1e-12)


def _classes_as_rows(rows: list[tuple], class_of_row: np.ndarray) -> list[tuple]:
    """The partition as a sorted list of classes, each the sorted tuple of its rows' values."""
    classes: dict[int, list[tuple]] = {}
    for row, cls in zip(rows, class_of_row.tolist()):
        classes.setdefault(cls, []).append(row)
    return sorted(tuple(sorted(members)) for members in classes.values())


@pytest.mark.parametrize("sample, k", [(0, 2), (1, 3), (2, 7), (3, 25)])
def test_strict_partitions_are_exactly_the_references(adult_complete, sample, k):
    # Not only sizes and NCP: every class holds exactly the rows the reference puts together
    # (strict cuts leave no choice), on samples of Adult where cells hold one or several rows.
    picked = np.random.default_rng(sample).choice(adult_complete.n_rows, size=1500, replace=False)
    data = adult_complete.with_frame(adult_complete.frame[np.sort(picked)])
    rows = list(data.frame.select(QIS).iter_rows())
    expected = reference_mondrian(rows, ref_attributes(data, QIS), k)
    ours = mondrian(data, k, columns=QIS).class_of_row
    assert _classes_as_rows(rows, ours) == sorted(tuple(sorted(p)) for p in expected)


def test_strict_partitions_match_the_reference_with_ranks_wider_than_a_byte(adult_complete):
    # fnlwgt has thousands of distinct values: ranks are stored in 16 bits, not 8
    picked = np.random.default_rng(4).choice(adult_complete.n_rows, size=1500, replace=False)
    data = adult_complete.with_frame(adult_complete.frame[np.sort(picked)])
    qis = ["fnlwgt", "education", "sex"]
    cells = cell_table(data, qis)
    partitioner = _Partitioner(cells, describe_attributes(data, cells), 3, "strict", NO_CONSTRAINTS)
    assert partitioner.ranks_by_cell.dtype == np.uint16
    rows = list(data.frame.select(qis).iter_rows())
    expected = reference_mondrian(rows, ref_attributes(data, qis), 3)
    ours = mondrian(data, 3, columns=qis).class_of_row
    assert _classes_as_rows(rows, ours) == sorted(tuple(sorted(p)) for p in expected)


def test_each_partition_publishes_the_range_of_its_own_rows():
    # Cut on age at the median leaves the right part with incomes 10..20 only; a parent's
    # range [10, 1000] would claim values this class does not hold.
    frame = pl.DataFrame({
        "age": [20, 21, 22, 23, 60, 61, 62, 63],
        "income": [1000, 999, 998, 997, 10, 11, 12, 20],
    })
    data = Dataset(frame, Schema.of({"age": "numeric", "income": "numeric"}))
    release = anonymize_dataset(data, "mondrian", 4)
    published = sorted(release.frame.select("age", "income").unique().iter_rows())
    assert published == [("[20, 23]", "[997, 1000]"), ("[60, 63]", "[10, 20]")]


def test_an_extreme_value_shows_in_the_published_range():
    # The literature's membership example: one net worth of 35M among values below 10M.
    worth = [100_000 * (i + 1) for i in range(19)] + [35_000_000]
    frame = pl.DataFrame({"worth": worth})
    data = Dataset(frame, Schema.of({"worth": "numeric"}))
    release = anonymize_dataset(data, "mondrian", 5)
    assert any(cell.endswith(", 35000000]") for cell in release.frame.get_column("worth").to_list())


def test_categorical_cells_are_nodes_or_sets():
    frame = pl.DataFrame({"colour": ["red", "orange", "red", "orange", "blue", "green", "blue", "green"]})
    hierarchy = grouping("colour", [{"warm": ["red", "orange", "yellow"], "cold": ["green", "blue"]}])
    data = Dataset(frame, Schema.of({"colour": "categorical"}), {"colour": hierarchy})
    nodes = anonymize_dataset(data, "mondrian", 4, categorical="node").frame.get_column("colour")
    sets = anonymize_dataset(data, "mondrian", 4, categorical="set").frame.get_column("colour")
    assert sorted(set(nodes.to_list())) == ["cold", "warm"]
    assert sorted(set(sets.to_list())) == ["{blue, green}", "{orange, red}"]
    # a categorical attribute without hierarchy is cut in its order and published as sets
    plain = Dataset(frame, Schema.of({"colour": "categorical"}))
    cells = set(anonymize_dataset(plain, "mondrian", 4).frame.get_column("colour").to_list())
    assert cells == {"{blue, green}", "{orange, red}"}


def test_a_single_value_class_publishes_the_value_itself():
    frame = pl.DataFrame({"age": [30] * 5 + [40] * 5})
    data = Dataset(frame, Schema.of({"age": "numeric"}))
    assert set(anonymize_dataset(data, "mondrian", 5).frame.get_column("age").to_list()) == {"30", "40"}


def test_strict_cut_below_a_heavy_largest_value():
    # the median is the largest value: the cut is made below it
    frame = pl.DataFrame({"x": [1, 2, 3, 9, 9, 9, 9, 9]})
    data = Dataset(frame, Schema.of({"x": "numeric"}))
    cells = sorted(set(anonymize_dataset(data, "mondrian", 3).frame.get_column("x").to_list()))
    assert cells == ["9", "[1, 3]"]


def test_relaxed_cuts_share_the_median_value_and_keep_row_counts():
    frame = pl.DataFrame({"x": [5] * 10})
    data = Dataset(frame, Schema.of({"x": "numeric"}))
    # no attribute has room to cut: one class
    assert anonymize_dataset(data, "mondrian", 2, mode="relaxed").classes == 1
    frame = pl.DataFrame({"x": [1, 5, 5, 5, 5, 5, 5, 9]})
    data = Dataset(frame, Schema.of({"x": "numeric"}))
    strict = anonymize_dataset(data, "mondrian", 4, mode="strict")
    relaxed = anonymize_dataset(data, "mondrian", 4, mode="relaxed")
    assert strict.classes == 1  # no strict cut leaves 4 rows on each side
    assert relaxed.classes == 2 and sorted(relaxed.applied.published_class_sizes.tolist()) == [4, 4]
    assert sorted(set(relaxed.frame.get_column("x").to_list())) == ["[1, 5]", "[5, 9]"]


def test_constraints_stop_cuts_that_would_break_l_diversity(adult_complete):
    data = adult_complete.with_roles(qi=[c for c in QIS if c != "occupation"], sensitive=["occupation"])
    plain = anonymize_dataset(data, "mondrian", 5)
    diverse = anonymize_dataset(data, "mondrian", 5, l=4)
    assert diverse.classes < plain.classes
    constraints = sensitive_constraints(data, "occupation", l=4)
    codes = data.encoded("occupation").codes
    hist = np.zeros((diverse.applied.class_sizes.size, len(constraints.reference)))
    np.add.at(hist, (diverse.applied.class_of_row, codes), 1)
    assert constraints.satisfied(hist).all()


def test_errors():
    frame = pl.DataFrame({"age": [1, 2, 3], "s": ["a", "a", "a"]})
    data = Dataset(frame, Schema.of({"age": "numeric", "s": "categorical"}, qi=["age"], sensitive=["s"]))
    with pytest.raises(ParameterError, match="fewer than k = 5"):
        anonymize_dataset(data, "mondrian", 5)
    with pytest.raises(ParameterError, match="whole table does not satisfy entropy"):
        anonymize_dataset(data, "mondrian", 1, l=2)
    with pytest.raises(ParameterError, match="'strict' or 'relaxed'"):
        anonymize_dataset(data, "mondrian", 1, mode="loose")
    with pytest.raises(ParameterError, match="k must be a whole number"):
        anonymize_dataset(data, "mondrian", 0)
    with pytest.raises(ParameterError, match="k must be a whole number"):
        mondrian(data, 0)  # the fitter on its own refuses it too
    missing = Dataset(pl.DataFrame({"age": [1, None, 3]}), Schema.of({"age": "numeric"}))
    with pytest.raises(SchemaError, match="missing values"):
        anonymize_dataset(missing, "mondrian", 1)


def test_partition_runs_on_cells_and_apply_maps_rows(adult_complete):
    cells = cell_table(adult_complete, QIS)
    result = partition(cells, describe_attributes(adult_complete, cells), 10)
    assert result.count.sum() == adult_complete.n_rows
    recoding = mondrian(adult_complete, 10, cells=cells)
    applied = apply(adult_complete, recoding, 10)
    assert applied.rows_suppressed == 0 and applied.classes == result.n_parts


@pytest.mark.parametrize("l, t, distance", [(3.0, None, None), (None, 0.25, "equal"), (None, 0.2, "hierarchical"),
                                            (2.5, 0.3, None)])
def test_l_and_t_releases_pass_the_models_checks(adult_complete, l, t, distance):
    from crowdsafe import models

    data = adult_complete.with_roles(qi=[c for c in QIS if c != "occupation"], sensitive=["occupation"])
    release = anonymize_dataset(data, "mondrian", 5, l=l, t=t, distance=distance)
    qis = list(release.quasi_identifiers)
    if l is not None:
        assert models.entropy_l_diversity(release.frame, "occupation", qis, original=data) >= l * (1 - 1e-9)
    if t is not None:
        # the release read back with the sensitive attribute's hierarchy, as `check` would with a schema
        schema = Schema.infer(release.frame).with_roles(qi=qis, sensitive=["occupation"])
        table = Dataset(release.frame, schema, {"occupation": data.hierarchies["occupation"]})
        for ground in ("equal", "hierarchical") if distance != "hierarchical" else ("hierarchical",):
            assert models.t_closeness(table, "occupation", qis, ground=ground, original=data) <= t + 1e-9


def _partitions(cells, attributes, k, mode, at_once):
    """Mondrian's partitioning with every level cut at once (``at_once``) or attempt by attempt."""
    partitioner = _Partitioner(cells, attributes, k, mode, NO_CONSTRAINTS)
    partitioner.AT_ONCE_FROM = 0 if at_once else 1 << 62
    partitioner.AT_ONCE_PIECES = (0, 1 << 62)
    partitioner.AT_ONCE_AFTER = 0
    return partitioner.run()


def _assert_same_partitioning(one, other):
    assert one.n_parts == other.n_parts
    for field in ("cell", "count", "part"):  # the same pieces, in the same order, numbered alike
        assert np.array_equal(getattr(one, field), getattr(other, field)), field


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.booleans().flatmap(lambda flat: tables(max_rows=120, with_shape_hierarchy=flat)),
       k=st.integers(1, 5), mode=st.sampled_from(["strict", "relaxed"]))
@pytest.mark.slow
def test_cutting_a_level_at_once_makes_the_attempt_by_attempt_partitions(data, k, mode):
    # Deciding every partition's cut from one count grid must give exactly the partitions, the
    # pieces of relaxed cuts and the numbering of trying attribute after attribute.
    assume(data.n_rows >= k)
    qis = ["age", "colour", "shape"]
    cells = cell_table(data, qis)
    attributes = describe_attributes(data, cells)
    _assert_same_partitioning(_partitions(cells, attributes, k, mode, True),
                              _partitions(cells, attributes, k, mode, False))


@pytest.mark.parametrize("k, mode", [(2, "strict"), (4, "relaxed"), (7, "strict"), (30, "relaxed")])
def test_cutting_a_level_at_once_on_adult(adult_complete, k, mode):
    cells = cell_table(adult_complete, QIS)
    attributes = describe_attributes(adult_complete, cells)
    _assert_same_partitioning(_partitions(cells, attributes, k, mode, True),
                              _partitions(cells, attributes, k, mode, False))
