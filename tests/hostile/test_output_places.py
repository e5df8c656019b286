"""Where an output may go, checked before anything is charged or written, and paths taken as written.

- A ``~`` in a path is a folder of that name, for the output checks, the writers and the readers
  alike (Polars expands a leading ``~``; the checks used to expand it while the writer did not,
  so ``--out '~/d.csv'`` could replace the input or the ledger after the checks passed).
- A path under a file, under ``/proc``, ``/sys`` or ``/dev``, with a name the file system cannot
  take, or in a folder where no file can be made, is refused in one line before the charge
  (``files.check_writable``, from the output guard of every command); a write that still fails is
  a one-line error, never an internal one.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from crowdsafe import cli
from crowdsafe.data import load
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import check_writable, literal_path, write_text_atomic
from crowdsafe.output_guard import Input, Output, OutputKind, check_outputs


def _cli(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def tilde(tmp_path, monkeypatch):
    """A working folder holding a folder named '~' with a table in it, and a home elsewhere that
    holds a different table of the same name."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    work = tmp_path / "work"
    (work / "~").mkdir(parents=True)
    pl.DataFrame({"a": [1, 2, 3] * 20, "b": ["x", "y", "z"] * 20}).write_csv(work / "~" / "d.csv")
    pl.DataFrame({"other": [9]}).write_csv(home / "d.csv")
    monkeypatch.chdir(work)
    return work


def test_a_leading_tilde_is_a_folder_of_that_name_when_read(tilde):
    assert literal_path("~/d.csv") == tilde / "~" / "d.csv"
    assert load("./~/d.csv").columns == ["a", "b"] and load("~/d.csv").columns == ["a", "b"]


def test_an_output_through_a_tilde_cannot_replace_the_input_or_the_ledger(tilde, capsys):
    before = (tilde / "~" / "d.csv").read_bytes()
    code, _, err = _cli(capsys, "publish", str(tilde / "~" / "d.csv"), "--no-ledger", "--seed", "1", "--epsilon", "1",
                     "--delta", "1e-6", "--out", "~/d.csv")
    assert code == 2 and "would overwrite the data" in err and len(err.strip().splitlines()) == 1
    assert (tilde / "~" / "d.csv").read_bytes() == before
    with pytest.raises(ParameterError, match="would overwrite the ledger"):
        check_outputs([Output("~/led.sqlite3", "the answer", OutputKind.JSON)],
                      [Input(tilde / "~" / "led.sqlite3", "the ledger")], force=True)


@pytest.mark.parametrize("place, said", [("table.csv/x.json", "is a file, not a folder"),
                                         ("/proc/x.json", "under /proc"), ("/dev/stdout", "under /dev"),
                                         ("a" * 240 + ".json", "bytes long")])
def test_an_output_that_cannot_be_written_is_refused_before_the_charge(tmp_path, monkeypatch, capsys, place, said):
    monkeypatch.chdir(tmp_path)
    pl.DataFrame({"a": [1, 2, 3] * 20}).write_csv("table.csv")
    ledger = tmp_path / "ledger.sqlite3"
    code, _, err = _cli(capsys, "query", "table.csv", "count", "--epsilon", "0.5", "--ledger", str(ledger),
                        "--budget", "5,1e-5", "--out", place, "--force")
    assert code == 2 and said in err and len(err.strip().splitlines()) == 1, err
    if ledger.exists():
        code, out, _ = _cli(capsys, "ledger", "show", "--ledger", str(ledger), "--json")
        shown = json.loads(out) if code == 0 else {}
        assert all(d["spent"]["epsilon"] == 0 for d in shown.get("datasets", []))


def test_check_writable_lets_a_new_file_in_a_new_folder_through(tmp_path):
    check_writable(tmp_path / "new" / "deeper" / "r.csv")
    if Path("/dev/shm").is_dir():  # a memory file system of regular files, under /dev
        check_writable("/dev/shm/crowdsafe-test/r.csv")
    with pytest.raises(InputError, match="is a file, not a folder"):
        (tmp_path / "f").write_text("x")
        check_writable(tmp_path / "f" / "r.csv")


def test_a_write_that_fails_anyway_is_one_line(tmp_path):
    """The writer's own failure (the guard bypassed): an InputError naming the path, not an
    internal error."""
    with pytest.raises(InputError, match="cannot write /proc/"):
        write_text_atomic("/proc/crowdsafe-test.json", "{}")


def test_the_check_is_what_refuses(tmp_path, monkeypatch, capsys):
    """The broken variant: without the check, the same run is charged before it fails."""
    from crowdsafe import output_guard

    monkeypatch.setattr(output_guard, "check_writable", lambda path: None)
    monkeypatch.chdir(tmp_path)
    pl.DataFrame({"a": [1, 2, 3] * 20}).write_csv("table.csv")
    ledger = tmp_path / "ledger.sqlite3"
    _cli(capsys, "query", "table.csv", "count", "--epsilon", "0.5", "--ledger", str(ledger), "--budget", "5,1e-5",
         "--out", "/proc/x.json", "--force")
    code, out, _ = _cli(capsys, "ledger", "show", "--ledger", str(ledger), "--json")
    assert code == 0
    shown = json.loads(out)
    assert any(d["spent"]["epsilon"] > 0 for d in shown["datasets"])


def test_literal_path_leaves_other_paths_as_they_are():
    assert literal_path("a/b.csv") == Path("a/b.csv") and literal_path("/x/~/y") == Path("/x/~/y")


def test_a_dangling_link_named_like_a_bundled_table_is_refused(tmp_path, monkeypatch):
    """A link to a missing file means a file was meant: it is not read as the bundled table."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "adult").symlink_to(tmp_path / "missing.csv")
    with pytest.raises(InputError, match="symbolic link to a missing file"):
        load("adult")


def test_showing_a_ledger_that_is_not_there_makes_none(tmp_path, capsys):
    """It is shown empty, as a new one would be, and no file or folder is made."""
    code, out, _ = _cli(capsys, "ledger", "show", "--ledger", str(tmp_path / "nd" / "l.sqlite3"), "--json")
    assert code == 0 and json.loads(out)["datasets"] == [] and not (tmp_path / "nd").exists()
