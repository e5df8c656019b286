"""The tables the app reads with a schema, read once while neither the table nor the schema changes.

The plan page (its plan, its custodian facts and the ledger's view), a release's attack page and
its attack read the table a release was, or will be, published from, each with its schema file:
the same read up to three times a request (150 ms each for the bundled ``people``, more for a
larger file, a whole pass for a streamed one). :class:`TableCache` reads it once and keeps it,
with the table's identity in each ledger that asked for it, until either file changes.

What "unchanged" means: the schema file's bytes, and the table's file as the system describes it
(device, inode, size, modification and change times: a file replaced, or rewritten in place, is
read again; a bundled table, which has no file, by its name). The cache holds the two reads
last used (a session opens one table at a time, and its releases share that read while their
schema is the same; a release published with another schema is the second): a table read whole
is at most ``EAGER_BYTES`` on disk (:mod:`crowdsafe.data.streaming`), and the app kept one
before (the open table's). In the server's memory only, as the pages' own reads were.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from crowdsafe.data import Dataset
    from crowdsafe.data.streamed_table import StreamedTable

#: how many (table, schema) reads are kept
KEPT = 2


@dataclass
class _TableRead:
    """One table read with one schema, and its identity in each ledger (by the ledger's key)."""

    table: Dataset | StreamedTable
    identities: dict[bytes, str] = field(default_factory=dict)
    prepared: tuple[Dataset, list[str], list[str]] | None = None  # prepare_dataset of its domain


def file_state(data: str | os.PathLike[str]) -> tuple[int, ...] | None:
    """What the system says of the file ``data`` (device, inode, size, modification and change
    times in ns); None when there is no such file (a bundled table's name)."""
    try:
        st = os.stat(data)
    except (OSError, ValueError):
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


class TableCache:
    """Tables read with a schema file (module docstring): :meth:`table`, :meth:`domain`,
    :meth:`prepared`, :meth:`rows` and :meth:`identity` answer what a fresh read would."""

    def __init__(self, kept: int = KEPT) -> None:
        self._kept = kept
        self._reads: OrderedDict[tuple[Any, ...], _TableRead] = OrderedDict()
        self._lock = threading.Lock()

    @staticmethod
    def _key(data: str, schema: Path) -> tuple[Any, ...]:
        try:
            text = Path(schema).read_bytes()
        except OSError:  # no schema file: the read below refuses it in its own words, as before
            text = None
        return (data, file_state(data), text)

    def _read(self, data: str, schema: Path) -> _TableRead:
        from crowdsafe.data.streamed_table import load_or_stream

        key = self._key(data, schema)
        with self._lock:
            found = self._reads.get(key)
            if found is not None:
                self._reads.move_to_end(key)
                return found
        read = _TableRead(load_or_stream(data, schema=schema))  # (outside the lock: a large file takes a while)
        if self._key(data, schema) != key:  # changed while it was read: not kept
            return read
        with self._lock:
            self._reads[key] = read
            while len(self._reads) > self._kept:
                self._reads.popitem(last=False)
        return read

    def table(self, data: str, schema: Path) -> Dataset | StreamedTable:
        """``load_or_stream(data, schema=schema)``: the Dataset, or the table streamed batch by batch."""
        return self._read(data, schema).table

    def domain(self, data: str, schema: Path) -> Dataset:
        """The table as a Dataset (for a streamed table, its distinct values)."""
        from crowdsafe.data import Dataset

        table = self.table(data, schema)
        return table if isinstance(table, Dataset) else table.domain

    def prepared(self, data: str, schema: Path) -> tuple[Dataset, list[str], list[str]]:
        """``prepare_dataset`` of :meth:`domain` (the table as the release pipeline sees it, its
        published columns and notes), which the plan page's parts each asked for."""
        from crowdsafe.anonymize.publish import prepare_dataset
        from crowdsafe.data import Dataset

        read = self._read(data, schema)
        with self._lock:
            known = read.prepared
        if known is not None:
            return known
        table = read.table
        made = prepare_dataset(table if isinstance(table, Dataset) else table.domain)
        with self._lock:
            read.prepared = made
        return made

    def rows(self, data: str, schema: Path) -> int:
        """The table's rows (all of them, for a streamed table too)."""
        return int(self.table(data, schema).n_rows)

    def identity(self, data: str, schema: Path, book: Any) -> str:
        """The table's identity in the ledger ``book`` (its fingerprint keyed with the ledger's
        secret, as ``api.publish`` charges it)."""
        from crowdsafe.engines import get_engine

        read = self._read(data, schema)
        key = book.identity_key
        with self._lock:
            known = read.identities.get(key)
        if known is not None:
            return known
        identity = get_engine("polars").source_identity(read.table, book)
        with self._lock:
            read.identities[key] = identity
        return identity
