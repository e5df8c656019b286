"""``crowdsafe app``: serve the app on 127.0.0.1 until interrupted, as Jupyter does.

The server binds its socket first (``--port 0``: a free port), prints the one-time URL as the
first line of standard output, opens the browser on it unless told not to, and serves with
uvicorn (access log off: a path could name what a page shows, and nothing of the data goes to a
log; the process's own logging left as it was: uvicorn's loggers reach the root logger). The
private folder (mode 0700) is removed when the server stops, on Ctrl+C (SIGINT) and
SIGTERM alike, and at exit. A publish still running is stopped first and waited for
(:func:`stop_publishes`).
"""

from __future__ import annotations

import atexit
import contextlib
import errno
import shutil
import signal
import socket
import sys
import tempfile
import threading
import webbrowser
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from crowdsafe.errors import ParameterError

if TYPE_CHECKING:
    from crowdsafe.app.workspace import Workspace

HOST = "127.0.0.1"
DEFAULT_PORT = 8765


def bind(port: int) -> socket.socket:
    """A listening socket on 127.0.0.1:``port``; the default port, when taken, gives way to a free one."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((HOST, port))
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE and port == DEFAULT_PORT:
            sock.bind((HOST, 0))
        else:
            sock.close()
            raise ParameterError(f"cannot listen on {HOST}:{port}: {exc.strerror}", parameter="port") from None
    sock.listen(128)
    sock.set_inheritable(True)
    return sock


def serve(data: str | None, *, port: int = DEFAULT_PORT, open_browser: bool = True, max_upload: int = 4 << 30,
          ledger: Path | None = None, out_dir: Path = Path("releases"), seed: int | None = None,
          stdout: TextIO | None = None) -> None:
    """Run the app (module docstring) until interrupted."""
    import uvicorn

    from crowdsafe.app.pages import create_app
    from crowdsafe.app.security import Secrets
    from crowdsafe.app.workspace import Workspace

    stdout = stdout or sys.stdout
    workdir = Path(tempfile.mkdtemp(prefix="crowdsafe-app-"))  # mode 0700

    def remove() -> None:
        shutil.rmtree(workdir, ignore_errors=True)

    atexit.register(remove)
    sock = None
    workspace = None
    held: _Held | None = None
    try:
        workspace = Workspace(workdir, out_dir.expanduser().resolve(), seed=seed, max_upload=max_upload,
                              ledger=ledger.expanduser().resolve() if ledger is not None else None)
        if data is not None:
            from crowdsafe.datasets import names

            # a bundled name is taken as one unless a file of that name is here; anything else is a path
            if data in names() and not Path(data).exists():
                workspace.open_bundled(data)
            else:
                workspace.open_local(data)
        sock = bind(port)
        port = sock.getsockname()[1]
        held = _hold_stop_signals()  # until uvicorn's handlers are in place (_Server.capture_signals)
        keys = Secrets()
        start = "/schema" if data is not None else "/"
        url = f"http://{HOST}:{port}{start}?token={keys.token}"
        print(url, file=stdout, flush=True)
        print(f"crowdsafe app: serving on http://{HOST}:{port}/ (releases go to {workspace.out_dir}); "
              "press Ctrl+C to stop", file=sys.stderr, flush=True)
        # log_config=None: uvicorn's default configures logging for the whole process, and doing so
        # closes every handler already there (the host's, in a notebook: one of absl's closed the
        # stream it wrote to); its loggers reach the root logger instead, warnings and errors only
        config = uvicorn.Config(create_app(workspace, port=port, keys=keys), interface="asgi3", lifespan="off",
                                log_config=None, log_level="warning", access_log=False, server_header=False,
                                date_header=False)
        server = _server_class(uvicorn.Server)(config, held)
        if open_browser:
            threading.Timer(0.5, webbrowser.open, args=(url,)).start()
        server.run(sockets=[sock])
    finally:
        held_back = _restore(held)  # none once the server started (it raised them to its handlers)
        if sock is not None:
            sock.close()
        if workspace is not None:
            stop_publishes(workspace)
        remove()
        for sig in held_back:  # a stop asked for before a server that never started
            signal.raise_signal(sig)


_STOP_SIGNALS = tuple(getattr(signal, n) for n in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, n))


class _Held:
    """Stop signals held back (:func:`_hold_stop_signals`): the handlers they had, and those received."""

    def __init__(self) -> None:
        self.before: dict[int, Any] = {}  # (signal.signal's handler type is private to typeshed)
        self.pending: list[int] = []
        self.ignored: list[int] = []  # ignored by the caller: they stay ignored while the app serves


def _hold_stop_signals() -> _Held | None:
    """Hold back Ctrl+C, SIGTERM and SIGHUP from the moment the address is printed until uvicorn
    has put its own handlers in place: one arriving while ``asyncio.run`` was still making its
    event loop interrupted it half made, and its clean-up printed a traceback at exit (a race a
    test hit). Each is recorded by a handler that does nothing else (a handler, not a signal
    mask: a mask holds a signal back from one thread, and another thread, such as Polars', would
    take it) and raised again once uvicorn's handlers are in place (:func:`_server_class`), or
    when the server never starts (at the end of :func:`serve`). A signal the caller ignores stays
    ignored, also once the server runs (a background job of a script, started with Ctrl+C
    ignored, is not stopped by it, as Python itself leaves it ignored); SIGTERM still stops it.
    None off the main thread, where signals cannot be handled."""
    if threading.current_thread() is not threading.main_thread():
        return None
    held = _Held()
    for sig in _STOP_SIGNALS:
        if signal.getsignal(sig) is signal.SIG_IGN:
            held.ignored.append(sig)
        else:
            held.before[sig] = signal.signal(sig, lambda signum, frame: held.pending.append(signum))
    return held


def _restore(held: _Held | None) -> list[int]:
    """Put back the handlers :func:`_hold_stop_signals` replaced; returns the signals received
    meanwhile (once: a second call returns none)."""
    if held is None:
        return []
    for sig, handler in held.before.items():
        signal.signal(sig, handler)
    held.before.clear()
    pending, held.pending = list(dict.fromkeys(held.pending)), []
    return pending


def _server_class(base: type) -> type:
    """uvicorn's server, raising the signals held back once its handlers are in place, so one
    that arrived while it started stops it as one arriving later does (uvicorn re-raises it
    once stopped, to the handler the command had); a signal the caller ignored is ignored again
    over uvicorn's handler (which would stop the app, and re-raised to the ignored signal, end
    it with status 0 and no word)."""

    class _Server(base):
        def __init__(self, config: object, held: _Held | None) -> None:
            super().__init__(config)
            self._held = held

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            pending = _restore(self._held)  # uvicorn keeps the command's handlers to put back
            with super().capture_signals():
                for sig in self._held.ignored if self._held is not None else ():
                    signal.signal(sig, signal.SIG_IGN)  # uvicorn puts back what it found: ignored
                for sig in pending:
                    signal.raise_signal(sig)
                yield

    return _Server


def stop_publishes(workspace: Workspace) -> None:
    """Stop the publishes still running as the app stops, and wait for them, as Ctrl-C does to
    ``crowdsafe publish`` (:mod:`crowdsafe.stopping`): then say what each one left, which depends
    on when it stopped (before its charge: no ledger entry; after it: its entry marked failed, the
    budget spent; while writing its files: finished). A second Ctrl+C stops waiting: then the
    process ends with them, an entry charged left ``charged``."""
    running = [r for r in list(workspace.releases.values()) if r.status == "running"]
    if not running:
        return
    print(f"crowdsafe app: stopping {len(running)} running publish{'es' if len(running) > 1 else ''}; press "
          "Ctrl+C again to stop at once", file=sys.stderr, flush=True)
    workspace.stop_publishes()
    for record in running:
        if record.stopped:
            said = record.error
        elif record.status == "done":
            said = "had started writing its files and finished them"
        else:
            said = "ended with an error" if record.status == "failed" else "is still running"
        print(f"crowdsafe app: release {record.number} {said}", file=sys.stderr, flush=True)
