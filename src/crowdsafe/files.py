"""Atomic output: write to a temporary file beside the target, then rename.

A failure part-way leaves the target untouched (either the old file or nothing), never a
half-written file. Every writer in crowdsafe goes through :func:`atomic_path`.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from crowdsafe.errors import InputError

if TYPE_CHECKING:
    import polars as pl


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path in the target's folder; rename it onto ``target`` on success.

    The caller writes the complete file to the yielded path. If the block raises, the temporary
    file is removed and ``target`` is left as it was.
    """
    target = Path(target)
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.exists():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create output folder {folder}: {exc.strerror}") from exc
    if target.exists() and target.is_dir():
        raise InputError(f"output path {target} is a folder, expected a file name")
    fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    os.close(fd)
    tmp = Path(tmp_name)
    # mkstemp makes the file private (0600); a published output gets the usual 0666 & ~umask.
    umask = os.umask(0)
    os.umask(umask)
    tmp.chmod(0o666 & ~umask)
    try:
        yield tmp
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
        raise


def write_text_atomic(target: str | os.PathLike[str], text: str) -> Path:
    """Write ``text`` (UTF-8) to ``target`` atomically and return the target path."""
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return Path(target)


def write_bytes_atomic(target: str | os.PathLike[str], data: bytes) -> Path:
    """Write ``data`` to ``target`` atomically and return the target path."""
    with atomic_path(target) as tmp:
        tmp.write_bytes(data)
    return Path(target)


def write_csv_atomic(frame: "pl.DataFrame", target: str | os.PathLike[str], *, escape_formulas: bool = True,
                     separator: str = ",") -> Path:
    """Write a Polars frame as CSV to ``target`` atomically, formula-safe unless
    ``escape_formulas`` is False (:mod:`crowdsafe.csv_safety`); return the target path."""
    from crowdsafe.csv_safety import write_csv

    with atomic_path(target) as tmp:
        write_csv(frame, tmp, escape_formulas=escape_formulas, separator=separator)
    return Path(target)


def check_output_path(target: str | os.PathLike[str], suffixes: tuple[str, ...] = (".csv", ".parquet", ".pq")) -> Path:
    """Refuse, before any work is done (and before any budget is charged), an output path that
    cannot be written: a folder, a name without one of ``suffixes``, or a place under a file.
    Returns the path. The write itself still goes through :func:`atomic_path`."""
    target = Path(target)
    if target.is_dir():
        raise InputError(f"output path {target} is a folder, expected a file name")
    if suffixes and not target.name.lower().endswith(tuple(s.lower() for s in suffixes)):
        raise InputError(f"cannot tell the output format of {target}: use a {' or '.join(suffixes)} file name")
    for parent in target.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"cannot write {target}: {parent} is a file, not a folder")
            break
    return target
