"""A run stopped by a signal (review ds3, F3): SIGTERM and SIGHUP stop a command as Ctrl-C does
(one line, exit status 128 + the signal, the ledger entry marked failed, no file left behind),
and a release killed while its files are made durable is left whole: the old table with the old
certificate, never a new certificate beside the old table."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import crowdsafe
from crowdsafe.data import write
from crowdsafe.datasets.synthetic import synthetic

SRC = str(Path(crowdsafe.__file__).resolve().parents[1])
POSIX = pytest.mark.skipif(not hasattr(signal, "SIGKILL") or not hasattr(signal, "SIGHUP"),
                           reason="needs POSIX signals")


@pytest.fixture
def env(tmp_path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")]),
            "HOME": str(home), "CROWDSAFE_LEDGER": str(tmp_path / "configured.sqlite3")}


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "data.csv"
    write(synthetic(3000, seed=1), path)
    return path


def _argv(data: Path, ledger: Path, out: Path, epsilon: str = "1") -> list[str]:
    return ["publish", str(data), "--epsilon", epsilon, "--delta", "1e-6", "--budget", "100,1e-4", "--qi",
            "sex,race", "--ledger", str(ledger), "--out", str(out), "--no-report"]


def _entries(ledger: Path, env: dict[str, str]) -> list[dict]:
    shown = subprocess.run([sys.executable, "-m", "crowdsafe", "ledger", "show", "--ledger", str(ledger), "--json"],
                           env=env, capture_output=True, text=True, check=True, timeout=60)
    found = json.loads(shown.stdout)
    return [e for d in found["datasets"] for e in d["entries"]] if "datasets" in found else found["entries"]


@pytest.mark.slow  # over a second (the quick loop: README)
@POSIX
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_after_the_charge_is_an_interrupt(tmp_path, env, data, stop):
    """The run is held (a pause where it chooses the recoding, after the charge, before it writes:
    a signal once it writes lets it finish, tests/cli/test_interrupt_charges.py); the signal
    stops it with one line and status 128 + the signal, its entry is failed, and nothing is written."""
    ready = tmp_path / "charged"
    ledger, out = tmp_path / "ledger.sqlite3", tmp_path / "rel" / "a.csv"
    code = textwrap.dedent(f"""
        import pathlib, sys, time
        from crowdsafe.drivers import publish
        def held(*args, **kwargs):
            pathlib.Path({str(ready)!r}).touch()
            time.sleep(120)
        publish.choose_recoding = held
        from crowdsafe.cli import main
        sys.exit(main({_argv(data, ledger, out)!r}))
    """)
    process = subprocess.Popen([sys.executable, "-c", code], env=env, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not ready.exists() and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.05)
        assert ready.exists(), process.communicate(timeout=60)[1]
        process.send_signal(stop)
        _, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    name = signal.Signals(stop).name
    assert process.returncode == 128 + stop, err
    assert err.count("\n") == 1 and err.startswith(f"crowdsafe: stopped by {name}; no output was written"), err
    [entry] = _entries(ledger, env)
    assert err.endswith(f"the run had charged entry #{entry['id']} of 'data.csv' (ε=1, δ=1e-06) in {ledger}, "
                        "listed as failed by 'crowdsafe ledger show': it stays spent\n"), err
    assert entry["status"] == "failed" and entry["finished_at"], entry
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


@POSIX
@pytest.mark.slow  # a publish of 400,000 rows, stopped midway
def test_sigterm_stops_a_real_publish_in_one_line(tmp_path, env):
    data = tmp_path / "big.csv"
    write(synthetic(400_000, seed=2), data)
    ledger, out = tmp_path / "ledger.sqlite3", tmp_path / "rel" / "big.csv"
    process = subprocess.Popen([sys.executable, "-m", "crowdsafe", *_argv(data, ledger, out)], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    names = sorted(p.name for p in out.parent.iterdir()) if out.parent.exists() else []
    if process.returncode == 0:  # (a fast machine: it ended before the signal) the release is whole
        assert names == ["big.certificate.json", "big.csv"], names
        assert [e["status"] for e in _entries(ledger, env)] == ["completed"]
        return
    assert process.returncode == 143, err
    assert err.count("\n") == 1 and err.startswith("crowdsafe: stopped by SIGTERM;"), err
    if ledger.exists():
        assert all(e["status"] != "charged" for e in _entries(ledger, env))
    assert names in ([], ["big.certificate.json", "big.csv"]), names  # no temporary file


@pytest.mark.slow  # over a second (the quick loop: README)
@POSIX
def test_a_kill_while_the_table_is_made_durable_leaves_the_old_release_whole(tmp_path, env, data):
    """SIGKILL during the table's fsync (tens of MB on a large table): every file of the release
    is made durable before any is renamed, so the old table keeps its old certificate (the
    certificate was renamed first, and the table's fsync came between the two renames)."""
    ledger, out = tmp_path / "ledger.sqlite3", tmp_path / "rel" / "a.csv"
    first = subprocess.run([sys.executable, "-m", "crowdsafe", *_argv(data, ledger, out)], env=env,
                           capture_output=True, text=True, timeout=120)
    assert first.returncode == 0, first.stderr
    certificate = out.with_name("a.certificate.json")
    table, old = out.read_bytes(), certificate.read_bytes()
    code = textwrap.dedent(f"""
        import os, signal, sys
        fsync = os.fsync
        def killed_on_the_table(fd):
            if os.pread(fd, 1, 0) not in (b"{{", b""):  # not a certificate (JSON), not the ledger
                os.kill(os.getpid(), signal.SIGKILL)
            fsync(fd)
        os.fsync = killed_on_the_table
        from crowdsafe.cli import main
        sys.exit(main({_argv(data, ledger, out, epsilon="2")!r}))
    """)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert out.read_bytes() == table
    assert certificate.read_bytes() == old  # not the new run's certificate beside the old table
    assert sorted(p.name for p in out.parent.iterdir()) == ["a.certificate.json", "a.csv"]


@POSIX
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_hangup_ignored_by_the_caller_stays_ignored(tmp_path, env, data):
    """nohup ignores SIGHUP: the run goes on and writes its release."""
    ledger, out = tmp_path / "ledger.sqlite3", tmp_path / "rel" / "a.csv"
    code = textwrap.dedent(f"""
        import os, signal, sys
        signal.signal(signal.SIGHUP, signal.SIG_IGN)
        from crowdsafe.engines import polars_engine
        write_releases = polars_engine.write_releases
        def hung_up(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGHUP)
            return write_releases(*args, **kwargs)
        polars_engine.write_releases = hung_up
        from crowdsafe.cli import main
        sys.exit(main({_argv(data, ledger, out)!r}))
    """)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.parent.iterdir()) == ["a.certificate.json", "a.csv"]


