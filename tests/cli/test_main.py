"""The command line's shell: version, help, and the one-line error contract."""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer

from crowdsafe import __version__, cli
from crowdsafe.errors import CrowdsafeError, ParameterError


def test_version_prints_package_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"crowdsafe {__version__}"


def test_crowdsafe_error_is_one_line_and_exit_2(capsys):
    probe = typer.Typer()

    @probe.command()
    def boom() -> None:
        raise ParameterError("beta must lie in (0, 1], got 1.5\n(second line folded)")

    original = cli.app
    cli.app = probe
    try:
        code = cli.main([])
    finally:
        cli.app = original
    err = capsys.readouterr().err
    assert code == 2
    assert err.count("\n") == 1
    assert err.startswith("crowdsafe: error: beta must lie in (0, 1], got 1.5 (second line folded)")
    assert "Traceback" not in err


def _every_subclass(cls):
    for sub in cls.__subclasses__():
        yield sub
        yield from _every_subclass(sub)


def test_every_crowdsafe_error_maps_to_exit_2_and_a_ledger_refusal_to_3():
    """A script tells "the ledger refused" (3: a larger budget, or nothing) from "fix the input" (2)."""
    from crowdsafe.errors import BudgetExceeded

    for cls in _every_subclass(CrowdsafeError):
        assert cls("x").exit_code == (3 if issubclass(cls, BudgetExceeded) else 2), cls


def test_module_entry_point_runs():
    done = subprocess.run(
        [sys.executable, "-m", "crowdsafe", "--help"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    assert "crowdsafe" in done.stdout


def test_unknown_command_is_a_usage_error_not_a_traceback():
    done = subprocess.run(
        [sys.executable, "-m", "crowdsafe", "no-such-command"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 2
    assert "Traceback" not in done.stderr


def test_an_interrupt_says_so_in_one_line(tmp_path, capsys, monkeypatch):
    """Ctrl-C during a command: exit 130 and one line saying nothing was written and whether a
    budget was charged (the CLI library turned the interrupt into a silent 130;
    tests/cli/test_interrupt_charges.py for a run that had charged)."""
    from crowdsafe import api

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(api, "publish", interrupted)
    code = cli.main(["publish", "adult", "--epsilon", "1", "--delta", "1e-6", "--no-ledger", "--seed", "1",
                     "--out", str(tmp_path / "r.csv")])
    err = capsys.readouterr().err
    assert code == 130 and len(err.strip().splitlines()) == 1
    assert err == "crowdsafe: interrupted; no output was written; nothing was charged to a privacy ledger\n"
    assert not (tmp_path / "r.csv").exists()


def test_a_full_disk_is_one_line_and_leaves_no_file(tmp_path, capsys, monkeypatch):
    """Found by a sweep: a full disk was an internal error ("please report it"). The write's
    fsync fails as a full disk does: exit 2, one line naming the reason, no file."""
    import errno

    from crowdsafe import files

    def full(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(files.os, "fsync", full)
    code = cli.main(["anonymize", "adult", "--k", "10", "--no-report", "--out", str(tmp_path / "a.csv")])
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert err.startswith("crowdsafe: error: No space left on device") and "nothing was charged" in err
    assert list(tmp_path.iterdir()) == []


def test_out_of_memory_and_internal_errors_are_one_line(tmp_path, capsys, monkeypatch):
    from crowdsafe import api

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(api, "publish", exhausted)
    argv = ["publish", "adult", "--epsilon", "1", "--delta", "1e-6", "--no-ledger", "--out", str(tmp_path / "r.csv")]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("crowdsafe: error: out of memory;") and len(err.strip().splitlines()) == 1

    def bug(*args, **kwargs):
        raise ValueError("first line\n  second line\nthird")

    monkeypatch.setattr(api, "publish", bug)
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "internal error: ValueError: first line second line third" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("command", [["check"], ["query", "--epsilon", "1"], ["perturb", "--c", "2", "--gamma", "0.5"]])
def test_a_name_too_long_is_said_so_not_a_machine_that_stopped(tmp_path, capsys, command):
    """'crowdsafe check <300-character name>' said the machine stopped midway and a budget charged
    stays spent: Path.is_file raised ENAMETOOLONG. It is bad input, named as such."""
    name = str(tmp_path / ("a" * 300 + ".csv"))
    argv = [command[0], name, *(["count"] if command[0] == "query" else []), *command[1:]]
    if command[0] == "perturb":
        argv += ["--out", str(tmp_path / "v.csv")]
    code = cli.main(argv)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "the name is too long" in err and "stays spent" not in err and "304 bytes" in err, err


def test_an_os_error_of_a_too_long_name_anywhere_is_bad_input(tmp_path, capsys, monkeypatch):
    """The command line's last resort: ENAMETOOLONG raised wherever is a bad name, not a stopped run."""
    import errno

    from crowdsafe import api

    def too_long(*args, **kwargs):
        raise OSError(errno.ENAMETOOLONG, "File name too long", "b" * 300)

    monkeypatch.setattr(api, "check", too_long)
    assert cli.main(["check", "adult"]) == 2
    err = capsys.readouterr().err
    assert "the name is too long" in err and "stays spent" not in err and len(err.strip().splitlines()) == 1
