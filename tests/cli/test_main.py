"""The command line's shell: version, help, and the one-line error contract."""

from __future__ import annotations

import subprocess
import sys

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


def test_every_crowdsafe_error_maps_to_exit_2():
    for cls in CrowdsafeError.__subclasses__():
        assert cls("x").exit_code == 2


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
