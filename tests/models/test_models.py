"""Syntactic models against references written here from the definitions: Python grouping of
rows, and the Earth Mover's Distance solved as a transportation linear program (scipy)."""

from __future__ import annotations

import math
from collections import Counter, defaultdict

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from crowdsafe import models
from crowdsafe.data import Dataset, Hierarchy, Schema
from crowdsafe.errors import ParameterError
from crowdsafe.models import closeness, disclosure, diversity

COLOURS = ["red", "pink", "blue", "navy", "green"]
COLOUR = Hierarchy.from_columns(
    "colour", COLOURS, [["warm", "warm", "cool", "cool", "green"], ["*"] * 5],
)


def table(rows) -> Dataset:
    frame = pl.DataFrame(rows, schema={"a": pl.String, "b": pl.Int64, "colour": pl.String, "score": pl.Int64},
                         orient="row")
    schema = Schema.of({"a": "categorical", "b": "numeric", "colour": "categorical", "score": "numeric"},
                       qi=["a", "b"], sensitive=["colour", "score"])
    return Dataset(frame, schema, {"colour": COLOUR})


def groups(rows) -> dict:
    out = defaultdict(list)
    for a, b, colour, score in rows:
        out[(a, b)].append((colour, score))
    return dict(out)


def lp_emd(q: list[float], p: list[float], distance: np.ndarray) -> float:
    """EMD as the optimal transport from q to p (an independent LP solve)."""
    m = len(p)
    equalities = []
    for i in range(m):  # mass leaving i equals q_i
        row = np.zeros((m, m))
        row[i, :] = 1
        equalities.append(row.ravel())
    for j in range(m):  # mass arriving at j equals p_j
        row = np.zeros((m, m))
        row[:, j] = 1
        equalities.append(row.ravel())
    result = linprog(distance.ravel(), A_eq=np.array(equalities), b_eq=np.array(q + p), bounds=(0, None),
                     method="highs")
    assert result.success
    return float(result.fun)


def hierarchy_distance() -> np.ndarray:
    height = COLOUR.height
    d = np.zeros((5, 5))
    for i in range(5):
        for j in range(5):
            level = next(lv for lv in range(height + 1) if COLOUR.leaf_map(lv)[i] == COLOUR.leaf_map(lv)[j])
            d[i, j] = level / height
    return d


ROWS = st.lists(
    st.tuples(st.sampled_from(["x", "y", None]), st.integers(0, 2), st.sampled_from(COLOURS), st.integers(1, 4)),
    min_size=1, max_size=40,
)


