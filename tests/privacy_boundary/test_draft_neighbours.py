"""What a schema draft chooses from the data is marked ``from_data``, on a table and on its
neighbours alike, so that a release built on an unreviewed choice is never certified fit.

A column with two values was drafted flat, unmarked; the same table with one more row holding a
third value was drafted with groups, marked. Flat or groups sets the lattice, hence ε1 and the
candidates the plan and the certificate show: an unmarked flat hierarchy let a release certified
fit tell whether the column held at most two values (found by a neighbouring-table sweep).
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import hierarchy_draft
from crowdsafe.data.schema_draft import draft_schema


def _tables() -> dict[str, pl.DataFrame]:
    rng = np.random.default_rng(4)
    table = pl.DataFrame({"sex": rng.choice(["F", "M"], 3_000), "smoker": rng.choice(["yes", "no"], 3_000),
                          "age": rng.integers(18, 90, 3_000)})
    return {"two values": table, "one row more, a third value": pl.concat([table, pl.DataFrame(
        {"sex": ["X"], "smoker": ["no"], "age": [40]})])}


def _markers(tmp_path, name: str, frame: pl.DataFrame) -> dict[str, tuple[str, ...]]:
    csv = tmp_path / f"{name.replace(' ', '-')}.csv"
    frame.write_csv(csv)
    return {a.name: a.hierarchy.from_data if a.hierarchy is not None else () for a in draft_schema(csv).attributes}


def _every_read_choice_marked(markers: dict[str, tuple[str, ...]]) -> bool:
    return bool(markers["sex"]) and bool(markers["smoker"])


def test_the_drafts_choices_are_marked_on_both_neighbours(tmp_path):
    drafted = {name: _markers(tmp_path, name, frame) for name, frame in _tables().items()}
    assert drafted["two values"]["sex"] == ("hierarchy flat",)
    assert drafted["one row more, a third value"]["sex"] != ()  # (groups: a choice read from the data too)
    for markers in drafted.values():
        assert _every_read_choice_marked(markers)
        assert markers["age"] == ()  # age: intervals over the public range 0-120, nothing read


def test_the_check_fails_when_a_flat_choice_goes_unmarked(tmp_path, monkeypatch):
    """The broken variant: the flat hierarchy written without its marker, as before the fix."""
    unmarked = hierarchy_draft._flat
    monkeypatch.setattr(hierarchy_draft, "_flat", lambda reason, counted=True: unmarked(reason, counted=False))
    markers = _markers(tmp_path, "two values", _tables()["two values"])
    assert not _every_read_choice_marked(markers)


@pytest.mark.parametrize("column", [pl.Series("flag", [True, False] * 50)])
def test_a_boolean_column_is_flat_by_its_type(tmp_path, column):
    """True or false: nothing between a value and * whatever the rows hold, so nothing to mark."""
    suggestion = hierarchy_draft.suggest_hierarchy("flag", column, "categorical")
    assert suggestion.kind == "flat" and suggestion.from_data == ()
    assert hierarchy_draft.suggest_hierarchy("flag", column.head(1), "categorical").from_data == ()
