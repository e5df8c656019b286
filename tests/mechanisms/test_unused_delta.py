"""A δ > 0 given to a query that would not use it (the Laplace mechanism is ε-DP; only a
histogram without a public domain spends δ, on its threshold) is refused in one line before
anything is charged: accepted, it was dropped without a word (the answer said δ = 0)."""

from __future__ import annotations

import pytest

from cli_helpers import run_for_error
from crowdsafe import api
from crowdsafe.errors import ParameterError

EXPECTED = "--delta applies to the Gaussian mechanism and to histograms without a public domain"


@pytest.mark.parametrize("text", ["count", "sum(age) clamp 0..100", "median(age) clamp 0..100"])
def test_a_query_that_does_not_use_delta_refuses_it_before_reading(capsys, tmp_path, text):
    ledger = tmp_path / "ledger.sqlite3"
    code, err = run_for_error(capsys, "query", tmp_path / "absent.csv", text, "--epsilon", "1", "--delta", "1e-6",
                              "--ledger", ledger)
    assert code == 2 and EXPECTED in err and "absent.csv" not in err, err
    assert len(err.strip().splitlines()) == 1 and not ledger.exists()


def test_a_histogram_over_public_values_refuses_it_before_any_charge(tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    with pytest.raises(ParameterError, match="the delta parameter applies to the Gaussian mechanism"):
        api.query("adult", "histogram sex", epsilon=1.0, delta=1e-6, ledger=str(ledger), budget=(5.0, 1e-5))
    assert not ledger.exists() or not api.ledger_report(str(ledger))["datasets"]

