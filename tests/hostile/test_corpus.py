"""Every case of the bad-input corpus (corpus.py) fails cleanly.

For each case, run in-process as a user would type it: exit status 2 (3 for a refusal of the
ledger); exactly one line on standard error, ``crowdsafe: error: ...`` holding the expected
fragment, no traceback; no file written or left behind (inputs and the output folder are byte
for byte as before, no temporary file); and the ledger as it was (no budget spent, no dataset
registered), since every failure here can be decided before any charge.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import stat
from pathlib import Path
from typing import Any

import pytest
from corpus import CASES, FOLDER, FOREIGN_SETUPS, STANDARD_FILES, Case
from read_only import read_only
from special_files import bounded_memory, file_state, prepare, released_after

from crowdsafe import cli
from crowdsafe.privacy import ledger as ledger_module
from foreign_sqlite import write_foreign_sqlite


@pytest.fixture(scope="module")
def template_ledger(tmp_path_factory) -> Path:
    """A ledger in which people.csv has a budget (ε 10, δ 1e-5), made once and copied per case."""
    folder = tmp_path_factory.mktemp("template")
    for name, content in STANDARD_FILES.items():
        (folder / name).write_text(content)
    path = folder / "ledger" / "template.sqlite3"
    assert cli.main(["ledger", "init", str(folder / "people.csv"), "--epsilon", "10", "--delta", "1e-5",
                     "--ledger", str(path)]) == 0
    return path


def _tree(root: Path) -> dict[str, bytes | None]:
    """Every path under ``root`` with its bytes (None for a folder, "special" for a FIFO)."""
    return {str(p.relative_to(root)): file_state(p) for p in sorted(root.rglob("*"))}


def _ledger_state(path: Path) -> object:
    """What a charge would change: the entries, totals and samples (or the raw bytes of a file
    that is not a ledger, or None when there is no file)."""
    if not path.exists():
        return None
    if path.is_dir():
        return "folder"
    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            return {table: conn.execute(f"SELECT * FROM {table} ORDER BY 1").fetchall()
                    for table in ("entries", "totals", "samples")}
    except sqlite3.DatabaseError:
        return path.read_bytes()


def _prepare(case: Case, tmp_path: Path, template: Path) -> dict[str, Any]:
    inputs, out, ledger_dir = tmp_path / "in", tmp_path / "out", tmp_path / "ledger"
    inputs.mkdir()
    out.mkdir()
    ledger_dir.mkdir(mode=0o700)
    ledger = ledger_dir / "ledger.sqlite3"
    for name, content in {**STANDARD_FILES, **case.files}.items():
        target = inputs / name
        if content is FOLDER:
            target.mkdir()
        elif isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(str(content))
    if case.setup == "corrupt-ledger":
        ledger.write_bytes(b"this is not an SQLite database, it is a ledger someone edited by hand\n" * 20)
        ledger.chmod(0o600)
    elif case.setup in FOREIGN_SETUPS:
        write_foreign_sqlite(ledger, FOREIGN_SETUPS[case.setup])
    else:
        shutil.copyfile(template, ledger)
        ledger.chmod(0o600)
    if case.setup == "out-subfolder":
        (out / "sub.csv").mkdir()
    if case.setup and case.setup.startswith("ledger-mode-"):
        ledger.chmod(int(case.setup.removeprefix("ledger-mode-"), 8))
    fifos = prepare(case.setup, inputs)
    return {"in": str(inputs), "out": str(out), "ledger": str(ledger), "fifos": fifos}


def _case_param(case: Case):
    marks = []
    if case.xfail:
        marks.append(pytest.mark.xfail(strict=True, reason=case.xfail))
    return pytest.param(case, id=case.id, marks=marks)


def test_the_corpus_is_large_and_ids_are_unique():
    ids = [c.id for c in CASES]
    assert len(ids) == len(set(ids))
    assert len(CASES) >= 60
    commands = {c.argv[0] if c.argv[0] != "ledger" or "--ledger" not in c.argv else "ledger" for c in CASES}
    assert {"publish", "check", "anonymize", "query", "perturb", "attack", "ledger"} <= commands
    assert any("--schema" in c.argv for c in CASES)


@pytest.mark.parametrize("case", [_case_param(c) for c in CASES])
def test_bad_input_fails_with_one_line_and_leaves_nothing(case: Case, tmp_path, template_ledger, capsys, monkeypatch):
    places = _prepare(case, tmp_path, template_ledger)
    argv = [a.format(**places) for a in case.argv]
    fragment = case.fragment
    for name in ("in", "out", "ledger"):  # a fragment may name the case's paths
        fragment = fragment.replace("{" + name + "}", places[name])
    ledger = Path(places["ledger"])
    monkeypatch.setenv(ledger_module.LEDGER_ENV, str(ledger))
    before_files = _tree(tmp_path / "in"), _tree(tmp_path / "out")
    before_ledger_folder = _tree(ledger.parent)
    before_ledger = _ledger_state(ledger)
    holder = None
    if case.setup == "lock-ledger":
        monkeypatch.setattr(ledger_module, "_BUSY_TIMEOUT_S", 0.2)
        holder = sqlite3.connect(ledger, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
    capsys.readouterr()
    locked = read_only(ledger, ledger.parent) if case.setup == "read-only-ledger" else contextlib.nullcontext()
    try:
        # a run blocked on a FIFO must not hang, nor one reading /dev/zero take the machine's memory
        with locked, released_after(places["fifos"]) as blocked, bounded_memory(case.setup == "bounded-memory"):
            code = cli.main(argv)
    finally:
        if holder is not None:
            holder.execute("ROLLBACK")
            holder.close()
    out, err = capsys.readouterr()
    lines = err.splitlines()
    assert not blocked, f"the run blocked reading the FIFO {blocked[0]}"
    assert code == case.exit, f"exit {code}; stderr: {err!r}"
    assert "Traceback" not in err and "internal error" not in err
    assert len(lines) == 1, f"expected one line on stderr, got {lines!r}"
    assert lines[0].startswith("crowdsafe: error: ")
    assert fragment.lower() in lines[0].lower(), lines[0]
    assert (_tree(tmp_path / "in"), _tree(tmp_path / "out")) == before_files, "a file was written or left behind"
    if case.setup in FOREIGN_SETUPS:  # another application's file: byte for byte, and no -wal/-journal beside it
        assert _tree(ledger.parent) == before_ledger_folder, "the foreign database was written"
    if case.knowable:
        assert _ledger_state(ledger) == before_ledger, \
            "the ledger changed: budget spent on a run that could not succeed"
    mode = stat.S_IMODE(ledger.stat().st_mode) if ledger.exists() else None
    assert mode is None or str(case.setup).startswith("ledger-mode-") or not mode & 0o066
