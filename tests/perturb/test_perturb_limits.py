"""Runs too large to finish are refused before they start.

Found by a black-box sweep: ``perturb`` over ten Adult attributes (m ≈ 2.2·10¹⁰, an expected view
of 135 million rows) charged its ε, then the machine killed it for memory: no view, no message,
the budget spent. ``estimate --equality 99`` wrote gigabytes without a word. Both sizes are
known from public things before the run (the plan; the domain sizes and the view's rows), so
both runs are now refused first, naming what makes them smaller and the flag that allows them.
Each refusal is also run against a broken variant that lets the run go on.
"""

from __future__ import annotations

import itertools
import json
import math
import sqlite3
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli_helpers import run_for_error
from crowdsafe.perturb import estimator
from crowdsafe.privacy import dgamma

_run = run_for_error


def _table(path: Path) -> Path:
    rng = np.random.default_rng(5)
    pl.DataFrame({"age": rng.integers(20, 30, 300), "sex": rng.choice(["F", "M"], 300),
                  "zip": rng.choice(["a", "b", "c", "d"], 300)}).write_csv(path)
    return path


def _domains(path: Path) -> Path:
    path.write_text(json.dumps({"age": list(range(20, 30)), "sex": ["F", "M"], "zip": ["a", "b", "c", "d"]}))
    return path


def _perturb(tmp_path: Path, *extra) -> list:
    return ["perturb", _table(tmp_path / "t.csv"), "--d", "0.1", "--gamma", "0.9", "--max-rows", "400",
            "--domains", _domains(tmp_path / "domains.json"), "--out", tmp_path / "out" / "v.csv", *extra]


# -- perturb: the expected view (α·N + β·(m − N), from the plan) -------------------------------

