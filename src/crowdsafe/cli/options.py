"""Options that mean the same in every command.

Use these annotated types in command signatures so ``--qi``, ``--sensitive``, ``--schema``,
``--out``, ``--seed`` and ``--json`` are spelled and explained one way everywhere.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from crowdsafe.errors import ParameterError

DataArg = Annotated[
    str,
    typer.Argument(help="A CSV or Parquet file, or the name of a bundled dataset (e.g. 'adult')."),
]
QiOpt = Annotated[
    str | None,
    typer.Option("--qi", help="Comma-separated quasi-identifiers (default: every attribute)."),
]
SensitiveOpt = Annotated[
    str | None, typer.Option("--sensitive", help="The sensitive attribute.")
]
SchemaOpt = Annotated[
    Path | None, typer.Option("--schema", help="A schema TOML file (roles and types).")
]
OutOpt = Annotated[Path | None, typer.Option("--out", "-o", help="Where to write the output.")]
SeedOpt = Annotated[
    int | None,
    typer.Option(
        "--seed",
        help="Make the run reproducible (tests, experiments). A seeded result is NOT fit for release.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
ForceOpt = Annotated[
    bool,
    typer.Option("--force", help="Replace an existing output file that crowdsafe did not write (a file crowdsafe "
                                 "wrote is replaced without it; see docs/hostile-input.md, \"Outputs\")."),
]
EscapeFormulasOpt = Annotated[
    bool,
    typer.Option(
        "--escape-formulas/--no-escape-formulas",
        help="In CSV output, write a text cell that a spreadsheet would run as a formula (it starts with "
             "= + - @, a tab or a carriage return) with a leading apostrophe (default). --no-escape-formulas "
             "writes cells as they are, for programs that read the CSV; Parquet always keeps raw values.",
    ),
]


def split_list(value: str | None) -> list[str] | None:
    """Parse a comma-separated option; ``None`` stays ``None``."""
    if value is None:
        return None
    items = [item.strip() for item in value.split(",") if item.strip()]
    if not items:
        raise ParameterError("expected a comma-separated list of names, got an empty value")
    return items


def parse_budget(text: str | None, option: str = "--budget") -> tuple[float, float] | None:
    """``'1'`` or ``'1,1e-6'`` -> (ε, δ), checked here so that a bad value is refused, naming
    ``option``, before any data is read: ε finite and > 0, δ finite in [0, 1)."""
    items = split_list(text)
    if items is None:
        return None
    try:
        numbers = [float(item) for item in items]
    except ValueError:
        raise ParameterError(f"{option} expects EPSILON or EPSILON,DELTA, got {text!r}") from None
    if len(numbers) not in (1, 2):
        raise ParameterError(f"{option} expects EPSILON or EPSILON,DELTA, got {text!r}")
    epsilon, delta = numbers[0], numbers[1] if len(numbers) == 2 else 0.0
    if not (math.isfinite(epsilon) and epsilon > 0):
        raise ParameterError(f"{option}: the total epsilon must be a finite number > 0, got {items[0]!r}")
    if not (math.isfinite(delta) and 0 <= delta < 1):
        raise ParameterError(f"{option}: the total delta must lie in [0, 1), got {items[1]!r}")
    return epsilon, delta


def emit(payload: Any, as_json: bool, render: Callable[[], None]) -> None:
    """Print ``payload`` as JSON when asked, else call ``render`` for the human-readable form."""
    if as_json:
        json.dump(payload, sys.stdout, indent=2, default=str, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        render()
EngineOpt = Annotated[
    str,
    typer.Option("--engine", help="Where the per-row work runs: polars (in this process, default) or spark."),
]
SparkMasterOpt = Annotated[
    str | None,
    typer.Option("--spark-master", help="Spark master URL for --engine spark (default: the active session, "
                                        "$CROWDSAFE_SPARK_MASTER, else Spark's configuration)."),
]


@contextlib.contextmanager
def naming_options(**flags: str) -> Iterator[None]:
    """Re-raise a library :class:`ParameterError` whose message begins with a parameter's name
    (``epsilon = 1e+308 is too large ...``) with the option that set it in front
    (``--epsilon: epsilon = 1e+308 is too large ...``). ``flags``: parameter name -> option.
    The library speaks of parameters; the command line names the option the user gave."""
    try:
        yield
    except ParameterError as exc:
        text = str(exc)
        for parameter, flag in flags.items():
            if re.match(rf"{re.escape(parameter)}\b", text) and not text.startswith(flag):
                raise ParameterError(f"{flag}: {text}", parameter=exc.parameters) from None
        raise


def print_warnings(notes: Iterable[str]) -> None:
    """Print on stderr, one ``warning: ...`` line per column, the notes that say a column's name
    looks like a direct identifier (:func:`crowdsafe.data.identifiers.name_warnings`: from the
    names alone, so the lines are the same on any rows)."""
    from crowdsafe.data.identifiers import is_name_warning

    for note in notes:
        if is_name_warning(note):
            typer.echo(f"warning: {note}", err=True)


@contextlib.contextmanager
def identifier_warnings() -> Iterator[None]:
    """Print the :class:`~crowdsafe.data.identifiers.IdentifierWarning` s raised inside on stderr,
    one ``warning: ...`` line each, as :func:`print_warnings` does for notes (for the commands
    whose result has no notes list, e.g. perturb)."""
    import warnings

    from crowdsafe.data.identifiers import IdentifierWarning

    seen: dict[str, None] = {}
    with warnings.catch_warnings():
        passing_on = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
            # only identifier warnings are kept; every other warning goes on at once (recording
            # them all held millions of Spark warnings in memory)
            if issubclass(category, IdentifierWarning):
                seen[str(message)] = None
            else:
                passing_on(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        warnings.simplefilter("always", IdentifierWarning)
        try:
            yield
        finally:
            print_warnings(seen)


def plain_notes(notes: Iterable[str]) -> list[str]:
    """``notes`` without the identifier warnings (printed on stderr by :func:`print_warnings`)."""
    from crowdsafe.data.identifiers import is_name_warning

    return [note for note in notes if not is_name_warning(note)]
