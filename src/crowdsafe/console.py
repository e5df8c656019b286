"""The ``crowdsafe`` console script and ``python -m crowdsafe``: the command line's process.

Before anything is imported, the cyclic garbage collector's first threshold is raised from 700 to
100,000 allocations. Start-up imports some 600 modules, whose tens of thousands of objects all
live until exit: at the default threshold the collector scanned them about 140 times, 30-40 ms
of a 0.6 s ``crowdsafe publish adult``, and found nothing to free. The collector stays on; a
long command (the app, an experiment) still collects its cycles, every 100,000 allocations.
Only the command line's process is tuned: importing :mod:`crowdsafe` as a library changes nothing.
"""

from __future__ import annotations

import gc

#: The collector's thresholds for the command line's process (generations 0, 1 and 2).
GC_THRESHOLDS = (100_000, 10, 10)


def run() -> None:
    """Run the command line (:func:`crowdsafe.cli.run`) in a process tuned for its start-up."""
    gc.set_threshold(*GC_THRESHOLDS)
    from crowdsafe.cli import run as run_command_line

    run_command_line()
