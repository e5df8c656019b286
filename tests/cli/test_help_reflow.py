"""Command help reads as paragraphs at any terminal width.

The CLI library, in Rich markup, keeps a docstring's single line breaks: a docstring wrapped at
100 columns then broke early on every line of an 80-column terminal ("... carries NO" / "formal
guarantee ..."). :func:`crowdsafe.cli.reflowed` puts each paragraph on one line before Typer
sees it; the terminal wraps it. Checked on every command and group by rendering the help in a
terminal wide enough for any paragraph: each paragraph of the command's source text must come
out as one line.
"""

from __future__ import annotations

import contextlib
import inspect
import io
import re

import pytest
import typer.main

from crowdsafe import cli


def _sources() -> list[tuple[list[str], str]]:
    """(path, source help text) of every command and command group, from their docstrings or
    help as written (not as the app holds them)."""
    out: list[tuple[list[str], str]] = []

    def walk(group: typer.Typer, path: list[str]) -> None:
        for command in group.registered_commands:
            name = command.name or command.callback.__name__.replace("_", "-")
            out.append(([*path, name], inspect.getdoc(command.callback) or ""))
        for sub in group.registered_groups:
            name = sub.name or sub.typer_instance.info.name
            out.append(([*path, name], str(sub.typer_instance.info.help or sub.help or "")))
            walk(sub.typer_instance, [*path, name])

    walk(cli.app, [])
    return [(path, text) for path, text in out if text]


def _shown_lines(path: list[str], monkeypatch: pytest.MonkeyPatch) -> list[str]:
    monkeypatch.setenv("COLUMNS", "2000")
    monkeypatch.setenv("TERMINAL_WIDTH", "2000")
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        cli.main([*path, "--help"])
    return [" ".join(re.sub(r"[│╭╮╰╯─]", " ", line).split()) for line in out.getvalue().splitlines()]


def _broken_paragraphs(path: list[str], source: str, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    lines = _shown_lines(path, monkeypatch)
    broken = []
    for paragraph in inspect.cleandoc(source).split("\n\n"):
        words = paragraph.split()
        head = " ".join(words[:6])
        if "\n" in paragraph.strip() and not any(head in line and words[-1] in line for line in lines):
            broken.append(head)
    return broken


def test_every_multi_line_paragraph_is_shown_as_one_line(monkeypatch: pytest.MonkeyPatch) -> None:
    sources = _sources()
    multi_line = [(path, text) for path, text in sources if any("\n" in p.strip() for p in text.split("\n\n"))]
    assert len(multi_line) >= 10  # most commands' docstrings wrap: the check has something to see
    typer.main.get_command(cli.app)  # (the commands build)
    broken = {" ".join(path): found for path, text in multi_line
              if (found := _broken_paragraphs(path, text, monkeypatch))}
    assert not broken


def test_the_check_fails_on_help_with_its_line_breaks(monkeypatch: pytest.MonkeyPatch) -> None:
    """The broken variant: the anonymize command's help given back with the docstring's breaks."""
    command = next(c for c in cli.app.registered_commands if (c.name or c.callback.__name__) == "anonymize")
    source = inspect.getdoc(command.callback) or ""
    monkeypatch.setattr(command, "help", source)
    assert _broken_paragraphs(["anonymize"], source, monkeypatch)


def test_reflowed_keeps_paragraphs_and_words() -> None:
    text = """First line
        goes on.

        Second  paragraph
        here."""
    assert cli.reflowed(text) == "First line goes on.\n\nSecond paragraph here."
