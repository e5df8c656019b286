"""The linkage attack: counts against a brute-force loop."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from attack_fixtures import covers

from crowdsafe.attacks.linkage import linkage_attack
from crowdsafe.errors import InputError

QI = ["age", "zip"]


def brute_force(release, external):
    m = []
    for row in release.iter_rows(named=True):
        m.append(sum(all(covers(row[c], person[c]) for c in QI) for person in external.iter_rows(named=True)))
    m = np.array(m)
    return int((m == 1).sum()), int(((m >= 1) & (m <= 2)).sum()), float((1.0 / m[m >= 1]).sum())


@pytest.mark.parametrize("seed", range(15))
def test_counts_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    people = pl.DataFrame({"id": np.arange(40), "age": rng.integers(20, 40, 40),
                           "zip": rng.choice(["10", "11", "12"], 40)})
    cells_age = {a: (f"[{a - a % 5}, {a - a % 5 + 4}]" if rng.random() < 0.5 else str(a)) for a in range(20, 40)}
    release = people.select(
        pl.col("age").replace_strict(cells_age, return_dtype=pl.String),
        pl.when(pl.col("zip") == "12").then(pl.lit("*")).otherwise(pl.col("zip")).alias("zip"),
        pl.col("id"))
    external = people.sample(25, seed=seed).with_columns(pl.format("name-{}", pl.col("id")).alias("name"))
    result = linkage_attack(release, external, QI, truth_id="id")
    unique, half, expected = brute_force(release, external)
    s = result.summary
    assert s["reidentified_uniquely"] == unique
    assert s["reidentified_with_probability_at_least_half"] == half
    assert s["expected_correct_links_if_listed"] == pytest.approx(expected)
    # a unique link is right exactly when the row's own person is on the list
    m = result.rows["consistent_records"].to_numpy()
    on_list = release["id"].is_in(external["id"].implode()).to_numpy()
    assert s["reidentified_uniquely_correct"] == int(((m == 1) & on_list).sum())


def test_missing_column_is_named():
    with pytest.raises(InputError, match="no column 'zip'"):
        linkage_attack(pl.DataFrame({"age": ["1"], "zip": ["2"]}), pl.DataFrame({"age": [1]}), QI)
