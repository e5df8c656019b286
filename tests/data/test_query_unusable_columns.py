"""A DP query on a table holding a column crowdsafe cannot use (a duration, a nested column) that
the query does not name (found by an API sweep, 2026-11-30): ``query(df, "count")`` on a pandas
frame with a timedelta column was refused ("column 'wait' of the data is a duration column,
which crowdsafe cannot publish, measure or query"), since every column of an undeclared table is
a quasi-identifier, although the query reads none of them. The column is now dropped with a note,
as publish and anonymize drop one their roles leave out; one the query names is still refused."""

from __future__ import annotations

import pandas as pd
import pytest

from crowdsafe import api
from crowdsafe.errors import SchemaError

PLAIN = pd.DataFrame({"age": [30, 31, 32, 40, 41, 42] * 4, "sex": ["F", "M"] * 12})
TIMED = PLAIN.assign(wait=pd.to_timedelta(range(24), unit="s"))


def test_a_column_the_query_does_not_name_is_dropped_with_a_note(capsys):
    answer = api.query(TIMED, "count where sex = 'F'", epsilon=1.0, ledger=None, seed=3)
    assert "column 'wait' of the data is not read" in capsys.readouterr().err
    assert answer.value == api.query(PLAIN, "count where sex = 'F'", epsilon=1.0, ledger=None, seed=3).value


def test_a_column_the_query_names_is_refused_and_other_runs_keep_their_roles():
    with pytest.raises(SchemaError, match="column 'wait' of the data is a duration column"):
        api.query(TIMED, "count where wait > 3", epsilon=1.0, ledger=None)
    with pytest.raises(SchemaError, match="column 'wait' of the data is a duration column"):
        api.check(TIMED)  # every column a quasi-identifier: as before, after a query too
