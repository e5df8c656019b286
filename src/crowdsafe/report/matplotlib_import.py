"""Importing the Matplotlib parts the report draws with, and, in a command-line process, faster.

The report needs :class:`matplotlib.figure.Figure`, the SVG canvas and two tick helpers. About a
third of importing them is Matplotlib writing help text: every :class:`~matplotlib.artist.Artist`
subclass gets a ``set()`` whose docstring lists every property (``matplotlib.artist.kwdoc``, run
for about a hundred classes as their modules load). Nothing the report draws reads that text.

:func:`import_matplotlib` imports the parts. When :data:`LEAN_HELP_TEXT` is on (the ``crowdsafe``
command sets it, since its process exits after the command and never shows Matplotlib's help) and
Matplotlib is not yet imported, the property lists are left out of those docstrings while the
parts load, and ``kwdoc`` is put back right after. Only docstrings differ: the classes, their
methods and signatures, and so every figure and every byte of a report, are the same (the
report tests compare pages built both ways). A library caller (``LEAN_HELP_TEXT`` off, the
default) gets Matplotlib exactly as it ships.
"""

from __future__ import annotations

import sys
from typing import Any

#: Leave the property lists out of Matplotlib's ``set()`` docstrings while the report's parts are
#: imported (set by the command line; off for library callers).
LEAN_HELP_TEXT = False

_NOTE = "(property list left out: imported by the crowdsafe command line)"


def _no_property_list(artist: Any) -> str:
    """Stands in for ``matplotlib.artist.kwdoc`` during a lean import."""
    return _NOTE


def import_matplotlib() -> None:
    """Import the Matplotlib modules the report draws with (see the module's docstring)."""
    if "matplotlib.figure" in sys.modules or not LEAN_HELP_TEXT:
        _import_parts()
        return
    import matplotlib.artist as artist

    kwdoc = artist.kwdoc
    artist.kwdoc = _no_property_list
    try:
        _import_parts()
    finally:
        artist.kwdoc = kwdoc


def _import_parts() -> None:
    import matplotlib.backends.backend_svg  # noqa: F401
    import matplotlib.figure  # noqa: F401
    import matplotlib.ticker  # noqa: F401


__all__ = ["LEAN_HELP_TEXT", "import_matplotlib"]
