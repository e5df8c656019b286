"""The ``crowdsafe`` command line: a thin layer over the Python API.

Each command module under this package exposes ``register(app)``. :func:`main` maps every
:class:`~crowdsafe.errors.CrowdsafeError` to one line on standard error and exit status 2, with
no traceback; set ``CROWDSAFE_DEBUG=1`` to see tracebacks of unexpected errors.
"""

from __future__ import annotations

import importlib
import os
import sys

import typer

from crowdsafe import __version__
from crowdsafe.errors import CrowdsafeError

# One line per command module; each module defines ``register(app: typer.Typer)``.
_COMMAND_MODULES = [
    "crowdsafe.cli.check",
    "crowdsafe.cli.compare",
    "crowdsafe.cli.datasets",
    "crowdsafe.cli.calc",
    "crowdsafe.cli.experiment",
    "crowdsafe.cli.query",
    "crowdsafe.cli.ledger",
    "crowdsafe.cli.perturb",
    "crowdsafe.cli.anonymize",
    "crowdsafe.cli.publish",
    "crowdsafe.cli.attack",
]

app = typer.Typer(
    name="crowdsafe",
    help="Publish microdata with a proven privacy guarantee, and check what an attacker could learn.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"crowdsafe {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", callback=_version_callback, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """crowdsafe: sampling + safe k-anonymization = differential privacy."""


for _module in _COMMAND_MODULES:
    importlib.import_module(_module).register(app)


def fail(message: str, code: int = 2) -> "typer.Exit":
    """Print ``crowdsafe: error: message`` on standard error and return an Exit to raise."""
    typer.echo(f"crowdsafe: error: {message}", err=True)
    return typer.Exit(code)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit status."""
    try:
        # Standalone mode lets the CLI library report usage errors (exit 2) and --help itself;
        # it ends by raising SystemExit, which carries the status.
        app(args=argv, standalone_mode=True, prog_name="crowdsafe")
        return 0
    except SystemExit as exc:
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        typer.echo(str(exc.code), err=True)
        return 1
    except CrowdsafeError as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        typer.echo(f"crowdsafe: error: {message}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        typer.echo("crowdsafe: interrupted", err=True)
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # a bug, not bad input: say so plainly
        if os.environ.get("CROWDSAFE_DEBUG"):
            raise
        typer.echo(
            f"crowdsafe: internal error: {type(exc).__name__}: {exc} "
            "(set CROWDSAFE_DEBUG=1 for the traceback, and please report it)",
            err=True,
        )
        return 1


def run() -> None:
    sys.exit(main())
