"""Atomic output: write the complete file first, then put it in place with one rename or link.

A failure part-way leaves the target untouched (either the old file or nothing), never a
half-written file. Every writer in crowdsafe goes through :func:`atomic_path`.

Where the system allows it (Linux, a local file system), the file is written as an *anonymous*
file in the target's folder (``O_TMPFILE``): it has no name until it is complete, so even a
process killed with SIGKILL mid-write leaves nothing behind; the finished file is then linked
in under its name (straight to the target when there is none yet; else under a hidden name
renamed onto the target at once). Elsewhere a hidden temporary file ``.<name>.*.tmp`` beside
the target is used, removed on any error, and renamed onto the target on success.

Input files are opened through :func:`check_input` (a FIFO, device or socket is refused before
it is opened) and, when read whole, :func:`read_input_bytes` / :func:`read_input_text` (at most
:data:`MAX_TEXT_BYTES`). What an output may not be (an input of the run, a special file, a file
crowdsafe did not write) is :mod:`crowdsafe.output_guard`'s to say.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

from crowdsafe.errors import InputError

if TYPE_CHECKING:
    import polars as pl

_PROC_FD = Path("/proc/self/fd")


def _published_mode() -> int:
    """0666 & ~umask: the mode an ordinary new file gets."""
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _anonymous_file(folder: Path) -> int | None:
    """A nameless file open for writing in ``folder`` (Linux ``O_TMPFILE``), or None where the
    system or the file system does not offer one."""
    flag = getattr(os, "O_TMPFILE", None)
    if flag is None or not _PROC_FD.is_dir():
        return None
    try:
        return os.open(folder, flag | os.O_RDWR, 0o600)
    except OSError:
        return None


def _link(fd: int, name: Path) -> None:
    """linkat(/proc/self/fd/<fd>, name, AT_SYMLINK_FOLLOW): name the anonymous file ``fd``.
    (A plain link() would link the /proc symlink itself; a directory descriptor makes Python
    call linkat with the flag.)"""
    proc = os.open(_PROC_FD, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    try:
        os.link(str(fd), name, src_dir_fd=proc, follow_symlinks=True)
    finally:
        os.close(proc)


def _copy_into_place(fd: int, target: Path, folder: Path) -> None:
    """Fallback when the file system will not link an anonymous file: copy it to a hidden
    temporary file and rename that onto ``target``."""
    handle, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        with os.fdopen(handle, "wb") as out, os.fdopen(os.dup(fd), "rb") as source:
            shutil.copyfileobj(source, out, 1 << 20)
            out.flush()
            os.fchmod(out.fileno(), _published_mode())
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def _link_into_place(fd: int, target: Path, folder: Path) -> None:
    """Give the anonymous file ``fd`` the name ``target`` (replacing any file there)."""
    try:
        _link(fd, target)
        return
    except FileExistsError:
        pass
    except OSError:
        _copy_into_place(fd, target, folder)
        return
    for _ in range(100):  # the target exists: link under a fresh hidden name, then rename over it
        hidden = target.with_name(f".{target.name}.{os.urandom(6).hex()}.tmp")
        try:
            _link(fd, hidden)
        except FileExistsError:
            continue
        try:
            os.replace(hidden, target)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                hidden.unlink()
            raise
        return
    raise OSError(errno.EEXIST, f"cannot find a free temporary name beside {target}")


def _output_folder(target: Path) -> Path:
    folder = target.parent if str(target.parent) else Path(".")
    if not folder.exists():
        try:
            folder.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create output folder {folder}: {exc.strerror}") from exc
    if target.exists() and target.is_dir():
        raise InputError(f"output path {target} is a folder, expected a file name")
    return folder


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str]) -> Iterator[Path]:
    """Yield a temporary path to write the complete file to; put it at ``target`` on success.

    The caller writes the whole file to the yielded path (any writer that opens a path works).
    If the block raises, or the process dies, ``target`` is left as it was; no temporary file
    outlives the block, and with an anonymous file (see the module docstring) none outlives
    even a SIGKILL.
    """
    target = Path(target)
    folder = _output_folder(target)
    fd = _anonymous_file(folder)
    if fd is not None:
        try:
            yield _PROC_FD / str(fd)
            os.fchmod(fd, _published_mode())
            os.fsync(fd)
            _link_into_place(fd, target, folder)
        finally:
            os.close(fd)
        return
    handle, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    os.close(handle)
    tmp = Path(tmp_name)
    # mkstemp makes the file private (0600); a published output gets the usual 0666 & ~umask.
    tmp.chmod(_published_mode())
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


def write_csv_atomic(frame: pl.DataFrame, target: str | os.PathLike[str], *, escape_formulas: bool = True,
                     separator: str = ",") -> Path:
    """Write a Polars frame as CSV to ``target`` atomically, formula-safe unless
    ``escape_formulas`` is False (:mod:`crowdsafe.csv_safety`); return the target path."""
    from crowdsafe.csv_safety import write_csv

    with atomic_path(target) as tmp:
        write_csv(frame, tmp, escape_formulas=escape_formulas, separator=separator)
    return Path(target)


def check_output_path(target: str | os.PathLike[str], suffixes: tuple[str, ...] = (".csv", ".parquet", ".pq")) -> Path:
    """Refuse, before any work is done (and before any budget is charged), an output path that
    cannot be written: a folder, a name without one of ``suffixes``, a place under a file, or
    one whose nearest existing folder is not writable (missing folders below it are created
    when the file is written).
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
            if not os.access(parent, os.W_OK | os.X_OK):
                raise InputError(f"cannot write {target}: the folder {parent} is not writable")
            break
    return target


