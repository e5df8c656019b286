"""A pandas column that mixes kinds of values is named (found by an API sweep, 2026-11-30): after
``pd.concat`` of a table whose ``zip`` was read as numbers with a row whose ``zip`` is text, every
function refused it with Arrow's words, "cannot convert the pandas DataFrame: Could not convert
'99999' with type str: tried to convert to int64", which name a value but not the column."""

from __future__ import annotations

import pandas as pd
import pytest

from crowdsafe import api
from crowdsafe.data import load
from crowdsafe.errors import CUSTODIAN_REFUSAL, InputError

MIXED = pd.DataFrame({"age": [30, 40] * 5, "zip": [13053, "99999"] * 5})


def test_the_column_that_cannot_be_converted_is_named():
    with pytest.raises(InputError, match=r"^cannot convert column 'zip' of the pandas DataFrame: .*give it one type"
                       ) as refused:
        load(MIXED)
    assert str(refused.value).endswith(CUSTODIAN_REFUSAL)  # which column mixes kinds depends on the rows


def test_it_is_refused_before_a_ledger_is_made(tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    with pytest.raises(InputError, match="column 'zip'"):
        api.query(MIXED, "count", epsilon=1.0, ledger=ledger, budget=(1.0, 0.0))
    assert not ledger.exists()
    assert load(MIXED.astype({"zip": str})).frame.height == 10  # as the message says
