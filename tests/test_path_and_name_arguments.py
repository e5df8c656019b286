"""Paths, names and texts given as something else are refused naming the parameter (found by an
API sweep, 2026-11-30), before anything is read or a ledger made: ``out=5`` (and
``custodian_report``, ``certificate``) raised pathlib's "expected str, bytes or os.PathLike object,
not int", ``name=5`` "'int' object has no attribute 'strip'" from inside the ledger,
``attack(suppressed=5)`` "'int' object is not iterable", and ``change_budget(reason=5)`` was
recorded as a number."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError

FRAME = pl.DataFrame({"age": [30, 31, 32, 40, 41, 42, 50, 51] * 3, "sex": ["F", "M"] * 12})


@pytest.mark.parametrize(("parameter", "call"), [
    ("out", lambda ledger: api.anonymize(FRAME, k=2, out=5)),
    ("out", lambda ledger: api.publish(FRAME, epsilon=1.0, ledger=ledger, budget=(2.0, 1e-5), out=5)),
    ("custodian_report", lambda ledger: api.publish(FRAME, epsilon=1.0, ledger=ledger, budget=(2.0, 1e-5),
                                                    custodian_report=5)),
    ("out", lambda ledger: api.perturb(FRAME, gamma=0.5, d=0.1, exploratory=True, out=5)),
    ("certificate", lambda ledger: api.perturb(FRAME, gamma=0.5, d=0.1, exploratory=True, out="v.csv",
                                               certificate=5)),
    ("certificate", lambda ledger: api.estimate("v.csv", "count", certificate=5)),
    ("name", lambda ledger: api.query(FRAME, "count", epsilon=0.1, ledger=ledger, budget=(1.0, 0.0), name=5)),
    ("name", lambda ledger: api.publish(FRAME, epsilon=1.0, ledger=ledger, budget=(2.0, 1e-5), name=5)),
    ("name", lambda ledger: api.set_budget(FRAME, epsilon=1.0, ledger=ledger, name=5)),
    ("suppressed", lambda ledger: api.attack(FRAME, FRAME, qi="age", sensitive="sex", suppressed=5)),
])
def test_refused_naming_the_parameter_before_a_ledger_is_made(parameter, call, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ledger = tmp_path / "ledger.sqlite3"
    with pytest.raises(ParameterError, match=f"^{parameter} must be ") as refused:
        call(ledger)
    assert refused.value.parameter == parameter
    assert not ledger.exists() and not (tmp_path / "v.csv").exists()


def test_a_reason_is_a_text(tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    api.set_budget(FRAME, epsilon=1.0, ledger=ledger)
    with pytest.raises(ParameterError, match="^reason must be "):
        api.change_budget(FRAME, epsilon=0.5, delta=0.0, reason=5, ledger=ledger)
