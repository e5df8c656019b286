"""The scratch folder a document's examples run in (tests/cli/test_documented_commands.py and
tests/test_documented_python.py): the reader's working folder, with HOME and the ledger inside it,
and the input files the document expects its reader to have."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path


def enter_scratch_folder(tmp_path: Path, monkeypatch, fixtures: Mapping[str, tuple[str, Callable[[Path], object]]]
                         ) -> None:
    """Make ``tmp_path`` the working folder, HOME (``home/``) and the ledger's home, and make each
    fixture file there (``fixtures``: file name -> (why the reader has it, how to make it))."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("CROWDSAFE_LEDGER", str(home / "ledger.sqlite3"))
    for name, (reason, make) in fixtures.items():
        assert reason, name
        make(tmp_path / name)
