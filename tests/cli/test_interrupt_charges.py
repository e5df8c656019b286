"""A stopped run says whether it spent budget (crowdsafe.privacy.run_charges).

Its one line said "a privacy budget the run had charged stays spent" whether or not it had
charged anything, so a script rerunning a job killed by its scheduler could not tell if the
ledger moved. Now it names the entry and loss it charged, or says that nothing was charged.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import sys

import pytest

from cli_helpers import run_command
from crowdsafe import cli
from crowdsafe.engines import polars_engine

#: the line of a run interrupted once it had started writing (crowdsafe.stopping.finishing)
WRITING = ("crowdsafe: interrupted while writing its outputs; each file it had put in place is whole (a table with "
           "its certificate), the others were not written")


def _table(path):
    lines = ["age,sex,zip"] + [f"{20 + i % 50},{'FM'[i % 2]},{1000 + i % 7}" for i in range(400)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _publish(tmp_path, ledger):
    return ["publish", str(_table(tmp_path / "t.csv")), "--epsilon", "1", "--delta", "1e-6", "--budget", "10,1e-5",
            "--scheme", "coarse", "--ledger", str(ledger), "--out", str(tmp_path / "out" / "r.csv")]


def _entries(ledger):
    with sqlite3.connect(ledger) as conn:
        return conn.execute("SELECT id, status, epsilon, delta FROM entries").fetchall()


def _stopped_writing(*args, **kwargs):
    raise KeyboardInterrupt  # Ctrl-C while the release is written: after the charge


def test_an_interrupt_after_the_charge_names_the_entry_it_spent(capsys, tmp_path, monkeypatch):
    ledger = tmp_path / "ledger.sqlite3"
    monkeypatch.setattr(polars_engine, "write_releases", _stopped_writing)
    code, out, err = run_command(capsys, *_publish(tmp_path, ledger))
    [(entry, status, epsilon, delta)] = _entries(ledger)
    assert code == 130 and out == "" and err.count("\n") == 1, err
    assert status == "failed" and epsilon == 1
    assert err.startswith(f"{WRITING}; the run had charged entry #{entry} of 't.csv' (ε=1, δ="), err
    assert err.endswith(f"in {ledger}, listed as failed by 'crowdsafe ledger show': it stays spent\n"), err
    assert not (tmp_path / "out").exists() or not list((tmp_path / "out").iterdir())


def test_an_interrupt_before_the_charge_says_nothing_was_charged(capsys, tmp_path, monkeypatch):
    from crowdsafe.data import io

    def stopped_reading(*args, **kwargs):
        raise KeyboardInterrupt

    ledger = tmp_path / "ledger.sqlite3"
    monkeypatch.setattr(io, "sniff_format", stopped_reading)
    code, _, err = run_command(capsys, *_publish(tmp_path, ledger))
    assert code == 130 and err == "crowdsafe: interrupted; no output was written; nothing was charged to a privacy " \
                                  "ledger\n", err
    assert not ledger.exists() or _entries(ledger) == []


def test_a_completed_run_and_an_earlier_command_leave_no_charge_to_name(capsys, tmp_path, monkeypatch):
    """The record is per command: a run that completed is forgotten, and so is a charge an
    earlier command of the same process made (the app, a test calling main twice)."""
    ledger = tmp_path / "ledger.sqlite3"
    argv = _publish(tmp_path, ledger)
    assert run_command(capsys, *argv)[0] == 0
    with monkeypatch.context() as patched:
        patched.setattr(polars_engine, "write_releases", _stopped_writing)
        assert run_command(capsys, *argv)[0] == 130
    monkeypatch.setattr(cli, "app_for", lambda argv: _raise(KeyboardInterrupt()))
    code, _, err = run_command(capsys, "ledger", "show", "--ledger", str(ledger))
    assert code == 130 and err.endswith("; nothing was charged to a privacy ledger\n"), err


def _raise(exc):
    raise exc


def test_a_full_disk_after_the_charge_names_the_entry_too(capsys, tmp_path, monkeypatch):
    import errno

    def full(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    ledger = tmp_path / "ledger.sqlite3"
    monkeypatch.setattr(polars_engine, "write_releases", full)
    code, _, err = run_command(capsys, *_publish(tmp_path, ledger), "--json")
    [(entry, status, _, _)] = _entries(ledger)
    assert code == 2 and err.count("\n") == 1 and status == "failed", err
    assert err.startswith("crowdsafe: error: No space left on device; no output was left half-written; the run "
                          f"had charged entry #{entry} of 't.csv'"), err
    shown = run_command(capsys, "ledger", "show", "--ledger", str(ledger), "--json")[1]
    assert [e["status"] for e in json.loads(shown)["datasets"][0]["entries"]] == ["failed"]


def test_a_run_stopped_after_its_charge_completed_says_it_charged(capsys, tmp_path, monkeypatch):
    """`query --out` writes its answer after the charge completed (so does `perturb`): stopped
    there, the run had still charged (it said "nothing was charged": a completed charge was
    dropped from the record)."""
    from crowdsafe.cli import query as query_command

    ledger = tmp_path / "ledger.sqlite3"
    monkeypatch.setattr(query_command, "write_text_atomic", _stopped_writing)
    code, _, err = run_command(capsys, "query", str(_table(tmp_path / "t.csv")), "count", "--epsilon", "0.5",
                               "--budget", "1,0", "--ledger", str(ledger), "--out", str(tmp_path / "answer.json"))
    [(entry, status, epsilon, _)] = _entries(ledger)
    assert code == 130 and status == "completed" and epsilon == 0.5, err
    assert err == (f"{WRITING}; the run had charged entry #{entry} of 't.csv' (ε=0.5, δ=0) in {ledger}, listed "
                   "as completed by 'crowdsafe ledger show': it stays spent\n")
    assert not (tmp_path / "answer.json").exists()


@pytest.mark.skipif(not hasattr(signal, "SIGTERM") or sys.platform == "win32", reason="needs POSIX signals")
def test_sigterm_once_the_release_is_being_written_lets_the_run_finish(capsys, tmp_path, monkeypatch):
    """A SIGTERM that came once the release's files were being put in place unwound the run: it
    said "no output was written" beside a whole release and certificate, left it without its
    report and its entry failed. Now the run finishes (crowdsafe.stopping.finishing) and says so."""
    ledger, write = tmp_path / "ledger.sqlite3", polars_engine.write_releases

    def terminated_while_writing(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGTERM)
        return write(*args, **kwargs)

    monkeypatch.setattr(polars_engine, "write_releases", terminated_while_writing)
    code, out, err = run_command(capsys, *_publish(tmp_path, ledger))
    assert code == 0 and "written" in out, err
    assert err == ("crowdsafe: note: SIGTERM came once the run had started writing its outputs: it finished them "
                   "first (a second signal ends a run at once)\n")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.certificate.json", "r.csv", "r.report.html"]
    assert [status for _, status, _, _ in _entries(ledger)] == ["completed"]


def test_ctrl_c_once_the_release_is_written_says_what_is_in_place(capsys, tmp_path, monkeypatch):
    """Ctrl-C cannot be held (Polars raises it from its own work), so the line says that the
    files in place are whole instead of "no output was written"."""
    ledger, write = tmp_path / "ledger.sqlite3", polars_engine.write_releases

    def interrupted_after_writing(*args, **kwargs):
        write(*args, **kwargs)
        raise KeyboardInterrupt

    monkeypatch.setattr(polars_engine, "write_releases", interrupted_after_writing)
    code, _, err = run_command(capsys, *_publish(tmp_path, ledger))
    assert code == 130 and err.startswith("crowdsafe: interrupted while writing its outputs; each file it had put "
                                          "in place is whole (a table with its certificate), the others were not "
                                          "written; the run had charged entry #"), err
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.certificate.json", "r.csv"]
