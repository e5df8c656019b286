"""``crowdsafe COMMAND ...`` runs under an app holding that command alone (:func:`crowdsafe.cli.app_for`:
Typer builds the Click command of every command an app holds, each run). Whatever the command
prints, and its exit status, are those of the whole app: its help, its usage errors, a group's
help and its subcommands' help."""

from __future__ import annotations

import pytest

from crowdsafe import cli
from crowdsafe.cli import _registered_name


def top_level_names() -> list[str]:
    entries = [*cli.app.registered_commands, *cli.app.registered_groups]
    return sorted(name for name in map(_registered_name, entries) if name)


def run(argv: list[str], capsys, monkeypatch, whole: bool) -> tuple[int, str, str]:
    monkeypatch.setenv("COLUMNS", "120")
    with monkeypatch.context() as patched:
        if whole:
            patched.setattr(cli, "app_for", lambda argv: cli.app)
        capsys.readouterr()
        code = cli.main(argv)
        out, err = capsys.readouterr()
    return code, out, err


def test_every_command_runs_alone():
    names = top_level_names()
    assert {"publish", "anonymize", "check", "ledger", "calc", "datasets", "estimate"} <= set(names)
    for name in names:
        chosen = cli.app_for([name, "--help"])
        assert chosen is not cli.app, name
        assert [_registered_name(e) for e in (*chosen.registered_commands, *chosen.registered_groups)] == [name]


@pytest.mark.parametrize("argv", [[], ["--help"], ["--version"], ["no-such-command"], ["publsh", "adult"]])
def test_no_command_name_runs_the_whole_app(argv):
    assert cli.app_for(argv) is cli.app


@pytest.mark.slow
def test_help_of_every_command_is_the_whole_apps(capsys, monkeypatch):
    for name in top_level_names():
        argv = [name, "--help"]
        assert run(argv, capsys, monkeypatch, whole=False) == run(argv, capsys, monkeypatch, whole=True), name


@pytest.mark.parametrize("argv", [
    ["ledger"], ["ledger", "show", "--help"], ["calc", "dps", "--help"], ["datasets", "nope"],
    ["publish"], ["publish", "adult", "--no-such-option"], ["publish", "adult", "--epsilon", "one"],
    ["publish", "adult", "--k", "1.5"], ["anonymize", "adult", "--k"], ["calc", "dps", "--k", "5", "--beta", "2"],
])
def test_usage_errors_and_group_help_are_the_whole_apps(argv, capsys, monkeypatch):
    assert run(argv, capsys, monkeypatch, whole=False) == run(argv, capsys, monkeypatch, whole=True)


@pytest.mark.parametrize("group", ["ledger", "calc", "datasets"])
def test_a_group_without_a_command_shows_its_help_once(group, capsys):
    """``crowdsafe ledger`` alone: the group's help, once (the rich formatter draws it while the
    usage error is made; printing the error's help again drew it twice), and exit status 2."""
    assert cli.main([group]) == 2
    shown = capsys.readouterr()
    text = shown.out + shown.err
    assert text.count(f"Usage: crowdsafe {group}") == 1, text
