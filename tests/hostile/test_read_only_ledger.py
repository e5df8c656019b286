"""A ledger in a folder that cannot be written, without its -wal/-shm files (an archived copy, a
read-only mount): ds6 #5. Every command called it "not a usable crowdsafe ledger: unable to open
database file", even the read-only `ledger show`; a custodian told a ledger is broken may start
a new one, with a fresh budget."""

from __future__ import annotations

import sqlite3

from read_only import read_only

from crowdsafe import cli


def _run(capsys, *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_a_ledger_in_a_read_only_folder_is_shown_and_not_called_unusable(capsys, tmp_path):
    data = tmp_path / "d.csv"
    data.write_text("age,sex\n" + "".join(f"{20 + i % 50},{'MF'[i % 2]}\n" for i in range(200)))
    made = tmp_path / "made.sqlite3"
    assert _run(capsys, "ledger", "init", str(data), "--ledger", str(made), "--epsilon", "1", "--delta", "0")[0] == 0
    folder = tmp_path / "archive"
    folder.mkdir()
    ledger = folder / "l.sqlite3"
    with sqlite3.connect(made) as source, sqlite3.connect(ledger) as copy:  # one file, no -wal/-shm
        source.backup(copy)
    copy.close()
    ledger.chmod(0o600)  # (a ledger open to others is refused first)
    assert sorted(p.name for p in folder.iterdir()) == ["l.sqlite3"]
    before = ledger.read_bytes()
    with read_only(ledger, folder):
        code, out, err = _run(capsys, "ledger", "show", "--ledger", str(ledger))
        assert code == 0, err
        assert "d.csv" in out and "budget" in out
        code, _, err = _run(capsys, "query", str(data), "count", "-e", "0.1", "--ledger", str(ledger))
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "cannot be written" in err and "read-only" in err and "not a usable" not in err, err
    assert ledger.read_bytes() == before
    assert sorted(p.name for p in folder.iterdir()) == ["l.sqlite3"]
