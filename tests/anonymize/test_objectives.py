"""The selection's objectives: each score's sensitivity and monotonicity, checked on neighbouring
samples (one row removed, including a class crossing the k threshold), the classification and
entropy scores against brute-force evaluations from their definitions, and the entropy choice's
frequencies against the exponential mechanism's."""

from __future__ import annotations

import itertools
import math
from collections import Counter
from fractions import Fraction

import mpmath
import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from mpmath import ctx_iv
from scipy import stats
from strategies import OUTCOMES, tables

from crowdsafe.data import Dataset, Schema, flat, intervals
from crowdsafe.errors import ParameterError
from crowdsafe.randomness import Randomness
from crowdsafe.selection import bound, search
from crowdsafe.selection.entropy_score import EntropyScorer
from crowdsafe.selection.gumbel import exact_gumbel_argmax, random_bits
from crowdsafe.selection.mechanism import choose_scheme
from crowdsafe.selection.score import (
    OBJECTIVES,
    discernibility_score,
    make_objective,
)
from crowdsafe.selection.search import lattice_scores

COLUMNS = ["age", "colour", "shape", "outcome"]


def _with_outcome_hierarchy(data: Dataset) -> Dataset:
    return data.with_roles(qi=COLUMNS, sensitive=[]).with_hierarchies({"outcome": flat("outcome", OUTCOMES)})


def _without_row(data: Dataset, i: int) -> Dataset:
    return data.with_frame(data.frame.filter(pl.int_range(pl.len()) != i))


def _objective(name: str):
    return make_objective(name, "outcome" if name == "classification" else None)


def _check_neighbours(full: np.ndarray, reduced: np.ndarray, name: str, k: int, data: Dataset) -> float:
    """Assert the scores of neighbouring samples differ by at most the sensitivity (and in one
    direction when monotone); return the largest change over the bound."""
    objective = _objective(name).for_columns(COLUMNS, data.hierarchies)
    bound = objective.sensitivity_units(k)
    if objective.exact:
        change = [int(a) - int(b) for a, b in zip(full, reduced)]
        slack = 0.0
    else:  # float scores: each within a relative 1e-12 of the exact one here, far below this slack
        change = [float(a) - float(b) for a, b in zip(full, reduced)]
        slack = 1e-9 * (1.0 + max(abs(float(x)) for x in [*full, *reduced]))
    assert max(abs(c) for c in change) <= bound + slack
    if objective.monotone:  # a row removed never raises a score
        assert min(change) >= 0
    return max(abs(c) for c in change) / bound


@pytest.mark.parametrize("name", list(OBJECTIVES))
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=2, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 6),
       drop=st.integers(0, 10**6))
@pytest.mark.slow
def test_removing_a_row_moves_every_score_by_at_most_the_sensitivity(name, data, k, drop):
    data = _with_outcome_hierarchy(data)
    objective = _objective(name)
    _, full = lattice_scores(data, COLUMNS, k, objective)
    _, reduced = lattice_scores(_without_row(data, drop % data.n_rows), COLUMNS, k, objective)
    _check_neighbours(full, reduced, name, k, data)


def _crossing_table(k: int) -> Dataset:
    """A class of exactly k rows (age 30, red, circle, yes) beside a larger one: removing one of the
    k rows takes the class under the threshold at level 0 of every column."""
    rows = [(30, "red", "circle", "yes")] * k + [(50, "blue", "square", "no")] * (3 * k)
    frame = pl.DataFrame(rows, schema=COLUMNS, orient="row")
    schema = Schema.of({"age": "numeric", "colour": "categorical", "shape": "categorical", "outcome": "categorical"},
                       qi=COLUMNS)
    hierarchies = {"age": intervals("age", range(18, 61), widths=[10, 20]),
                   "colour": flat("colour", ["red", "blue"]), "shape": flat("shape", ["circle", "square"]),
                   "outcome": flat("outcome", ["yes", "no"])}
    return Dataset(frame, schema, hierarchies)


