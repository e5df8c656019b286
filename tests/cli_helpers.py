"""Running the command line in a test: one helper for every CLI test file."""

from __future__ import annotations

from crowdsafe import cli


def run_command(capsys, *argv: str) -> tuple[int, str, str]:
    """``crowdsafe argv...`` in-process: its exit code, standard output and standard error."""
    code = cli.main(list(argv))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def run_for_error(capsys, *argv: object) -> tuple[int, str]:
    """``crowdsafe argv...`` in-process (each argument as text), after clearing what earlier runs
    printed: its exit code and standard error."""
    capsys.readouterr()
    code = cli.main([str(a) for a in argv])
    return code, capsys.readouterr().err
