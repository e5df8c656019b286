"""Exit statuses a script can act on: 0 done, 2 bad input, 3 refused by the ledger.

A nightly job publishing many tables must tell "this table's budget is spent" (skip it, or raise
the budget on the record) from "this file is broken" (fix it). Both were status 2 until
2026-11-30 (docs/hostile-input.md, "Exit statuses").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_helpers import run_command


def _table(path: Path, rows: int = 400) -> Path:
    lines = ["age,sex,zip"] + [f"{20 + i % 50},{'FM'[i % 2]},{1000 + i % 7}" for i in range(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _publish(data: Path, out: Path) -> list[str]:
    return ["publish", str(data), "--epsilon", "1", "--delta", "1e-6", "--budget", "1.5,1e-5",
            "--scheme", "coarse", "--out", str(out), "--json"]


@pytest.mark.slow
def test_a_spent_budget_is_status_3_and_bad_input_status_2(capsys, tmp_path):
    data = _table(tmp_path / "t.csv")
    code, out, err = run_command(capsys, *_publish(data, tmp_path / "a" / "r.csv"))
    assert code == 0 and err == "" and "guarantee" in json.loads(out)
    code, out, err = run_command(capsys, *_publish(data, tmp_path / "b" / "r.csv"))
    assert code == 3 and out == "" and err.count("\n") == 1 and "refused" in err, err
    assert not (tmp_path / "b").exists()
    code, out, err = run_command(capsys, "query", str(data), "count", "--epsilon", "1")
    assert code == 3 and "refused" in err, err
    code, _, err = run_command(capsys, "query", str(tmp_path / "missing.csv"), "count", "--epsilon", "0.1")
    assert code == 2 and err.count("\n") == 1, err
    code, _, err = run_command(capsys, "query", str(_table(tmp_path / "u.csv", 300)), "count", "--epsilon", "0.1")
    assert code == 3 and "no privacy budget is set" in err, err  # a table the ledger has no budget for


@pytest.mark.slow
def test_two_processes_at_once_one_runs_the_other_is_refused_with_3(tmp_path):
    """Two cron jobs on one ledger, a budget for one run: one publishes, the other exits 3 with one
    line, and the budget is not overspent."""
    data, ledger = _table(tmp_path / "t.csv"), tmp_path / "ledger.sqlite3"
    env = {**os.environ, "CROWDSAFE_LEDGER": str(ledger)}
    runs = [subprocess.Popen([sys.executable, "-m", "crowdsafe", *_publish(data, tmp_path / f"o{i}" / "r.csv")],
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
            for i in range(2)]
    ended = sorted((run.wait(timeout=120), *run.communicate()) for run in runs)
    (won, won_out, won_err), (lost, lost_out, lost_err) = ended
    assert (won, lost) == (0, 3), ended
    assert "guarantee" in json.loads(won_out) and won_err == ""
    assert lost_out == "" and lost_err.count("\n") == 1 and lost_err.startswith("crowdsafe: error: refused"), lost_err
    shown = subprocess.run([sys.executable, "-m", "crowdsafe", "ledger", "show", "--json"], capture_output=True,
                           text=True, env=env, check=True)
    (dataset,) = json.loads(shown.stdout)["datasets"]
    assert dataset["spent"]["epsilon"] <= dataset["budget"]["epsilon"]
    assert [e["status"] for e in dataset["entries"]] == ["completed"]


@pytest.mark.slow  # a subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="closes a POSIX file descriptor")
def test_json_with_standard_output_closed_is_not_an_internal_error(tmp_path):
    """`crowdsafe publish ... --json >&-` wrote its release, then ended with status 1 and
    "internal error: AttributeError: 'NoneType' object has no attribute 'write'"."""
    env = {**os.environ, "CROWDSAFE_LEDGER": str(tmp_path / "ledger.sqlite3")}
    argv = [sys.executable, "-m", "crowdsafe", *_publish(_table(tmp_path / "t.csv"), tmp_path / "o" / "r.csv")]
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env,
                          preexec_fn=lambda: os.close(1), timeout=120)
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert (tmp_path / "o" / "r.csv").exists() and (tmp_path / "o" / "r.certificate.json").exists()


@pytest.mark.slow  # a subprocess
@pytest.mark.skipif(sys.platform == "win32", reason="closes a POSIX file descriptor")
def test_a_note_with_standard_error_closed_stays_out_of_the_json(tmp_path):
    """With `2>&-`, a note about the input (`print(..., file=sys.stderr)`, sys.stderr None) was
    printed on standard output, before the `--json` document, which then did not parse."""
    data = tmp_path / "dup.csv"
    data.write_text("age,sex,age\n" + "".join(f"{20 + i % 9},{'FM'[i % 2]},{30 + i % 7}\n" for i in range(60)))
    env = {**os.environ, "CROWDSAFE_LEDGER": str(tmp_path / "ledger.sqlite3")}
    done = subprocess.run([sys.executable, "-m", "crowdsafe", "check", str(data), "--json"], capture_output=True,
                          text=True, env=env, preexec_fn=lambda: os.close(2), timeout=120)
    assert done.returncode == 0 and json.loads(done.stdout)["dataset"] == "dup.csv", done.stdout[:300]
