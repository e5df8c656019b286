"""The corpus's special-file setups, and guards that keep a broken run from hanging the suite.

A case's ``setup`` may be ``fifo:NAME`` (a FIFO at ``{in}/NAME``), ``hardlink:NAME=TARGET`` or
``symlink:NAME=TARGET`` (``{in}/NAME`` linked to ``{in}/TARGET``), or ``bounded-memory`` (a
case that reads a device such as ``/dev/zero``). :func:`released_after` watches the FIFOs while
the command runs: if it is still running after ``seconds``, it opens each FIFO for writing and
closes it at once, so a reader blocked on one sees the end of the file and returns, and the
test fails saying the run blocked. :func:`bounded_memory` caps the address space while the
command runs, so a read of ``/dev/zero`` that does not stop fails with MemoryError instead of
taking the machine's memory.
"""

from __future__ import annotations

import contextlib
import errno
import os
import resource
import stat
import threading
from collections.abc import Iterator
from pathlib import Path


def prepare(setup: str | None, inputs: Path) -> list[Path]:
    """Apply a special-file setup in the folder ``inputs``; return the FIFOs made."""
    kind, _, spec = (setup or "").partition(":")
    if kind == "fifo":
        os.mkfifo(inputs / spec)
        return [inputs / spec]
    if kind in ("hardlink", "symlink"):
        name, _, target = spec.partition("=")
        (os.link if kind == "hardlink" else os.symlink)(inputs / target, inputs / name)
    return []


def file_state(path: Path) -> bytes | str | None:
    """What a file holds, for the before/after comparison: its bytes, ``"special"`` for a FIFO
    or device (never opened), None for a folder."""
    if path.is_dir():
        return None
    if not stat.S_ISREG(os.stat(path).st_mode):
        return "special"
    return path.read_bytes()


@contextlib.contextmanager
def released_after(fifos: list[Path], seconds: float = 20.0) -> Iterator[list[str]]:
    """Run the block; a FIFO a reader still waits on after ``seconds`` is released (see the
    module docstring). Yields a list that names each FIFO that had to be released."""
    released: list[str] = []
    done = threading.Event()

    def watch() -> None:
        if done.wait(seconds):
            return
        while not done.is_set():
            for fifo in fifos:
                try:
                    os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))  # a reader is there: give it EOF
                    released.append(str(fifo))
                except OSError as exc:
                    if exc.errno != errno.ENXIO:  # ENXIO: nobody reads it now
                        raise
            done.wait(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    if fifos:
        watcher.start()
    try:
        yield released
    finally:
        done.set()
        if fifos:
            watcher.join()


@contextlib.contextmanager
def bounded_memory(active: bool, headroom: int = 2 << 30) -> Iterator[None]:
    """When ``active``, run the block with the address space capped at its present size plus
    ``headroom`` bytes (RLIMIT_AS; restored after)."""
    if not active:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    with open("/proc/self/statm") as statm:
        size = int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    cap = size + headroom if hard == resource.RLIM_INFINITY else min(size + headroom, hard)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))
