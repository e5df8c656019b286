"""Lattices too large for the exact selection: a plan among more than MAX_CANDIDATES candidate
schemes is refused by the planner in one line, before anything is charged (``--plan-only`` says
the same); the classic optimal search refuses a lattice past MAX_OPTIMAL_NODES; a lattice of 64 or
more columns is sized exactly; and a run that fails for lack of memory after the charge ends in
one line with its entry failed."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from cli_helpers import run_for_error
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.anonymize.plan import PlanRequest, plan_publication
from crowdsafe.anonymize.publish import prepare_dataset
from crowdsafe.data import load
from crowdsafe.defaults import MAX_CANDIDATES
from crowdsafe.drivers import publish as publish_driver
from crowdsafe.errors import ParameterError
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness
from crowdsafe.selection import choose_scheme


def _wide_csv(path: Path, columns: int, rows: int = 200) -> Path:
    """``rows`` rows of ``columns`` two-valued columns: without a schema every column is a
    quasi-identifier with a hierarchy of height 1, so the lattice has 2^columns nodes."""
    pick = random.Random(columns)
    lines = [",".join(f"c{j}" for j in range(columns))]
    lines += [",".join(pick.choice("ab") for _ in range(columns)) for _ in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _entries(ledger: Path) -> list:
    return Ledger(ledger).entries() if ledger.exists() else []


REFUSAL = ("crowdsafe: error: the exponential mechanism would choose among 1,099,511,627,776 candidate schemes, "
           f"more than the {MAX_CANDIDATES:,} its exact search holds in memory")


def test_the_limit_is_two_to_the_22():  # the measured value of its comment (defaults.py)
    assert MAX_CANDIDATES == 4_194_304


@pytest.mark.parametrize("columns", [40, 64, 65])
def test_a_publish_among_too_many_schemes_is_refused_before_the_charge(tmp_path, capsys, columns):
    data, ledger, out = _wide_csv(tmp_path / "wide.csv", columns), tmp_path / "ledger.sqlite3", tmp_path / "r" / "r.csv"
    code, err = run_for_error(capsys, "publish", data, "--budget", "10,1e-4", "--ledger", ledger, "--out", out)
    assert code == 2, err
    assert err.count("\n") == 1 and f"among {2 ** columns:,} candidate schemes" in err, err
    assert "--columns" in err and "--scheme" in err and "schema" in err and "nothing was charged" in err
    assert _entries(ledger) == []  # no entry, nothing spent
    assert not out.parent.exists()


def test_plan_only_shows_the_same_refusal(tmp_path, capsys):
    data = _wide_csv(tmp_path / "wide.csv", 40)
    code, err = run_for_error(capsys, "publish", data, "--plan-only")
    assert code == 2 and err.startswith(REFUSAL) and err.count("\n") == 1, err


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_ways_out_publish(tmp_path, capsys):
    """A fixed scheme, or fewer columns, on the same 64-column table: planned and published."""
    data, ledger = _wide_csv(tmp_path / "wide.csv", 64), tmp_path / "ledger.sqlite3"
    code, err = run_for_error(capsys, "publish", data, "--scheme", "fine", "--ledger", ledger, "--budget", "10,1e-4",
                              "--out", tmp_path / "a" / "r.csv")
    assert code == 0, err
    code, err = run_for_error(capsys, "publish", data, "--columns", "c0,c1,c2", "--ledger", ledger,
                              "--out", tmp_path / "b" / "r.csv")
    assert code == 0, err
    assert [e.status for e in _entries(ledger)] == ["completed", "completed"]


def test_the_planner_refuses_one_past_the_limit():
    with pytest.raises(ParameterError, match=r"among 4,194,305 candidate schemes, more than the 4,194,304"):
        plan_publication(PlanRequest(1.0, 1e-6, candidates=MAX_CANDIDATES + 1))
    assert plan_publication(PlanRequest(1.0, 1e-6, candidates=MAX_CANDIDATES)).candidates == MAX_CANDIDATES
    # a fixed scheme searches nothing: the number of candidates does not matter
    assert plan_publication(PlanRequest(1.0, 1e-6, scheme="fine", candidates=2 ** 64)).scheme == "fine"


def test_a_lattice_of_thousands_of_columns_is_counted_in_a_readable_number():
    """3,000 two-level columns: 2^3000 candidates, said by their power of ten (the message printed
    all 904 digits, with separators, found by the app tour on a 3,000-column upload)."""
    with pytest.raises(ParameterError) as refused:
        plan_publication(PlanRequest(1.0, 1e-6, candidates=2 ** 3000))
    message = str(refused.value)
    assert "among at least 1.2 × 10^903 candidate schemes" in message and len(message) < 500
    assert 2 ** 3000 >= 12 * 10 ** 902  # the premise: what it states holds


def test_the_chooser_refuses_a_lattice_too_large_before_drawing(tmp_path):
    dataset, columns, _ = prepare_dataset(load(_wide_csv(tmp_path / "wide.csv", 23, rows=20)), None)
    randomness = Randomness(seed=1)
    with pytest.raises(ParameterError, match=r"among 8,388,608 candidate schemes"):
        choose_scheme(dataset, columns, 2, 1.0, randomness)
    # refused before any draw: the stream is where a fresh one of the same seed starts
    fresh = Randomness(seed=1).generator.integers(0, 2**62, 4).tolist()
    assert randomness.generator.integers(0, 2**62, 4).tolist() == fresh


def test_a_lattice_of_64_or_more_columns_has_its_exact_size():
    assert Lattice(tuple(f"c{j}" for j in range(64)), (1,) * 64).size == 2 ** 64
    assert Lattice(tuple(f"c{j}" for j in range(65)), (1,) * 65).size == 2 ** 65


def test_the_optimal_lattice_search_refuses_a_lattice_too_large(tmp_path, capsys):
    data, out = _wide_csv(tmp_path / "wide.csv", 23), tmp_path / "rel" / "r.csv"
    code, err = run_for_error(capsys, "anonymize", data, "--algorithm", "lattice", "--search", "optimal",
                              "--k", "2", "--out", out)
    assert code == 2 and err.count("\n") == 1, err
    assert "8,388,608 nodes of the lattice, more than 4,194,304" in err and "--search greedy" in err, err
    assert not out.parent.exists()


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_lattice_search_on_65_columns_searches_greedily(tmp_path, capsys):
    """Its size wrapped to 0 in int64, so the optimal search was tried (an internal error)."""
    data, out = _wide_csv(tmp_path / "wide.csv", 65, rows=40), tmp_path / "rel" / "r.csv"
    code, err = run_for_error(capsys, "anonymize", data, "--algorithm", "lattice", "--k", "2",
                              "--time-budget", "0.5", "--out", out)
    assert code == 0, err
    assert out.exists()


def test_out_of_memory_after_the_charge_is_one_line_and_a_failed_entry(tmp_path, capsys, monkeypatch):
    def no_memory(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(publish_driver, "choose_recoding", no_memory)
    data, ledger, out = _wide_csv(tmp_path / "wide.csv", 4), tmp_path / "ledger.sqlite3", tmp_path / "rel" / "r.csv"
    code, err = run_for_error(capsys, "publish", data, "--budget", "10,1e-4", "--ledger", ledger, "--out", out)
    assert code == 2 and err.count("\n") == 1 and err.startswith("crowdsafe: error: out of memory"), err
    [entry] = _entries(ledger)
    assert entry.status == "failed"
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


@pytest.mark.slow  # about 4 s and 1.3 GB: the search at its limit
def test_a_publish_at_the_limit_still_runs(tmp_path, capsys):
    data, ledger, out = _wide_csv(tmp_path / "wide.csv", 22, rows=100), tmp_path / "ledger.sqlite3", tmp_path / "r.csv"
    code, err = run_for_error(capsys, "publish", data, "--ledger", ledger, "--budget", "10,1e-4", "--out", out)
    assert code == 0, err
    assert [e.status for e in _entries(ledger)] == ["completed"]
    assert out.exists()
