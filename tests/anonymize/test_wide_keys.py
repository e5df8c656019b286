"""Keyed tables past KEY_BITS (selection/tables.py): int64 words (selection/words.py) against the
reference twin, Python integers in object arrays (tables.OBJECT_KEYS): the same tables at every
roll-up, the same exact scores of every node, the same node chosen with the same randomness and
the same number of nodes scored, for every objective, on tables whose key fields sum to just past
62, past 64 and past 126 bits (real hierarchies of thousands of leaves, not a patched limit)."""

from __future__ import annotations

import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsafe.anonymize.counted import CountedSample
from crowdsafe.data import flat, intervals
from crowdsafe.randomness import Randomness, gumbel_cells
from crowdsafe.selection import tables as keyed_tables
from crowdsafe.selection.entropy_score import EntropyScorer
from crowdsafe.selection.gumbel import random_bits
from crowdsafe.selection.score import make_objective
from crowdsafe.selection.search import gumbel_max_over_lattice, lattice_scores
from crowdsafe.selection.words import WordKeys

#: leaves per column: 5 × 12 + 3 = 63 bits; 5 × 12 + 5 = 65; 10 × 12 + 7 = 127
WIDTHS = {
    63: [2049, 3000, 4096, 2500, 2049, 6],
    65: [4000, 2049, 3333, 2049, 4096, 17],
    127: [2049, 3000, 4096, 2049, 2049, 4096, 2049, 3000, 2049, 2049, 100],
}
#: columns with a three-level interval hierarchy (the others flat)
DEEP = (0, 2)


@functools.cache
def _hierarchy(name: str, leaves: int, deep: bool):
    if deep:
        return intervals(name, range(leaves), widths=[64, 512])
    return flat(name, [str(i) for i in range(leaves)])


def wide_sample(width: int, seed: int, rows: int = 300) -> CountedSample:
    """Distinct tuples of ``rows`` random rows over the columns of ``WIDTHS[width]``: each column
    takes a few of its leaves (spread over its whole code range), so tuples repeat and merge."""
    leaves = WIDTHS[width]
    rng = np.random.default_rng(seed)
    names = tuple(f"c{j}" for j in range(len(leaves)))
    hierarchies = {name: _hierarchy(name, n, j in DEEP) for j, (name, n) in enumerate(zip(names, leaves))}
    codes = np.stack([rng.choice(rng.choice(n, int(rng.integers(1, 6)), replace=False), rows)
                      for n in leaves], axis=1).astype(np.int64)
    distinct, counts = np.unique(codes, axis=0, return_counts=True)
    return CountedSample(names, distinct, counts.astype(np.int64), hierarchies)


def _twins(sample, objective, k):
    made = []
    for reference in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(keyed_tables, "OBJECT_KEYS", reference)
            made.append(keyed_tables.KeyedTables(sample, sample.columns, objective, k))
    return made


def _objects(keys):
    return keys.to_objects() if isinstance(keys, WordKeys) else keys


def _same_table(reference, words):
    assert isinstance(words[0], WordKeys) and reference[0].dtype == object
    assert _objects(words[0]).tolist() == reference[0].tolist()
    assert words[1].tolist() == reference[1].tolist()


@pytest.mark.parametrize("width", [63, 65, 127])
def test_the_widths_are_as_named(width):
    sample = wide_sample(width, 0)
    reference, words = _twins(sample, None, 3)
    assert sum(words.bits) == width and words.wide_keys and reference.wide_keys
    assert words.word_keys and not reference.word_keys
    assert len(words.base_keys.words) == (2 if width < 127 else 4)


@pytest.mark.parametrize("width", [63, 65, 127])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**31), k=st.integers(2, 6), data=st.data())
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_every_roll_up_and_score_is_the_reference_twins(width, seed, k, data):
    sample = wide_sample(width, seed)
    d = len(sample.columns)
    for name, target in [("retained", None), ("loss", None), ("discernibility", None),
                         ("classification", f"c{d - 1}"), ("classification", "c1")]:
        objective = make_objective(name, target).for_columns(sample.columns, sample.hierarchies)
        reference, words = _twins(sample, objective, k)
        _same_table((reference.base_keys, reference.base_counts), (words.base_keys, words.base_counts))
        heights = reference.heights
        for _ in range(3):
            levels = [data.draw(st.integers(0, h)) for h in heights]
            tables = [t.raise_columns(t.base_keys, t.base_counts, [0] * d, levels) for t in (reference, words)]
            _same_table(*tables)
            assert reference.score(*tables[0], levels) == words.score(*tables[1], levels)
            if name == "classification":
                continue
            for prefix in range(1, d + 1):
                projected = [t.project(*table, prefix) for t, table in zip((reference, words), tables)]
                _same_table(*projected)
                assert reference.score(*projected[0], levels, prefix=prefix) == \
                    words.score(*projected[1], levels, prefix=prefix)
            # column by column, one level at a time (raise_level, raise_last on projections)
            chain = [(t.base_keys, t.base_counts) for t in (reference, words)]
            for attribute in range(d):
                for level in range(1, levels[attribute] + 1):
                    chain = [t.raise_level(*table, attribute, level - 1, level)
                             for t, table in zip((reference, words), chain)]
                    _same_table(*chain)
                if attribute + 1 < d:
                    base = [t.project(*table, attribute + 2) for t, table in zip((reference, words), chain)]
                    assert reference.run_heights(base[0][0], attribute + 1).tolist() == \
                        words.run_heights(base[1][0], attribute + 1).tolist()
                    if heights[attribute + 1]:
                        _same_table(*[t.raise_last(*table, attribute + 1, 0, 1)
                                      for t, table in zip((reference, words), base)])


def _choose(sample, objective, k, seed, reference, full):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(keyed_tables, "OBJECT_KEYS", reference)
        heights = objective.for_columns(sample.columns, sample.hierarchies).candidate_heights(
            sample.columns, sample.hierarchies)
        cells = gumbel_cells(Randomness(seed).generator, int(np.prod([h + 1 for h in heights])))
        chosen = gumbel_max_over_lattice(sample, sample.columns, k, 0.4, cells, random_bits(Randomness(seed)),
                                         objective)[1:]
        scores = lattice_scores(sample, sample.columns, k, objective)[1].tolist() if full else None
        return chosen, scores


@pytest.mark.parametrize("width", [63, 65, pytest.param(127, marks=pytest.mark.slow)])  # 127: about a second each
@pytest.mark.parametrize("name", ["retained", "loss", "discernibility", "classification", "marginals"])
def test_the_search_chooses_what_the_reference_twin_chooses(width, name):
    for seed in range(2 if width < 127 else 1):
        sample = wide_sample(width, seed, rows=400)
        target = sample.columns[-1] if name == "classification" else None
        objective = make_objective(name, target)
        full = width < 127 and name != "marginals"  # the 127-bit lattice has 16,384 nodes: the search only
        words = _choose(sample, objective, 4, seed, False, full)
        assert words == _choose(sample, objective, 4, seed, True, full)


@pytest.mark.parametrize("width", [63, 65])
def test_entropy_scores_are_the_reference_twins(width):
    sample = wide_sample(width, 3, rows=400)
    objective = make_objective("entropy")
    found = []
    for reference in (True, False):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(keyed_tables, "OBJECT_KEYS", reference)
            scorer = EntropyScorer(sample, sample.columns, 4, objective)
            nodes = scorer.lattice.nodes()[:: max(1, scorer.lattice.size // 12)]
            found.append((scorer.scores().tolist(), [scorer._integer_weights(tuple(int(x) for x in node))[0]
                                                     for node in nodes]))
    assert found[0] == found[1]
