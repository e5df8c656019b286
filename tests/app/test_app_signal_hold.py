"""A stop signal arriving while the app starts is held back until uvicorn's handlers are in place
(crowdsafe.app.server): one that reached ``asyncio.run`` while it was still making its event loop
interrupted it half made, and the loop's clean-up printed a traceback at exit."""

from __future__ import annotations

import contextlib
import os
import signal

import pytest

from crowdsafe.app import server


class _Base:
    """uvicorn.Server's part the app's server relies on: a constructor and capture_signals, which
    keeps the handlers it found and puts them back."""

    def __init__(self, config: object) -> None:
        self.received: list[int] = []

    @contextlib.contextmanager
    def capture_signals(self):
        before = signal.signal(signal.SIGTERM, lambda signum, frame: self.received.append(signum))
        try:
            yield
        finally:
            self.found = before
            signal.signal(signal.SIGTERM, before)


@pytest.fixture
def command():
    """The command's own SIGTERM handler (recording what reaches it), put in place for the test."""
    early: list[int] = []

    def handler(signum, frame):
        early.append(signum)

    before = signal.signal(signal.SIGTERM, handler)
    handler.early = early  # type: ignore[attr-defined]
    yield handler
    signal.signal(signal.SIGTERM, before)


def test_a_signal_during_start_reaches_the_servers_handler_not_the_commands(command):
    held = server._hold_stop_signals()
    assert held is not None
    os.kill(os.getpid(), signal.SIGTERM)  # while the event loop would be made (any thread may take it)
    assert command.early == []  # held back
    app_server = server._server_class(_Base)(object(), held)
    with app_server.capture_signals():
        pass
    assert app_server.received == [signal.SIGTERM] and command.early == []  # raised again, to the server's handler
    assert app_server.found is command  # and the command's handler is what the server puts back
    assert signal.getsignal(signal.SIGTERM) is command


def test_a_server_that_never_starts_gives_back_what_was_held(command):
    held = server._hold_stop_signals()
    os.kill(os.getpid(), signal.SIGTERM)
    assert command.early == []
    assert server._restore(held) == [signal.SIGTERM] and server._restore(held) == []
    assert signal.getsignal(signal.SIGTERM) is command


def test_an_ignored_signal_stays_ignored():
    before = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        held = server._hold_stop_signals()
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        server._restore(held)
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, before)


def test_a_signal_the_caller_ignores_stays_ignored_while_the_server_runs():
    """uvicorn puts its handler on SIGINT and SIGTERM whatever they were; one the caller ignored (a
    background job of a script ignores Ctrl+C) is ignored again over it, and after."""
    before = signal.signal(signal.SIGTERM, signal.SIG_IGN)
    try:
        held = server._hold_stop_signals()
        app_server = server._server_class(_Base)(object(), held)
        with app_server.capture_signals():
            assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
            os.kill(os.getpid(), signal.SIGTERM)
        assert app_server.received == []  # it never reached the server's handler
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGTERM, before)
