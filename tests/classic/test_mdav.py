"""MDAV against a record-by-record reference implementation, and its documented behaviour."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe.anonymize import cell_table
from crowdsafe.classic import anonymize_dataset, mdav
from crowdsafe.data import Dataset, Schema
from crowdsafe.errors import ParameterError


def reference_mdav(x: np.ndarray, c: np.ndarray, k: int) -> list[frozenset[int]]:
    """MDAV (Domingo-Ferrer and Mateo-Sanz 2002) on records, with the standardized distance of
    crowdsafe's docs: numeric (x - y)^2 / (2 var), categorical [x != y] / (1 - sum p^2)."""
    n = len(x)
    scale = np.sqrt(2 * x.var(axis=0))
    weights = [1.0 / (1.0 - sum((np.sum(c[:, j] == v) / n) ** 2 for v in set(c[:, j]))) for j in range(c.shape[1])]

    def distance(i, point):
        px, pc = point
        return float(np.sum(((x[i] - px) / scale) ** 2)) + sum(w for j, w in enumerate(weights) if c[i, j] != pc[j])

    def centroid(rows):
        modes = []
        for j in range(c.shape[1]):
            values = [c[i, j] for i in rows]
            modes.append(min(set(values), key=lambda v: (-values.count(v), v)))
        return x[rows].mean(axis=0), modes

    def point(i):
        return x[i], list(c[i])

    def nearest(rows, i):
        return sorted(rows, key=lambda j: distance(j, point(i)))[:k]

    rows = list(range(n))
    groups = []
    while len(rows) >= 3 * k:
        r = max(rows, key=lambda i: distance(i, centroid(rows)))
        s = max(rows, key=lambda i: distance(i, point(r)))
        group = nearest(rows, r)
        groups.append(frozenset(group))
        rows = [i for i in rows if i not in group]
        group = nearest(rows, s)
        groups.append(frozenset(group))
        rows = [i for i in rows if i not in group]
    if len(rows) >= 2 * k:
        r = max(rows, key=lambda i: distance(i, centroid(rows)))
        group = nearest(rows, r)
        groups.append(frozenset(group))
        rows = [i for i in rows if i not in group]
    if rows:
        groups.append(frozenset(rows))
    return groups


@pytest.mark.parametrize("k, n, seed", [(3, 40, 0), (5, 57, 1), (4, 30, 2)])
def test_groups_match_the_reference(k, n, seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(n, 2)) * [10.0, 3.0]
    c = rng.integers(0, 3, size=(n, 1))
    frame = pl.DataFrame({"u": x[:, 0], "v": x[:, 1], "g": [f"g{v}" for v in c[:, 0]]})
    data = Dataset(frame, Schema.of({"u": "numeric", "v": "numeric", "g": "categorical"}))
    recoding = mdav(data, k)
    ours = {}
    for row, cls in enumerate(recoding.class_of_row.tolist()):
        ours.setdefault(cls, set()).add(row)
    expected = reference_mdav(x, c, k)
    assert {frozenset(g) for g in ours.values()} == set(expected)
    sizes = sorted(len(g) for g in expected)
    assert sizes[0] >= k and sizes[-2] == k and sizes[-1] < 2 * k


def assert_same_groups_as_reference(x: np.ndarray, c: np.ndarray, k: int) -> None:
    """MDAV on numeric columns ``x`` and categorical codes ``c`` makes the reference's groups,
    compared as multisets of records (records may repeat)."""
    columns = {**{f"u{j}": x[:, j] for j in range(x.shape[1])},
               **{f"g{j:02d}": [f"v{v}" for v in c[:, j]] for j in range(c.shape[1])}}
    kinds = {name: "numeric" if name.startswith("u") else "categorical" for name in columns}
    data = Dataset(pl.DataFrame(columns), Schema.of(kinds))
    # records in the order of their tuples: the reference breaks ties by record, MDAV by tuple
    order = np.argsort(cell_table(data, list(columns)).row_cell, kind="stable")
    x, c = x[order], c[order]
    recoding = mdav(data.with_frame(data.frame[order]), k)
    values = [tuple(row) for row in np.column_stack([x, c]).tolist()]
    ours: dict[int, list] = {}
    for row, cls in enumerate(recoding.class_of_row.tolist()):
        ours.setdefault(cls, []).append(values[row])
    expected = [sorted(values[i] for i in group) for group in reference_mdav(x, c, k)]
    assert sorted(sorted(g) for g in ours.values()) == sorted(expected)


@pytest.mark.parametrize("k, n, n_categorical, seed", [(3, 60, 10, 3), (2, 45, 18, 4), (4, 140, 3, 5),
                                                     (5, 160, 6, 6)])
def test_groups_match_the_reference_with_ties_and_many_categorical_attributes(k, n, n_categorical, seed):
    # Values from small sets: many records tie or repeat (cells holding several records).
    # 10 and 18 categorical attributes go past 8 and 16 attributes (wider match patterns, then
    # attributes subtracted one by one); 140+ records let emptied cells be dropped on the way.
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 7, size=(n, 1)).astype(float)
    assert_same_groups_as_reference(x, rng.integers(0, 3, size=(n, n_categorical)), k)


@pytest.mark.parametrize("n_numeric, n_categorical", [(2, 0), (0, 3)])
def test_groups_match_the_reference_with_one_kind_of_attribute(n_numeric, n_categorical):
    rng = np.random.default_rng(7)
    x = rng.normal(size=(50, n_numeric)) * 5.0
    assert_same_groups_as_reference(x, rng.integers(0, 4, size=(50, n_categorical)), 4)