@pytest.mark.parametrize("name", list(OBJECTIVES))
@pytest.mark.parametrize("k", [2, 5, 40])
def test_a_class_crossing_k_moves_the_score_by_at_most_the_sensitivity(name, k):
    data = _crossing_table(k)
    objective = _objective(name)
    _, full = lattice_scores(data, COLUMNS, k, objective)
    _, reduced = lattice_scores(_without_row(data, 0), COLUMNS, k, objective)
    _check_neighbours(full, reduced, name, k, data)
    # the step score the ramp replaces (rows in classes of >= k) jumps by k on this very pair:
    # a check against Δ = O(1) would catch it
    sizes = Counter(data.frame.rows())
    smaller = Counter(_without_row(data, 0).frame.rows())
    step = sum(c for c in sizes.values() if c >= k) - sum(c for c in smaller.values() if c >= k)
    assert step == k


def test_the_discernibility_step_stays_within_twice_the_cap():
    """|f(c + 1) − f(c)| ≤ 2C with C = 10k for every class size up to 3C (the proof's claim)."""
    for k in (2, 3, 7, 73, 300):
        costs = [-discernibility_score(np.array([c]), k) for c in range(30 * k)]
        steps = np.diff(np.array(costs, dtype=object))
        assert max(abs(int(s)) for s in steps) <= 2 * 10 * k * k  # k · f in q_int units


def _brute_force_classification(data: Dataset, k: int) -> dict[tuple[int, ...], int]:
    """max_{y0} Σ_G [max_y max(0, c_Gy − (k − 1)) + min(c_Gy0, k − 1)] of every node (outcome at
    level 0), from the definition, row by row, sharing no code with the selection."""
    hierarchies = [data.hierarchies[c] for c in COLUMNS[:-1]]
    rows = data.frame.select(COLUMNS).rows()
    leaf = [{v: i for i, v in enumerate(h.leaves.to_list())} for h in hierarchies]
    scores = {}
    for levels in itertools.product(*[range(h.height + 1) for h in hierarchies]):
        counts: Counter = Counter()
        maps = [h.leaf_map(level).tolist() for h, level in zip(hierarchies, levels)]  # once per node
        for row in rows:
            node = tuple(int(maps[j][leaf[j][row[j]]]) for j in range(len(hierarchies)))
            counts[(node, row[-1])] += 1
        groups = {node for node, _ in counts}
        best = sum(max(max(0, counts[(g, y)] - (k - 1)) for y in OUTCOMES) for g in groups)
        fallback = max(sum(min(counts[(g, y0)], k - 1) for g in groups) for y0 in OUTCOMES)
        scores[levels] = best + fallback
    return scores


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=50, with_shape_hierarchy=True), k=st.integers(2, 5))
def test_the_classification_score_matches_its_definition(data, k):
    data = _with_outcome_hierarchy(data)
    objective = make_objective("classification", "outcome")
    lattice, scores = lattice_scores(data, COLUMNS, k, objective)
    expected = _brute_force_classification(data, k)
    for node, score in zip(lattice.nodes(), scores):
        assert node[-1] == 0  # the target is never generalized
        assert int(score) == expected[tuple(int(x) for x in node[:-1])]


def test_classification_never_generalizes_the_target_and_needs_one():
    data = _crossing_table(5)
    for seed in range(20):
        choice = choose_scheme(data, COLUMNS, 5, 1.0, Randomness(seed), make_objective("classification", "outcome"))
        assert choice.scheme.levels["outcome"] == 0
    with pytest.raises(ParameterError, match="target"):
        make_objective("classification")
    with pytest.raises(ParameterError, match="unknown objective"):
        make_objective("accuracy")
    with pytest.raises(ParameterError, match="not a published column"):
        choose_scheme(data, COLUMNS[:-1], 5, 1.0, Randomness(0), make_objective("classification", "outcome"))


def _raised(tables, levels):
    """The keyed table with column j raised to ``levels[j]`` (the others at level 0)."""
    keys, counts = tables.base_keys, tables.base_counts
    for j, level in enumerate(levels):
        for low in range(level):
            keys, counts = tables.raise_level(keys, counts, j, low, low + 1)
    return keys, counts


