"""Options that mean the same in every command.

Use these annotated types in command signatures so ``--qi``, ``--sensitive``, ``--schema``,
``--out``, ``--seed``, ``--json`` and ``--decimal-comma`` are spelled and explained one way everywhere, and
:func:`number_option` / :func:`whole_option` for every numeric option, so that each number on
the command line is read by the one strict parser (:mod:`crowdsafe.number_text`).
"""

from __future__ import annotations

import contextlib
import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Annotated, Any

import typer

from crowdsafe.errors import ParameterError
from crowdsafe.number_text import parse_number, parse_whole


class StrictNumber:
    """The parser of one numeric option or argument: :mod:`crowdsafe.number_text`'s strict reading
    (plain decimal or scientific notation; no underscores, hexadecimal, words, infinities or
    NaN), its refusal one line naming ``name``. A default (already a number) passes unchanged."""

    def __init__(self, name: str, whole: bool) -> None:
        self.name, self.whole = name, whole

    def __call__(self, value: object) -> float | int:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return value
        text = str(value)
        return parse_whole(text, self.name) if self.whole else parse_number(text, self.name)


def number_option(*names: str, **settings: Any) -> Any:
    """``typer.Option(*names, **settings)`` for a real number, read by :class:`StrictNumber` (shown
    as ``NUMBER`` in the help, not as the parser's type)."""
    settings.setdefault("metavar", "NUMBER")
    return typer.Option(*names, parser=StrictNumber(names[0], whole=False), **settings)


