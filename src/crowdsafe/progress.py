"""Progress of the long passes over a table, for the person running the command.

A publish of a file larger than memory reads the file several times, batch by batch
(:mod:`crowdsafe.engines.streamed_publish`): minutes per pass on tens of millions of rows. The
code that runs such a pass hands its batches through :func:`tracked` (or runs it inside
:func:`working` when it is one call); nothing is shown unless a
display is installed (:func:`shown_on_terminal`), which the command line does for every command,
and which draws only when standard error is a terminal.

**Custodian-only and transient** (docs/privacy-boundary.md): the display is drawn on the terminal
of whoever runs the command and erased when each pass ends. It never reaches a file, a pipe, a
log, the certificate, the report or a return value, so a run whose standard error is captured
(CI, a scheduler, ``2> log``) shows nothing. It shows the pass's name (fixed by the code), the
share of the rows read and the time elapsed: those depend on the data (its number of rows, how
long a pass takes), which is why none of it is kept.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterable, Iterator
from contextvars import ContextVar
from typing import Any, Protocol, TextIO, TypeVar

from crowdsafe.stopping import checkpoint

__all__ = ["Display", "shown_on_terminal", "showing", "tracked", "working"]

Batch = TypeVar("Batch")


class Display(Protocol):
    """Where :func:`tracked` reports a pass: started with its name and its rows (None: not known
    before the pass), advanced by each batch's rows, finished when the pass ends or stops."""

    def start(self, label: str, total: int | None) -> Any: ...

    def advance(self, task: Any, rows: int) -> None: ...

    def finish(self, task: Any) -> None: ...


_display: ContextVar[Display | None] = ContextVar("crowdsafe_progress_display", default=None)


def tracked(batches: Iterable[Batch], label: str, total: int | None) -> Iterator[Batch]:
    """``batches`` (frames with a ``height``) as they are, reported to the installed display as one
    pass named ``label`` over ``total`` rows; with no display, ``batches`` untouched. Each batch is
    a point where an app's run may be stopped (:func:`crowdsafe.stopping.checkpoint`)."""
    display = _display.get()
    if display is None:
        for batch in batches:
            checkpoint()
            yield batch
        return
    task = display.start(label, total)
    try:
        for batch in batches:
            checkpoint()
            yield batch
            display.advance(task, int(getattr(batch, "height", 0)))
    finally:
        display.finish(task)


@contextlib.contextmanager
def working(label: str) -> Iterator[None]:
    """A pass run in one call (a query of Polars' streaming engine), reported to the installed
    display as ``label`` without a share of rows, from entering the block to leaving it (a run may
    be stopped on entering it: :func:`crowdsafe.stopping.checkpoint`)."""
    checkpoint()
    display = _display.get()
    if display is None:
        yield
        return
    task = display.start(label, None)
    try:
        yield
    finally:
        display.finish(task)


@contextlib.contextmanager
def showing(display: Display) -> Iterator[Display]:
    """Report the passes run inside the block to ``display``."""
    token = _display.set(display)
    try:
        yield display
    finally:
        _display.reset(token)


class _RichDisplay:
    """A transient Rich progress bar on a terminal, created at the first pass (Rich is imported
    only then, so a command that runs no long pass does not load it)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.progress: Any = None

    def start(self, label: str, total: int | None) -> Any:
        if self.progress is None:
            from rich.console import Console
            from rich.progress import (
                BarColumn,
                Progress,
                SpinnerColumn,
                TaskProgressColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            self.progress = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                                     TaskProgressColumn(), TimeElapsedColumn(),
                                     console=Console(file=self.stream), transient=True)
            self.progress.start()
        return self.progress.add_task(label, total=total)

    def advance(self, task: Any, rows: int) -> None:
        self.progress.advance(task, rows)

    def finish(self, task: Any) -> None:
        self.progress.remove_task(task)

    def close(self) -> None:
        if self.progress is not None:
            self.progress.stop()
            self.progress = None


@contextlib.contextmanager
def shown_on_terminal(stream: TextIO | None = None) -> Iterator[None]:
    """Show the passes run inside the block on ``stream`` (standard error) when it is a terminal
    (module docstring); otherwise show nothing."""
    stream = sys.stderr if stream is None else stream
    try:
        terminal = stream.isatty()
    except (AttributeError, ValueError):  # a closed or unusual stream
        terminal = False
    if not terminal:
        yield
        return
    display = _RichDisplay(stream)
    try:
        with showing(display):
            yield
    finally:
        display.close()
