"""The ``crowdsafe`` command line: a thin layer over the Python API.

Each command module under this package exposes ``register(app)``. :func:`main` maps every
:class:`~crowdsafe.errors.CrowdsafeError` to one line on standard error and its exit status (2; 3
for a refusal of the ledger, :class:`~crowdsafe.errors.BudgetExceeded`), with no traceback,
naming the parameters it speaks of by their flags (:mod:`crowdsafe.cli.flags`); a usage error
(an unknown option, a value of the wrong type) is one line too, with exit status 2.
Set ``CROWDSAFE_DEBUG=1`` to see tracebacks of unexpected errors.

A stop signal is an interrupt: SIGTERM (``kill``, ``timeout``, ``docker stop``, a scheduler) and
SIGHUP (the terminal closed) raise :class:`Stopped`, a KeyboardInterrupt, in the main thread, so
a run stops as on Ctrl-C (its ledger entry marked failed, no output left half-written) and
prints one line; the exit status is 128 + the signal's number (130 for SIGINT, 143 for SIGTERM,
129 for SIGHUP). A second stop signal during that clean-up ends the process at once. A signal
ignored by the caller (``nohup`` ignores SIGHUP) stays ignored. Once the run has started writing
its outputs (:func:`crowdsafe.stopping.finishing`) a stop signal is deferred: the run finishes
and a note says so.
"""

from __future__ import annotations

import contextlib
import errno
import importlib
import inspect
import os
import signal
import sys
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

import typer

from crowdsafe import __version__, stopping
from crowdsafe.cli.ending import AlreadySaid
from crowdsafe.cli.flags import cli_message
from crowdsafe.errors import CrowdsafeError
from crowdsafe.files import input_path_error
from crowdsafe.progress import shown_on_terminal

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
    "crowdsafe.cli.schema",
    "crowdsafe.cli.report",
    "crowdsafe.cli.webapp",  # `crowdsafe app` (a module named app would hide the Typer app)
]

_APP_SETTINGS: dict[str, Any] = dict(
    name="crowdsafe",
    help="Publish microdata with a proven privacy guarantee, and check what an attacker could learn.",
    epilog="Coming from ARX, sdcMicro or OpenDP/diffprivlib? docs/coming-from.md maps their tasks to these "
           "commands: risk (check), k-anonymity and microaggregation (anonymize), DP counts and means (query).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="rich",
)
app = typer.Typer(**_APP_SETTINGS)


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


def reflowed(text: str) -> str:
    """``text`` with each paragraph on one line (paragraphs: separated by a blank line). In
    Rich markup the CLI library keeps a docstring's single line breaks, so a docstring wrapped
    at 100 columns broke every line early in an 80-column terminal; the terminal wraps each
    paragraph once it is one line."""
    return "\n\n".join(" ".join(paragraph.split()) for paragraph in inspect.cleandoc(text).split("\n\n"))


def _reflow_help(group: typer.Typer) -> None:
    """Every help text of ``group``'s commands and command groups, and theirs, :func:`reflowed`."""
    for command in group.registered_commands:
        text = command.help if isinstance(command.help, str) else inspect.getdoc(command.callback)
        if text:
            command.help = reflowed(text)
    for sub in group.registered_groups:
        if isinstance(sub.help, str):
            sub.help = reflowed(sub.help)
        if sub.typer_instance is not None:
            if isinstance(sub.typer_instance.info.help, str):
                sub.typer_instance.info.help = reflowed(sub.typer_instance.info.help)
            _reflow_help(sub.typer_instance)


for _module in _COMMAND_MODULES:
    importlib.import_module(_module).register(app)
_reflow_help(app)


def _registered_name(entry: Any) -> str | None:
    """The name a command or command group was registered under (a group added without one takes
    its Typer's: ``ledger``)."""
    name = getattr(entry, "name", None)
    if not name and getattr(entry, "typer_instance", None) is not None:
        name = entry.typer_instance.info.name
    return name if isinstance(name, str) else None


def app_for(argv: list[str]) -> typer.Typer:
    """The app that runs ``argv``: when it starts with a command's name, an app holding that
    command (or command group) alone, registered as in :data:`app`; otherwise :data:`app` itself
    (``--help``, ``--version``, an unknown name and its suggestions).

    Typer builds the Click command of every command an app holds, each time it runs: about 25 ms
    for the ~25 commands, of which the one that runs needs only its own. The command parses,
    helps and fails exactly as under the whole app: a Click group routes to the named command
    only, and the command's help and errors name the path ``crowdsafe COMMAND``."""
    if not argv:
        return app
    commands = [c for c in app.registered_commands if _registered_name(c) == argv[0]]
    groups = [g for g in app.registered_groups if _registered_name(g) == argv[0]]
    if len(commands) + len(groups) != 1:
        return app
    alone = typer.Typer(**_APP_SETTINGS)
    alone.registered_callback = app.registered_callback
    alone.registered_commands, alone.registered_groups = commands, groups
    return alone


