"""Schema shapes no table can fix are refused in one line, naming the column, when the schema is
read: before any data is read or any budget charged (found by a black-box sweep, F12: a repeated
order entry crashed check, an empty level of cuts crashed every command, an empty group and
unsorted or repeated cuts were accepted silently)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_for_error
from crowdsafe.data.builders import intervals
from crowdsafe.errors import HierarchyError

_HEAD = '[attributes.sex]\ntype = "categorical"\n[attributes.age]\ntype = "integer"\n'
_CASES = {
    "order repeated": (_HEAD + '[attributes.edu]\ntype = "ordinal"\norder = ["hs", "ba", "hs", "ma"]\n',
                       "'edu'", "order lists 'hs' twice"),
    "fanout order repeated": (_HEAD + '[attributes.edu]\ntype = "ordinal"\n'
                              'hierarchy = { fanout = [2], order = ["hs", "ba", "hs", "ma"] }\n',
                              "'edu'", "order lists 'hs' twice"),
    "cuts empty": ('[attributes.sex]\ntype = "categorical"\n[attributes.age]\ntype = "integer"\n'
                   'hierarchy = { cuts = [[]] }\n[attributes.edu]\ntype = "categorical"\n',
                   "'age'", "level 1 of cuts is empty"),
    "cuts unsorted": ('[attributes.sex]\ntype = "categorical"\n[attributes.age]\ntype = "integer"\n'
                      'hierarchy = { cuts = [[50, 30, 70]] }\n[attributes.edu]\ntype = "categorical"\n',
                      "'age'", "not sorted at 30"),
    "cuts repeated": ('[attributes.sex]\ntype = "categorical"\n[attributes.age]\ntype = "integer"\n'
                      'hierarchy = { cuts = [[30, 70], [30, 30]] }\n[attributes.edu]\ntype = "categorical"\n',
                      "'age'", "level 2 of cuts repeats 30"),
    "group empty": (_HEAD + '[attributes.edu]\ntype = "categorical"\n[[attributes.edu.hierarchy.groups]]\n'
                    'g1 = []\ng2 = ["hs", "ba", "ma", "phd"]\n', "'edu'", "group 'g1' of level 1 is empty"),
}


def _table(path: Path) -> Path:
    rng = np.random.default_rng(1)
    pl.DataFrame({"sex": rng.choice(["F", "M"], 200), "age": rng.integers(20, 80, 200),
                  "edu": rng.choice(["hs", "ba", "ma", "phd"], 200)}).write_csv(path)
    return path


@pytest.mark.parametrize("case", sorted(_CASES))
def test_a_schema_shape_no_table_can_fix_is_refused_before_anything_is_charged(capsys, tmp_path, case):
    text, column, said = _CASES[case]
    data = _table(tmp_path / "d.csv")
    schema = tmp_path / "s.toml"
    schema.write_text(text, encoding="utf-8")
    for argv in (["check", data, "--k", "5"],
                 ["anonymize", data, "--k", "5", "--out", tmp_path / "a.csv"],
                 ["publish", data, "--epsilon", "2", "--delta", "1e-5", "--budget", "10,0.1",
                  "--out", tmp_path / "p.csv"]):
        code, err = run_for_error(capsys, *argv, "--schema", schema)
        assert code == 2 and err.count("\n") == 1 and column in err and said in err, (argv[0], err)
    assert not list(tmp_path.glob("a*")) and not list(tmp_path.glob("p*"))


@pytest.mark.parametrize("cuts, said", [([[]], "level 1 of cuts is empty"), ([[40, 20]], "not sorted at 20"),
                                        ([[20, 20]], "repeats 20")])
def test_intervals_refuse_the_same_cuts_in_python(cuts, said):
    with pytest.raises(HierarchyError, match=said):
        intervals("x", [1, 30, 50], cuts=cuts)
