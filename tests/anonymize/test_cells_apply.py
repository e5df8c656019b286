"""Cell tables, dealing shared cells' rows, recodings and Apply."""

from __future__ import annotations

from collections import Counter
from unittest.mock import patch

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.anonymize import GeneralizationScheme, LocalRecoding, apply, cell_table, classify
from crowdsafe.anonymize.cells import rows_of_split_cells
from crowdsafe.data import Dataset, Schema
from crowdsafe.datasets import adult
from crowdsafe.errors import HierarchyError, ParameterError, SchemaError


def test_cell_table_counts_distinct_tuples_like_a_group_by():
    data = adult()
    qis = data.quasi_identifiers
    cells = cell_table(data, qis, "income")
    expected = Counter(data.frame.select(*qis, "income").iter_rows())
    assert cells.n_cells == len(expected) and cells.counts.sum() == data.n_rows
    assert sorted(cells.counts.tolist()) == sorted(expected.values())
    # every row's cell holds the row's codes
    codes = np.column_stack([data.encoded(c).codes for c in qis])
    assert (cells.codes[cells.row_cell] == codes).all()


@settings(max_examples=100, deadline=None)
@given(st.lists(st.integers(1, 6), min_size=1, max_size=8).flatmap(
    lambda sizes: st.tuples(st.just(sizes), st.lists(st.integers(0, 3), min_size=len(sizes), max_size=len(sizes)),
                            st.randoms(use_true_random=False))))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_shared_cells_deal_each_piece_exactly_its_rows(case):
    sizes, cuts, rnd = case
    rows = [cell for cell, size in enumerate(sizes) for _ in range(size)]
    rnd.shuffle(rows)
    row_cell = np.asarray(rows)
    pieces = []  # (cell, count, class)
    for cell, (size, cut) in enumerate(zip(sizes, cuts)):
        cut = min(cut, size - 1)
        parts = [cut, size - cut] if cut else [size]
        for part in parts:
            pieces.append((cell, part, len(pieces)))
    rnd.shuffle(pieces)
    cell, count, cls = (np.asarray(x) for x in zip(*pieces))
    result = rows_of_split_cells(row_cell, cell, count, cls)
    got = Counter(result.tolist())
    assert all(got[c] == n for c, n in zip(cls.tolist(), count.tolist()))
    assert all(cell[list(cls).index(r)] == row_cell[i] for i, r in enumerate(result.tolist()))


def small():
    frame = pl.DataFrame({"name": ["a", "b", "c", "d", "e"], "age": [30, 31, 32, 50, 51],
                          "job": ["x", "x", "x", "y", "y"]})
    schema = Schema.of({"name": "categorical", "age": "numeric", "job": "categorical"}, qi=["age", "job"],
                       identifiers=["name"])
    from crowdsafe.data import intervals

    return Dataset(frame, schema, {"age": intervals("age", range(0, 100), widths=[10, 50])})


def test_apply_suppresses_rare_tuples_and_drops_identifiers():
    data = small()
    scheme = GeneralizationScheme.of(data, {"age": 1, "job": 0})
    applied = apply(data, scheme, 3)
    assert applied.frame.columns == ["age", "job"]  # the identifier is not published
    assert applied.frame.rows() == [("[30, 40)", "x")] * 3
    assert applied.rows_suppressed == 2 and applied.classes == 1
    assert applied.kept.tolist() == [True, True, True, False, False]
    with pytest.raises(ParameterError, match="suppress 2 of 5 rows"):
        apply(data, scheme, 3, suppression_limit=0.2)
    first = classify(data, scheme, 3)  # suppression known before any table is built
    assert first.rows_suppressed == 2 and first.suppression_rate == 0.4
    assert apply(data, first, 3).frame.equals(applied.frame)
    top = apply(data, GeneralizationScheme.of(data, {"age": 3, "job": 0}), 2)
    assert top.rows_suppressed == 0
    untouched = apply(data, GeneralizationScheme.of(data, {"age": 0, "job": 0}), 1)
    assert untouched.frame.schema["age"] == pl.Int64  # a column left as it was keeps its type


def test_scheme_and_local_recoding_errors():
    data = small()
    with pytest.raises(HierarchyError, match="no hierarchy"):
        GeneralizationScheme.of(data, {"age": 1, "job": 1})
    with pytest.raises(HierarchyError, match="levels 0..3"):
        GeneralizationScheme.of(data, {"age": 4, "job": 0})
    with pytest.raises(ParameterError, match="k must be"):
        apply(data, GeneralizationScheme.of(data, {"age": 1}), 0)
    with pytest.raises(ParameterError, match="suppression limit"):
        apply(data, GeneralizationScheme.of(data, {"age": 1}), 2, suppression_limit=1.5)
    local = LocalRecoding("test", np.zeros(5, dtype=np.int64), {"age": pl.Series(["[30, 51]"])})
    assert apply(data, local, 5).frame.get_column("age").to_list() == ["[30, 51]"] * 5
    with pytest.raises(SchemaError, match="only recodes its own rows"):
        apply(data.with_frame(data.frame.head(4)), local, 1)


def test_constraint_checks_in_blocks_agree_with_one_matrix():
    from crowdsafe.anonymize.constraints import classes_satisfying, sensitive_constraints

    data = adult().with_roles(sensitive=["occupation"])
    constraints = sensitive_constraints(data, "occupation", l=5, t=0.35)
    rng = np.random.default_rng(5)
    classes = rng.integers(0, 3000, data.n_rows)
    codes = data.encoded("occupation").codes.astype(np.int64)
    whole = classes_satisfying(constraints, classes, codes, 3000)
    blocks = classes_satisfying(constraints, classes, codes, 3000, block_cells=97)
    assert (whole == blocks).all() and 0 < whole.sum() < 3000


@settings(max_examples=30, deadline=None)
@given(sizes=st.lists(st.integers(1, 6), min_size=1, max_size=4), n=st.integers(1, 200), seed=st.integers(0, 2**31))
def test_dense_ids_rank_tuples_lexicographically_on_every_path(sizes, n, seed):
    """Small key spaces are ranked through a table, large ones by a sort: same ids either way."""
    from crowdsafe.anonymize.cells import dense_ids

    rng = np.random.default_rng(seed)
    columns = [rng.integers(0, s, n) for s in sizes]
    ids, m = dense_ids(columns, sizes)  # span <= 6**4: the table path
    tuples = list(zip(*[c.tolist() for c in columns]))
    ranks = {t: i for i, t in enumerate(sorted(set(tuples)))}
    assert m == len(ranks) and ids.tolist() == [ranks[t] for t in tuples]
    wide_sizes = [s * 10**4 for s in sizes] if len(sizes) > 1 else [10**9]
    wide = dense_ids(columns, wide_sizes)  # a sort path (NumPy's sort of packed keys at this size)
    assert wide[1] == m and wide[0].tolist() == ids.tolist()
    with patch("crowdsafe.anonymize.cells.DENSE_BY_NUMPY", 0):  # Polars' rank, as for large tables
        by_polars = dense_ids(columns, wide_sizes)
    assert by_polars[1] == m and by_polars[0].tolist() == ids.tolist()
