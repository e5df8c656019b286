"""``crowdsafe experiment NAME``: run a named reproduction, writing CSV + PNG."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from crowdsafe.cli.options import ForceOpt, JsonOpt, SeedOpt, emit
from crowdsafe.errors import ParameterError


def _options(pairs: list[str] | None) -> dict[str, str]:
    options = {}
    for pair in pairs or []:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ParameterError(f"an experiment option is KEY=VALUE, got {pair!r}")
        options[key.strip()] = value.strip()
    return options


def experiment_command(
    name: Annotated[str, typer.Argument(help="The experiment to run, or 'list' to list them.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Results folder (default: results/).")] = None,
    seed: SeedOpt = None,
    option: Annotated[list[str] | None, typer.Option(
        "--option", "-O", help="KEY=VALUE passed to the experiment (repeatable), e.g. -O seeds=2.")] = None,
    force: ForceOpt = False,
    as_json: JsonOpt = False,
) -> None:
    """Run a named reproduction of a paper's table or figure; it writes CSV + PNG under OUT/NAME/,
    with experiment.json listing them (a rerun replaces them; other files there need --force).

    Example: crowdsafe experiment dps-delta-table --out results
    """
    from crowdsafe.experiments import available, run

    if name == "list":
        entries = [{"name": e.name, "title": e.title} for e in available()]

        def show_entries() -> None:
            for e in entries:
                typer.echo(f"{e['name']:<24} {e['title']}")

        emit(entries, as_json, show_entries)
        return
    result = run(name, out, seed, _options(option), force=force)

    def show_files() -> None:
        for f in result.files:
            typer.echo(f"wrote {f}")

    emit(result.as_dict(), as_json, show_files)


def register(app: typer.Typer) -> None:
    app.command("experiment")(experiment_command)
