"""The neighbour notions by the names other tools give them: "bounded" DP (OpenDP's change-one,
a row replaced) is ``change`` and "unbounded" DP (add or remove a row) is ``add-remove``; a name
naming neither is refused with what the two notions mean."""

from __future__ import annotations

import polars as pl
import pytest

from cli_helpers import run_command, run_for_error
from crowdsafe import api
from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.sensitivity import NEIGHBOURS, neighbour_notion

TABLE = pl.DataFrame({"age": [23, 35, 47, 52, 61, 38], "sex": ["F", "M", "F", "M", "F", "M"]})


@pytest.mark.parametrize(("name", "notion"), [
    ("bounded", "change"), ("Bounded", "change"), ("replace-one", "change"), ("change_one", "change"),
    ("unbounded", "add-remove"), ("add/remove", "add-remove"), (" Add-Remove ", "add-remove"),
    ("change", "change"), ("add-remove", "add-remove"),
])
def test_other_names_give_the_notion(name, notion):
    assert neighbour_notion(name) == notion


@pytest.mark.parametrize("notion", NEIGHBOURS)
@pytest.mark.parametrize("query", ["count", "sum(age) clamp 0..100"])
def test_an_answer_under_a_synonym_is_the_answer_under_the_notion(notion, query):
    synonym = {"change": "bounded", "add-remove": "unbounded"}[notion]
    by_name = api.query(TABLE, query, epsilon=1.0, neighbours=notion, seed=7, ledger=None)
    by_synonym = api.query(TABLE, query, epsilon=1.0, neighbours=synonym, seed=7, ledger=None)
    assert by_synonym.value == by_name.value
    assert by_synonym.sensitivity == by_name.sensitivity and by_synonym.sensitivity.neighbours == notion


def test_a_name_of_neither_is_refused_saying_what_each_means():
    with pytest.raises(ParameterError, match="'bounded' DP"):
        neighbour_notion("neighbouring")


def test_the_command_line_takes_bounded(capsys, tmp_path):
    data = tmp_path / "t.csv"
    TABLE.write_csv(data)
    code, out, _ = run_command(capsys, "query", str(data), "count", "--epsilon", "1", "--neighbours", "bounded",
                               "--seed", "3", "--no-ledger")
    assert code == 0 and "one person changed" in out
    code, err = run_for_error(capsys, "query", str(data), "count", "--epsilon", "1", "--neighbours", "both",
                              "--seed", "3", "--no-ledger")
    assert code != 0 and "'unbounded' DP" in err and "Traceback" not in err
