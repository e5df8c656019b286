"""The streamed publish (a file over EAGER_BYTES, read batch by batch) on D and D minus one row.

The publish cases of test_neighbours.py again, with the streaming threshold at 0 bytes so the
Polars engine reads the input as a :class:`~crowdsafe.data.streamed_table.StreamedTable`: every
field not declared a DP output or custodian-only must come out identical on neighbours, no field
may be a digest of the data, and the API hands back no table but the release's own rows. Each run
also checks that the table was streamed (not read whole).
"""

from __future__ import annotations

import pytest
from boundary_data import removals
from boundary_helpers import judge, matches
from test_neighbours import CASES, _digests, _times_masked, prepared, run_case  # noqa: F401 (a fixture)

import crowdsafe.data.streamed_table as streamed_table
import crowdsafe.data.streaming as streaming

STREAMED = ("publish-fixed", "publish-exponential", "publish-2-exponential", "publish-heavy-suppression",
            "publish-inferred-identifiers", "api-publish-fixed", "api-publish-exponential-2")
PAIRS = [pytest.param(c, r, id=f"{c.name}-{r}") for c in CASES if c.name in STREAMED
         for r in (("first", "unique-qi", "large-class") if c.name in ("publish-fixed", "publish-exponential")
                   else ("first",))]


@pytest.fixture
def streamed(monkeypatch) -> list[str]:
    """Stream every input file; the list of the files read as a StreamedTable."""
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    read = streamed_table.read_streamed
    seen: list[str] = []

    def spy(path, **options):
        table = read(path, **options)
        if table is not None:
            seen.append(str(path))
        return table

    monkeypatch.setattr(streamed_table, "read_streamed", spy)
    return seen


@pytest.mark.parametrize(("case", "removal"), PAIRS)
def test_streamed_publish_only_dp_outputs_differ(case, removal, base_frame, prepared, tmp_path, streamed):  # noqa: F811
    full = run_case(case, base_frame, tmp_path / "D", prepared)
    row = removals(base_frame)[removal]
    neighbour = base_frame.filter(base_frame.with_row_index("_r")["_r"] != row)
    smaller = run_case(case, neighbour, tmp_path / "D-1", prepared)
    assert len(streamed) >= 2, f"{case.name}: the input was not streamed"
    for side, art in (("D", full), ("D-1", smaller)):
        if case.exit is not None:
            assert art.get("exit", 0) == case.exit, f"{case.name} on {side}: exit {art.get('exit')}: {art['stderr']}"
    tables = {side: art.pop("_tables", []) for side, art in (("D", full), ("D-1", smaller))}
    full, smaller = _times_masked(full), _times_masked(smaller)
    digests = _digests(tmp_path / "D") + _digests(tmp_path / "D-1")
    verdict = judge(full, smaller, case.classification, digests)
    problems = [str(d) for d in verdict.leaks]
    for side, paths in tables.items():
        problems += [f"{side}: the returned object holds a table at {p} (only the release's rows may be handed back)"
                     for p in paths if not matches(p, case.tables)]
    assert not problems, (f"{case.name} (streamed), removing the {removal} row:\n  "
                          + "\n  ".join(dict.fromkeys(problems)))
