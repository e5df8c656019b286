"""What the first bytes of a file say about its text: UTF-8, or why not.

crowdsafe reads CSV text as UTF-8 only (there is no encoding option: a guess between Latin-1,
Windows-1252 and Shift-JIS is wrong without a word when it is wrong). So a file in another
encoding is refused in one line that names the encoding where its bytes show it (a byte-order
mark, or UTF-16's NUL byte beside every ASCII character) and says to re-save it as UTF-8.
"""

from __future__ import annotations

import codecs

#: Byte-order marks of the encodings that are refused by name.
_MARKS = ((b"\xff\xfe\x00\x00", "UTF-32"), (b"\x00\x00\xfe\xff", "UTF-32"),
          (b"\xff\xfe", "UTF-16"), (b"\xfe\xff", "UTF-16"))
#: The bytes of ASCII text: printable characters, a tab and the line breaks.
_TEXT = frozenset(range(0x20, 0x7F)) | {0x09, 0x0A, 0x0D}


def _bomless_utf16(head: bytes) -> str | None:
    """``"UTF-16LE"`` or ``"UTF-16BE"`` when ``head`` is UTF-16 text without a byte-order mark
    (as SQL Server's ``bcp -w`` writes it): at least 4 code units, NULs in at least half of the
    bytes of one parity and in none of the other, and every unit with a NUL high byte an ASCII
    character of text (printable, a tab or a line break), as in no binary format."""
    pairs = len(head) // 2
    if pairs < 4:
        return None
    even, odd = head[0:2 * pairs:2], head[1:2 * pairs:2]
    for high, low, name in ((odd, even, "UTF-16LE"), (even, odd, "UTF-16BE")):
        if high.count(0) >= 0.5 * pairs and low.count(0) == 0:
            ascii_units = bytes(c for c, h in zip(low, high) if h == 0)
            if all(c in _TEXT for c in ascii_units):
                return name
    return None


def utf8_complaint(exc: BaseException) -> bool:
    """Whether a reader's error (Polars') says the text is not valid UTF-8: every reader then
    refuses the file in the same words, :data:`NOT_UTF8`."""
    text = str(exc).lower()
    return "utf-8" in text or "utf8" in text


#: How a file that is not UTF-8 text is refused, after its name.
NOT_UTF8 = "is not UTF-8 text; re-save it as UTF-8"


def text_problem(head: bytes) -> str | None:
    """Why ``head`` (the first bytes of a file, decompressed) is not CSV text, or None."""
    for mark, encoding in _MARKS:
        if head.startswith(mark):
            return f"is {encoding} text; re-save it as UTF-8"
    if b"\x00" in head:
        unmarked = _bomless_utf16(head)
        if unmarked is not None:
            return f"is {unmarked} text (without a byte-order mark); re-save it as UTF-8"
        return "is a binary file, not CSV text; give a CSV (UTF-8) or Parquet file"
    try:  # Polars reads a header lossily: a Windows-1252 'Größe' was the column 'Gr\ufffd\ufffde'
        codecs.getincrementaldecoder("utf-8")().decode(head, final=False)  # a sequence cut at the end is no error
    except UnicodeDecodeError:
        return NOT_UTF8
    return None


__all__ = ["NOT_UTF8", "text_problem", "utf8_complaint"]