def _brute_force_blocks(data: Dataset, k: int) -> list[tuple[int, tuple[int, ...], int]]:
    """(p, levels of the first p quasi-identifiers, the best brute-force score of the block's nodes)
    of every block of the classification lattice (the others free; the target last): with p all of
    them, the block is one node and its best score is that node's score."""
    scores = _brute_force_classification(data, k)
    heights = [data.hierarchies[c].height for c in COLUMNS[:-1]]
    best: dict[tuple[int, ...], int] = {}
    for levels, q in scores.items():
        for fixed in range(len(heights) + 1):
            best[levels[:fixed]] = max(best.get(levels[:fixed], q), q)
    return [(fixed, prefix, best[prefix]) for fixed in range(len(heights) + 1)
            for prefix in itertools.product(*[range(h + 1) for h in heights[:fixed]])]


def _block_violations(data: Dataset, k: int, bound, blocks=None) -> list[tuple]:
    """Every block of the classification lattice (the first p quasi-identifiers fixed, the others
    free; the target last) whose ``bound(tables, levels, p)`` is below the brute-force score of
    one of its nodes, or differs from it where the block is one node. ``blocks``: those of
    :func:`_brute_force_blocks` for this table and k (None: computed here), so that checks of
    several bounds on one table share the brute force."""
    from crowdsafe.selection.tables import KeyedTables

    blocks = _brute_force_blocks(data, k) if blocks is None else blocks
    objective = make_objective("classification", "outcome")
    tables = KeyedTables(data, COLUMNS, objective, k)
    single = len(COLUMNS) - 1
    violations = []
    for fixed, prefix, block_max in blocks:
        value = bound(tables, list(prefix), fixed)
        if value < block_max or (fixed == single and value != block_max):
            violations.append((prefix, value, block_max))
    return violations


def _own_table_bound(tables, prefix, fixed):
    levels = prefix + [0] * (tables.d - len(prefix))
    return bound.block_bound(tables, *_raised(tables, levels), fixed, tables.k)


def _rolled_up_bound(tables, prefix, fixed):
    """The bound children() gives the block, from its parent's table (rolled up)."""
    if fixed == 0:
        return _own_table_bound(tables, prefix, fixed)
    parent = prefix[:-1] + [0] * (tables.d - fixed + 1)
    bounds, exact, _ = bound.children(tables, *_raised(tables, parent), fixed - 1, parent, tables.k)
    return int(bounds[prefix[-1]])


@pytest.mark.parametrize("dense", [True, False])
@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # one patch for all
@pytest.mark.slow
@given(data=tables(min_rows=1, max_rows=50, with_shape_hierarchy=True), k=st.integers(2, 5))
def test_the_classification_block_bounds_hold_for_every_node_of_the_block(data, k, dense, monkeypatch):
    """Both bounds (each block's own table; the parent's, rolled up) are at least the score of
    every node of their block, and exact where the block is one node; ``dense`` false sends every
    table down the path for targets with many values."""
    import crowdsafe.selection.bound as keyed_bounds
    import crowdsafe.selection.score as objectives

    if not dense:
        monkeypatch.setattr(objectives, "DENSE_CELLS_PER_ROW", 0)
        monkeypatch.setattr(keyed_bounds, "DENSE_CELLS_PER_ROW", 0)
    data = _with_outcome_hierarchy(data)
    blocks = _brute_force_blocks(data, k)
    assert _block_violations(data, k, _own_table_bound, blocks) == []
    assert _block_violations(data, k, _rolled_up_bound, blocks) == []


def test_the_block_bound_check_catches_a_bound_that_assumes_coarser_is_worse():
    """The check above can fail: the score of the block's coarsest node (free columns at ``*``) is
    no bound, since a finer node can separate the target values (here shape does: 3 circles a,
    3 squares b, k = 3: the coarsest node scores 3, the node keeping shape 4)."""
    rows = [(30, "red", "circle", "a")] * 3 + [(30, "red", "square", "b")] * 3
    frame = pl.DataFrame(rows, schema=COLUMNS, orient="row")
    schema = Schema.of({"age": "numeric", "colour": "categorical", "shape": "categorical", "outcome": "categorical"},
                       qi=COLUMNS)
    data = Dataset(frame, schema, {"age": intervals("age", range(18, 61), widths=[10, 20]),
                                   "colour": flat("colour", ["red", "blue"]),
                                   "shape": flat("shape", ["circle", "square"]), "outcome": flat("outcome", OUTCOMES)})

    def coarsest_node_score(tables, prefix, fixed):
        levels = prefix + [h for h in tables.heights[fixed:]]
        return tables.score(*_raised(tables, levels), levels, tables.k)

    assert _block_violations(data, 3, _own_table_bound) == []
    assert ((), 3, 4) in _block_violations(data, 3, coarsest_node_score)


