"""A ``budget`` with ``ledger=None`` is refused, as the command line refuses ``--no-ledger
--budget`` and ``perturb --budget`` without ``--ledger`` (found by an API sweep, 2026-11-30): the
API ignored it, so ``query(df, ..., ledger=None, budget=(1, 0))`` answered as if the user had not
asked for a budget to be registered and enforced. And ``perturb(certificate=...)`` without ``out``
(no view written, so no certificate beside it) was ignored likewise."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError

FRAME = pl.DataFrame({"age": [30, 31, 32, 40, 41, 42, 50, 51] * 3, "sex": ["F", "M"] * 12})


@pytest.mark.parametrize("call", [
    lambda: api.query(FRAME, "count", epsilon=0.5, ledger=None, budget=(1.0, 0.0)),
    lambda: api.publish(FRAME, epsilon=1.0, ledger=None, budget=(5.0, 1e-5), report=False),
    lambda: api.perturb(FRAME, gamma=0.5, d=0.1, exploratory=True, ledger=None, budget=(1.0, 0.0)),
], ids=["query", "publish", "perturb"])
def test_a_budget_without_a_ledger_is_refused(call):
    with pytest.raises(ParameterError, match=r"^budget registers the dataset's budget in a ledger") as refused:
        call()
    assert refused.value.parameters == ("budget", "ledger")


def test_a_certificate_path_without_a_view_is_refused(tmp_path):
    with pytest.raises(ParameterError, match="^the certificate parameter names where") as refused:
        api.perturb(FRAME, gamma=0.5, d=0.1, exploratory=True, certificate=tmp_path / "view.certificate.json")
    assert refused.value.parameter == "certificate"
