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


def _table(path: Path, name: str) -> Path:
    rng = np.random.default_rng(7)
    n = 120
    pl.DataFrame({"age": rng.integers(20, 70, n), "sex": rng.choice(["F", "M"], n),
                  name: rng.choice(["a", "b", "c"], n), "disease": rng.choice(["flu", "none", "cold"], n)},
                 ).write_csv(path)
    return path


def _commands(tmp: Path, data: Path, name: str) -> list[list[object]]:
    qi = f"age,sex,{name}"
    out = {a: tmp / f"{a}.csv" for a in ("mondrian", "mdav", "lattice")}
    cell = name
    anonymize = [["anonymize", data, "--algorithm", a, "--k", "5", "--qi", qi, "--sensitive", "disease",
                  "--out", out[a], "--no-report"] for a in out]
    return [
        *anonymize,
        ["check", data, "--qi", qi, "--sensitive", "disease", "--k", "3"],
        ["check", data, "--qi", "age,sex", "--sensitive", name, "--k", "3"],
        ["compare", data, out["mondrian"], "--k", "5"],
        ["compare", data, out["mondrian"], "--k", "5", "--target", "disease"],
        ["check", out["mondrian"], "--original", data, "--qi", qi, "--sensitive", "disease"],
        ["attack", "intersection", out["mondrian"], out["lattice"], "--targets", data, "--qi", qi,
         "--sensitive", "disease"],
        ["attack", "linkage", out["mondrian"], "--external", data, "--qi", qi],
        ["attack", "linkage", out["mdav"], "--external", data, "--qi", qi],
        ["publish", data, "--epsilon", "2", "--delta", "1e-4", "--budget", "1000,0.5", "--qi", qi,
         "--sensitive", "disease", "--out", tmp / "p.csv", "--no-report"],
        ["query", data, f"count where {cell} = 'a'", "--epsilon", "0.1", "--budget", "1000,0.5"],
        ["query", data, f"histogram {cell} in ('a','b','c')", "--epsilon", "0.1"],
        ["perturb", data, "--c", "0.5", "--gamma", "0.6", "--attributes", f"sex,{name}", "--exploratory",
         "--seed", "1", "--out", tmp / "v.csv"],
        ["estimate", tmp / "v.csv", f"count where {cell} = 'a'"],
    ]


def _sweep(capsys, tmp_path: Path, name: str) -> None:
    data = _table(tmp_path / "t.csv", name)
    failures = []
    for argv in _commands(tmp_path, data, name):
        code, err = run_for_error(capsys, *argv)
        if code == 0 or (code == 2 and err.count("\n") == 1 and f"'{name}'" in err):
            continue  # ran, or refused in one line naming the column
        failures.append(f"{argv[0]} {argv[1] if argv[0] == 'attack' else argv[2:4]} -> {code}: {err.strip()[-200:]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("name", FAST)
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_column_named_like_an_internal_column(capsys, tmp_path, name):
    _sweep(capsys, tmp_path, name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_a_column_named_like_an_internal_column_more_names(capsys, tmp_path, name):
    _sweep(capsys, tmp_path, name)


def test_the_classifier_counts_test_rows_beside_a_column_named_len():
    from crowdsafe.data import load
    from crowdsafe.metrics.classifier import _test_table

    data = load(pl.DataFrame({"len": ["a", "b", "a", "c"], "sex": ["F", "M", "F", "F"]}), name="t")
    table = _test_table(data, data, ["len", "sex"])
    assert int(table.counts.sum()) == 4 and sorted(table.counts.tolist()) == [1, 1, 2]
