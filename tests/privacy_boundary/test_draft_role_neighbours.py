"""The roles a schema draft reads from the values are marked ``from_data``, so that a release on the
unedited draft is never certified fit.

A column of near-unique text (90% distinct) was drafted ``role = "identifier"`` and an empty
column ``role = "insensitive"``, unmarked; the same table with one row more (the text 89.96%
distinct, the empty column holding a value) drafted both as quasi-identifiers. On the unedited
drafts the release published four columns or six, with another plan (β, ε1, the lattice), and
both were certified fit (found by a neighbouring-table audit). Now each drafted role the values
chose carries ``"role identifier"`` or ``"role insensitive"``, a release on either draft lists
it among its unfit reasons whichever columns it publishes, and the app asks the custodian to
confirm it.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.data import schema_draft
from crowdsafe.data.schema_draft import draft_schema

ROWS = 2000


def _pair(tmp_path: Path) -> tuple[Path, Path]:
    rng = np.random.default_rng(5)
    ref = [f"R{i:05d}" for i in range(1800)] + [f"R{int(i):05d}" for i in rng.integers(0, 1800, ROWS - 1800)]
    table = pl.DataFrame({"age": rng.integers(18, 80, ROWS), "sex": rng.choice(["F", "M"], ROWS),
                          "ref": ref, "remark": pl.Series([None] * ROWS, dtype=pl.String),
                          "diagnosis": rng.choice(["flu", "cold", "none"], ROWS)})
    added = pl.DataFrame({"age": [40], "sex": ["F"], "ref": ["R00001"], "remark": ["x"], "diagnosis": ["flu"]},
                         schema=table.schema)
    table.write_csv(tmp_path / "d.csv")
    pl.concat([table, added]).write_csv(tmp_path / "d1.csv")
    return tmp_path / "d.csv", tmp_path / "d1.csv"


def _roles(csv: Path) -> tuple[Path, dict[str, tuple[str, list[str]]]]:
    toml = draft_schema(csv).write(csv.with_suffix(".toml"))
    attributes = tomllib.loads(toml.read_text(encoding="utf-8"))["attributes"]
    return toml, {name: (spec["role"], spec.get("from_data", [])) for name, spec in attributes.items()}


def _unfit(csv: Path, toml: Path, out: Path) -> dict:
    api.publish(str(csv), epsilon=1.0, delta=1e-6, schema=str(toml), seed=7, ledger=None, out=str(out), report=False)
    return json.loads(out.with_name(out.stem + ".certificate.json").read_text(encoding="utf-8"))


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_roles_the_values_chose_are_marked_and_keep_any_release_unfit(tmp_path):
    d, d1 = _pair(tmp_path)
    (toml, roles), (toml1, roles1) = _roles(d), _roles(d1)
    assert roles["ref"][0] == "identifier" and "role identifier" in roles["ref"][1]
    assert roles["remark"][0] == "insensitive" and "role insensitive" in roles["remark"][1]
    assert roles1["ref"][0] == roles1["remark"][0] == "quasi-identifier"  # the neighbour: one row more
    for csv, schema, name in ((d, toml, "r.csv"), (d1, toml1, "r1.csv")):
        certificate = _unfit(csv, schema, tmp_path / "out" / name)
        assert certificate["fit_for_release"] is False
    unreviewed = _unfit(d, toml, tmp_path / "out" / "again.csv")["unreviewed_schema"]
    assert unreviewed["ref"] == ["role identifier"] and unreviewed["remark"] == ["role insensitive"]


def test_the_role_rule_can_fail(tmp_path, monkeypatch):
    """The broken variant: a draft that does not mark the roles its values chose lets a release on
    D leave the roles out of its unfit reasons, although D' publishes other columns."""
    d, _ = _pair(tmp_path)
    drafted = schema_draft._drafted

    def unmarked(name, column):
        from dataclasses import replace

        return replace(drafted(name, column), role_from_data=())

    monkeypatch.setattr(schema_draft, "_drafted", unmarked)
    toml, roles = _roles(d)
    assert roles["ref"] == ("identifier", ["type categorical"])
    unreviewed = _unfit(d, toml, tmp_path / "out" / "r.csv").get("unreviewed_schema") or {}
    assert "ref" not in unreviewed and "remark" not in unreviewed


@pytest.mark.parametrize("changed", [False, True], ids=["confirmed", "role changed"])
def test_the_app_review_clears_a_role_marker_by_confirmation_or_a_new_role(tmp_path, changed):
    from crowdsafe.app.workspace import Review

    d, _ = _pair(tmp_path)
    draft = draft_schema(d)
    review = Review(draft, roles={"ref": "quasi-identifier"} if changed else {},
                    confirmed=set() if changed else {("ref", "role identifier")})
    ref = next(a for a in review.effective().attributes if a.name == "ref")
    assert ref.role_from_data == ()
    untouched = next(a for a in Review(draft, roles={}).effective().attributes if a.name == "ref")
    assert untouched.role_from_data == ("role identifier",)