# -- reading inputs: special files refused, text files bounded ---------------------------------

#: The largest schema, hierarchy, domain or certificate file read (whole, into memory).
MAX_TEXT_BYTES = 64 << 20

_SPECIAL = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
            (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def special_kind(path: str | os.PathLike[str]) -> str | None:
    """What special file ``path`` is, following symbolic links (``a FIFO (named pipe)``, ``a
    character device``...), or None for a regular file, a folder or nothing at all. Read with
    ``os.stat``, so a FIFO is never opened (an open would block until a writer came)."""
    try:
        mode = os.stat(Path(path).expanduser()).st_mode
    except (OSError, ValueError):
        return None
    return next((kind for test, kind in _SPECIAL if test(mode)), None)


def check_input(path: str | os.PathLike[str], what: str = "") -> Path:
    """``path``, refused in one line when it is a special file (a FIFO, a device such as
    ``/dev/zero``, a socket): crowdsafe reads regular files (and folders of parts) only, and
    checks before opening, since opening a FIFO blocks and a device never ends."""
    kind = special_kind(path)
    if kind is not None:
        named = f"the {what} {path}" if what else str(path)
        raise InputError(f"{named} is {kind}, not a regular file: crowdsafe reads regular files only (save it to "
                         "a file and give that)")
    return Path(path)


def read_input_bytes(path: str | os.PathLike[str], what: str, *, limit: int = MAX_TEXT_BYTES) -> bytes:
    """The bytes of the input file ``path`` (:func:`check_input` first), refused in one line
    when it holds more than ``limit`` bytes (read in full into memory: a schema, a hierarchy, a
    domain list, a certificate). OSError (a missing file, a folder) is left to the caller."""
    with open(check_input(path, what), "rb") as handle:
        data = handle.read(limit + 1)
    if len(data) > limit:
        raise InputError(f"the {what} {path} is larger than {limit >> 20} MiB: that is not a {what} "
                         "crowdsafe reads")
    return data


def read_input_text(path: str | os.PathLike[str], what: str, *, limit: int = MAX_TEXT_BYTES) -> str:
    """:func:`read_input_bytes` decoded as UTF-8 (UnicodeDecodeError is left to the caller)."""
    return read_input_bytes(path, what, limit=limit).decode("utf-8")
