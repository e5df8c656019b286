"""A stop signal arriving while the app starts is held back until uvicorn's handlers are in place
(crowdsafe.app.server): one that reached ``asyncio.run`` while it was still making its event loop
interrupted it half made, and the loop's clean-up printed a traceback at exit."""

from __future__ import annotations

import contextlib
import os
import signal

import pytest

from crowdsafe.app import server

pytestmark = pytest.mark.skipif(not hasattr(signal, "pthread_sigmask"), reason="the system cannot hold signals")


class _Base:
    """uvicorn.Server's part the app's server relies on: a constructor and capture_signals."""

    def __init__(self, config: object) -> None:
        self.received: list[int] = []

    @contextlib.contextmanager
    def capture_signals(self):
        before = signal.signal(signal.SIGTERM, lambda signum, frame: self.received.append(signum))
        try:
            yield
        finally:
            signal.signal(signal.SIGTERM, before)


def test_a_signal_during_start_reaches_the_servers_handler_not_the_loops_making():
    early: list[int] = []
    before = signal.signal(signal.SIGTERM, lambda signum, frame: early.append(signum))
    try:
        held = server._hold_stop_signals()
        assert held is not None
        os.kill(os.getpid(), signal.SIGTERM)  # while the event loop would be made
        assert early == []  # held back
        app_server = server._server_class(_Base)(object(), held)
        with app_server.capture_signals():
            pass
        assert app_server.received == [signal.SIGTERM] and early == []  # delivered to the server's handler
        assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    finally:
        server._release(held)
        signal.signal(signal.SIGTERM, before)


def test_the_mask_is_put_back_when_the_server_never_starts():
    held = server._hold_stop_signals()
    assert signal.SIGTERM in signal.pthread_sigmask(signal.SIG_BLOCK, [])
    server._release(held)
    assert signal.SIGTERM not in signal.pthread_sigmask(signal.SIG_BLOCK, [])
