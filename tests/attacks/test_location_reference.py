"""The attack's location and candidate sets against a plain reference written here.

Random small releases mix ranges (two spellings), top coding, sets, hierarchy node labels,
'*', missing cells, fully suppressed rows, and generalized sensitive cells; the reference reads
every cell of every row for every target, one at a time.
"""

from __future__ import annotations

import re
from unittest.mock import patch

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsafe.attacks import cell_ranks, intersection_attack, locate
from crowdsafe.data import Hierarchy

QI = ["age", "zip"]
ZIPS = ["z1", "z2", "z3", "z4"]
REGIONS = {"north": {"z1", "z2"}, "south": {"z3", "z4"}}
ZIP_HIERARCHY = Hierarchy.from_columns("zip", ZIPS, [["north", "north", "south", "south"], ["*"] * 4])
SICK = ["flu", "hiv", "cold", "cancer"]


def covers(cell: str | None, value) -> bool:
    """Does a published quasi-identifier cell cover the target's value? (reference reading)"""
    if cell is None:
        return False  # the targets have no missing value
    text = cell.strip()
    if text == "*" or text == str(value):
        return True
    if text in REGIONS:
        return value in REGIONS[text]
    closed = re.fullmatch(r"\[(\d+),\s*(\d+)\]", text)
    if closed:
        return int(closed[1]) <= value <= int(closed[2])
    if text.startswith(">="):
        return value >= int(text[2:])
    if text.startswith("{") and text.endswith("}"):
        return any(covers(member, value) for member in text[1:-1].split(", "))
    return False


def stands_for(cell: str, everything: set[str]) -> set[str]:
    """The sensitive values a published sensitive cell stands for."""
    if cell == "*":
        return set(everything)
    if cell.startswith("{"):
        return set(cell[1:-1].split(", "))
    return {cell}


def reference(releases: list[pl.DataFrame], targets: pl.DataFrame):
    """Per target: prior |S_ij| per release, and |∩_j S_ij| (0 when the sets contradict)."""
    everything = {v for r in releases for cell in r["s"].to_list() for v in stands_for(cell, set()) if v != "*"}
    everything |= set(targets["s"].to_list())
    out = []
    for age, zip_code in targets.select(QI).iter_rows():
        sets = []
        for release in releases:
            found: set[str] = set()
            located = False
            for row_age, row_zip, s in release.iter_rows():
                if covers(row_age, age) and covers(row_zip, zip_code):
                    located = True
                    found |= stands_for(s, everything)
            published = set().union(*(stands_for(s, everything) for s in release["s"].to_list()))
            sets.append(found if located else published)
        out.append(([len(s) for s in sets], len(set.intersection(*sets))))
    return out


@st.composite
def release(draw) -> pl.DataFrame:
    def age_cell() -> str | None:
        low = draw(st.integers(18, 60))
        high = low + draw(st.integers(0, 15))
        return draw(st.sampled_from([f"[{low}, {high}]", f"[{low},{high}]", f">={low}", str(low), "*", None]))

    def zip_cell() -> str | None:
        chosen = sorted(draw(st.sets(st.sampled_from(ZIPS), min_size=1, max_size=3)))
        return draw(st.sampled_from(["{" + ", ".join(chosen) + "}", chosen[0], "north", "south", "*", None]))

    def sensitive_cell() -> str:
        return draw(st.sampled_from(SICK + ["*", "{flu, hiv}", "{cancer, cold}"]))

    rows = []
    for _ in range(draw(st.integers(1, 5))):  # classes
        age, zip_code = age_cell(), zip_cell()
        rows += [(age, zip_code, sensitive_cell()) for _ in range(draw(st.integers(1, 4)))]
    for _ in range(draw(st.integers(0, 2))):  # suppressed rows
        rows.append(("*", "*", sensitive_cell()))
    return pl.DataFrame(rows, schema={"age": pl.String, "zip": pl.String, "s": pl.String}, orient="row")


def draw_targets(data, most: int) -> pl.DataFrame:
    n = data.draw(st.integers(1, most))
    return pl.DataFrame({
        "age": data.draw(st.lists(st.integers(15, 80), min_size=n, max_size=n)),
        "zip": data.draw(st.lists(st.sampled_from(ZIPS), min_size=n, max_size=n)),
        "s": data.draw(st.lists(st.sampled_from(SICK), min_size=n, max_size=n)),
    })


