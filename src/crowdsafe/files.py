"""Atomic output: write the complete file first, then put it in place with one rename or link.

A failure part-way leaves the target untouched (either the old file or nothing), never a
half-written file. Every writer in crowdsafe goes through :func:`atomic_path`.

Where the system allows it (Linux, a local file system), the file is written as an *anonymous*
file in the target's folder (``O_TMPFILE``): it has no name until it is complete, so even a
process killed with SIGKILL mid-write leaves nothing behind; the finished file is then linked
in under its name (straight to the target when there is none yet; else under a hidden name
renamed onto the target at once). Elsewhere a hidden temporary file ``.<name>.*.tmp`` beside
the target is used, removed on any error, and renamed onto the target on success.

A custodian-only file (a custodian report, a ledger export) is written with ``mode=PRIVATE``
(``0600``): the file is created with that mode, before any byte is written, and never widened;
every other output gets the usual ``0666 & ~umask``.

Files that belong together (a table and its certificate) go through :func:`atomic_paths`: all
are written and made durable (fsync) first, and only then put in place one after another, with
nothing slow in between and Ctrl-C, SIGTERM and SIGHUP held back for those few system calls.

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
import signal
import stat
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from crowdsafe.errors import InputError

if TYPE_CHECKING:
    import polars as pl

_PROC_FD = Path("/proc/self/fd")

#: The mode of a custodian-only file: the custodian's alone, as the ledger holding the same facts.
PRIVATE = 0o600


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


def _copy_into_place(fd: int, target: Path, folder: Path, mode: int) -> None:
    """Fallback when the file system will not link an anonymous file: copy it to a hidden
    temporary file and rename that onto ``target``."""
    try:
        handle, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=folder)
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or type(exc).__name__}") from None
    try:
        os.lseek(fd, 0, os.SEEK_SET)
        with os.fdopen(handle, "wb") as out, os.fdopen(os.dup(fd), "rb") as source:
            shutil.copyfileobj(source, out, 1 << 20)
            out.flush()
            os.fchmod(out.fileno(), mode)
        os.replace(tmp_name, target)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp_name)
        raise


def _link_into_place(fd: int, target: Path, folder: Path, mode: int) -> None:
    """Give the anonymous file ``fd`` the name ``target`` (replacing any file there)."""
    try:
        _link(fd, target)
        return
    except FileExistsError:
        pass
    except OSError:
        _copy_into_place(fd, target, folder, mode)
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
    try:
        if not folder.exists():
            folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"cannot create output folder {folder}: {exc.strerror}") from None
    if target.exists() and target.is_dir():
        raise InputError(f"output path {target} is a folder, expected a file name")
    return folder


#: Signals held back while the files of one output are renamed into place (delivered just after).
_HELD_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """Hold back Ctrl-C and the stop signals (SIGTERM, SIGHUP) for the few system calls that put
    a set of files in place, where the system allows it; they take effect right after."""
    if not hasattr(signal, "pthread_sigmask"):
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


class _Staged:
    """One output being written: an anonymous file in the target's folder (or a hidden temporary
    file beside it), made durable by :meth:`seal` and named by :meth:`place`. Both are created
    ``0600``; a published output is opened to ``0666 & ~umask`` (``mode`` None), a private one
    (``mode`` given) gets that mode, so its bytes are never readable by others."""

    def __init__(self, target: str | os.PathLike[str], mode: int | None = None) -> None:
        self.target = literal_path(target)
        self.mode = _published_mode() if mode is None else mode
        self.folder = _output_folder(self.target)
        self.tmp: Path | None = None
        try:
            self.fd = _anonymous_file(self.folder)
        except OSError as exc:
            raise InputError(f"cannot write {self.target}: {exc.strerror or type(exc).__name__}") from None
        if self.fd is not None:
            self.path = _PROC_FD / str(self.fd)
            return
        try:
            handle, tmp_name = tempfile.mkstemp(prefix=f".{self.target.name}.", suffix=".tmp", dir=self.folder)
        except OSError as exc:
            raise InputError(f"cannot write {self.target}: {exc.strerror or type(exc).__name__}") from None
        os.close(handle)
        self.tmp = self.path = Path(tmp_name)
        # mkstemp makes the file private (0600); a published output gets the usual 0666 & ~umask.
        self.tmp.chmod(self.mode)

    def seal(self) -> None:
        """Make the complete file durable (the slow part: fsync), before any file is named."""
        if self.fd is not None:
            os.fchmod(self.fd, self.mode)
            os.fsync(self.fd)
            return
        fd = os.open(self.path, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    def place(self) -> None:
        """Give the file its name (a link or a rename: quick)."""
        if self.fd is not None:
            _link_into_place(self.fd, self.target, self.folder, self.mode)
        else:
            os.replace(self.path, self.target)
            self.tmp = None

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
        if self.tmp is not None:
            with contextlib.suppress(FileNotFoundError):
                self.tmp.unlink()
            self.tmp = None


@contextlib.contextmanager
def atomic_paths(targets: Sequence[str | os.PathLike[str]], *,
                 remove_first: Sequence[str | os.PathLike[str]] = (), mode: int | None = None) -> Iterator[list[Path]]:
    """Yield one temporary path per target (files that belong together: a table, its
    certificate); put them all in place on success.

    When the block completes, every file is made durable first (fsync, the slow part); only then
    are the files of ``remove_first`` removed and the targets named, one after another in the
    order given, with nothing slow in between. If the block raises, or the process dies before
    that, every target is left as it was; no temporary file outlives the block. ``mode``: the
    files' mode (:data:`PRIVATE` for a custodian-only file), set before any byte is written;
    None: ``0666 & ~umask``."""
    staged: list[_Staged] = []
    try:
        for target in targets:
            staged.append(_Staged(target, mode))
        yield [s.path for s in staged]
        for item in staged:
            item.seal()
        with _signals_held():
            for path in remove_first:
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(literal_path(path))
            for item in staged:
                item.place()
    finally:
        for item in staged:
            item.close()


@contextlib.contextmanager
def atomic_path(target: str | os.PathLike[str], *, mode: int | None = None) -> Iterator[Path]:
    """Yield a temporary path to write the complete file to; put it at ``target`` on success.

    The caller writes the whole file to the yielded path (any writer that opens a path works).
    If the block raises, or the process dies, ``target`` is left as it was; no temporary file
    outlives the block, and with an anonymous file (see the module docstring) none outlives
    even a SIGKILL. Several files that belong together: :func:`atomic_paths` (``mode`` as there)."""
    with atomic_paths([target], mode=mode) as (path,):
        yield path


def write_text_atomic(target: str | os.PathLike[str], text: str, *, mode: int | None = None) -> Path:
    """Write ``text`` (UTF-8) to ``target`` atomically and return the target path (``mode``: as
    :func:`atomic_paths`; :data:`PRIVATE` for a custodian-only file)."""
    with atomic_path(target, mode=mode) as tmp:
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
    check_writable(target)
    return target


#: Bytes of a file name crowdsafe keeps free for the names it derives from it (``.certificate.json``
#: for ``.csv``, ``.report.html``, a temporary file's ``.NAME.XXXXXXXX.tmp``).
NAME_MARGIN = 32
#: Where regular files are never written: the kernel's pseudo-files and the devices (but
#: ``/dev/shm``, a memory file system of regular files).
_NOT_FOR_FILES = ("/proc", "/sys", "/dev")
_FILES_UNDER_DEV = "/dev/shm"


def check_writable(target: str | os.PathLike[str]) -> None:
    """Refuse, before any work is done (and before any budget is charged), a file path that cannot
    be written: one under a file, under ``/proc``, ``/sys`` or ``/dev`` (the path or what its
    links resolve to), a name longer than the file system takes with :data:`NAME_MARGIN` bytes to
    spare, or a nearest existing folder where no file can be made (tried: a nameless temporary
    file made and dropped there; missing folders below it are created when the file is
    written)."""
    target = Path(target)
    for place in (os.path.abspath(target), os.path.realpath(target)):
        top = next((t for t in _NOT_FOR_FILES if place == t or place.startswith(t + os.sep)), None)
        if top is not None and not place.startswith(_FILES_UNDER_DEV + os.sep):
            raise InputError(f"cannot write {target}: it is under {top}, where crowdsafe writes no file (regular "
                             "files only); choose another path")
    for parent in target.parents:
        if not parent.exists():
            continue
        if not parent.is_dir():
            raise InputError(f"cannot write {target}: {parent} is a file, not a folder")
        try:
            limit = os.pathconf(parent, "PC_NAME_MAX")
        except (OSError, ValueError):
            limit = 255
        names = [*target.relative_to(parent).parts] if target.is_relative_to(parent) else [target.name]
        longest = max(names, key=lambda n: len(os.fsencode(n)))
        if len(os.fsencode(longest)) > limit - NAME_MARGIN:
            raise InputError(f"cannot write {target}: the name {longest[:40]!r}... is {len(os.fsencode(longest))} "
                             f"bytes long, more than the {limit - NAME_MARGIN} this folder takes (with room for the "
                             "names crowdsafe derives from it); choose a shorter one")
        try:
            with tempfile.TemporaryFile(dir=parent):
                pass
        except OSError as exc:
            raise InputError(f"cannot write {target}: the folder {parent} is not writable (no file can be made "
                             f"there: {exc.strerror or type(exc).__name__})") from None
        break


def literal_path(path: str | os.PathLike[str]) -> Path:
    """``path`` as written: a relative path whose first part is ``~`` names a folder called ``~``
    here, made absolute so that no reader takes it for the home folder (Polars expands a leading
    ``~``; crowdsafe reads and writes paths as given, and its output checks see the same file)."""
    found = Path(path)
    return Path(os.path.abspath(found)) if found.parts[:1] == ("~",) or str(path).startswith("~") else found


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


def input_path_error(path: str | os.PathLike[str], exc: OSError, what: str = "") -> InputError:
    """The one-line refusal of the input ``path`` whose look-up failed with ``exc``: a name too
    long for the system (ENAMETOOLONG) says so; another failure (no permission to a folder on the
    way, a loop of links) names its reason."""
    named = f"the {what} {path}" if what else str(path)
    if exc.errno == errno.ENAMETOOLONG:
        parts = Path(path).parts or (str(path),)
        longest = max(parts, key=lambda n: len(os.fsencode(n)))
        shown = named if len(named) <= 80 else named[:77] + "..."
        return InputError(f"{shown} is not a path this system can look up: the name is too long "
                          f"({len(os.fsencode(longest))} bytes in its longest part, {len(os.fsencode(str(path)))} "
                          "in all; most file systems take names of at most 255 bytes and paths of at most 4096); "
                          "give the file's real path")
    return InputError(f"cannot read {named}: {exc.strerror or type(exc).__name__}")


def check_input_path(path: str | os.PathLike[str], what: str = "") -> None:
    """Refuse in one line an input ``path`` the system cannot look up (:func:`input_path_error`:
    a name too long, a folder without permission on the way, a loop of links); nothing there, or
    a path through a file, is left to the caller ("file not found")."""
    try:
        os.stat(Path(path))
    except (FileNotFoundError, NotADirectoryError):
        return
    except ValueError:  # a NUL character
        raise InputError(f"{str(path)[:80]!r} is not a path: it holds a NUL character") from None
    except OSError as exc:
        raise input_path_error(path, exc, what) from None


#: The kernel's pseudo-file systems: their "regular files" (size 0) are made as they are read, and
#: some block for ever (``/proc/kmsg``) or fail midway (``/proc/cpuinfo``, EIO).
_PSEUDO_FILES = ("/proc", "/sys")


def pseudo_file_top(path: str | os.PathLike[str]) -> str | None:
    """``/proc`` or ``/sys`` when ``path``, as its links resolve, lies under one (a file opened
    as ``/proc/self/fd/N`` resolves to the file itself), else None."""
    try:
        place = os.path.realpath(Path(path).expanduser())
    except (OSError, ValueError):
        return None
    return next((t for t in _PSEUDO_FILES if place == t or place.startswith(t + os.sep)), None)


def check_input(path: str | os.PathLike[str], what: str = "") -> Path:
    """``path``, refused in one line when the system cannot look it up
    (:func:`check_input_path`: a name too long...), it is a special file (a FIFO, a device
    such as ``/dev/zero``, a socket) or a kernel pseudo-file (under ``/proc`` or ``/sys``,
    :func:`pseudo_file_top`): crowdsafe reads regular files (and folders of parts) only, and
    checks before opening, since opening a FIFO blocks, a device never ends and a pseudo-file may
    block (``/proc/kmsg``) or fail midway."""
    check_input_path(path, what)
    named = f"the {what} {path}" if what else str(path)
    kind = special_kind(path)
    if kind is not None:
        raise InputError(f"{named} is {kind}, not a regular file: crowdsafe reads regular files only (save it to "
                         "a file and give that)")
    top = pseudo_file_top(path)
    if top is not None:
        raise InputError(f"{named} is under {top}, the kernel's pseudo-files, not a regular file: crowdsafe reads "
                         "regular files only (save a copy to a file and give that)")
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
