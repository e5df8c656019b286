"""The app, run in a process that has logging of its own (a notebook, a service, a test runner),
leaves that logging as it found it: uvicorn's default set-up replaced the process's logging
configuration, closing every handler already in place (one of absl's closes the stream it writes
to, which under pytest was the capture of stderr)."""

from __future__ import annotations

import io
import logging

from crowdsafe.app import server


class _Recording(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.closed = False

    def emit(self, record: logging.LogRecord) -> None:
        pass

    def close(self) -> None:
        self.closed = True
        super().close()


def test_serving_leaves_the_hosts_logging_handlers_open(monkeypatch, tmp_path):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    host = logging.getLogger("crowdsafe-test-host")
    handler = _Recording()
    host.addHandler(handler)
    real = server._server_class

    def stopping_at_once(base: type) -> type:
        class Stopping(real(base)):  # type: ignore[misc]
            async def startup(self, sockets: object = None) -> None:
                await super().startup(sockets=sockets)
                self.should_exit = True

        return Stopping

    monkeypatch.setattr(server, "_server_class", stopping_at_once)
    try:
        server.serve(None, port=0, open_browser=False, stdout=io.StringIO())
        assert not handler.closed and handler in host.handlers
    finally:
        host.removeHandler(handler)
