"""NUL characters (byte 0) in a table's text, refused wherever they lie.

:func:`crowdsafe.data.io.sniff_format` refuses a file with a NUL in its first 64 KiB as "a binary
file". A NUL further on was read as part of a cell and published, after the charge, into a release
that crowdsafe's own readers then refused as a binary file (ds6 #3). An uncompressed CSV file is
searched whole, in its bytes (:func:`refuse_nul_in_file`: one ``mmap.find``, about 10 ms for
100 MB, where searching the 9 text columns of a million rows read took 360 ms); a compressed CSV
or a Parquet file is searched after the read, in every text column at once and the column names
(:func:`refuse_nul`: one Polars ``str.contains`` per column); a table read batch by batch, in each
column's distinct values. Hierarchy labels are checked where hierarchies are read
(:mod:`crowdsafe.data.hierarchy`). All of it before any charge. A refusal of a NUL in the
table's rows names where it lies, a fact about the data: it ends with the custodian-only label
(:data:`~crowdsafe.errors.CUSTODIAN_REFUSAL`, docs/privacy-boundary.md), as the ragged-row
refusal does.
"""

from __future__ import annotations

import mmap
import os

import polars as pl

from crowdsafe.errors import CUSTODIAN_REFUSAL, InputError

NUL = "\x00"
_REMEDY = "remove it (e.g. tr -d '\\000' < in.csv > out.csv) and give that file"


def _text(dtype: pl.DataType) -> bool:
    return dtype == pl.String or isinstance(dtype, (pl.Categorical, pl.Enum))


def refuse_nul(frame: pl.DataFrame, path: str | os.PathLike[str], *, rows: bool = True) -> None:
    """Refuse, in one line naming ``path``, the column and (``rows``: the frame's rows are the
    file's data rows) the first data row, a NUL character in a column name or a text cell of
    ``frame``. ``rows=False``: ``frame`` holds each column's distinct values (no row to name)."""
    for name in frame.columns:
        if NUL in name:
            raise InputError(f"{path}: a column name holds a NUL character (byte 0): {name!r}; {_REMEDY}")
    text = [name for name, dtype in frame.schema.items() if _text(dtype)]
    if not text:
        return
    found = frame.select([pl.col(c).cast(pl.String).str.contains(NUL, literal=True).any() for c in text]).row(0)
    for name, hit in zip(text, found):
        if hit:
            where = ""
            if rows:
                first = frame.select(pl.col(name).cast(pl.String).str.contains(NUL, literal=True).arg_true().first())
                where = f", data row {int(first.item()) + 1:,}"
            raise InputError(f"{path}: column '{name}' holds a NUL character (byte 0){where}, which is binary "
                             f"content, not text (no reader of a release could read it back); {_REMEDY}"
                             f"{CUSTODIAN_REFUSAL}")


def refuse_nul_in_file(path: str | os.PathLike[str], start: int = 0) -> None:
    """Refuse, in one line naming the line, a NUL byte in the file at ``path`` (uncompressed text)
    from byte ``start`` on (the bytes before were sniffed)."""
    try:
        with open(path, "rb") as handle:
            if os.fstat(handle.fileno()).st_size <= start:
                return
            with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
                at = mapped.find(b"\x00", start)
                line = mapped[:at].count(b"\n") + 1 if at >= 0 else 0
    except (OSError, ValueError):
        return  # (the read itself names what is wrong with the file)
    if at >= 0:
        raise InputError(f"{path}: line {line:,} holds a NUL character (byte 0), which is binary content, not "
                         f"text (no reader of a release could read it back); {_REMEDY}{CUSTODIAN_REFUSAL}")


def refuse_nul_in_text(text: str, path: str | os.PathLike[str], what: str) -> None:
    """Refuse a NUL character in ``text`` (the contents of ``what`` at ``path``), naming its line."""
    at = text.find(NUL)
    if at >= 0:
        line = text.count("\n", 0, at) + 1
        raise InputError(f"{what} {path}: line {line} holds a NUL character (byte 0), which no label may hold "
                         f"(a release could not be read back); {_REMEDY}")


__all__ = ["NUL", "refuse_nul", "refuse_nul_in_file", "refuse_nul_in_text"]
