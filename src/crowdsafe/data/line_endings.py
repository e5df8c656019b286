"""The line-ending convention of a CSV file, read from its first bytes.

Polars ends a CSV record at LF (a CR before it is dropped), so a file whose lines end with a
lone CR (classic Mac OS, some old exports) reads as one long line, and a file that mixes lone CRs
with LF or CRLF reads with records run together: fewer rows, fields shifted, no error. So the
first block of the file (:data:`crowdsafe.data.io.HEAD_BYTES` bytes, decompressed) is sniffed before
it is read (:func:`line_ending`):

- LF only, CRLF only, or both: read with LF as the line break (Polars drops the CR of a CRLF);
- lone CRs only: read with CR as the line break (the same rows as the file converted to LF);
- lone CRs with LF or CRLF: refused in one line that says how to fix it.

A CR or LF inside a quoted field is part of a value, not a line break, and is not counted: the
quotes are matched by their parity (a doubled quote ``""`` inside a field counts twice, so the
parity is unchanged). Vectorised with NumPy over the block; the rest of the file is not read.
"""

from __future__ import annotations

import numpy as np

from crowdsafe.errors import InputError

__all__ = ["line_ending"]

_CR, _LF, _QUOTE = 13, 10, 34


def line_ending(head: bytes, label: str, *, complete: bool, quote: bytes = b'"') -> str:
    """The line break to read the CSV text starting with ``head`` with: ``"\\n"`` (LF or CRLF
    lines) or ``"\\r"`` (lone-CR lines). ``complete``: ``head`` is the whole file (else a CR
    as its last byte may be the first half of a CRLF and is not counted). Raises
    :class:`InputError` naming ``label`` when lone CRs are mixed with LF or CRLF line breaks."""
    data = np.frombuffer(head, dtype=np.uint8)
    if not len(data) or not (data == _CR).any():
        return "\n"
    quotes = data == ord(quote) if quote else np.zeros(len(data), dtype=bool)
    outside = np.cumsum(quotes) % 2 == 0  # a CR or LF is never a quote, so its own count is the quotes before it
    cr = np.flatnonzero((data == _CR) & outside)
    if not complete and len(cr) and cr[-1] == len(data) - 1:
        cr = cr[:-1]
    if not len(cr):
        return "\n"
    following = np.append(data, 0)[cr + 1]
    crlf = int((following == _LF).sum())
    lone_cr = len(cr) - crlf
    if not lone_cr:
        return "\n"
    lf = int(((data == _LF) & outside).sum()) - crlf
    if not crlf and not lf:
        return "\r"
    others = " and ".join(name for name, count in (("CRLF (Windows)", crlf), ("LF (Unix)", lf)) if count)
    raise InputError(f"{label} mixes line endings: lone CR (old Mac) line breaks with {others} ones, so its "
                     "rows cannot be told apart reliably; convert the line endings to LF (a text editor's line-ending "
                     "setting, or dos2unix followed by mac2unix) and give the converted file")