def whole_option(*names: str, **settings: Any) -> Any:
    """``typer.Option(*names, **settings)`` for a whole number, read by :class:`StrictNumber` (shown
    as ``INTEGER`` in the help)."""
    settings.setdefault("metavar", "INTEGER")
    return typer.Option(*names, parser=StrictNumber(names[0], whole=True), **settings)

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
#: ``--sensitive`` of the commands that measure or publish several (check, publish): comma-separated.
SensitiveListOpt = Annotated[
    str | None, typer.Option("--sensitive", help="Comma-separated sensitive attributes (one or more).")
]
SchemaOpt = Annotated[
    Path | None, typer.Option("--schema", help="A schema TOML file (roles and types).")
]
OutOpt = Annotated[Path | None, typer.Option("--out", "-o", help="Where to write the output.")]
SeedOpt = Annotated[
    int | None,
    whole_option(
        "--seed",
        help="Make the run reproducible (tests, experiments). A seeded result is NOT fit for release.",
    ),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print machine-readable JSON.")]
DecimalCommaOpt = Annotated[
    bool | None,
    typer.Option(
        "--decimal-comma/--no-decimal-comma",
        help="How the CSV file writes its numbers: --decimal-comma reads 1.234,5 as 1234.5 (a '.' is then a "
             "thousands separator, and so is a space: 29 824,00 is 29824); --no-decimal-comma reads a decimal point only. Default: as the schema's "
             "\\[csv] decimal_comma says, else a ';'-separated file's columns of such numbers are found, with a note.",
    ),
]
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


def split_names(value: str | None, option: str) -> list[str] | None:
    """:func:`split_list` of column names given to ``option``; a name given twice is refused
    (``--qi age,age`` reached the attacks and the comparison as a duplicate column)."""
    items = split_list(value)
    if items is not None:
        repeated = next((n for i, n in enumerate(items) if n in items[:i]), None)
        if repeated is not None:
            raise ParameterError(f"{option} names '{repeated}' twice")
    return items


LedgerOpt = Annotated[
    Path | None,
    typer.Option("--ledger", help="The budget ledger file (default: $CROWDSAFE_LEDGER, else "
                                  "$XDG_DATA_HOME/crowdsafe/ledger.sqlite3, ~/.local/share/crowdsafe/ledger.sqlite3 "
                                  "without it)."),
]


def ledger_choice(ledger: Path | None, no_ledger: bool, budget: str | None) -> Path | str | None:
    """The ledger a charging command (``publish``, ``query``, ``perturb``) uses: None with
    ``--no-ledger``, else ``--ledger`` or ``"default"`` (``$CROWDSAFE_LEDGER``, else the per-user
    file: :func:`crowdsafe.privacy.ledger_storage.ledger_path`). One rule for every command, so a
    script that sets ``$CROWDSAFE_LEDGER`` has each of them charged to it. ``--no-ledger`` with
    ``--ledger`` or ``--budget`` is refused before anything is read."""
    if no_ledger and (ledger is not None or budget is not None):
        raise ParameterError("--no-ledger cannot be combined with --ledger or --budget")
    return None if no_ledger else (ledger if ledger is not None else "default")


def parse_budget(text: str | None, option: str = "--budget") -> tuple[float, float] | None:
    """``'1,1e-6'`` -> (ε, δ), checked here so that a bad value is refused, naming ``option``,
    before any data is read: ε > 0, δ in [0, 1), both written as :mod:`crowdsafe.number_text`
    reads numbers. A budget without δ is refused: it would be recorded as δ = 0, which no
    release can fit (every release needs δ > 0), so the custodian writes δ = 0 when it is meant."""
    items = split_list(text)
    if items is None:
        return None
    if len(items) == 1:
        try:  # the examples below are built from it: they must be built from a number
            parse_number(items[0], option)
        except ParameterError:
            shown = str(text)
            comma = f": write {shown.replace(';', ',')}" if ";" in shown else ""
            raise ParameterError(f"{option} expects EPSILON,DELTA separated by a comma, got {text!r}{comma}") from None
        raise ParameterError(
            f"{option} {text} has no delta: write EPSILON,DELTA, e.g. {items[0]},1e-6, or {items[0]},0 for a budget "
            "of pure epsilon-DP queries only (publish needs delta > 0)"
        )
    if len(items) != 2:
        raise ParameterError(f"{option} expects EPSILON,DELTA, got {text!r}")
    epsilon, delta = (parse_number(item, option) for item in items)
    if not epsilon > 0:
        raise ParameterError(f"{option}: the total epsilon must be > 0, got {items[0]!r}")
    if not 0 <= delta < 1:
        raise ParameterError(f"{option}: the total delta must lie in [0, 1), got {items[1]!r}")
    return epsilon, delta


def emit(payload: Any, as_json: bool, render: Callable[[], None]) -> None:
    """Print ``payload`` as JSON when asked, else call ``render`` for the human-readable form.
    With standard output closed (``>&-``: Python's ``sys.stdout`` is None) there is nothing to
    print to, as the human form finds (the run's files are written: it was an internal error)."""
    if as_json:
        if sys.stdout is None:
            return
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


def plan_only_writes_nothing(**given: str | Path | None) -> None:
    """Under ``--plan-only``, one ``crowdsafe: note:`` line on stderr naming the output options
    given (keyword: the option without its dashes, ``_`` for ``-``), which the plan does not write:
    a run that prints its plan beside ``--out x.csv`` could be taken for one that wrote it."""
    from crowdsafe.identity import note_line

    named = [f"--{option.replace('_', '-')} {path}" for option, path in given.items() if path is not None]
    if named:
        typer.echo(note_line(f"--plan-only writes nothing: {', '.join(named)} not written"), err=True)


def print_warnings(notes: Iterable[str]) -> None:
    """Print on stderr, one ``crowdsafe: warning: ...`` line per column, the notes that say a column's name
    looks like a direct identifier (:func:`crowdsafe.data.identifiers.name_warnings`: from the
    names alone, so the lines are the same on any rows)."""
    from crowdsafe.data.identifiers import is_name_warning
    from crowdsafe.identity import warning_line

    for note in notes:
        if is_name_warning(note):
            typer.echo(warning_line(note), err=True)


@contextlib.contextmanager
def identifier_warnings() -> Iterator[None]:
    """Print the :class:`~crowdsafe.data.identifiers.IdentifierWarning` s raised inside on stderr,
    one ``crowdsafe: warning: ...`` line each, as :func:`print_warnings` does for notes (for the commands
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
