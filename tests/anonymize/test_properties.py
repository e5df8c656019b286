"""Invariants of every release, over random small tables (hypothesis).

For Mondrian (strict and relaxed, node and set cells, with and without ℓ / t), MDAV and the
lattice search (with suppression): every published class holds at least k rows; with ℓ or t,
every class satisfies them (checked here from the release alone); no row whose class was
suppressed is published; every published cell covers its row's original value (MDAV: every
centroid is its group's mean / mode); the certificate says there is no formal guarantee.
"""

from __future__ import annotations

import math
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from reference import covers, emd_equal_of, entropy_of
from strategies import tables

from crowdsafe.anonymize import anonymize_dataset
from crowdsafe.errors import ParameterError

QIS = ["age", "colour", "shape"]
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def classes_of(frame):
    groups = defaultdict(list)
    for row in frame.iter_rows(named=True):
        groups[tuple(row[c] for c in QIS)].append(row)
    return groups


def check_release(dataset, release, k, l=None, t=None):
    original = {row["id"]: row for row in dataset.frame.iter_rows(named=True)}
    published = release.frame
    assert set(published.columns) == set(dataset.columns)
    ids = published.get_column("id").to_list()
    assert len(ids) == len(set(ids))  # each input row at most once
    groups = classes_of(published)
    table_outcomes = dataset.frame.get_column("outcome").to_list()
    for rows in groups.values():
        assert len(rows) >= k
        outcomes = [r["outcome"] for r in rows]
        if l is not None:
            assert entropy_of(outcomes) >= math.log(l) - 1e-9
        if t is not None:
            assert emd_equal_of(outcomes, table_outcomes) <= t + 1e-9
    # the suppressed rows are exactly those whose output tuple (recoded) was rare
    suppressed = set(original) - set(ids)
    assert release.rows_suppressed == len(suppressed)
    for row in published.iter_rows(named=True):
        source = original[row["id"]]
        for c in ("id", "outcome"):
            assert row[c] == source[c]
    return groups, original


@SETTINGS
@given(data=tables(), k=st.integers(1, 6), mode=st.sampled_from(["strict", "relaxed"]),
       categorical=st.sampled_from(["node", "set"]))
@pytest.mark.slow
def test_mondrian_releases_are_k_anonymous_and_cover_their_rows(data, k, mode, categorical):
    assume(data.n_rows >= k)
    release = anonymize_dataset(data, "mondrian", k, mode=mode, categorical=categorical)
    groups, original = check_release(data, release, k)
    assert release.rows_suppressed == 0
    for row in release.frame.iter_rows(named=True):
        source = original[row["id"]]
        for c in QIS:
            assert covers(row[c], source[c], data.hierarchies.get(c)), (c, row[c], source[c])
    assert release.certificate.guarantee == "none"
    assert "data-dependent recoding (Mondrian)" in release.certificate.reason


@SETTINGS
@given(data=tables(min_rows=4), k=st.integers(1, 4), l=st.sampled_from([None, 1.5, 2.0, 3.0]),
       t=st.sampled_from([None, 0.2, 0.4]), mode=st.sampled_from(["strict", "relaxed"]))
@pytest.mark.slow
def test_mondrian_with_l_and_t_constraints(data, k, l, t, mode):
    assume(data.n_rows >= k and (l is not None or t is not None))
    try:
        release = anonymize_dataset(data, "mondrian", k, sensitive="outcome", l=l, t=t, mode=mode)
    except ParameterError as exc:
        assert "whole table does not satisfy" in str(exc)
        outcomes = data.frame.get_column("outcome").to_list()
        assert l is not None and entropy_of(outcomes) < math.log(l) + 1e-9
        return
    groups, original = check_release(data, release, k, l=l, t=t)
    for row in release.frame.iter_rows(named=True):
        for c in QIS:
            assert covers(row[c], original[row["id"]][c], data.hierarchies.get(c))


@SETTINGS
@given(data=tables(), k=st.integers(1, 6), aggregate=st.sampled_from(["mean", "median"]))
@pytest.mark.slow
def test_mdav_groups_publish_their_centroids(data, k, aggregate):
    assume(data.n_rows >= k)
    release = anonymize_dataset(data, "mdav", k, aggregate=aggregate)
    groups, original = check_release(data, release, k)
    recoding = release.recoding
    by_class = defaultdict(list)
    for row_index, cls in enumerate(recoding.class_of_row.tolist()):
        by_class[cls].append(data.frame.row(row_index, named=True))
    for cls, rows in by_class.items():
        assert len(rows) >= k
        ages = sorted(r["age"] for r in rows)
        published_age = recoding.values["age"][cls]
        if aggregate == "mean":
            assert published_age == pytest.approx(sum(ages) / len(ages))
        else:
            assert published_age == ages[(len(ages) + 1) // 2 - 1]
        for c in ("colour", "shape"):
            counts = defaultdict(int)
            for r in rows:
                counts[r[c]] += 1
            top = max(counts.values())
            assert recoding.values[c][cls] in {v for v, n in counts.items() if n == top}
    # every row publishes its class's centroid
    for row in release.frame.iter_rows(named=True):
        cls = int(recoding.class_of_row[row["id"]])
        for c in QIS:
            assert row[c] == recoding.values[c][cls]


@SETTINGS
@given(data=tables(with_shape_hierarchy=True), k=st.integers(1, 5), limit=st.sampled_from([0.0, 0.1, 0.3]),
       l=st.sampled_from([None, 2.0]), metric=st.sampled_from(["gcp", "discernibility", "entropy"]))
@pytest.mark.slow
def test_lattice_releases_respect_k_l_and_the_suppression_limit(data, k, limit, l, metric):
    assume(data.n_rows >= k)
    try:
        release = anonymize_dataset(data, "lattice", k, sensitive="outcome" if l else None, l=l,
                                    suppression_limit=limit, loss=metric)
    except ParameterError as exc:
        assert "no generalization" in str(exc) or "whole table does not satisfy" in str(exc)
        return
    groups, original = check_release(data, release, k, l=l)
    assert release.rows_suppressed <= limit * data.n_rows
    scheme = release.recoding
    # every kept row is published as its recoded tuple, and every suppressed row's recoded
    # tuple is rare (or fails ℓ) among all rows
    recoded = {}
    for row in data.frame.iter_rows(named=True):
        key = []
        for c in QIS:
            h = data.hierarchies[c]
            leaf = [str(v) for v in h.leaves.to_list()].index(str(row[c]))
            level = scheme.levels[c]
            key.append(str(row[c]) if level == 0 else h.labels[level][int(h.leaf_map(level)[leaf])])
        recoded[row["id"]] = tuple(key)
    counts = defaultdict(list)
    for i, key in recoded.items():
        counts[key].append(original[i]["outcome"])
    kept = set(release.frame.get_column("id").to_list())
    for i, key in recoded.items():
        fails = len(counts[key]) < k or (l is not None and entropy_of(counts[key]) < math.log(l) - 1e-9)
        assert (i not in kept) == fails
    for row in release.frame.iter_rows(named=True):
        assert tuple(str(row[c]) for c in QIS) == recoded[row["id"]]
        for c in QIS:
            assert covers(row[c], original[row["id"]][c], data.hierarchies.get(c))

