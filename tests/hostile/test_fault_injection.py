"""kill -9 at any moment leaves no partial or temporary file, and a ledger charged at most once.

The main test runs ``crowdsafe publish`` on a synthetic table (crowdsafe.datasets.synthetic)
with a ledger, many times, and kills it with SIGKILL after a different delay each time (spread
over the whole run, and thickly over its end, where the ledger is charged and files written).
After each kill: the output folder holds nothing or the complete release (table and
certificate, both readable), never a temporary file; the ledger passes
``Ledger.integrity_check()``; the run added at most one entry, and exactly one when its
release was written (the charge comes before the output).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import polars as pl
import pytest

import crowdsafe
from crowdsafe import files
from crowdsafe.data import write
from crowdsafe.datasets.synthetic import synthetic
from crowdsafe.files import atomic_path
from crowdsafe.privacy.ledger import Ledger

SRC = str(Path(crowdsafe.__file__).resolve().parents[1])
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([SRC, os.environ.get("PYTHONPATH", "")])}
POSIX = pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs POSIX signals")


def _python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=ENV, capture_output=True, text=True,
                          check=False, timeout=120)


@POSIX
@pytest.mark.parametrize("existing", [False, True])
def test_a_writer_killed_mid_write_leaves_the_old_file_or_nothing(tmp_path, existing):
    target = tmp_path / "out" / "table.csv"
    if existing:
        target.parent.mkdir()
        target.write_text("old\n")
    done = _python(f"""
        import os, signal
        from crowdsafe.files import atomic_path
        with atomic_path({str(target)!r}) as tmp:
            with open(tmp, "w") as handle:
                handle.write("x" * 1_000_000)
                handle.flush()
                os.kill(os.getpid(), signal.SIGKILL)
    """)
    assert done.returncode == -signal.SIGKILL, done.stderr
    names = sorted(p.name for p in target.parent.iterdir())
    assert names == (["table.csv"] if existing else [])
    if existing:
        assert target.read_text() == "old\n"


def test_the_fallback_temporary_file_is_removed_on_error(tmp_path, monkeypatch):
    monkeypatch.setattr(files, "_anonymous_file", lambda folder: None)
    with pytest.raises(RuntimeError):
        with atomic_path(tmp_path / "a.csv") as tmp:
            assert tmp.parent == tmp_path and tmp.name.startswith(".a.csv.")
            tmp.write_text("half")
            raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []
    with atomic_path(tmp_path / "a.csv") as tmp:
        tmp.write_text("whole")
    assert [p.name for p in tmp_path.iterdir()] == ["a.csv"] and (tmp_path / "a.csv").read_text() == "whole"


@pytest.mark.parametrize("anonymous", [True, False])
def test_files_written_together_are_all_or_nothing(tmp_path, monkeypatch, anonymous):
    if not anonymous:
        monkeypatch.setattr(files, "_anonymous_file", lambda folder: None)
    (tmp_path / "old.json").write_text("stale")
    with pytest.raises(RuntimeError):
        with files.atomic_paths([tmp_path / "a.csv", tmp_path / "a.json"], remove_first=[tmp_path / "old.json"]) as (
                table, certificate):
            table.write_text("table")
            certificate.write_text("certificate")
            raise RuntimeError("crash")
    assert [p.name for p in tmp_path.iterdir()] == ["old.json"]  # nothing placed, nothing removed
    with files.atomic_paths([tmp_path / "a.csv", tmp_path / "a.json"], remove_first=[tmp_path / "old.json"]) as (
            table, certificate):
        table.write_text("table")
        certificate.write_text("certificate")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.csv", "a.json"]
    assert (tmp_path / "a.json").read_text() == "certificate"


def _publish(data: Path, ledger: Path, out: Path) -> subprocess.Popen:
    argv = [sys.executable, "-m", "crowdsafe", "publish", str(data), "--epsilon", "0.5", "--delta", "1e-7",
            "--qi", "sex,race,relationship", "--budget", "1000,1e-3", "--name", "synthetic",
            "--ledger", str(ledger), "--out", str(out / "release.csv")]
    return subprocess.Popen(argv, env=ENV, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)


def _entries(ledger: Path) -> int:
    if not ledger.exists():
        return 0
    book = Ledger(ledger)
    try:
        assert book.integrity_check() == "ok"
        return len(book.entries())
    finally:
        book.close()


RUNS = 15


@POSIX
@pytest.mark.slow  # about a minute: 16 publishes in subprocesses
def test_kill_9_at_random_points_of_a_publish(tmp_path):
    data = tmp_path / "synthetic.csv"
    write(synthetic(40_000, seed=5), data)
    ledger = tmp_path / "ledger" / "ledger.sqlite3"
    probe = files._anonymous_file(tmp_path)
    anonymous = probe is not None
    if anonymous:
        os.close(probe)

    # one complete run: how long a publish takes here, and what it leaves
    started = time.monotonic()
    whole = _publish(data, ledger, tmp_path / "complete")
    _, err = whole.communicate(timeout=300)
    length = time.monotonic() - started
    assert whole.returncode == 0, err.decode()
    assert _entries(ledger) == 1

    # delays spread over the run, half of them over its last fifth (charge and write)
    fractions = [0.05 + 0.9 * i / (RUNS // 2) for i in range(RUNS // 2)]
    fractions += [0.8 + 0.25 * i / (RUNS - RUNS // 2) for i in range(RUNS - RUNS // 2)]
    written = 0
    for run, fraction in enumerate(fractions):
        out = tmp_path / f"out-{run}"
        before = _entries(ledger)
        process = _publish(data, ledger, out)
        try:
            process.wait(timeout=fraction * length)
        except subprocess.TimeoutExpired:
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
        names = sorted(p.name for p in out.iterdir()) if out.exists() else []
        if not anonymous:  # without O_TMPFILE a SIGKILL can leave the hidden temporary file (documented)
            names = [n for n in names if not (n.startswith(".release.") and n.endswith(".tmp"))]
        after = _entries(ledger)  # also asserts the integrity check
        assert after - before in (0, 1), f"run {run}: {after - before} entries for one publish"
        # the report is built from the two files once they are in place, and written atomically itself;
        # between the two renames (a few system calls) the table stands without its certificate
        assert names in ([], ["release.csv"], ["release.certificate.json", "release.csv"],
                         ["release.certificate.json", "release.csv", "release.report.html"]), f"run {run} left {names}"
        if names:
            assert after - before == 1, f"run {run} wrote a release without its charge"
            assert pl.read_csv(out / "release.csv").height > 0
            if "release.certificate.json" in names:
                assert json.loads((out / "release.certificate.json").read_text())
            written += 1
    print(f"publish took {length:.1f} s; {written} of {RUNS} killed runs had written their release")
    assert written < RUNS  # some runs were cut short (else the delays missed the run)
