"""The Spark attack's driver steps (engines/spark/attack_steps.py) on a grid of classes: the
location forms only the pairs it keeps, and they are the true ones. No Spark session: the
steps run on the counts Spark collects, made here by hand."""

import numpy as np
import polars as pl
import pytest

from crowdsafe.attacks.locate import encode_targets
from crowdsafe.data.generalized import AttributeDomain
from crowdsafe.engines.spark import attack_steps as steps

SIDE = 100  # x and y in [0, SIDE): SIDE² targets, SIDE² classes


@pytest.fixture(scope="module")
def grid():
    """Every (x, y) a target; the release's classes the cells of a SIDE × SIDE grid, each of
    one x and one y written as a one-value range, holding one of three sensitive values."""
    x, y = (a.ravel() for a in np.meshgrid(np.arange(SIDE), np.arange(SIDE), indexing="ij"))
    targets = pl.DataFrame({"x": x, "y": y})
    domains, codes = encode_targets(targets, ["x", "y"])
    tuples = pl.DataFrame({"__tuple": np.arange(len(x), dtype=np.int64), "__k0": codes["x"], "__k1": codes["y"],
                           "__w": np.ones(len(x), dtype=np.int64)})
    combos = pl.DataFrame({"__q0": [f"[{v}, {v}]" for v in x], "__q1": [f"[{v}, {v}]" for v in y],
                           "__sv": np.array(["a", "b", "c"])[(x + y) % 3], "count": np.full(len(x), 10)})
    values = AttributeDomain("s", pl.Series("s", ["a", "b", "c"]))
    return targets, domains, tuples, combos, values


def test_the_location_forms_only_the_pairs_it_keeps(grid, monkeypatch):
    """Each target lies in one class. Joining the targets with every class that shares their
    first column's cell, then filtering on the second, formed SIDE × SIDE² rows (a million
    here; billions for a million targets, which killed the driver): no join may now give more
    rows than there are targets or combinations times the sensitive values."""
    targets, domains, tuples, combos, values = grid
    biggest = [0]
    join = pl.DataFrame.join

    def counted_join(self, *args, **kwargs):
        out = join(self, *args, **kwargs)
        biggest[0] = max(biggest[0], out.height)
        return out

    monkeypatch.setattr(pl.DataFrame, "join", counted_join)
    located = steps.locate(combos, "R1", ["x", "y"], domains, values, tuples, "exact")
    monkeypatch.undo()
    assert biggest[0] <= 3 * max(targets.height, combos.height)
    # every target in its own class: the class whose cells are its x and y
    pairs = located.located.join(tuples, on="__tuple").select("__k0", "__k1", "__class").sort("__k0", "__k1")
    assert pairs.height == targets.height
    x_text = domains["x"].values.cast(pl.String).to_numpy()[pairs.get_column("__k0").to_numpy()]
    y_text = domains["y"].values.cast(pl.String).to_numpy()[pairs.get_column("__k1").to_numpy()]
    expected = [f"[{a}, {a}]{steps.SEPARATOR}[{b}, {b}]" for a, b in zip(x_text, y_text)]
    assert pairs.get_column("__class").to_list() == expected
    assert located.stats.get_column("__matches").to_list() == [1] * targets.height


VALUES = 20_000  # a sensitive column of many distinct values (fnlwgt-like)


def _largest_frames(monkeypatch) -> list[int]:
    """A list whose item is the most rows any join, concat or group-by has given since."""
    biggest = [0]

    def counted(function):
        def run(*args, **kwargs):
            out = function(*args, **kwargs)
            biggest[0] = max(biggest[0], out.height)
            return out
        return run

    group_by = pl.dataframe.group_by.GroupBy
    monkeypatch.setattr(pl.DataFrame, "join", counted(pl.DataFrame.join))
    monkeypatch.setattr(pl, "concat", counted(pl.concat))
    monkeypatch.setattr(group_by, "agg", counted(group_by.agg))
    monkeypatch.setattr(group_by, "len", counted(group_by.len))
    return biggest


def _release(xs, big_class, shift):
    """One class per x in ``xs`` (a one-value range) holding three values from 7x + shift, and
    one class no target falls in holding all the VALUES values: the release publishes them all."""
    xs = np.asarray(xs)
    small = pl.DataFrame({"__q0": np.repeat([f"[{v}, {v}]" for v in xs], 3),
                          "__sv": [f"v{(v * 7 + shift + k) % VALUES:05d}" for v in xs for k in range(3)]})
    big = pl.DataFrame({"__q0": [f"[{big_class}, {big_class}]"] * VALUES,
                        "__sv": [f"v{v:05d}" for v in range(VALUES)]})
    return pl.concat([small, big]).with_columns(pl.lit(5, pl.Int64).alias("count"))


