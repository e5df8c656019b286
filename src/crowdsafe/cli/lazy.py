"""Modules the command line imports on first use, so that ``crowdsafe --help`` stays fast.

Registering the commands (their options and help) needs only Typer; the library behind them
(Polars, NumPy, the engines) is imported when a command runs. ``api = lazy_module("crowdsafe.api")``
gives a stand-in whose first attribute access imports the module and forwards to it; what a
command computes is exactly what it computed with an eager import.
"""

from __future__ import annotations

import importlib
import os
import sys
from types import ModuleType
from typing import Any


class LazyModule:
    """A stand-in for the module ``name``, imported on the first attribute access."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _module(self) -> ModuleType:
        return importlib.import_module(self._name)

    def __getattr__(self, attribute: str) -> Any:
        return getattr(self._module(), attribute)

    def __repr__(self) -> str:
        return f"<lazy module {self._name!r}>"


def lazy_module(name: str) -> Any:
    """The module ``name``, imported the first time one of its attributes is read."""
    return LazyModule(name)


def Console(*args: Any, **kwargs: Any) -> Any:  # a class's name: the commands call it as one
    """A :class:`rich.console.Console`, Rich imported on first use (a command that prints a table).

    Markup is off: what the commands print holds values, labels and messages (``[0, 40)``,
    ``[csv] decimal_comma``) that Rich would otherwise read as style tags and drop. A styled part
    is given as such (:func:`styled`). Highlighting is off too: its patterns take time quadratic
    in a long value (a column name of 200,000 characters held ``check`` for minutes), and a value
    is not code to colour. Emoji codes are off as well: with them a column, value or file named
    ``:cat:`` printed as a cat, not as its name. Control characters in the text are printed escaped (``\x1b``), the
    line breaks excepted (names and paths are escaped where they are put in a line).

    Printed to a file, a pipe or a log (not a terminal) and with no ``COLUMNS`` set, the width is
    :data:`UNBOUNDED`: Rich would take 80 columns and cut what does not fit with "…" (a ledger
    entry's date, kind and description in ``ledger show > log``), and wrap a line mid-phrase.
    Each line is as long as its content; a table as wide as its widest cells."""
    from rich.console import Console as RichConsole

    from crowdsafe.identity import printable

    class PrintableConsole(RichConsole):
        """Rich's console, every control character of the text printed escaped (``\x1b``) but the
        line breaks of its layout: a name or value holding an escape sequence cannot colour, move
        or clear the terminal (the styles Rich adds are its own, added after)."""

        def _render_buffer(self, buffer: Any) -> str:
            from rich.segment import Segment

            return super()._render_buffer(
                segment if segment.control else Segment(printable(segment.text, keep="\n"), segment.style)
                for segment in buffer)

    kwargs.setdefault("markup", False)
    kwargs.setdefault("highlight", False)
    kwargs.setdefault("emoji", False)
    if "width" not in kwargs and not os.environ.get("COLUMNS") and not _terminal(kwargs.get("file") or sys.stdout):
        kwargs["width"] = UNBOUNDED
    return PrintableConsole(*args, **kwargs)


#: The width of a console that prints to a file, a pipe or a log: no line is cut or wrapped.
UNBOUNDED = 100_000


def _terminal(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    try:
        return bool(isatty()) if callable(isatty) else False
    except (OSError, ValueError):  # a closed stream
        return False


def styled(*parts: str | tuple[str, str]) -> Any:
    """One line of text whose ``(text, style)`` parts are styled (e.g. ``("guarantee:", "bold")``),
    the others printed as they are."""
    from rich.text import Text

    return Text.assemble(*parts)


def Table(*args: Any, **kwargs: Any) -> Any:
    """A :class:`rich.table.Table`, Rich imported on first use."""
    from rich.table import Table as RichTable

    return RichTable(*args, **kwargs)
