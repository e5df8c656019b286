"""The app's guard: every request passes these checks before a page sees it.

One ASGI middleware (:class:`Guard`), in this order:

1. **Host**: only ``127.0.0.1:PORT`` and ``localhost:PORT`` (a DNS-rebinding page names its own
   host), else 400.
2. **Token**: ``?token=T`` with the one-time token printed at start is exchanged for a cookie
   (``HttpOnly; SameSite=Strict``) holding the session secret, and the browser is sent on to the
   same URL without the token; the token is then spent. A request without the cookie gets 403.
3. **Cross-site writes**: a POST (any method but GET and HEAD) whose ``Origin`` is not this
   server's, or whose ``Sec-Fetch-Site`` is ``cross-site`` or ``same-site``, gets 403; so does one
   without the CSRF token (header ``X-CSRF-Token``, query ``csrf`` or form field ``csrf``).
4. **Headers** on every answer: ``Content-Security-Policy`` (``default-src 'self'``: no inline
   script or style, no other origin), ``X-Content-Type-Options: nosniff``, ``X-Frame-Options:
   SAMEORIGIN`` with ``frame-ancestors 'self'``, ``Referrer-Policy: same-origin`` (with
   ``no-referrer`` a browser sends ``Origin: null`` on the app's own form posts) and
   ``Cache-Control: no-store``; never a CORS header. A handler may give a stricter policy for its
   own answer (the report: :data:`REPORT_POLICY`).

An uncaught error is answered with a plain 500 page and reported on standard error by its type
only: a message could hold a value of the data, and nothing of the data goes to a log (with
``CROWDSAFE_DEBUG=1``, as on the command line, the traceback too).
"""

from __future__ import annotations

import hmac
import os
import secrets
import sys
import traceback
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The app's own pages: its files only, nothing inline, framed only by itself.
PAGE_POLICY = ("default-src 'self'; base-uri 'none'; form-action 'self'; object-src 'none'; "
               "frame-ancestors 'self'")
#: The release's report, framed by the report page: a self-contained file with inline CSS and SVG
#: and no script (crowdsafe.report.html); sandboxed, it may run nothing and load nothing.
REPORT_POLICY = ("default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; "
                 "form-action 'none'; frame-ancestors 'self'; sandbox")
SAFE_METHODS = frozenset({"GET", "HEAD"})
#: How much of a urlencoded form body the guard reads to find its CSRF field.
MAX_FORM_BYTES = 1 << 20