def test_tuples_a_release_does_not_locate_are_not_paired_with_every_value(monkeypatch):
    """R1 locates the targets x < 100, R2 those 50 <= x < 150; x >= 150 lie in no release.
    A tuple a release does not locate keeps every value it publishes: written out as
    (tuple, value) pairs that was 100 tuples × 20,000 values per release (the driver held
    gigabytes for 1,000 targets and a sensitive column of 100k values). No join, concat or
    group-by may now give more rows than the located pairs, tuples and values together; the
    candidate sets are those of the definition, S_i = ∩_j (located ? class values : published)."""
    xs = np.arange(200)
    targets = pl.DataFrame({"x": xs})
    domains, codes = encode_targets(targets, ["x"])
    tuples = pl.DataFrame({"__tuple": xs.astype(np.int64), "__k0": codes["x"], "__w": np.ones(200, np.int64)})
    values = AttributeDomain("s", pl.Series("s", [f"v{v:05d}" for v in range(VALUES)]))
    releases = {"R1": (np.arange(100), 1000, 0), "R2": (np.arange(50, 150), 1001, 2)}
    biggest = _largest_frames(monkeypatch)
    readings = [steps.locate(_release(*releases[n]), n, ["x"], domains, values, tuples, "exact") for n in releases]
    candidate = steps.candidates_of(readings)
    dictionary = values.values
    table = steps.per_tuple(tuples, readings, candidate, dictionary)
    truths = pl.DataFrame({"__tuple": xs.astype(np.int64), "__s": [f"v{(x * 7) % VALUES:05d}" for x in xs]})
    hits = steps.truth_hits(truths, candidate, table, dictionary)
    monkeypatch.undo()
    located_pairs = 2 * 100 * 3  # 100 tuples located per release, 3 values each
    # the release's own cell combinations (VALUES + 300 rows each) bound the location's joins
    assert biggest[0] <= located_pairs + tuples.height + VALUES + 300  # was 4,000,600: 100 tuples × VALUES × 2
    assert sum(r.pairs.height for r in readings) == located_pairs

    # expected from the definition, by sets
    everything = set(range(VALUES))
    expected = {}
    for x in xs:
        sets = [{(x * 7 + shift + k) % VALUES for k in range(3)} if x in set(located_x.tolist()) else everything
                for located_x, _, shift in releases.values()]
        expected[x] = set.intersection(*sets)
    rows = table.sort("__tuple")
    assert rows.get_column("posterior_anonymity").to_list() == [len(expected[x]) for x in xs]
    assert rows.get_column("prior_anonymity").to_list() == [3 if x < 150 else VALUES for x in xs]
    assert not rows.get_column("contradiction").any()
    # located by both (50 <= x < 100): {7x, 7x+1, 7x+2} ∩ {7x+2, 7x+3, 7x+4}, a perfect breach
    assert rows.get_column("perfect_breach").to_list() == [50 <= x < 100 for x in xs]
    assert rows.get_column("inferred_value").to_list() == [
        f"v{x * 7 + 2:05d}" if 50 <= x < 100 else None for x in xs]
    hit = hits.sort("__tuple").get_column("true_value_in_candidates").to_list()
    assert hit == [(x * 7) % VALUES in expected[x] for x in xs] == [x < 50 or x >= 150 for x in xs]


def test_a_class_showing_a_star_is_not_paired_with_every_value(monkeypatch):
    """A sensitive cell '*' covers every value of the domain: a tuple in a class showing it may
    hold any value, as a tuple the release does not locate, and is never written out as
    (tuple, value) pairs (150 classes × 20,000 values before). R1 locates x < 100 with three
    values each; R3 puts every x < 150 in a class showing '*'."""
    xs = np.arange(200)
    targets = pl.DataFrame({"x": xs})
    domains, codes = encode_targets(targets, ["x"])
    tuples = pl.DataFrame({"__tuple": xs.astype(np.int64), "__k0": codes["x"], "__w": np.ones(200, np.int64)})
    values = AttributeDomain("s", pl.Series("s", [f"v{v:05d}" for v in range(VALUES)]))
    starred = pl.DataFrame({"__q0": [f"[{v}, {v}]" for v in range(150)], "__sv": ["*"] * 150,
                            "count": np.full(150, 5, dtype=np.int64)})
    biggest = _largest_frames(monkeypatch)
    readings = [steps.locate(_release(np.arange(100), 1000, 0), "R1", ["x"], domains, values, tuples, "exact"),
                steps.locate(starred, "R3", ["x"], domains, values, tuples, "exact")]
    table = steps.per_tuple(tuples, readings, steps.candidates_of(readings), values.values)
    monkeypatch.undo()
    assert biggest[0] <= 2 * VALUES  # (R1's own big class lists VALUES values)
    rows = table.sort("__tuple")
    assert rows.get_column("posterior_anonymity").to_list() == [3 if x < 100 else VALUES for x in xs]
    assert rows.get_column("__prior1").to_list() == [VALUES] * 200  # '*', or not located: every value
    assert rows.get_column("__matches1").to_list() == [1 if x < 150 else None for x in xs]
    assert not rows.get_column("contradiction").any()
