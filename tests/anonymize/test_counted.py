"""Apply on a frequency table (what the Spark engine's driver runs) equals Apply on the rows."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.anonymize.apply import apply
from crowdsafe.anonymize.cells import cell_table
from crowdsafe.anonymize.counted import _count_by_leaf_expressions, _count_physical, apply_counts, counted
from crowdsafe.anonymize.publish import prepare_dataset
from crowdsafe.anonymize.recoding import GeneralizationScheme
from crowdsafe.data import Hierarchy, load
from crowdsafe.errors import SchemaError
from crowdsafe.randomness import Randomness
from crowdsafe.selection.mechanism import choose_scheme


@pytest.fixture(scope="module")
def prepared():
    data = load("adult")
    dataset, columns, _ = prepare_dataset(data.with_frame(data.frame.head(6000)))
    return dataset, columns


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_apply_on_counts_equals_apply_on_rows(prepared, seed):
    dataset, columns = prepared
    rng = np.random.default_rng(seed)
    levels = {c: int(rng.integers(0, dataset.hierarchies[c].height + 1)) for c in columns}
    k = int(rng.integers(2, 30))
    rows = apply(dataset, GeneralizationScheme.of(dataset, levels, columns), k)
    counts = apply_counts(counted(dataset, columns), levels, k)
    assert (counts.rows_in, counts.rows_published, counts.classes) == (rows.rows_in, rows.rows_published, rows.classes)
    np.testing.assert_array_equal(np.sort(counts.class_sizes), np.sort(rows.class_sizes))
    np.testing.assert_array_equal(np.sort(counts.published_class_sizes), np.sort(rows.published_class_sizes))


def test_the_chooser_reads_a_counted_sample_as_it_reads_the_rows(prepared):
    dataset, columns = prepared
    on_rows = choose_scheme(dataset, columns, 10, 0.3, Randomness(4))
    on_counts = choose_scheme(counted(dataset, columns), columns, 10, 0.3, Randomness(4))
    assert dict(on_rows.scheme.levels) == dict(on_counts.scheme.levels)
    assert on_rows.scored == on_counts.scored
    with pytest.raises(SchemaError, match="counted sample"):
        counted(counted(dataset, columns[:3]), columns)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(rows=st.integers(1, 40), seed=st.integers(0, 2**31), wide=st.booleans(), with_text=st.booleans())
def test_counting_from_physical_codes_equals_the_cell_table(rows, seed, wide, with_text):
    """Categorical (sparse global codes, missing values), Enum, integers (negative, missing,
    or so spread that the codes are densified) and text: the same cells and counts as encoding
    every row (:func:`cell_table`), in the same order."""
    rng = np.random.default_rng(seed)

    def pick(values, missing=0.2):
        return [None if rng.random() < missing else values[int(rng.integers(len(values)))] for _ in range(rows)]

    step = 30_000 if wide else 7  # wide: four such spans overflow 64 bits, so the codes are densified
    enum = pick(["x", "y", "z"], 0.0)
    # (the data layer's encoding needs every category of an Enum covered by its hierarchy)
    categories = sorted(set(enum), reverse=True)
    frame = pl.DataFrame({
        "cat": pl.Series(pick(["a", "b", "c"]), dtype=pl.Categorical),
        "enum": pl.Series(enum, dtype=pl.Enum(categories)),
        "small": pl.Series(pick([-3, 0, 5]), dtype=pl.Int16),
        **{f"int{i}": pl.Series(pick([-step, 0, step]), dtype=pl.Int64) for i in range(4)},
        **({"text": pick(["p", "q"])} if with_text else {}),
    })
    dataset, columns, _ = prepare_dataset(load(frame, qi=list(frame.columns)))
    # a declared hierarchy that lists one value of "small" only: the others go to its missing leaf
    dataset = dataset.with_hierarchies({"small": Hierarchy.from_columns(
        "small", pl.Series("small", [5], dtype=pl.Int16), [["*"]]).absorbing()})
    table = counted(dataset, columns)
    cells = cell_table(dataset, columns)
    assert table.n_rows == rows and table.columns == tuple(columns)
    np.testing.assert_array_equal(table.codes, cells.codes)  # the same cells, in the same order
    np.testing.assert_array_equal(table.counts, cells.counts)
    # the physical codes' path (Categorical and Enum columns, hierarchies that do not absorb) and,
    # with every such column as text, the leaf-code expressions (the safe pipeline's hierarchies
    # absorb): the same cells
    by_physical = _count_physical(dataset, tuple(columns))
    as_text = dataset.with_frame(dataset.frame.with_columns(pl.col("cat", "enum").cast(pl.String)))
    assert _count_by_leaf_expressions(dataset, tuple(columns)) is None  # Categorical: the physical path
    by_expressions = _count_by_leaf_expressions(as_text, tuple(columns))
    assert by_expressions is not None and by_physical is not None
    for codes, counts in (by_expressions, by_physical):
        np.testing.assert_array_equal(codes, cells.codes)
        np.testing.assert_array_equal(counts, cells.counts)


def test_counting_by_expressions_is_held_to_the_cell_table(prepared, monkeypatch):
    """The expression path is what counts the safe pipeline's sample, and a wrong code there
    (each column's first leaf shifted) is caught by the comparison above."""
    dataset, columns = prepared
    cells = cell_table(dataset, columns)
    codes, counts = _count_by_leaf_expressions(dataset, tuple(columns))
    np.testing.assert_array_equal(codes, cells.codes)
    real = Hierarchy.leaf_code_expression
    monkeypatch.setattr(Hierarchy, "leaf_code_expression",
                        lambda self, column, dtype: real(self, column, dtype).replace(0, 1))
    codes, _ = _count_by_leaf_expressions(dataset, tuple(columns))
    assert codes.shape != cells.codes.shape or not np.array_equal(codes, cells.codes)


def test_an_empty_sample_counts_to_an_empty_table(prepared):
    dataset, columns = prepared
    table = counted(dataset.filter_rows(np.zeros(dataset.n_rows, dtype=bool)), columns)
    assert table.n_cells == 0 and table.codes.shape == (0, len(columns))
    applied = apply_counts(table, {c: 0 for c in columns}, 5)
    assert applied.rows_in == 0 and applied.classes == 0