def _midpoint_argmax(scale: float, scores: np.ndarray, cells: np.ndarray) -> int:
    """argmax of scale · q + G with G = −log(−log U) at the middle of each 53-bit cell (float64;
    only near-ties could differ from the exact keys)."""
    u = (cells.astype(np.float64) + 0.5) * 2.0**-53
    return int(np.argmax(scale * scores + -np.log(-np.log(u))))


@pytest.mark.parametrize("dense", [True, False])
@settings(max_examples=30, deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])  # one patch for all
@given(data=tables(min_rows=1, max_rows=60, with_shape_hierarchy=True), k=st.integers(2, 5),
       seed=st.integers(0, 2**31))
@pytest.mark.slow
def test_the_classification_search_returns_the_argmax_of_the_brute_force_keys(data, k, seed, dense, monkeypatch):
    """For fixed random bits, the branch and bound under ``classification`` (Δ = 1, monotone: key
    ε1 · q + G) returns the argmax over every candidate node of the brute-force scores plus the
    same Gumbels, at scales from nearly uniform to nearly the argmax of the scores."""
    import crowdsafe.selection.bound as keyed_bounds
    import crowdsafe.selection.score as objectives
    from crowdsafe.randomness import gumbel_cells
    from crowdsafe.selection.search import gumbel_max_over_lattice

    if not dense:
        monkeypatch.setattr(objectives, "DENSE_CELLS_PER_ROW", 0)
        monkeypatch.setattr(keyed_bounds, "DENSE_CELLS_PER_ROW", 0)
    data = _with_outcome_hierarchy(data)
    objective = make_objective("classification", "outcome")
    expected = _brute_force_classification(data, k)
    lattice, _ = lattice_scores(data, COLUMNS, k, objective)
    scores = np.array([expected[tuple(int(x) for x in node[:-1])] for node in lattice.nodes()], dtype=np.float64)
    generator = Randomness(seed).generator
    for scale in (0.01, 0.3, 3.0, 100.0):
        cells = gumbel_cells(generator, lattice.size)
        _, index, _ = gumbel_max_over_lattice(data, COLUMNS, k, scale, cells, random_bits(Randomness(seed)), objective)
        assert index == _midpoint_argmax(scale, scores, cells)


# -- entropy ----------------------------------------------------------------------------------------

def _brute_force_entropy(
    data: Dataset, columns: list[str], k: int, exact: bool = False,
) -> dict[tuple[int, ...], object]:
    """q = −Σ_E [(c − e(c))·B + (e(c)/c)·L(E)] of every node, row by row from the definition
    (selection/score.py): ℓ(r) = Σ_j min(log2 L_j, log2(c_j(N)/c_j(v))), e(c) = c·min(c, k)/k, B the sum
    of the caps. In floats (math.log2, Fractions for the ramp), or with ``exact`` in mpmath at the
    current precision. Shares no code with the selection."""
    hierarchies = [data.hierarchies[c] for c in columns]
    rows = data.frame.select(columns).rows()
    leaf = [{v: i for i, v in enumerate(h.leaves.to_list())} for h in hierarchies]
    codes = [[leaf[j][row[j]] for j in range(len(columns))] for row in rows]

    logs: dict[tuple[int, int], object] = {}  # each log2(p / q) computed once (same precision throughout)

    def log2(p: int, q: int = 1):
        if (p, q) not in logs:
            logs[p, q] = mpmath.log(mpmath.mpf(p) / q, 2) if exact else math.log2(Fraction(p, q))
        return logs[p, q]

    caps = [log2(h.size(0)) if h.size(0) > 1 else 0 for h in hierarchies]
    cap = sum(caps)
    value_count = [Counter(c[j] for c in codes) for j in range(len(columns))]
    scores = {}
    for levels in itertools.product(*[range(h.height + 1) for h in hierarchies]):
        maps = [h.leaf_map(level).tolist() for h, level in zip(hierarchies, levels)]  # once per node
        nodes = [tuple(int(maps[j][c[j]]) for j in range(len(columns))) for c in codes]
        node_count = [Counter(n[j] for n in nodes) for j in range(len(columns))]
        lost = [sum(min(caps[j], log2(node_count[j][n[j]], value_count[j][c[j]])) for j in range(len(columns)))
                for c, n in zip(codes, nodes)]
        classes: dict[tuple, list[int]] = {}
        for i, n in enumerate(nodes):
            classes.setdefault(n, []).append(i)
        total = 0
        for members in classes.values():
            c = len(members)
            e = Fraction(c * min(c, k), k)
            loss = sum(lost[i] for i in members)
            if exact:
                total += mpmath.mpf(c - e.numerator / mpmath.mpf(e.denominator)) * cap \
                    + mpmath.mpf(min(c, k)) / k * loss
            else:
                total += float(c - e) * cap + float(e / c) * loss
        scores[levels] = -total
    return scores


