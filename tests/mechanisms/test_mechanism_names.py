"""``--mechanism`` under the names other libraries give the mechanisms crowdsafe runs: its Laplace
is the discrete Laplace (the geometric mechanism), its Gaussian the discrete Gaussian; case does
not matter. The answer is the one under crowdsafe's own name."""

from __future__ import annotations

import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import api
from crowdsafe.errors import ParameterError

TABLE = pl.DataFrame({"age": [23, 35, 47, 52, 61, 38, 44, 29]})


@pytest.mark.parametrize(("written", "mechanism", "delta"), [
    ("Laplace", "laplace", 0.0), ("geometric", "laplace", 0.0), ("discrete_laplace", "laplace", 0.0),
    ("GAUSSIAN", "gaussian", 1e-6), ("discrete Gaussian", "gaussian", 1e-6),
])
def test_a_library_name_gives_the_mechanism(written, mechanism, delta):
    mine = api.query(TABLE, "sum(age) clamp 0..100", epsilon=1.0, delta=delta, mechanism=mechanism, seed=5, ledger=None)
    theirs = api.query(TABLE, "sum(age) clamp 0..100", epsilon=1.0, delta=delta, mechanism=written, seed=5,
                       ledger=None)
    assert theirs.value == mine.value and theirs.mechanism == mine.mechanism


def test_other_names_are_still_refused_and_the_command_line_takes_them(capsys, tmp_path):
    with pytest.raises(ParameterError, match="use 'laplace' or 'gaussian'"):
        api.query(TABLE, "count", epsilon=1.0, mechanism="staircase", seed=5, ledger=None)
    data = tmp_path / "t.csv"
    TABLE.write_csv(data)
    code, out, _ = run_command(capsys, "query", str(data), "count", "--epsilon", "1", "--delta", "1e-6",
                               "--mechanism", "Gaussian", "--seed", "3", "--no-ledger")
    assert code == 0 and "discrete Gaussian" in out
