"""A tuple a release does not locate has for candidates every value that release publishes. With
a sensitive column of many values (past the 64 of the masks) those were listed pair by pair:
tuples × values keys (millions with a few thousand targets, gigabytes; the Spark engine's driver
was killed). They are a set now, never listed: the same metrics, keys bounded by the located
pairs."""

from __future__ import annotations

import numpy as np
import polars as pl

from crowdsafe.attacks import intersection_tables
from crowdsafe.attacks.intersection import AttackedRelease, intersection_attack

N_TARGETS, N_VALUES = 2_000, 5_000


def _case():
    rng = np.random.default_rng(11)
    ages = rng.integers(20, 60, N_TARGETS)
    zips = rng.integers(0, 100, N_TARGETS)
    targets = pl.DataFrame({"age": ages, "zip": zips, "s": [f"v{v}" for v in rng.integers(0, N_VALUES, N_TARGETS)]})
    # R1 locates every target (its own cells); R2 none (ages no target has) and publishes every value;
    # R3 locates the younger half only. Ages as ranges: a range covers the domain's values in it (a
    # plain number that is no value of the domain is a cell the attack cannot read: it covers all)
    r1 = targets.select(pl.format("[{}, {}]", "age", "age").alias("age"), pl.col("zip").cast(pl.String), "s")
    r2 = pl.DataFrame({"age": [f"[{a}, {a + 9}]" for a in rng.integers(70, 80, N_VALUES)],
                       "zip": [str(z) for z in rng.integers(0, 100, N_VALUES)],
                       "s": [f"v{v}" for v in range(N_VALUES)]})
    r3 = pl.concat([r1.filter(pl.Series(ages < 40)), r2])  # (and every value, in classes no target is in)
    return [AttackedRelease(r, f"R{j + 1}") for j, r in enumerate((r1, r2, r3))], targets


def _largest_keys(monkeypatch) -> list[int]:
    """A list whose item is the most keys the attack dedupes at once (``sorted_unique``)."""
    biggest = [0]
    unique = intersection_tables.sorted_unique

    def counted(values, universe=None):
        biggest[0] = max(biggest[0], len(values))
        return unique(values, universe)

    monkeypatch.setattr(intersection_tables, "sorted_unique", counted)
    return biggest


def test_tuples_located_nowhere_are_never_listed_value_by_value(monkeypatch):
    releases, targets = _case()
    biggest = _largest_keys(monkeypatch)
    result = intersection_attack(releases, targets, ["age", "zip"], "s")
    # (R2 locating nowhere listed N_TARGETS × N_VALUES = 10,000,000 keys)
    assert biggest[0] <= 4 * N_VALUES + 4 * targets.height
    frame = result.targets
    # R1 (and R3 for the younger) say the values of the targets sharing the tuple; R2 (and R3 for the
    # older) nothing: they publish every value
    shared = targets.with_columns(pl.col("s").n_unique().over("age", "zip").alias("expected"))
    assert frame.get_column("posterior_anonymity").equals(shared.get_column("expected"), check_names=False)
    assert frame.get_column("true_value_in_candidates").all()
    assert (frame.get_column("perfect_breach_true") == (shared.get_column("expected") == 1)).all()
    assert set(frame.get_column("prior_R2").to_list()) == {N_VALUES}
    assert result.summary["contradictions"] == 0


def test_located_nowhere_at_all_leaves_every_value_all_releases_publish():
    """A target no release locates has for candidates the values every release publishes."""
    releases, targets = _case()
    far = targets.with_columns(pl.lit(99).alias("age"))  # in no release
    only_younger = AttackedRelease(releases[0].frame.filter(pl.Series(targets.get_column("age") < 40)), "R4")
    result = intersection_attack([releases[1], only_younger], far, ["age", "zip"], "s")
    frame = result.targets
    # R2 publishes every value, R4 the younger targets' values: those stay, for every target
    published = only_younger.frame.get_column("s")
    assert frame.get_column("posterior_anonymity").to_list() == [published.n_unique()] * N_TARGETS
    held = targets.get_column("s").is_in(published.implode())
    assert frame.get_column("true_value_in_candidates").equals(held, check_names=False)
    assert result.summary["contradictions"] == 0


def test_a_class_showing_a_star_is_never_listed_value_by_value(monkeypatch):
    """A sensitive cell '*' stands for every value of the domain: its class, and a tuple located
    in it, are a set too (listed: 2,585,940 keys here)."""
    releases, targets = _case()
    starred = AttackedRelease(releases[0].frame.with_columns(pl.lit("*").alias("s")), "R5")
    biggest = _largest_keys(monkeypatch)
    result = intersection_attack([releases[0], starred], targets, ["age", "zip"], "s")
    assert biggest[0] <= 4 * N_VALUES + 4 * targets.height
    shared = targets.with_columns(pl.col("s").n_unique().over("age", "zip").alias("expected"))
    frame = result.targets
    assert frame.get_column("posterior_anonymity").equals(shared.get_column("expected"), check_names=False)
    # '*': every value of the domain (the values the releases and the targets hold)
    assert set(frame.get_column("prior_R5").to_list()) == {targets.get_column("s").n_unique()}
    assert frame.get_column("true_value_in_candidates").all()
