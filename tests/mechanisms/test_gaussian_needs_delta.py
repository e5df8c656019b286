"""``--mechanism gaussian`` without ``--delta`` (δ defaults to 0): the refusal says to give a δ, or
to use the Laplace mechanism, instead of only the range δ must lie in; nothing is charged."""

from __future__ import annotations

from cli_helpers import run_for_error
from crowdsafe.privacy.ledger import Ledger


def test_a_gaussian_without_delta_is_told_to_give_one(capsys, tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    code, err = run_for_error(capsys, "query", "adult", "count", "--epsilon", "0.1", "--mechanism", "gaussian",
                              "--ledger", ledger, "--budget", "1,1e-6")
    assert code != 0 and "--delta" in err and "Laplace" in err and len(err.strip().splitlines()) == 1
    assert not ledger.exists() or not Ledger(ledger).entries()