@pytest.mark.slow
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=1, max_rows=40, with_shape_hierarchy=True), k=st.integers(2, 6))
def test_the_entropy_score_matches_its_definition(data, k):
    """Float scores within 1e-9 of the brute force, within their error bound of the interval
    enclosure, and the enclosure (200 bits) within 2^-100 of the brute force in mpmath."""
    from crowdsafe.selection.score import _interval_context

    data = _with_outcome_hierarchy(data)
    objective = make_objective("entropy").for_columns(COLUMNS, data.hierarchies)
    lattice, scores = lattice_scores(data, COLUMNS, k, objective)
    unit = objective.denominator(k)
    expected = _brute_force_entropy(data, COLUMNS, k)
    scorer = EntropyScorer(data, COLUMNS, k, objective)
    iv = _interval_context(200)
    nodes = lattice.nodes()
    with mpmath.workprec(240):
        exact = _brute_force_entropy(data, COLUMNS, k, exact=True)
        for i, (node, score) in enumerate(zip(nodes, scores)):
            levels = tuple(int(x) for x in node)
            assert abs(score / unit - expected[levels]) <= 1e-9 * (1 + abs(expected[levels]))
            if i % 7:  # the enclosure of every seventh node (it is the slow path)
                continue
            enclosure = scorer.interval(levels, iv)
            assert enclosure.a - scorer.error <= score <= enclosure.b + scorer.error
            low, high = mpmath.mpf(enclosure.a) / unit, mpmath.mpf(enclosure.b) / unit
            assert high - low < mpmath.mpf(2) ** -100
            assert abs((low + high) / 2 - exact[levels]) < mpmath.mpf(2) ** -100 * (1 + abs(exact[levels]))


def test_the_entropy_sensitivity_is_b_plus_d_over_ln2_rounded_up():
    data = _crossing_table(5)
    objective = make_objective("entropy").for_columns(COLUMNS, data.hierarchies)
    leaves = [data.hierarchies[c].size(0) for c in COLUMNS]
    with mpmath.workprec(200):
        bound = sum(mpmath.log(n, 2) + 1 / mpmath.log(2) for n in leaves if n >= 2)
        units = int(mpmath.ceil(bound * 2**20))
    assert objective.sensitivity_units(5) == 5 * units
    assert objective.sensitivity(5) == units / 2**20
    assert not objective.monotone and not objective.exact
    with pytest.raises(ParameterError, match="for_columns"):
        make_objective("entropy").sensitivity_units(5)


def test_the_marginal_counts_can_move_the_entropy_by_more_than_b():
    """Adding one row alone in its class (k large) costs B, and its value raises the bits lost by
    the 630 rows that share its node by 630·log2(631/630) ≈ 1.44 more: a sensitivity of B alone
    would be wrong; B + d/ln 2 holds (the proof's term (iii))."""
    leaves = [f"v{i}" for i in range(64)]
    rows = [(leaves[i], "a") for i in range(63) for _ in range(10)]
    frame = pl.DataFrame(rows, schema=["x", "y"], orient="row")
    schema = Schema.of({"x": "categorical", "y": "categorical"}, qi=["x", "y"])
    data = Dataset(frame, schema, {"x": flat("x", leaves), "y": flat("y", ["a", "b"])})
    bigger = data.with_frame(pl.concat([frame, pl.DataFrame([("v63", "b")], schema=["x", "y"], orient="row")]))
    k = 50
    objective = make_objective("entropy").for_columns(["x", "y"], data.hierarchies)
    lattice, before = lattice_scores(data, ["x", "y"], k, objective)
    _, after = lattice_scores(bigger, ["x", "y"], k, objective)
    node = lattice.index((1, 0))  # x generalized to *, y kept
    change = (after[node] - before[node]) / objective.denominator(k)
    cap = math.log2(64) + math.log2(2)
    expected = -cap + 1 / k - 630 * math.log2(631 / 630)  # −B, + a(x)/k (a(x) = log2 2), term (iii)
    assert change == pytest.approx(expected, abs=1e-9)
    assert -change > cap
    assert -change <= objective.sensitivity(k)