def test_identical_records_stay_together_and_values_are_centroids():
    frame = pl.DataFrame({"age": [30] * 6 + [50, 52, 54], "job": ["a"] * 6 + ["b", "b", "c"]})
    data = Dataset(frame, Schema.of({"age": "numeric", "job": "categorical"}))
    release = anonymize_dataset(data, "mdav", 3)
    rows = sorted(release.frame.iter_rows())
    assert rows.count((30.0, "a")) == 6
    assert rows[-3:] == [(52.0, "b")] * 3
    median = anonymize_dataset(data, "mdav", 3, aggregate="median").frame
    assert median.schema["age"] == pl.Int64  # a median is one of the group's values


def test_mdav_has_no_l_or_t_and_needs_k_rows():
    frame = pl.DataFrame({"age": [1, 2, 3], "s": ["a", "b", "c"]})
    data = Dataset(frame, Schema.of({"age": "numeric", "s": "categorical"}, qi=["age"], sensitive=["s"]))
    with pytest.raises(ParameterError, match="MDAV has no"):
        anonymize_dataset(data, "mdav", 2, l=2)
    with pytest.raises(ParameterError, match="fewer than k = 4"):
        anonymize_dataset(data, "mdav", 4)
    with pytest.raises(ParameterError, match="'mean' or 'median'"):
        anonymize_dataset(data, "mdav", 2, aggregate="mode")
    with pytest.raises(ParameterError, match="k must be a whole number"):
        mdav(data, 0)


def _dated(n: int = 60) -> pl.DataFrame:
    import datetime as dt

    rng = np.random.default_rng(2)
    days = rng.integers(0, 300, n)
    return pl.DataFrame({"age": rng.integers(20, 60, n),
                         "d": [dt.date(2024, 1, 1) + dt.timedelta(days=int(x)) for x in days],
                         "s": rng.choice(["a", "b", "c"], n)})


@pytest.mark.parametrize("given", ["polars", "pandas", "csv"])
def test_a_date_centroid_is_published_as_a_date(tmp_path, given):
    """A Date quasi-identifier's centroid is the nearest day to its group's mean, published as a date
    (it was a float of days since 1970, written '19982.4'), whatever form the data came in."""
    import datetime as dt

    import crowdsafe.api as cs

    frame = _dated()
    data = {"polars": frame, "pandas": pl.DataFrame.to_pandas(frame).assign(d=frame["d"].to_list()),
            "csv": tmp_path / "d.csv"}[given]
    frame.write_csv(tmp_path / "d.csv")
    out = tmp_path / "r.csv"
    release = cs.anonymize(data, algorithm="mdav", k=5, qi=["age", "d"], sensitive="s", out=out, report=False)
    published = release.frame
    assert published["d"].dtype == pl.Date
    epoch = dt.date(1970, 1, 1)
    original_days = [(x - epoch).days for x in frame["d"].to_list()]
    published_days = [(x - epoch).days for x in published["d"].to_list()]
    # each group's centroid is its mean rounded to a day: the totals differ by half a day a row at most
    assert abs(sum(published_days) - sum(original_days)) <= 0.5 * len(frame)
    assert min(original_days) <= min(published_days) and max(published_days) <= max(original_days)
    written = pl.read_csv(out, infer_schema=False)["d"]
    assert written.str.contains(r"^\d{4}-\d{2}-\d{2}$").all()


@pytest.mark.parametrize("measure", ["compare", "check"])
@pytest.mark.parametrize("given", ["file", "frame"])
def test_compare_and_check_refuse_a_microaggregated_release_in_one_line(tmp_path, measure, given):
    """compare and check --original read each release cell as the original values it covers; an MDAV
    centroid covers none, and was refused late, blaming the release's data ('neither a value of the
    original, a hierarchy node, ...'). Refused before anything is measured, saying why."""
    import crowdsafe.api as cs
    from crowdsafe.errors import InputError

    frame = _dated()
    out = tmp_path / "r.csv"
    release = cs.anonymize(frame, algorithm="mdav", k=7, qi=["age", "d"], sensitive="s", out=out, report=False)
    published = out if given == "file" else release.frame
    with pytest.raises(InputError, match="do not measure a microaggregated release") as refused:
        if measure == "compare":
            cs.compare(frame, published)
        else:
            cs.check(published, original=frame)
    assert "\n" not in str(refused.value)
    from crowdsafe.data import load
    from crowdsafe.data.release_roles import refuse_centroids

    with pytest.raises(InputError, match="'age' of the release holds"):  # before anything is measured
        refuse_centroids(release.frame, load(frame))
    assert cs.check(published, qi=["age", "d"]).k >= 7  # the release alone is checked


def test_a_release_of_original_values_is_still_compared():
    """The refusal is of centroids only: an MDAV release whose numeric column publishes medians
    (values of the original) is compared as before."""
    import crowdsafe.api as cs

    frame = _dated()
    release = cs.anonymize(frame, algorithm="mdav", k=7, qi=["age", "d"], sensitive="s", aggregate="median")
    assert set(release.frame["age"].to_list()) <= set(frame["age"].to_list())
    assert cs.compare(frame, release.frame, qi=["age", "d"]).quasi_identifiers == ["age", "d"]
