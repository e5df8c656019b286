"""Partition parts in the ledger: keys an earlier crowdsafe stored as the literal was written
('30.0', '-0.0', '20200101', 'TRUE') are one part with the canonical key of the same value."""

from __future__ import annotations

import math

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crowdsafe.data import load
from crowdsafe.errors import BudgetExceeded
from crowdsafe.mechanisms.queries import answer_query
from crowdsafe.mechanisms.query_plan import QueryRequest
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.privacy.ledger_parts import merged, readings


@pytest.fixture
def ledger(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite3") as opened:
        opened.set_budget("fp", "d", 1.0, 0.0)
        yield opened


def _charge(ledger: Ledger, epsilon: float, part: tuple[str, str]) -> None:
    """A charge as an earlier crowdsafe stored it: the part's value as the query wrote it."""
    with ledger.charge("d", epsilon=epsilon, description="count", mechanism="laplace", partition=part):
        pass


@pytest.mark.parametrize(("old", "new"), [
    ("30.0", "30"), ("-0.0", "0"), ("0.0", "0"), ("3e1", "30"), ("20200101", "2020-01-01"),
    ("2020-01-01 00:00:00", "2020-01-01"), ("2020-01-01", "2020-01-01T00:00:00"), ("TRUE", "true"),
    ("2020-01-01T01:00:00+01:00", "2020-01-01T00:00:00+00:00"),
])
def test_an_old_spelling_and_the_canonical_key_are_one_part(ledger, old, new):
    _charge(ledger, 0.6, ("x", old))
    assert ledger.budget("d").spent.epsilon == pytest.approx(0.6)
    with pytest.raises(BudgetExceeded):  # 0.6 + 0.6 in one part, not max(0.6, 0.6)
        ledger.check("d", epsilon=0.6, description="count", mechanism="laplace", partition=("x", new))


def test_old_spellings_of_one_value_already_in_the_ledger_are_summed(ledger):
    """A ledger that already holds '30' and '30.0' as two parts (the reviewer's repro on main) is
    reported at their sum."""
    _charge(ledger, 0.6, ("age", "30"))
    _charge(ledger, 0.3, ("age", "30.0"))
    _charge(ledger, 0.2, ("age", "31"))
    assert ledger.budget("d").spent.epsilon == pytest.approx(0.9)


def test_different_values_stay_parallel(ledger):
    for value in ("Female", "Male", "30", "31", "30.5", "2020-01-02", "2020-01-01"):
        _charge(ledger, 0.6, ("x", value))
    assert ledger.budget("d").spent.epsilon == pytest.approx(0.6)


def test_a_new_query_after_an_old_key_through_the_query_path(ledger, tmp_path):
    schema = tmp_path / "s.toml"
    schema.write_text('[attributes.age]\ntype = "integer"\n')
    data = load(pl.DataFrame({"age": [30, 31]}), schema=schema, name="t")
    fingerprint = data.fingerprint(key=ledger.identity_key)
    ledger.set_budget(fingerprint, "t", 1.0, 0.0)
    with ledger.charge(fingerprint, epsilon=0.6, description="count where age = 30.0", mechanism="laplace",
                       partition=("age", "30.0")):
        pass
    with pytest.raises(BudgetExceeded, match="nothing was computed"):
        answer_query(data, QueryRequest("count where age = 30", epsilon=0.6, partition="age"), ledger=ledger)
    answer_query(data, QueryRequest("count where age = 31", epsilon=0.6, partition="age"), ledger=ledger,
                 randomness=1)
    assert ledger.integrity_check() == "ok"


_KEYS = st.one_of(st.integers(-10**20, 10**20).map(str), st.floats(allow_nan=False, allow_infinity=False).map(repr),
                  st.dates().map(lambda d: d.isoformat()), st.dates().map(lambda d: d.strftime("%Y%m%d")),
                  st.sampled_from(["true", "TRUE", "False", "Female", "Male", "-0.0", "0", "030"]),
                  st.text(max_size=8))


@given(st.dictionaries(_KEYS, st.floats(0.0, 1.0), max_size=8))
def test_merging_never_under_counts(spent):
    """The merged parts hold every entry once (the sum is kept), and each part costs at least what
    any of its stored keys cost: the parallel maximum never falls."""
    parts = {key: [epsilon, 0.0] for key, epsilon in spent.items()}
    groups = merged(parts)
    assert math.fsum(g[0] for g in groups) == pytest.approx(math.fsum(spent.values()))
    assert max((g[0] for g in groups), default=0.0) >= max(spent.values(), default=0.0)
    for key in spent:
        assert key in readings(key)