@pytest.mark.slow
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(release(), min_size=1, max_size=3), st.data())
def test_generalized_releases_match_the_reference(releases, data):
    targets = draw_targets(data, 12)
    result = intersection_attack(releases, targets, QI, "s", hierarchies={"zip": ZIP_HIERARCHY}).targets
    for i, (priors, posterior) in enumerate(reference(releases, targets)):
        assert [result[f"prior_R{j + 1}"][i] for j in range(len(releases))] == priors
        assert result["prior_anonymity"][i] == min(priors)
        assert result["contradiction"][i] == (posterior == 0)
        assert result["posterior_anonymity"][i] == (posterior or min(priors))


@pytest.mark.slow
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(release(), min_size=1, max_size=3), st.data())
def test_cells_ranked_by_polars_give_the_same_attack(releases, data):
    """Many distinct cells are ranked by Polars rather than sorted in Python: the same attack."""
    targets = draw_targets(data, 8)
    expected = intersection_attack(releases, targets, QI, "s", hierarchies={"zip": ZIP_HIERARCHY})
    expected_tables = locate.class_tables(releases, QI, "s")
    with patch.object(cell_ranks, "PYTHON_SORTED", 0):
        got = intersection_attack(releases, targets, QI, "s", hierarchies={"zip": ZIP_HIERARCHY})
        got_tables = locate.class_tables(releases, QI, "s")
    assert got.targets.equals(expected.targets)
    assert got.summary == expected.summary
    for table, other in zip(got_tables, expected_tables):
        for c in QI:  # the same cells, sorted with the missing one last; the same cell for every class
            cells = table.distinct_cells[c].to_list()
            present = [cell for cell in cells if cell is not None]
            assert cells == other.distinct_cells[c].to_list()
            assert cells == sorted(present) + [None] * (len(cells) - len(present))
            assert (table.cell_of_class[c] == other.cell_of_class[c]).all()


def nearest(targets: pl.DataFrame, centroids: list[tuple[float, str]]) -> list[set[int]]:
    """The classes at the smallest standardized distance from each target (MDAV's distance)."""
    ages = targets["age"].to_numpy().astype(float)
    shares = targets["sex"].value_counts()["count"].to_numpy() / targets.height
    age_weight = 1 / (2 * ages.var()) if ages.var() > 0 else 0.0
    spread = 1 - (shares ** 2).sum()
    sex_weight = 1 / spread if spread > 0 else 0.0
    out = []
    for age, sex in targets.select("age", "sex").iter_rows():
        d = [age_weight * (age - a) ** 2 + sex_weight * (sex != s) for a, s in centroids]
        out.append({j for j, dj in enumerate(d) if np.isclose(dj, min(d))})
    return out


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(18, 80).map(lambda x: round(x, 1)), st.sampled_from(["F", "M"]),
                          st.lists(st.sampled_from(SICK), min_size=1, max_size=4)),
                min_size=2, max_size=6, unique_by=lambda c: (c[0], c[1])),
       st.lists(st.tuples(st.integers(18, 80), st.sampled_from(["F", "M"])), min_size=2, max_size=12))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_microaggregated_releases_locate_the_nearest_centroid(classes, people):
    frame = pl.DataFrame([(age, sex, s) for age, sex, values in classes for s in values],
                         schema={"age": pl.Float64, "sex": pl.String, "s": pl.String}, orient="row")
    if all(float(a).is_integer() for a, _, _ in classes):
        frame = frame.with_columns(pl.col("age") + 0.5)  # a mean, so the release reads as microaggregated
        classes = [(a + 0.5, sex, values) for a, sex, values in classes]
    targets = pl.DataFrame(people, schema={"age": pl.Int64, "sex": pl.String}, orient="row")
    result = intersection_attack([frame], targets, ["age", "sex"], "s")
    assert result.releases["location"].to_list() == ["nearest"]
    centroids = [(a, sex) for a, sex, _ in classes]
    for i, closest in enumerate(nearest(targets, centroids)):
        sizes = {len(set(classes[j][2])) for j in closest}
        assert result.targets["prior_R1"][i] in sizes
        if len(closest) == 1:
            (j,) = closest
            assert result.targets["partition_R1"][i] == len(classes[j][2])
