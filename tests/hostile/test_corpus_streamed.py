"""The bad-input corpus's publish cases again with every input file streamed (``EAGER_BYTES`` at 0:
the Polars engine reads a file batch by batch, :mod:`crowdsafe.data.streamed_table`): the same
clean failure, one line, nothing written, the ledger untouched. Inputs the streamed read cannot
take as the loader does (compressed, not CSV text, a value the declared type refuses) go to the
in-memory read, whose message is the one checked."""

from __future__ import annotations

from dataclasses import replace

import pytest
from corpus import CASES, PUBLISH, _bad_files_for
from test_corpus import _case_param, template_ledger  # noqa: F401 (a fixture)
from test_corpus import test_bad_input_fails_with_one_line_and_leaves_nothing as check_case

from crowdsafe.data import streaming

PUBLISH_CASES = [_case_param(c) for c in CASES if c.argv[0] == "publish" and "--plan-only" not in c.argv]


@pytest.mark.parametrize("case", PUBLISH_CASES)
def test_streamed_publish_fails_the_same_way(case, tmp_path, template_ledger, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    check_case(case, tmp_path, template_ledger, capsys, monkeypatch)


def _plan_only(case) -> object:
    return _case_param(replace(case, id=f"{case.id}-plan-only", argv=(*case.argv, "--plan-only")))


# check (every case) and publish --plan-only (the bad files and the table's options) read the file
# batch by batch too (crowdsafe.models.check_report.streamed_check_report, cli/publish.py)
CHECK_CASES = [_case_param(c) for c in CASES if c.argv[0] == "check"]
PLAN_IDS = {c.id for c in _bad_files_for("publish", PUBLISH)} | {
    f"publish-{name}" for name in ("ragged-rows", "qi-unknown", "qi-empty", "sensitive-unknown", "columns-unknown",
                                   "columns-repeated", "columns-empty", "target-unknown", "target-not-in-columns",
                                   "entropy-without-hierarchies")}
PLAN_CASES = [_plan_only(c) for c in CASES if c.id in PLAN_IDS]


@pytest.mark.parametrize("case", [*CHECK_CASES, *PLAN_CASES])
def test_streamed_check_and_plan_fail_the_same_way(case, tmp_path, template_ledger, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    check_case(case, tmp_path, template_ledger, capsys, monkeypatch)
