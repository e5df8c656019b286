"""A column may be named like any column crowdsafe adds for itself (``len``, ``count``, ``__rows``...):
every command that reads such a table runs, or refuses in one line naming the column (exit 2),
never exits with an internal error (found by a black-box sweep, F5: ``len`` crashed anonymize,
compare and linkage; ``__rows``, ``__held``, ``__class``, ``__code``, ``__share`` the attacks and
compare; ``count`` gave the lattice search a wrong message)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_for_error

#: The names the sweep found, and every internal column name in src/crowdsafe (grep for
#: pl.col("__, alias("__, "len", and the module constants such as COUNT, MASS, RECORD).
FAST = ["len", "count", "__held", "__class", "__code"]  # one per path the sweep found broken
SLOW = ["__rows", "__share", "mass", "class",
        "size", "index", "n", "key", "own", "joined", "label", "value", "text", "cell", "record",
        "rows", "runs", "__count", "__key", "__guess", "__t", "__tuple", "__n_held", "__high", "__low", "__bound",
        "__mask", "__members", "__open", "__operator", "__range", "__set", "__stripped", "__hit", "__id", "__in",
        "__n", "__only", "__s", "__v", "__size", "__value", "__with_missing", "__crowdsafe_rows", "__crowdsafe_key",
        "__crowdsafe_count", "__crowdsafe_random_key", "__crowdsafe_rank", "__crowdsafe_short_row",
        "__crowdsafe_index", "__crowdsafe_repeat", "__crowdsafe_one", "__crowdsafe_range", "__index_level_0__"]


def _table(path: Path, names: list[str]) -> Path:
    rng = np.random.default_rng(7)
    n = 120
    columns = {"age": rng.integers(20, 70, n), "sex": rng.choice(["F", "M"], n)}
    columns.update({name: rng.choice(["a", "b", "c"], n) for name in names})
    pl.DataFrame({**columns, "disease": rng.choice(["flu", "none", "cold"], n)}).write_csv(path)
    return path


def _commands(tmp: Path, data: Path, names: list[str]) -> list[list[object]]:
    """Every command over a table with a column of each of ``names``, each of them a
    quasi-identifier, a sensitive column, a query's cell and a perturbed attribute."""
    qi = ",".join(["age", "sex", *names])
    out = {a: tmp / f"{a}.csv" for a in ("mondrian", "mdav", "lattice")}
    anonymize = [["anonymize", data, "--algorithm", a, "--k", "5", "--qi", qi, "--sensitive", "disease",
                  "--out", out[a], "--no-report"] for a in out]
    each = [argv for name in names for argv in (
        ["check", data, "--qi", "age,sex", "--sensitive", name, "--k", "3"],
        ["query", data, f"count where {name} = 'a'", "--epsilon", "0.1", "--budget", "1000,0.5"],
        ["query", data, f"histogram {name} in ('a','b','c')", "--epsilon", "0.1"],
        ["estimate", tmp / "v.csv", f"count where {name} = 'a'"],
    )]
    return [
        *anonymize,
        ["check", data, "--qi", qi, "--sensitive", "disease", "--k", "3"],
        ["compare", data, out["mondrian"], "--k", "5"],
        ["compare", data, out["mondrian"], "--k", "5", "--target", "disease"],
        ["check", out["mondrian"], "--original", data, "--qi", qi, "--sensitive", "disease"],
        ["attack", "intersection", out["mondrian"], out["lattice"], "--targets", data, "--qi", qi,
         "--sensitive", "disease"],
        ["attack", "linkage", out["mondrian"], "--external", data, "--qi", qi],
        ["attack", "linkage", out["mdav"], "--external", data, "--qi", qi],
        ["publish", data, "--epsilon", "2", "--delta", "1e-4", "--budget", "1000,0.5", "--qi", qi,
         "--sensitive", "disease", "--out", tmp / "p.csv", "--no-report"],
        ["perturb", "--no-ledger", data, "--c", "0.5", "--gamma", "0.6", "--attributes", ",".join(["sex", *names]),
         "--exploratory", "--seed", "1", "--out", tmp / "v.csv"],
        *each,
    ]


def _sweep(capsys, tmp_path: Path, names: list[str]) -> None:
    """Run every command; a refusal naming one of the columns is allowed (one line, exit 2), but
    with several columns it may hide the others' paths: then each column is swept alone."""
    data = _table(tmp_path / "t.csv", names)
    failures, refused = [], False
    for argv in _commands(tmp_path, data, names):
        code, err = run_for_error(capsys, *argv)
        if code == 0:
            continue
        if code == 2 and err.count("\n") == 1 and any(f"'{name}'" in err for name in names):
            refused = True  # refused in one line naming a column
            continue
        failures.append(f"{argv[0]} {argv[1] if argv[0] == 'attack' else argv[2:4]} -> {code}: {err.strip()[-200:]}")
    assert not failures, "\n".join(failures)
    if refused and len(names) > 1:
        for j, name in enumerate(names):
            folder = tmp_path / f"alone-{j}"
            folder.mkdir()
            _sweep(capsys, folder, [name])


@pytest.mark.parametrize("name", FAST)
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_column_named_like_an_internal_column(capsys, tmp_path, name):
    _sweep(capsys, tmp_path, [name])


BATCH = 6  # the other names, several columns per table (each still a quasi-identifier, a cell...)


@pytest.mark.slow
@pytest.mark.parametrize("names", [SLOW[i: i + BATCH] for i in range(0, len(SLOW), BATCH)], ids=lambda n: n[0])
def test_columns_named_like_internal_columns_more_names(capsys, tmp_path, names):
    _sweep(capsys, tmp_path, names)


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_sweep_can_fail(capsys, tmp_path, monkeypatch):
    # a command that crashes on a column's name is reported (an internal error, as 'len' gave)
    from crowdsafe import api

    def crash(*args, **kwargs):
        raise RuntimeError("the column 'len' is duplicated")

    monkeypatch.setattr(api, "check", crash)
    with pytest.raises(AssertionError, match="check .* -> 1"):
        _sweep(capsys, tmp_path, ["len"])


def test_the_classifier_counts_test_rows_beside_a_column_named_len():
    from crowdsafe.data import load
    from crowdsafe.metrics.classifier import _test_table

    data = load(pl.DataFrame({"len": ["a", "b", "a", "c"], "sex": ["F", "M", "F", "F"]}), name="t")
    table = _test_table(data, data, ["len", "sex"])
    assert int(table.counts.sum()) == 4 and sorted(table.counts.tolist()) == [1, 1, 2]
