"""The streamed DP query (a file over EAGER_BYTES, read batch by batch) on D and D minus one row.

The query cases of test_neighbours.py again, with the streaming threshold at 0 bytes so the
Polars engine's query reads the input as a :class:`~crowdsafe.data.streamed_table.StreamedTable`
(:mod:`crowdsafe.engines.streamed_query`): every field not declared a DP output or custodian-only
must come out identical on neighbours and no field may be a digest of the data (the check of
test_streamed_neighbours.py, which also asserts that the input was streamed).
"""

from __future__ import annotations

import pytest
from test_neighbours import CASES, prepared  # noqa: F401 (a fixture)
from test_streamed_neighbours import streamed  # noqa: F401 (a fixture)
from test_streamed_neighbours import test_streamed_publish_only_dp_outputs_differ as check_pair

STREAMED = ("query-count", "query-histogram", "query-histogram-private-domain", "query-sum", "query-mean-custodian",
            "query-mean", "query-quantile", "api-query-sum", "query-inferred-identifier")
PAIRS = [pytest.param(c, r, id=f"{c.name}-{r}") for c in CASES if c.name in STREAMED
         for r in (("first", "unique-qi", "large-class") if c.name in ("query-sum", "query-mean") else ("first",))]


@pytest.mark.parametrize(("case", "removal"), PAIRS)
def test_streamed_query_only_dp_outputs_differ(case, removal, base_frame, prepared, tmp_path, streamed):  # noqa: F811
    check_pair(case, removal, base_frame, prepared, tmp_path, streamed)