def _tiny_entropy_table() -> Dataset:
    """x (3 leaves, flat) × y (2 leaves, flat): a lattice of 4 nodes with distinct scores."""
    rows = [("p", "a")] * 5 + [("q", "a")] * 2 + [("r", "b")] * 3 + [("p", "b")]
    frame = pl.DataFrame(rows, schema=["x", "y"], orient="row")
    schema = Schema.of({"x": "categorical", "y": "categorical"}, qi=["x", "y"])
    return Dataset(frame, schema, {"x": flat("x", ["p", "q", "r"]), "y": flat("y", ["a", "b"])})


@pytest.mark.slow
def test_the_entropy_choice_follows_the_exponential_mechanism(monkeypatch):
    """Frequencies of 2000 choices against exp(ε1 · q / (2Δ)) / Z, q from the brute force and
    Δ = ⌈2^20·(B + d/ln 2)⌉/2^20 recomputed here (chi-square, fixed seed, p-value > 1e-3).

    Every draw goes through choose_scheme; only the scorer of the table (deterministic: float
    scores, error bound, exact integer weights, built by the real class from the same table)
    is built once and handed to each draw, instead of being rebuilt 2000 times (nine tenths of
    the time). The noise (Gumbel cells, fresh bits) and the argmax are drawn anew each time."""
    data = _tiny_entropy_table()
    columns, k, epsilon1 = ["x", "y"], 2, 1.0
    scorer = EntropyScorer(data, columns, k, make_objective("entropy"))

    def the_same_scorer(sample, columns_, k_, objective):
        assert sample is data and list(columns_) == columns and k_ == k and objective == scorer.objective
        return scorer

    monkeypatch.setattr(search, "EntropyScorer", the_same_scorer)
    q = _brute_force_entropy(data, columns, k)
    with mpmath.workprec(200):
        delta = float(mpmath.ceil((mpmath.log(3, 2) + 1 + 2 / mpmath.log(2)) * 2**20)) / 2**20
    nodes = sorted(q)
    weights = np.array([math.exp(epsilon1 * q[node] / (2 * delta)) for node in nodes])
    expected = weights / weights.sum()
    assert expected.min() > 0.03 and expected.max() < 0.7  # a real test of the weights
    randomness = Randomness(11)
    draws = 2000
    counts = Counter()
    for _ in range(draws):
        levels = choose_scheme(data, columns, k, epsilon1, randomness, "entropy").scheme.levels
        counts[(levels["x"], levels["y"])] += 1
    observed = [counts[node] for node in nodes]
    assert stats.chisquare(observed, expected * draws).pvalue > 1e-3