@pytest.mark.slow
@settings(max_examples=40, deadline=None)
@given(ROWS, st.integers(1, 3))
def test_models_match_definitions(rows, l):
    data = table(rows)
    classes = models.EquivalenceClasses(data)
    grouped = groups(rows)
    parts = list(grouped.values())
    n = len(rows)
    assert classes.k == min(len(g) for g in parts)
    assert classes.n_classes == len(parts)  # a missing 'a' is a value of its own
    colour = classes.sensitive("colour")
    one_pass = models.EquivalenceClasses(data, sensitive=["colour", "score"])  # classes + colour in one group-by
    assert np.array_equal(one_pass.sizes, classes.sizes)
    for name in ("colour", "score"):
        a, b = one_pass.sensitive(name), classes.sensitive(name)
        for field in ("cls", "code", "count", "overall"):
            assert np.array_equal(getattr(a, field), getattr(b, field)), (name, field)
    overall = Counter(c for _, _, c, _ in rows)
    table_p = {v: overall[v] / n for v in COLOURS}
    present = [v for v in COLOURS if overall[v]]

    expected_distinct, expected_entropy, expected_c = [], [], []
    expected_equal, expected_hier, expected_delta, expected_delta_present = [], [], [], []
    expected_beta, expected_enhanced = [], []
    h_distance = hierarchy_distance()
    equal_distance = 1.0 - np.eye(5)
    for g in parts:
        counts = Counter(c for c, _ in g)
        q = {v: counts[v] / len(g) for v in COLOURS}
        expected_distinct.append(len(counts))
        expected_entropy.append(math.exp(-sum(x * math.log(x) for x in q.values() if x > 0)))
        r = sorted(counts.values(), reverse=True)
        tail = sum(r[l - 1:])
        expected_c.append(r[0] / tail if tail else math.inf)
        qv, pv = [q[v] for v in COLOURS], [table_p[v] for v in COLOURS]
        expected_equal.append(lp_emd(qv, pv, equal_distance))
        expected_hier.append(lp_emd(qv, pv, h_distance))
        ratios = [abs(math.log(q[v] / table_p[v])) if q[v] > 0 else math.inf for v in present]
        expected_delta.append(max(ratios))
        expected_delta_present.append(max(x for x in ratios if x != math.inf))
        gains = [((q[v] - table_p[v]) / table_p[v], table_p[v]) for v in present if q[v] > table_p[v]]
        beta = max((gain for gain, _ in gains), default=0.0)
        expected_beta.append(beta)
        expected_enhanced.append(beta if all(gain <= -math.log(p) for gain, p in gains) else math.inf)

    published = classes.published()
    library_keys = list(zip(published.get_column("a").to_list(), published.get_column("b").to_list()))
    order = [library_keys.index(key) for key in grouped]  # the library's class of each reference group
    assert list(diversity.distinct_values(colour)[order]) == expected_distinct
    np.testing.assert_allclose(diversity.entropy_values(colour)[order], expected_entropy)
    np.testing.assert_allclose(diversity.recursive_c_bounds(colour, l)[order], expected_c)
    np.testing.assert_allclose(closeness.equal_emd(colour)[order], expected_equal, atol=1e-7)
    np.testing.assert_allclose(closeness.hierarchical_emd(colour, COLOUR)[order], expected_hier, atol=1e-7)
    np.testing.assert_allclose(disclosure.delta_values(colour)[order], expected_delta)
    np.testing.assert_allclose(disclosure.delta_present_values(colour)[order], expected_delta_present, atol=1e-12)
    np.testing.assert_allclose(disclosure.beta_values(colour)[order], expected_beta, atol=1e-12)
    np.testing.assert_allclose(disclosure.enhanced_beta_values(colour)[order], expected_enhanced, atol=1e-12)

    # ordered distance on the numeric sensitive attribute, against the LP with |i-j|/(m-1)
    scores = sorted({s for *_, s in rows})
    m = len(scores)
    score_overall = Counter(s for *_, s in rows)
    ordered = closeness.ordered_emd(classes.sensitive("score"))[order]
    for g, value in zip(parts, ordered):
        if m == 1:
            assert value == 0
            continue
        counts = Counter(s for _, s in g)
        d = np.abs(np.subtract.outer(np.arange(m), np.arange(m))) / (m - 1)
        expected = lp_emd([counts[s] / len(g) for s in scores], [score_overall[s] / n for s in scores], d)
        assert value == pytest.approx(expected, abs=1e-7)



def test_tables_too_wide_for_a_64_bit_key_use_the_multi_column_group_by():
    rng = np.random.default_rng(3)
    columns = {f"q{i}": rng.integers(0, 1000, 1200) for i in range(7)}  # 1000^7 > 2^63
    columns["q0"][:600] = 0
    for name in columns:
        columns[name][600:] = columns[name][:600]  # every tuple twice
    frame = pl.DataFrame({**columns, "s": rng.integers(0, 3, 1200)})
    data = Dataset(frame, Schema.infer(frame))
    qi = [f"q{i}" for i in range(7)]
    classes = models.EquivalenceClasses(data, qi, sensitive=["s"])
    reference = Counter(frame.select(qi).iter_rows())
    assert sorted(classes.sizes.tolist()) == sorted(reference.values())
    assert classes.k == 2
    pairs = Counter(frame.select([*qi, "s"]).iter_rows())
    assert int(classes.sensitive("s").count.sum()) == 1200
    assert len(classes.sensitive("s").cls) == len(pairs)


def test_sensitive_counts_from_a_searchs_own_classes():
    """A lattice search maps frequency-table rows to classes itself and asks for the models."""
    rows = [("x", 0, "red", 1), ("x", 0, "blue", 2), ("y", 1, "red", 3), ("y", 1, "red", 3), ("y", 2, "navy", 1)]
    data = table(rows)
    direct = models.EquivalenceClasses(data, ["a"]).sensitive("colour")
    encoded = data.encoded("colour")
    class_of_row = np.array([0, 0, 1, 1, 1])  # classes by 'a' only, rows in table order
    built = models.SensitiveCounts.from_counts("colour", encoded.dictionary, class_of_row, encoded.codes,
                                               np.ones(5, dtype=np.int64))
    for field in ("cls", "code", "count", "class_sizes", "overall"):
        assert np.array_equal(getattr(built, field), getattr(direct, field)), field
    np.testing.assert_allclose(closeness.hierarchical_emd(built, COLOUR), closeness.hierarchical_emd(direct, COLOUR))
    with pytest.raises(ParameterError, match="every class"):
        models.SensitiveCounts.from_counts("colour", encoded.dictionary, np.array([0, 2]), np.array([0, 1]), np.ones(2))