@dataclass
class Secrets:
    """The one-time token of the start URL, the session secret its cookie carries and the CSRF
    token of the forms; random unless given (tests give fixed ones)."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    session: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    token_spent: bool = False


@dataclass
class Checks:
    """Which checks run: all of them. Tests switch one off to show that its test can fail."""

    host: bool = True
    auth: bool = True
    origin: bool = True
    csrf: bool = True


def same(given: str | None, expected: str) -> bool:
    """Constant-time comparison of a secret."""
    return given is not None and hmac.compare_digest(given.encode(), expected.encode())


class Guard:
    """The middleware (module docstring) around ``app``, for a server on ``port``."""

    def __init__(self, app: ASGIApp, *, port: int, keys: Secrets, checks: Checks | None = None) -> None:
        self.app = app
        self.port = port
        self.keys = keys
        self.checks = checks or Checks()
        self.cookie = f"crowdsafe_app_{port}"  # cookies ignore ports: one name per server

    @property
    def hosts(self) -> frozenset[str]:
        return frozenset({f"127.0.0.1:{self.port}", f"localhost:{self.port}"})

    @property
    def origins(self) -> frozenset[str]:
        return frozenset(f"http://{h}" for h in self.hosts)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}
        if self.checks.host and headers.get("host", "").lower() not in self.hosts:
            await _plain(send, 400, "Bad request: this app answers only at 127.0.0.1 or localhost on its port.")
            return
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        signed_in = same(_cookie(headers.get("cookie", ""), self.cookie), self.keys.session)
        if "token" in query:
            await self._exchange(scope, query, send, signed_in)
            return
        if self.checks.auth and not signed_in:
            await _plain(send, 403, "Forbidden: open the app with the link `crowdsafe app` printed when it started.")
            return
        if scope["method"] not in SAFE_METHODS:
            refusal = self._cross_site(headers)
            if refusal is None:
                receive, refusal = await self._csrf(headers, query, receive)
            if refusal is not None:
                await _plain(send, 403, refusal)
                return
        await self._answer(scope, receive, send)

    async def _exchange(self, scope: Scope, query: dict[str, str], send: Send, signed_in: bool) -> None:
        """The one-time token for the cookie; then the same URL without the token (a browser that
        holds the cookie already, reopening the link, is sent on without a second exchange)."""
        if signed_in and self.keys.token_spent:
            await _redirect(send, _without_token(scope, query))
            return
        if self.keys.token_spent or not same(query.get("token"), self.keys.token):
            await _plain(send, 403, "Forbidden: this link has been used already or is wrong. Open the app in the "
                                    "browser that opened the link first, or restart `crowdsafe app` for a new one.")
            return
        self.keys.token_spent = True
        cookie = f"{self.cookie}={self.keys.session}; Path=/; HttpOnly; SameSite=Strict"
        await _redirect(send, _without_token(scope, query), [(b"set-cookie", cookie.encode())])

    def _cross_site(self, headers: dict[str, str]) -> str | None:
        if not self.checks.origin:
            return None
        origin = headers.get("origin")
        if origin is not None and origin not in self.origins:
            return "Forbidden: a request from another site."
        if headers.get("sec-fetch-site", "same-origin") not in ("same-origin", "none"):
            return "Forbidden: a request from another site."
        return None

    async def _csrf(self, headers: dict[str, str], query: dict[str, str], receive: Receive
                    ) -> tuple[Receive, str | None]:
        """The CSRF token from the header, the query or a urlencoded body (read, then replayed to
        the app); ``receive`` unchanged when the body was not read."""
        if not self.checks.csrf:
            return receive, None
        given = headers.get("x-csrf-token") or query.get("csrf")
        if given is None and headers.get("content-type", "").startswith("application/x-www-form-urlencoded"):
            body, complete = await _read_body(receive, MAX_FORM_BYTES)
            if not complete:
                return receive, "Forbidden: the form is too large."
            given = dict(parse_qsl(body.decode("latin-1"), keep_blank_values=True)).get("csrf")
            receive = _replay(body)
        if not same(given, self.keys.csrf):
            return receive, "Forbidden: the form's CSRF token is missing or wrong; reload the page and try again."
        return receive, None

    async def _answer(self, scope: Scope, receive: Receive, send: Send) -> None:
        started = False

        async def with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                given = [(bytes(k).lower(), bytes(v)) for k, v in message.get("headers", [])]
                policy = next((v.decode("latin-1") for k, v in given if k == b"content-security-policy"), PAGE_POLICY)
                ours = _security_headers(policy)
                names = {k for k, _ in ours}
                kept = [(k, v) for k, v in given if k not in names and not k.startswith(b"access-control-")]
                message["headers"] = kept + ours
            await send(message)

        try:
            await self.app(scope, receive, with_headers)
        except Exception as exc:  # the message could hold a value of the data: its type only
            print(f"crowdsafe app: internal error ({type(exc).__name__}) on {scope.get('method')} "
                  f"{scope.get('path')}", file=sys.stderr)
            if os.environ.get("CROWDSAFE_DEBUG"):  # as on the command line: the traceback, asked for
                traceback.print_exc()
            if not started:
                await _plain(send, 500, "Internal error: the app could not answer. The terminal running "
                                        "`crowdsafe app` names the kind of error.")


def _without_token(scope: Scope, query: dict[str, str]) -> str:
    rest = urlencode([(k, v) for k, v in query.items() if k != "token"])
    return str(scope.get("path", "/")) + (f"?{rest}" if rest else "")


async def _redirect(send: Send, location: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    await send({"type": "http.response.start", "status": 303,
                "headers": [(b"location", location.encode("latin-1")), *(extra or []),
                            *_security_headers(PAGE_POLICY)]})
    await send({"type": "http.response.body", "body": b""})


def _security_headers(policy: str) -> list[tuple[bytes, bytes]]:
    return [
        (b"content-security-policy", policy.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"x-frame-options", b"SAMEORIGIN"),
        (b"referrer-policy", b"same-origin"),
        (b"cache-control", b"no-store"),
    ]


def _cookie(header: str, name: str) -> str | None:
    for part in header.split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


async def _read_body(receive: Receive, limit: int) -> tuple[bytes, bool]:
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            return b"", False
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), True


def _replay(body: bytes) -> Receive:
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


async def _plain(send: Send, status: int, text: str) -> None:
    body = (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>{status}</title></head>"
            f"<body><h1>{status}</h1><p>{text}</p></body></html>").encode()
    await send({"type": "http.response.start", "status": status,
                "headers": [(b"content-type", b"text/html; charset=utf-8"),
                            (b"content-length", str(len(body)).encode()), *_security_headers(PAGE_POLICY)]})
    await send({"type": "http.response.body", "body": body})
