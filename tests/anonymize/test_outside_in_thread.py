"""The values a declared hierarchy does not list (a custodian-only fact) are looked for in a
second thread on a large table (``OUTSIDE_IN_THREAD_FROM``): the same publication, public and
custodian parts, either way."""

from __future__ import annotations

import json

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.drivers import publish as driver


def _table(tmp_path):
    listed = ["NL", "DE", "FR", "ES"]
    (tmp_path / "country.csv").write_text("".join(f"{v};EU;*\n" for v in listed))
    (tmp_path / "schema.toml").write_text(
        '[attributes.country]\ntype = "categorical"\nhierarchy = "country.csv"\n'
        '[attributes.sex]\ntype = "categorical"\n')
    rows = [*listed * 60, "Holand-Netherlands", "Atlantis"]
    frame = pl.DataFrame({"country": rows, "sex": (["F", "M"] * len(rows))[: len(rows)]})
    frame.write_csv(tmp_path / "people.csv")
    return tmp_path / "people.csv", tmp_path / "schema.toml"


@pytest.mark.parametrize("threshold", [0, 10**9])
def test_the_same_publication_with_and_without_the_thread(tmp_path, monkeypatch, threshold):
    path, schema = _table(tmp_path)
    runs = []
    for from_rows in (threshold, driver.OUTSIDE_IN_THREAD_FROM):
        monkeypatch.setattr(driver, "OUTSIDE_IN_THREAD_FROM", from_rows)
        publication = api.publish(path, schema=schema, epsilon=1.0, delta=1e-4, seed=7, ledger=None, report=False)
        runs.append((json.dumps(publication.summary(), sort_keys=True), publication.custodian_report()))
    assert runs[0] == runs[1]
    assert runs[0][1]["outside_hierarchies"] == {"country": {
        "distinct_values": 2, "published_as": "missing (?, or empty where not generalized)",
        "named_by": "crowdsafe check"}}


@pytest.mark.parametrize("dtype", [pl.String, pl.Categorical, pl.Int64, pl.Float64])
def test_the_count_is_what_outside_lists(dtype):
    """outside_hierarchies for each column type: missing values aside, the count is the length of
    Hierarchy.outside's list."""
    from crowdsafe.anonymize.publish import outside_hierarchies
    from crowdsafe.data import Dataset, Schema, flat

    listed = [1, 2, 3] if dtype in (pl.Int64, pl.Float64) else ["a", "b", "c"]
    values = [*listed, *listed, None] + ([7, 8, 8] if dtype in (pl.Int64, pl.Float64) else ["x", "y", "y"])
    series = pl.Series("v", values).cast(dtype)
    hierarchy = flat("v", listed)
    data = Dataset(pl.DataFrame({"v": series, "w": series}),
                   Schema.of({"v": "categorical", "w": "categorical"}, qi=["v", "w"]), {"v": hierarchy, "w": hierarchy})
    expected = len(hierarchy.outside(series))
    assert expected == 2
    for side_by_side in (True, False):  # one select for every column, or one column at a time
        found = outside_hierarchies(data, ["v", "w"], side_by_side=side_by_side)
        assert found == {c: {"distinct_values": 2, "published_as": "missing (?, or empty where not generalized)",
                             "named_by": "crowdsafe check"}
                         for c in ("v", "w")}
