"""What a command prints to a file, a pipe or a log (a cron job's output) is whole.

Rich took 80 columns when standard output was not a terminal and cut what did not fit with "…":
`crowdsafe ledger show >> nightly.log` logged each entry's date as `2026-11-…`, its kind as
`dps-relea…` and its description cut mid-word. Now such output is as wide as its content
(:func:`crowdsafe.cli.lazy.Console`); a terminal, or ``COLUMNS``, still sets the width.
"""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

import pytest

from cli_helpers import run_command
from crowdsafe.cli.lazy import Console


def _two_entries(capsys, tmp_path):
    data = tmp_path / "a-table-with-a-long-file-name-as-a-statistics-office-names-them.csv"
    data.write_text("age,sex\n" + "".join(f"{20 + i % 60},{'FM'[i % 2]}\n" for i in range(300)))
    assert run_command(capsys, "query", str(data), "count where age >= 30 and sex = 'F'", "--epsilon", "0.1",
                       "--budget", "1,0")[0] == 0
    assert run_command(capsys, "query", str(data), "count", "--epsilon", "0.2")[0] == 0
    code, out, _ = run_command(capsys, "ledger", "show", "--json")
    return json.loads(out)["datasets"][0]


@pytest.mark.slow  # two queries
def test_ledger_show_to_a_pipe_cuts_nothing(capsys, tmp_path, monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    dataset = _two_entries(capsys, tmp_path)
    code, out, err = run_command(capsys, "ledger", "show")
    assert code == 0 and err == ""
    assert "…" not in out.replace(f"{dataset['fingerprint'][:16]}…", "")  # the fingerprint's prefix is meant
    rows = [line for line in out.splitlines() if "│" in line]
    assert len(rows) == 2, out
    for row, entry in zip(rows, dataset["entries"]):
        cells = [c.strip() for c in row.split("│")]
        assert cells[0] == str(entry["id"]) and cells[1] == entry["created_at"][:19].replace("T", " "), row
        assert cells[2] == entry["kind"] and cells[-1] == entry["description"], row
    assert f"{dataset['name']} (fingerprint" in out and "remaining (ε 0.7, δ 0)" in out  # one line, not wrapped


def test_a_table_printed_to_a_file_is_not_cut(monkeypatch):
    from rich.table import Table

    monkeypatch.delenv("COLUMNS", raising=False)
    printed = io.StringIO()
    table = Table()
    for heading in ("when (UTC)", "kind", "what"):
        table.add_column(heading)
    what = "publish people.csv: 1 x sampling (beta = 0.3712) + epsilon1-safe k-anonymization (k = 33)" * 2
    table.add_row("2026-11-30 19:02:55", "dps-release", what)
    Console(file=printed).print(table)
    assert "…" not in printed.getvalue() and what in printed.getvalue()
    assert len([line for line in printed.getvalue().splitlines() if "│" in line]) == 1  # not wrapped


def test_columns_still_sets_the_width(capsys, tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "60")
    _two_entries(capsys, tmp_path)
    out = run_command(capsys, "ledger", "show")[1]
    assert max(len(line) for line in out.splitlines()) <= 60


@pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pseudo-terminal")
def test_a_terminal_keeps_its_width(monkeypatch):
    monkeypatch.delenv("COLUMNS", raising=False)
    main, side = os.openpty()
    try:
        with os.fdopen(side, "w", closefd=False) as terminal:
            assert Console(file=terminal).width < 100_000
    finally:
        os.close(main)
        os.close(side)


@pytest.mark.slow  # a subprocess
def test_the_console_script_to_a_pipe_is_as_wide_as_its_content(tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}
    env["CROWDSAFE_LEDGER"] = str(tmp_path / "ledger.sqlite3")
    done = subprocess.run([sys.executable, "-m", "crowdsafe", "check", "adult"], capture_output=True, text=True,
                          env=env, check=True)
    assert "…" not in done.stdout and "┃ levels ┃" in done.stdout  # it was "┃ leve… ┃"


@pytest.mark.slow  # subprocesses
@pytest.mark.skipif(not hasattr(os, "pipe") or sys.platform == "win32", reason="needs POSIX pipes")
def test_a_reader_that_closes_the_pipe_ends_the_command_with_status_0(tmp_path):
    """`crowdsafe check DATA --json | head -c 10`: the CLI library turned the broken pipe into
    status 1 (a bug's) whenever it came while the command was still writing, so one run in a
    few failed under `set -o pipefail`. The reader here is gone before the command writes."""
    env = {**os.environ, "CROWDSAFE_LEDGER": str(tmp_path / "ledger.sqlite3")}
    for argv in (["check", "adult", "--json"], ["check", "adult"], ["datasets", "list", "--json"]):
        read, write = os.pipe()
        os.close(read)
        try:
            done = subprocess.run([sys.executable, "-m", "crowdsafe", *argv], stdout=write, stderr=subprocess.PIPE,
                                  text=True, env=env, timeout=120)
        finally:
            os.close(write)
        assert done.returncode == 0 and "internal error" not in done.stderr, (argv, done.returncode, done.stderr)
