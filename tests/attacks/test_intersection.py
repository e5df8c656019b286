"""The intersection attack: hand-built releases with known answers, brute force, location."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from attack_fixtures import covers, tiny

from crowdsafe.anonymize import anonymize_dataset
from crowdsafe.attacks import AttackedRelease, intersection_attack
from crowdsafe.data import load
from crowdsafe.errors import InputError, ParameterError

QI = ["age", "zip"]


def test_hand_built_releases_give_the_known_candidate_sets_and_metrics():
    releases, targets = tiny()
    result = intersection_attack(releases, targets, QI, "dis")
    t = result.targets
    # S_1 = {flu,hiv,cold} ∩ {hiv,flu}; S_2 = {flu,hiv,cold} ∩ {cancer,hiv,cold}; S_3 = {cancer,flu} ∩ {cancer,hiv,cold}
    assert t["prior_a"].to_list() == [3, 3, 2, 2]
    assert t["prior_b"].to_list() == [2, 3, 3, 3]
    assert t["prior_anonymity"].to_list() == [2, 3, 2, 2]
    assert t["posterior_anonymity"].to_list() == [2, 2, 1, 1]
    assert t["drop"].to_list() == [0, 1, 1, 1]
    assert t["perfect_breach"].to_list() == [False, False, True, True]
    assert t["inferred_value"].to_list() == [None, None, "cancer", "cancer"]
    # the fourth target shares the third's quasi-identifiers but has flu: a wrong "breach"
    assert t["perfect_breach_true"].to_list() == [False, False, True, False]
    assert t["true_value_in_candidates"].to_list() == [True, True, True, False]
    assert t["partition_a"].to_list() == [3.0, 3.0, 3.0, 3.0]
    assert t["partition_b"].to_list() == [2.0, 3.0, 3.0, 3.0]
    s = result.summary
    assert s["average_drop"] == pytest.approx(0.75)
    assert s["vulnerable"] == pytest.approx(0.75)
    assert s["perfect_breach"] == pytest.approx(0.5)
    assert s["perfect_breach_true"] == pytest.approx(0.25)
    assert s["partial_breach"] == {"0.25": 1.0, "0.5": 1.0}  # the default levels
    explicit = intersection_attack(releases, targets, QI, "dis", levels=[0.75]).summary
    assert explicit["partial_breach"] == {"0.75": 0.5}  # above 1/2: the perfect breaches again
    assert s["presumed_k"] == [3, 2]
    assert s["average_partition_size"] == pytest.approx([3.0, 2.75])
    assert result.releases["location"].to_list() == ["exact", "exact"]



def test_the_per_target_table_is_made_once_when_first_read():
    releases, targets = tiny()
    result = intersection_attack(releases, targets, QI, "dis")
    assert not isinstance(result._targets, pl.DataFrame)  # the summary alone does not make it
    first = result.targets
    assert result.targets is first and first.height == targets.height
    assert first["target"].to_list() == list(range(targets.height))
    assert "CUSTODIAN ONLY" in repr(result) and "prior_a" not in repr(result)

def test_unlocated_target_learns_nothing_from_that_release_and_contradictions_are_no_breach():
    r1 = pl.DataFrame({"age": ["[20, 29]"] * 2 + ["[40, 49]"] * 2, "zip": ["*"] * 4, "dis": ["a", "b", "c", "a"]})
    r2 = pl.DataFrame({"age": ["[20, 29]"] * 2 + ["[40, 49]"] * 2, "zip": ["*"] * 4, "dis": ["c", "d", "a", "d"]})
    targets = pl.DataFrame({"age": [25, 35, 45], "zip": ["1", "1", "1"]})
    t = intersection_attack([r1, r2], targets, QI, "dis").targets
    # age 35 lies in no class: every published value stays possible
    assert t["prior_R1"].to_list() == [2, 3, 2]
    assert t["posterior_anonymity"].to_list()[1] == 2  # {a, b, c} ∩ {a, c, d}
    # age 25: {a,b} ∩ {c,d} is empty -> counted as a failed attack
    assert t["contradiction"].to_list() == [True, False, False]
    assert t["confidence"].to_list()[0] == 0.0 and not t["perfect_breach"][0]
    assert t["drop"].to_list()[0] == 0
    assert t["posterior_anonymity"].to_list()[2] == 1  # {a, c} ∩ {a, d}
    assert t["inferred_value"].to_list() == [None, None, "a"]


def brute_force(releases, targets, qi, sensitive):
    """Per-target Python loop: the classes whose cells cover the target, then set intersection."""
    out = []
    for target in targets.iter_rows(named=True):
        sets = []
        for release in releases:
            found = set()
            located = False
            for row in release.iter_rows(named=True):
                if all(covers(row[c], target[c]) for c in qi):
                    found.add(row[sensitive])
                    located = True
            sets.append(found if located else set(release[sensitive].to_list()))
        out.append((min(len(s) for s in sets), len(set.intersection(*sets))))
    return out


def random_release(rng, n_rows, sensitive_values):
    """Rows in random classes with random (possibly overlapping) age ranges and zip sets."""
    rows = []
    for _ in range(rng.integers(2, 6)):
        lo = int(rng.integers(20, 60))
        age = f"[{lo}, {lo + int(rng.integers(0, 15))}]"
        zips = sorted(set(rng.choice(["10", "11", "12", "13"], size=rng.integers(1, 4)).tolist()))
        zip_cell = "*" if len(zips) == 4 else "{" + ", ".join(zips) + "}"
        for _ in range(int(rng.integers(1, n_rows))):
            rows.append((age, zip_cell, str(rng.choice(sensitive_values))))
    return pl.DataFrame(rows, schema=["age", "zip", "s"], orient="row")


@pytest.mark.parametrize("seed", range(25))
def test_matches_brute_force_on_random_overlapping_releases(seed):
    rng = np.random.default_rng(seed)
    values = ["a", "b", "c", "d", "e", "f"]
    releases = [random_release(rng, 6, values) for _ in range(int(rng.integers(2, 4)))]
    targets = pl.DataFrame({"age": rng.integers(18, 75, 30), "zip": rng.choice(["10", "11", "12", "13"], 30)})
    result = intersection_attack(releases, targets, QI, "s").targets
    expected = brute_force(releases, targets, QI, "s")
    got_prior = result["prior_anonymity"].to_list()
    got_post = result["posterior_anonymity"].to_list()
    contradiction = result["contradiction"].to_list()
    for i, (prior, post) in enumerate(expected):
        assert got_prior[i] == prior
        if post == 0:
            assert contradiction[i] and got_post[i] == prior
        else:
            assert not contradiction[i] and got_post[i] == post


def clustered(n_per=30, seed=0):
    """Four well-separated clusters: MDAV groups stay inside them."""
    rng = np.random.default_rng(seed)
    ages = np.concatenate([rng.integers(c, c + 3, n_per) for c in (20, 40, 60, 80)])
    sex = np.repeat(["F", "M", "F", "M"], n_per)
    job = rng.choice(["x", "y", "z"], len(ages))
    return pl.DataFrame({"id": np.arange(len(ages)), "age": ages, "sex": sex, "job": job})


def test_microaggregation_is_located_by_nearest_centroid_and_the_rate_is_reported():
    frame = clustered()
    dataset = load(frame).with_roles(qi=["age", "sex"], sensitive=["job"])
    release = anonymize_dataset(dataset, "mdav", 5)
    attacked = AttackedRelease(release.frame, "mdav", 5)
    result = intersection_attack([attacked], frame, ["age", "sex"], "job", truth_id="id")
    row = result.releases.row(0, named=True)
    assert row["location"] == "nearest"
    assert 0.5 < row["correct_location"] <= 1.0
    # the rate is the share of targets whose nearest centroid is their own class: recompute it
    centroids = release.frame.group_by("age", "sex").agg(pl.col("id"))
    sd2 = 2 * frame["age"].var(ddof=0)
    spread = 1 - ((frame["sex"].value_counts()["count"] / frame.height) ** 2).sum()
    hits = 0
    for target in frame.iter_rows(named=True):
        d = [(target["age"] - a) ** 2 / sd2 + (target["sex"] != s) / spread for a, s in
             zip(centroids["age"].to_list(), centroids["sex"].to_list())]
        hits += target["id"] in centroids["id"][int(np.argmin(d))].to_list()
    assert row["correct_location"] == pytest.approx(hits / frame.height)


def test_exact_location_always_contains_the_true_class():
    frame = clustered(seed=3)
    dataset = load(frame).with_roles(qi=["age", "sex"], sensitive=["job"])
    releases = [anonymize_dataset(dataset, "mondrian", k) for k in (4, 7)]
    result = intersection_attack([AttackedRelease(r.frame, f"m{r.k}", r.k) for r in releases], frame,
                                 ["age", "sex"], "job", truth_id="id")
    assert result.releases["correct_location"].to_list() == [1.0, 1.0]
    assert result.summary["true_value_in_candidates"] == 1.0
    assert result.summary["perfect_breach"] == result.summary["perfect_breach_true"]


def test_truth_ids_match_when_the_release_holds_them_as_text():
    frame = clustered(seed=3)
    dataset = load(frame).with_roles(qi=["age", "sex"], sensitive=["job"])
    release = anonymize_dataset(dataset, "mondrian", 4)
    as_read_from_csv = release.frame.with_columns(pl.col("id").cast(pl.String))
    result = intersection_attack([AttackedRelease(as_read_from_csv, "m4", 4)], frame, ["age", "sex"], "job",
                                 truth_id="id")
    assert result.releases["correct_location"].to_list() == [1.0]


def test_bad_input_is_named():
    releases, targets = tiny()
    with pytest.raises(InputError, match="no column 'zip'"):
        intersection_attack(releases, targets.drop("zip"), QI, "dis")
    with pytest.raises(InputError, match="no sensitive column 'x'"):
        intersection_attack(releases, targets, QI, "x")
    with pytest.raises(ParameterError, match="confidence levels"):
        intersection_attack(releases, targets, QI, "dis", levels=[0.0])
    with pytest.raises(ParameterError, match="location"):
        intersection_attack(releases, targets, QI, "dis", location="closest")  # type: ignore[arg-type]


def test_a_generalized_sensitive_cell_stands_for_every_value_it_covers():
    r1 = pl.DataFrame({"age": ["[20, 29]"] * 2, "zip": ["*"] * 2, "dis": ["{flu, hiv}", "cold"]})
    r2 = pl.DataFrame({"age": ["*"] * 2, "zip": ["*"] * 2, "dis": ["*", "*"]})
    r3 = pl.DataFrame({"age": ["[20, 24]"] * 2, "zip": ["*"] * 2, "dis": ["hiv", "cancer"]})
    targets = pl.DataFrame({"age": [22], "zip": ["1"], "dis": ["hiv"]})
    t = intersection_attack([r1, r2, r3], targets, QI, "dis").targets
    assert t["prior_R1"].to_list() == [3]  # flu, hiv, cold
    assert t["prior_R2"].to_list() == [4]  # '*': every plain value anywhere (cancer, cold, flu, hiv)
    assert t["inferred_value"].to_list() == ["hiv"] and t["perfect_breach_true"].to_list() == [True]


def test_sensitive_values_that_read_like_bounds_are_values_when_the_targets_hold_them():
    # Adult's income without a hierarchy: '<=50K' and '>50K' read as bounds (50K = 50,000); as
    # the targets' own values they are values, not ranges over a text column (was an InputError)
    releases, targets = tiny()
    income = {"flu": "<=50K", "hiv": ">50K", "cold": "<=50K", "cancer": ">50K"}
    renamed = [AttackedRelease(r.frame.with_columns(pl.col("dis").replace(income)), r.name, r.presumed_k)
               for r in releases]
    result = intersection_attack(renamed, targets.with_columns(pl.col("dis").replace(income)), QI, "dis")
    t = result.targets
    # every class of both releases holds both values: nothing is learnt, and nothing is refused
    assert t["prior_a"].to_list() == [2, 2, 2, 2] and t["prior_b"].to_list() == [2, 2, 2, 2]
    assert t["posterior_anonymity"].to_list() == [2, 2, 2, 2]


def test_the_walk_goes_smallest_domain_first_and_its_order_does_not_change_the_attack(monkeypatch):
    from crowdsafe.attacks import intersection_tables

    sizes = {"a": 41, "b": 2, "c": 7, "d": 2}
    assert intersection_tables.walk_order(["a", "b", "c", "d"], sizes) == ["b", "d", "c", "a"]  # ties: as given
    releases, targets = tiny()
    walked = intersection_attack(releases, targets, QI, "dis").targets
    orders = []
    smallest_first = intersection_tables.walk_order

    def reversed_order(qi, sizes):
        default = smallest_first(qi, sizes)
        orders.append((default, default[::-1]))
        return default[::-1]

    monkeypatch.setattr(intersection_tables, "walk_order", reversed_order)
    assert intersection_attack(releases, targets, QI, "dis").targets.equals(walked)
    [(default, used)] = orders
    assert used != default  # the walk did go the other way
