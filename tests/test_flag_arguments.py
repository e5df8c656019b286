"""A True/False parameter given anything else is refused naming it (found by an API sweep,
2026-11-30). A text such as ``"no"`` is true in Python, so it was taken as True:
``change_budget(..., allow_raise="no")`` raised the budget, and ``anonymize(..., out=FILE,
force="no")`` replaced a file crowdsafe did not write. ``decimal_comma`` already refused one."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError

FRAME = pl.DataFrame({"age": [30, 31, 32, 40, 41, 42, 50, 51] * 3, "sex": ["F", "M"] * 12})


def test_a_text_does_not_allow_a_raise(tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    api.set_budget(FRAME, epsilon=1.0, ledger=ledger)
    with pytest.raises(ParameterError, match=r"^allow_raise must be True or False, got 'no'") as refused:
        api.change_budget(FRAME, epsilon=5.0, delta=0.0, allow_raise="no", ledger=ledger)
    assert refused.value.parameter == "allow_raise"
    assert api.set_budget(FRAME, epsilon=1.0, ledger=ledger).budget.epsilon == 1.0  # not raised


def test_a_text_does_not_force_a_file_over(tmp_path):
    foreign = tmp_path / "mine.csv"
    foreign.write_text("x\n1\n", encoding="utf-8")
    with pytest.raises(ParameterError, match=r"^force must be True or False, got 'no'"):
        api.anonymize(FRAME, k=2, out=foreign, force="no")
    assert foreign.read_text(encoding="utf-8") == "x\n1\n"


@pytest.mark.parametrize(("call", "parameter"), [
    (lambda: api.publish(FRAME, epsilon=1.0, ledger=None, report="no"), "report"),
    (lambda: api.publish(FRAME, epsilon=1.0, ledger=None, escape_formulas=0), "escape_formulas"),
    (lambda: api.perturb(FRAME, gamma=0.5, d=0.1, exploratory="no"), "exploratory"),
    (lambda: api.plan_perturbation(FRAME, gamma=0.5, d=0.1, exploratory="yes"), "exploratory"),
    (lambda: api.perturb(FRAME, gamma=0.5, d=0.1, exploratory=True, force="no"), "force"),
    (lambda: api.plan_publish(1.0, table_counts="no"), "table_counts"),
    (lambda: api.plan_publish(1.0, declared_domains="no"), "declared_domains"),
])
def test_every_flag_is_a_boolean(call, parameter):
    with pytest.raises(ParameterError, match=f"^{parameter} must be True") as refused:
        call()
    assert refused.value.parameter == parameter


def test_a_numpy_boolean_is_a_boolean():
    assert api.anonymize(FRAME, k=2, report=np.False_, force=np.bool_(False)).k == 2
