"""One-time publish forms: every plan page carries a fresh token, and a publish starts only with
a token not used before. The first request that presents it starts the release and spends it
(under the workspace's lock, with the release's record); a repeat of the same form (a double
click, a form sent again, two identical posts) starts nothing and charges nothing: it is told
which release the form started (:class:`AlreadyStarted`)."""

from __future__ import annotations

import secrets
from collections import OrderedDict

from crowdsafe.errors import ParameterError

#: How many forms are remembered (the oldest are forgotten first: a form that old is refused).
KEEP = 256


class AlreadyStarted(Exception):  # noqa: N818 (not an error: the answer to a repeated form)
    """This form already started release ``number``."""

    def __init__(self, number: int) -> None:
        super().__init__(f"this form already started release {number}")
        self.number = number


class PublishForms:
    """The tokens issued with the plan form and the release each one started (None: unused).
    Not thread-safe on its own: the workspace calls it under its lock."""

    def __init__(self) -> None:
        self._tokens: OrderedDict[str, int | None] = OrderedDict()

    def issue(self) -> str:
        token = secrets.token_urlsafe(18)
        self._tokens[token] = None
        while len(self._tokens) > KEEP:
            self._tokens.popitem(last=False)
        return token

    def check(self, token: str) -> None:
        """Refuse a token never issued (or long forgotten); :class:`AlreadyStarted` for a spent one."""
        if token not in self._tokens:
            raise ParameterError("this publish form is out of date (the app was restarted, or the page is old): "
                                 "open the plan page again and publish from there")
        number = self._tokens[token]
        if number is not None:
            raise AlreadyStarted(number)

    def spend(self, token: str, number: int) -> None:
        self._tokens[token] = number