def fail(message: str, code: int = 2) -> typer.Exit:
    """Print ``crowdsafe: error: message`` on standard error and return an Exit to raise."""
    typer.echo(f"crowdsafe: error: {message}", err=True)
    return typer.Exit(code)


def _usage_line(exc: typer.TyperException) -> str:
    """A usage error as one line: the problem and where to read the command's help."""
    text = exc.format_message() if hasattr(exc, "format_message") else str(exc)
    message = " ".join(text.split()) or type(exc).__name__
    context = getattr(exc, "ctx", None)
    if context is not None and context.command_path:
        message += f" (see '{context.command_path} --help')"
    return message


#: What an interrupted command prints (outputs are written atomically: an interrupt leaves none
#: half-written), then what it spent (:func:`_spent`).
INTERRUPTED = "crowdsafe: interrupted; no output was written"
#: ... once it had started writing them (:func:`crowdsafe.stopping.finishing`).
WRITING_INTERRUPTED = ("crowdsafe: interrupted while writing its outputs; each file it had put in place is whole "
                       "(a table with its certificate), the others were not written")
#: What a command the machine stopped midway prints after the reason (a full disk, no memory).
FAILED_MIDWAY = "no output was left half-written"


def _spent() -> str:
    """What the stopped command spent: that nothing was charged to a ledger, or each charge it
    made (entry, dataset, loss) and that it stays spent. A script rerunning a stopped job reads
    here whether the budget moved (it said "a budget the run had charged stays spent" either way).
    The record is in :mod:`crowdsafe.privacy.run_charges`, not imported if nothing charged."""
    record = sys.modules.get("crowdsafe.privacy.run_charges")
    return record.stopped_words() if record is not None else "nothing was charged to a privacy ledger"