@POSIX
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_an_interrupt_ignored_by_the_caller_stays_ignored_while_polars_works(tmp_path, env, data):
    """A background job's SIGINT is ignored (sweep ds5, item 8): importing Polars installed its own
    handler over SIG_IGN, so a Ctrl-C meant for the foreground stopped the run. The signal comes
    while the release is made (Polars at work); the run goes on, through the console entry."""
    ledger, out = tmp_path / "ledger.sqlite3", tmp_path / "rel" / "a.csv"
    code = textwrap.dedent(f"""
        import os, runpy, signal, sys
        sys.argv = ['crowdsafe', *{_argv(data, ledger, out)!r}]
        from crowdsafe.engines import polars_engine
        write_releases = polars_engine.write_releases
        def interrupted(*args, **kwargs):
            ignored = int(dict(line.split(':', 1) for line in open('/proc/self/status'))['SigIgn'], 16) >> 1 & 1
            print('ignored', ignored, file=sys.stderr)
            os.kill(os.getpid(), signal.SIGINT)
            return write_releases(*args, **kwargs)
        polars_engine.write_releases = interrupted
        runpy.run_module('crowdsafe', run_name='__main__')
    """)
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120,
                          preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    assert "ignored 1" in done.stderr and done.returncode == 0, done.stderr
    assert sorted(p.name for p in out.parent.iterdir()) == ["a.certificate.json", "a.csv"]
