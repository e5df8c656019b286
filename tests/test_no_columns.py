"""An empty list of published columns is refused before anything is read, by ``plan_publish`` as
by ``publish`` (found by an API sweep, 2026-11-30): ``plan_publish(1.0, columns=[])`` returned a
plan, while ``publish(..., columns=[])`` refused the same list, and only once the table was read."""

from __future__ import annotations

import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError


@pytest.mark.parametrize("given", [{"columns": []}, {"columns": [" "]}, {"attributes": []}])
def test_no_column_is_refused_by_the_plan_and_before_the_read(given, tmp_path):
    with pytest.raises(ParameterError, match="^the columns parameter names no column$"):
        api.plan_publish(1.0, **given)
    missing = tmp_path / "not-there.csv"  # refused before the table is read: its absence is not reached
    with pytest.raises(ParameterError, match="^the columns parameter names no column$"):
        api.publish(missing, epsilon=1.0, ledger=None, **given)
