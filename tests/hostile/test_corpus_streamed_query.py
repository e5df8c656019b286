"""The bad-input corpus's query cases again with every input file streamed (``EAGER_BYTES`` at 0:
the Polars engine's query reads a file batch by batch, :mod:`crowdsafe.engines.streamed_query`):
the same clean failure, one line, nothing written, the ledger untouched. Inputs the streamed read
cannot take as the loader does go to the in-memory read, whose message is the one checked."""

from __future__ import annotations

import pytest
from corpus import CASES
from test_corpus import _case_param, template_ledger  # noqa: F401 (a fixture)
from test_corpus import test_bad_input_fails_with_one_line_and_leaves_nothing as check_case

from crowdsafe.data import streaming

QUERY_CASES = [_case_param(c) for c in CASES if c.argv[0] == "query"]


@pytest.mark.parametrize("case", QUERY_CASES)
def test_streamed_query_fails_the_same_way(case, tmp_path, template_ledger, capsys, monkeypatch):  # noqa: F811
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    check_case(case, tmp_path, template_ledger, capsys, monkeypatch)