def test_a_view_too_large_for_memory_is_refused_before_the_ledger_and_the_charge(capsys, tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    code, err = _run(capsys, *_perturb(tmp_path, "--max-view-rows", "10", "--ledger", ledger, "--budget", "10,0"))
    assert code == 2 and err.count("\n") == 1, err
    assert "the view would hold about" in err and "more than --max-view-rows 10" in err
    assert "allow it with --max-view-rows N" in err
    assert not ledger.exists() and not (tmp_path / "out").exists()


def test_the_limit_is_checked_by_the_run_itself(tmp_path):
    """Through the API, without a ledger: the engine's run refuses it too."""
    from crowdsafe import api
    from crowdsafe.errors import ParameterError

    with pytest.raises(ParameterError, match="more than max_view_rows=10"):
        api.perturb(_table(tmp_path / "t.csv"), d=0.1, gamma=0.9, max_rows=400, max_view_rows=10,
                    domains={"age": list(range(20, 30)), "sex": ["F", "M"], "zip": ["a", "b", "c", "d"]}, ledger=None)


def test_a_view_within_the_limit_runs_and_plan_only_still_shows_a_large_plan(capsys, tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    code, err = _run(capsys, *_perturb(tmp_path, "--ledger", ledger, "--budget", "10,0"))
    assert code == 0, err
    with sqlite3.connect(ledger) as conn:
        assert conn.execute("SELECT COUNT(*) FROM entries").fetchone()[0] == 1
    code, err = _run(capsys, "perturb", tmp_path / "t.csv", "--d", "0.1", "--gamma", "0.9", "--max-rows", "400",
                     "--domains", tmp_path / "domains.json", "--plan-only", "--max-view-rows", "10")
    assert code == 0, err


def test_a_bad_limit_is_named_by_its_flag(capsys, tmp_path):
    code, err = _run(capsys, *_perturb(tmp_path, "--max-view-rows", "0", "--no-ledger"))
    assert code == 2 and "--max-view-rows must be a whole number >= 1" in err, err


def test_the_view_limit_can_fail(capsys, tmp_path, monkeypatch):
    """Broken variant: no check: the run is charged and writes its view past the limit."""
    monkeypatch.setattr(dgamma, "check_view_size", lambda plan, limit: None)
    from crowdsafe.drivers import perturb as driver
    from crowdsafe.perturb import alpha_beta

    monkeypatch.setattr(driver, "check_view_size", lambda plan, limit: None)
    monkeypatch.setattr(alpha_beta, "check_view_size", lambda plan, limit: None)
    ledger = tmp_path / "ledger.sqlite3"
    code, _ = _run(capsys, *_perturb(tmp_path, "--max-view-rows", "10", "--ledger", ledger, "--budget", "10,0"))
    assert code == 0 and ledger.exists() and (tmp_path / "out" / "v.csv").exists()


# -- estimate --equality: the number of queries, from the domain sizes and the view's rows -----

def _brute_force(sizes: list[int], up_to: int, listed: int, dense_limit: int) -> list[int]:
    totals, total = [], 0
    for arity in range(1, min(up_to, len(sizes)) + 1):
        for subset in itertools.combinations(sizes, arity):
            grid = math.prod(subset)
            total += grid if grid <= dense_limit else listed
        totals.append(total)
    return totals


@settings(max_examples=150, deadline=None)
@given(sizes=st.lists(st.integers(1, 40), min_size=1, max_size=7), up_to=st.integers(1, 8),
       listed=st.integers(0, 5000), dense_limit=st.sampled_from([1, 30, 1000, 1 << 24]))
def test_the_sweep_sizes_are_those_of_every_attribute_set(sizes, up_to, listed, dense_limit):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(estimator, "DENSE_GRID_LIMIT", dense_limit)
        assert estimator.equality_sweep_sizes(sizes, up_to, listed) == _brute_force(sizes, up_to, listed,
                                                                                    dense_limit)


def test_the_sweep_sizes_of_many_attributes_are_counted_without_enumerating_them():
    sizes = [10] * 60  # 2^60 attribute sets in all: enumerating them would never end
    totals = estimator.equality_sweep_sizes(sizes, 60, 1000)
    assert totals[0] == 600 and totals[1] == 600 + math.comb(60, 2) * 100
    assert totals[-1] > 2**60


def test_a_sweep_holds_at_most_its_bound(tmp_path):
    from crowdsafe import api

    data = _table(tmp_path / "t.csv")
    view = api.perturb(data, d=0.1, gamma=0.9, max_rows=400, seed=3, ledger=None,
                       domains={"age": list(range(20, 30)), "sex": ["F", "M"], "zip": ["a", "b", "c", "d"]}).view
    for limit in (1 << 24, 15):
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(estimator, "DENSE_GRID_LIMIT", limit)
            sweep = estimator.equality_estimates(view, max_attributes=3)
            bound = estimator.equality_sweep_sizes(view.domain.sizes, 3, view.rows)[-1]
        assert sweep.queries <= bound
        if limit == 1 << 24:
            assert sweep.queries == bound  # every grid dense: exact


def _view(capsys, tmp_path) -> Path:
    code, err = _run(capsys, *_perturb(tmp_path, "--seed", "1", "--no-ledger"))
    assert code == 0, err
    return tmp_path / "out" / "v.csv"


def test_a_sweep_too_large_is_refused_before_anything_is_written(capsys, tmp_path):
    view = _view(capsys, tmp_path)
    out = tmp_path / "estimates.csv"
    code, err = _run(capsys, "estimate", view, "--equality", "3", "--out", out, "--max-queries", "50")
    assert code == 2 and err.count("\n") == 1, err
    # domains of 11, 3 and 5 values (each with the missing value: kept by default), every grid dense
    singles, pairs, triple = 11 + 3 + 5, 11 * 3 + 11 * 5 + 3 * 5, 11 * 3 * 5
    assert f"may hold {singles + pairs + triple} queries, more than the limit of 50" in err
    assert "--max-queries N" in err and f"sets of up to 1: {singles} queries" in err
    assert not out.exists()
    code, err = _run(capsys, "estimate", view, "--equality", "1", "--out", out, "--max-queries", "50")
    assert code == 0 and pl.read_csv(out).height == singles, err


def test_the_sweep_limit_can_fail(capsys, tmp_path, monkeypatch):
    """Broken variant: no limit: the sweep is written whatever its size."""
    view = _view(capsys, tmp_path)
    monkeypatch.setattr(estimator, "_refuse_a_sweep_too_large", lambda *args: None)
    out = tmp_path / "estimates.csv"
    code, _ = _run(capsys, "estimate", view, "--equality", "3", "--out", out, "--max-queries", "50")
    assert code == 0 and pl.read_csv(out).height > 50


def test_a_workload_too_large_is_refused_up_front(capsys, tmp_path):
    """Found by a sweep: `compare --queries 1e15` asked for petabytes (a MemoryError)."""
    data = _table(tmp_path / "t.csv")
    code, err = _run(capsys, "compare", data, data, "--queries", "1e15")
    assert code == 2 and err.count("\n") == 1 and "must be from 1 to 10,000,000" in err, err


def test_the_view_refusal_is_the_same_on_neighbouring_tables(capsys, tmp_path):
    """The refusal comes from the plan (the public N, m, α, β), never from the rows: D and D
    plus one row are refused in the same words."""
    errors = []
    for extra in (False, True):
        folder = tmp_path / ("d1" if extra else "d0")
        folder.mkdir()
        argv = _perturb(folder, "--max-view-rows", "10", "--ledger", folder / "l.sqlite3", "--budget", "10,0")
        if extra:
            with (folder / "t.csv").open("a") as table:
                table.write("25,F,a\n")
        code, err = _run(capsys, *argv)
        assert code == 2
        errors.append(err.replace(str(folder), "DIR"))
    assert errors[0] == errors[1]