class Stopped(KeyboardInterrupt):
    """A stop signal (SIGTERM, SIGHUP) received: handled everywhere as Ctrl-C is."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


#: The signals a command stops on as on Ctrl-C (SIGHUP where the system has it).
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name))
_received: list[int] = []
_deferred: list[int] = []  # signals that came once the run had started writing its outputs


def _stop(signum: int, frame: FrameType | None) -> None:
    if stopping.is_finishing():  # the run has started putting its outputs in place: it finishes
        _deferred.append(signum)
        for sig in STOP_SIGNALS:  # a second one ends the process at once
            signal.signal(sig, signal.SIG_DFL)
        return
    _received.append(signum)
    for sig in STOP_SIGNALS:  # a second one while the run cleans up ends the process at once
        signal.signal(sig, signal.SIG_DFL)
    raise Stopped(signum)


@contextlib.contextmanager
def _stop_signals() -> Iterator[None]:
    """While a command runs: SIGTERM and SIGHUP raise :class:`Stopped`, unless the run has started
    writing its outputs (:func:`crowdsafe.stopping.finishing`): then the signal is deferred and
    the run finishes. Main thread only; the handlers before are put back after; one the caller
    set to be ignored stays ignored. (Ctrl-C keeps Python's handler: Polars raises it from
    inside its own work too, so it cannot be deferred; :func:`_interrupted` says what was
    written then.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _received.clear()
    _deferred.clear()
    stopping.new_command()
    # a signal the caller ignores stays ignored (nohup ignores SIGHUP: the run goes on)
    before = {sig: signal.signal(sig, _stop) for sig in STOP_SIGNALS if signal.getsignal(sig) is not signal.SIG_IGN}
    try:
        yield
    finally:
        for sig, handler in before.items():
            signal.signal(sig, handler)


def _finished_anyway() -> None:
    """The note of a run that got a stop signal while it wrote its outputs, and finished them."""
    if _deferred:
        name = signal.Signals(_deferred[0]).name
        typer.echo(f"crowdsafe: note: {name} came once the run had started writing its outputs: it finished "
                   "them first (a second signal ends a run at once)", err=True)


def _interrupted() -> int:
    """Print the one line of an interrupted run and return its exit status (128 + the signal).
    A run interrupted once it had started writing its outputs (Ctrl-C) says so: a file it had
    put in place may be there."""
    line = INTERRUPTED if not stopping.is_finishing() else WRITING_INTERRUPTED
    if _received:
        name = signal.Signals(_received[0]).name
        typer.echo(line.replace("interrupted", f"stopped by {name}", 1) + f"; {_spent()}", err=True)
        return 128 + _received[0]
    typer.echo(f"{line}; {_spent()}", err=True)
    return 130


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script; returns the process exit status."""
    record = sys.modules.get("crowdsafe.privacy.run_charges")
    if record is not None:  # what an earlier command of this process charged is not this one's
        record.clear()
    with _stop_signals():
        status = _main(argv)
        _finished_anyway()
        return status


def _main(argv: list[str] | None) -> int:
    try:
        # Not standalone: usage errors come back here as exceptions and are printed as one line
        # (the CLI library would draw a framed, multi-line box); --help and --version return 0.
        with shown_on_terminal():  # long passes over a table: a transient bar on a terminal only
            chosen = app_for(sys.argv[1:] if argv is None else argv)
            result = chosen(args=argv, standalone_mode=False, prog_name="crowdsafe")
        if result == 130:  # Ctrl-C: the CLI library turns it into Exit(130) and returns the status
            return _interrupted()
        return result if isinstance(result, int) else 0
    except typer.Exit as exc:
        return exc.exit_code
    except AlreadySaid as exc:  # the command printed how it ended (the app stopped)
        return exc.exit_code
    except typer.Abort:
        return _interrupted()
    except typer.TyperException as exc:  # the CLI library's usage errors
        context = getattr(exc, "ctx", None)
        if type(exc).__name__ == "NoArgsIsHelpError" and context is not None:
            # the exception drew the help when it was made: Typer's rich formatter prints it as
            # it goes and leaves the message empty, the plain one returns it as the message
            help_text = exc.format_message() if hasattr(exc, "format_message") else ""
            if help_text.strip():
                typer.echo(help_text, err=True)
            return 2
        typer.echo(f"crowdsafe: error: {_usage_line(exc)}", err=True)
        return 2
    except SystemExit as exc:
        if _pipe_closed(exc):
            return 0
        if exc.code is None or isinstance(exc.code, int):
            return exc.code or 0
        typer.echo(str(exc.code), err=True)
        return 1
    except CrowdsafeError as exc:  # the library names parameters; the user typed flags
        typer.echo(f"crowdsafe: error: {cli_message(exc)}", err=True)
        return exc.exit_code
    except KeyboardInterrupt:
        return _interrupted()
    except BrokenPipeError:
        return 0
    except (OSError, MemoryError) as exc:  # the machine refused (a full disk, no memory): not a bug
        if os.environ.get("CROWDSAFE_DEBUG"):
            raise
        if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:  # a bad name, not a machine that stopped
            error = input_path_error(exc.filename or "a path", exc)
            typer.echo(f"crowdsafe: error: {error}", err=True)
            return error.exit_code
        what = "out of memory" if isinstance(exc, MemoryError) else (
            exc.strerror or " ".join(str(exc).split())[:300] or type(exc).__name__)
        where = f" ({exc.filename})" if isinstance(exc, OSError) and exc.filename else ""
        typer.echo(f"crowdsafe: error: {what}{where}; {FAILED_MIDWAY}; {_spent()}", err=True)
        return 2
    except Exception as exc:  # a bug, not bad input: say so plainly
        if os.environ.get("CROWDSAFE_DEBUG"):
            raise
        message = " ".join(str(exc).split())  # one line, however the exception wrote it
        typer.echo(
            f"crowdsafe: internal error: {type(exc).__name__}: {message[:400]} "
            "(set CROWDSAFE_DEBUG=1 for the traceback, and please report it)",
            err=True,
        )
        return 1


def _pipe_closed(exc: SystemExit) -> bool:
    """Whether the CLI library ended the command because its reader closed the pipe
    (``crowdsafe check DATA --json | head``): it turns a broken pipe into ``SystemExit(1)``, the
    status of a bug here, so a script with ``pipefail`` failed on one run in a few, as the
    reader happened to close before or after the last write. A closed pipe ends the command with
    status 0, as a broken pipe outside the library does (:func:`_main`)."""
    cause = exc.__context__
    return exc.code == 1 and isinstance(cause, OSError) and cause.errno == errno.EPIPE


def run() -> None:
    """The ``crowdsafe`` console script (and ``python -m crowdsafe``).

    A standard stream closed by the caller (``2>&-``: Python sets ``sys.stderr`` to None) is
    opened on the null device: ``print(..., file=sys.stderr)`` with None prints to standard
    output, so a note about the input went into the ``--json`` document and broke it."""
    for name in ("stdout", "stderr"):
        if getattr(sys, name) is None:
            setattr(sys, name, open(os.devnull, "w", encoding="utf-8"))  # open for the life of the process
    sys.exit(main())
