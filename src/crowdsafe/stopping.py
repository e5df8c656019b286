"""Stopping a run from another thread, at points where stopping leaves nothing half done.

The command line stops a run by a signal (:mod:`crowdsafe.cli`): a KeyboardInterrupt in the
main thread, with the renames of a release's files held together (:func:`crowdsafe.files.atomic_paths`).
The app runs each publish in a worker thread, which no signal reaches: when the app stops, the
process would end with the thread cut off, its ledger entry left ``charged`` and its temporary
files left in the output folder. The app runs the publish inside :func:`stoppable` instead; the
run calls :func:`checkpoint` between its stages and at every batch of a pass, and once the
request is set the next checkpoint raises :class:`JobStopped`. It unwinds the run as Ctrl-C does:
a charged ledger entry is marked ``failed`` (it still counts), temporary files are removed.

No checkpoint lies inside the writing of a release's files or its report: a run that has
started writing finishes. Outside :func:`stoppable` (the command line, the API), a checkpoint
does nothing.

The command line's signals obey the same rule through :func:`finishing`: a run calls it where it
starts to write its outputs, and from then until the command ends the command line defers a stop
signal instead of raising it (a second one ends the process at once). A signal there used to
unwind a run whose release and certificate were already in place: it said "no output was
written", left the release without its report and its ledger entry ``failed``.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from contextvars import ContextVar

__all__ = ["JobStopped", "checkpoint", "finishing", "is_finishing", "stoppable"]

_request: ContextVar[threading.Event | None] = ContextVar("crowdsafe_stop_request", default=None)
_finishing = threading.Event()  # set by the main thread only: signals reach no other


class JobStopped(KeyboardInterrupt):
    """The run was asked to stop (a KeyboardInterrupt, so that no ``except Exception`` keeps it going)."""


@contextlib.contextmanager
def stoppable(request: threading.Event) -> Iterator[None]:
    """Run the block so that setting ``request`` stops it at its next :func:`checkpoint`."""
    token = _request.set(request)
    try:
        yield
    finally:
        _request.reset(token)


def checkpoint() -> None:
    """Raise :class:`JobStopped` when the run was asked to stop (module docstring); else nothing."""
    request = _request.get()
    if request is not None and request.is_set():
        raise JobStopped("stopped: the app was stopped while this ran")


def finishing() -> None:
    """Say that the run has started writing its outputs and finishes from here (module
    docstring). Only the main thread's call counts: the app's worker threads get no signal."""
    if threading.current_thread() is threading.main_thread():
        _finishing.set()


def is_finishing() -> bool:
    """Whether the command running now has started writing its outputs (:func:`finishing`)."""
    return _finishing.is_set()


def new_command() -> None:
    """Forget :func:`finishing` (the command line starts a command)."""
    _finishing.clear()
