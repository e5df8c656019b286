"""Make files and folders read-only for the test, also when the tests run as root.

Root ignores permission bits, and CI runs as root, so a chmod alone would leave the read-only
cases untested there. As root the paths are made immutable instead (``chattr +i``, which binds
root too); otherwise their write bits are removed. Everything is restored on exit.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@contextlib.contextmanager
def read_only(*paths: Path) -> Iterator[None]:
    if IS_ROOT:
        if shutil.which("chattr") is None:
            pytest.skip("running as root without chattr: cannot make a path read-only")
        done = subprocess.run(["chattr", "+i", *map(str, paths)], capture_output=True, text=True)
        if done.returncode:
            pytest.skip(f"running as root and chattr +i failed here: {done.stderr.strip()}")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", *map(str, paths)], check=True)
        return
    modes = {p: p.stat().st_mode & 0o777 for p in paths}
    for path in paths:
        path.chmod(0o500 if path.is_dir() else 0o400)
    try:
        yield
    finally:
        for path, mode in modes.items():
            path.chmod(mode)
