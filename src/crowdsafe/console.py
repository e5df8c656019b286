"""The ``crowdsafe`` console script and ``python -m crowdsafe``: the command line's process.

Before anything is imported, the cyclic garbage collector's first threshold is raised from 700 to
100,000 allocations. Start-up imports some 600 modules, whose tens of thousands of objects all
live until exit: at the default threshold the collector scanned them about 140 times, 30-40 ms
of a 0.6 s ``crowdsafe publish adult``, and found nothing to free. The collector stays on; a
long command (the app, an experiment) still collects its cycles, every 100,000 allocations.
Only the command line's process is tuned: importing :mod:`crowdsafe` as a library changes nothing.

A Ctrl-C the caller ignores stays ignored: importing Polars installs its own SIGINT handler over
an inherited ``SIG_IGN`` (a background job of a non-interactive shell, ``nohup``), so a run in
the background stopped on a Ctrl-C meant for the foreground. The disposition is read before
anything is imported; when SIGINT was ignored, Polars is imported at once and SIGINT set back to
ignored (Polars does not install it again).
"""

from __future__ import annotations

import gc
import signal

#: The collector's thresholds for the command line's process (generations 0, 1 and 2).
GC_THRESHOLDS = (100_000, 10, 10)


def run() -> None:
    """Run the command line (:func:`crowdsafe.cli.run`) in a process tuned for its start-up."""
    gc.set_threshold(*GC_THRESHOLDS)
    keep_ignored_interrupt()
    from crowdsafe.cli import run as run_command_line

    run_command_line()


def keep_ignored_interrupt() -> None:
    """When the caller ignores SIGINT, import Polars now and keep SIGINT ignored (module docstring)."""
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        import polars  # noqa: F401  (its import installs a SIGINT handler: put the caller's choice back)

        signal.signal(signal.SIGINT, signal.SIG_IGN)