@pytest.mark.slow
def test_real_scores_are_compared_exactly_and_ties_are_fair(monkeypatch):
    """Two nodes in the same 53-bit cell whose real scores differ by 2^-60 (equal floats, error
    bound 1e-12): the winner is the argmax of the exact keys, computed with mpmath at 400 bits; and
    two nodes with the same real score win half the time each (binomial test, fixed seed).

    The 1040 refinements share one mpmath interval context (made per call, about 30 ms, nine
    tenths of a call): the refinement sets its precision each round and keeps nothing else in it,
    so every call compares the same intervals as with a context of its own."""
    shared = ctx_iv.MPIntervalContext()
    monkeypatch.setattr(ctx_iv, "MPIntervalContext", lambda: shared)

    def enclosure(offset):
        return lambda index, iv: iv.log(iv.mpf(3)) / iv.log(iv.mpf(2)) - (offset if index == 1 else 0)

    scale = 2.0**-40
    floats = np.array([math.log2(3), math.log2(3)])
    winners = set()
    for seed in range(40):
        rng = np.random.default_rng(seed)
        cell = int(rng.integers(1, (1 << 53) - 1))
        table = {(node, r): int(rng.integers(0, 2**64, dtype=np.uint64)) for node in (0, 1) for r in range(3)}

        def bits(indices, round_, table=table):
            return np.array([table[(int(i), round_)] for i in indices], dtype=np.uint64)

        with mpmath.workprec(400):
            keys = []
            for node in (0, 1):
                u = (mpmath.mpf(cell) * 2**128 + table[(node, 0)] * mpmath.mpf(2)**64 + table[(node, 1)]
                     + mpmath.mpf(1) / 2) / mpmath.mpf(2)**181
                score = mpmath.log(3, 2) - (mpmath.mpf(2)**-60 if node == 1 else 0)
                keys.append(mpmath.mpf(scale) * score - mpmath.log(-mpmath.log(u)))
        expected = 0 if keys[0] > keys[1] else 1
        got = exact_gumbel_argmax(np.array([0, 1]), floats, np.array([cell, cell]), scale, bits, 1, 1e-12,
                                  enclosure(2.0**-60))
        assert got == expected
        winners.add(got)
    assert winners == {0, 1}
    randomness = Randomness(5)
    cells = np.array([2**40, 2**40], dtype=np.int64)
    trials = 1000
    wins = sum(exact_gumbel_argmax(np.array([0, 1]), floats, cells, 0.1, random_bits(randomness), 1, 1e-12,
                                   enclosure(0)) == 0 for _ in range(trials))
    assert stats.binomtest(wins, trials, 0.5).pvalue > 1e-3


def test_the_entropy_refinement_encloses_the_scores_of_the_contenders():
    """Two nodes of the tiny lattice in the top 53-bit cell (Gumbel intervals up to +inf): the
    float search cannot decide, so the selection refines their Gumbels with 64 more bits each and
    encloses their entropy scores in interval arithmetic. The winner must be the argmax of
    ε1 · q / (2Δ) + G computed here with mpmath (q from the brute force, U from the bits)."""
    from crowdsafe.selection.search import gumbel_max_over_lattice

    data = _tiny_entropy_table()
    columns, k, epsilon1 = ["x", "y"], 2, 0.5
    top = (1 << 53) - 1
    with mpmath.workprec(300):
        exact = _brute_force_entropy(data, columns, k, exact=True)
        delta = mpmath.ceil((mpmath.log(3, 2) + 1 + 2 / mpmath.log(2)) * 2**20) / 2**20
    lattice_nodes = [tuple(int(x) for x in node) for node in make_lattice_nodes(data, columns)]
    a, b = 0, 3  # nodes (0, 0) and (1, 1)
    winners = set()
    for seed in range(30):
        rng = np.random.default_rng(seed)
        table = {(node, r): int(rng.integers(0, 2**64, dtype=np.uint64)) for node in (a, b) for r in range(3)}

        def bits(indices, round_, table=table):
            return np.array([table[(int(i), round_)] for i in indices], dtype=np.uint64)

        cells = np.full(4, 5, dtype=np.int64)
        cells[[a, b]] = top
        with mpmath.workprec(400):
            keys = {}
            for node in (a, b):
                u = (mpmath.mpf(top) * 2**128 + table[(node, 0)] * mpmath.mpf(2)**64 + table[(node, 1)]
                     + mpmath.mpf(1) / 2) / mpmath.mpf(2)**181
                keys[node] = epsilon1 * exact[lattice_nodes[node]] / (2 * delta) - mpmath.log(-mpmath.log(u))
        expected = a if keys[a] > keys[b] else b
        _, got, _ = gumbel_max_over_lattice(data, columns, k, epsilon1, cells, bits, make_objective("entropy"))
        assert got == expected
        winners.add(got)
    assert winners == {a, b}


def make_lattice_nodes(data: Dataset, columns: list[str]) -> list[tuple[int, ...]]:
    """The nodes in the selection's order: the first column most significant."""
    return list(itertools.product(*[range(data.hierarchies[c].height + 1) for c in columns]))
