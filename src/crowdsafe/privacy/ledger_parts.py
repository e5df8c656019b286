"""Which stored partition parts may be the same part: keys compared across spellings and versions.

A query on ``age = 30`` and one on ``age = 30.0`` read the same rows, so they are one part of the
partition by ``age`` and compose sequentially. crowdsafe now stores a part's key in one canonical
form (:func:`crowdsafe.mechanisms.query_partition.part_key`: the literal cast to the column's
type), but a ledger written by an earlier version holds the literal as it was written (``30.0``,
``-0.0``, ``'20200101'``, ``TRUE``), and the ledger does not know the column's type. So when the
ledger adds up a partition, every stored key is linked with each canonical form it could have
under any column type (:func:`readings`), and keys so linked are one part: their entries are
summed. Linking errs on the safe side: two text values that read as the same number (``'30'`` and
``'30.0'`` in a text column) are counted as one part, which over-counts their spending and never
under-counts it. No migration rewrites old keys; they are compared by this rule on every read.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Iterable

from crowdsafe.number_text import NotANumber, read_number

_DIGITS = re.compile(r"[+-]?[0-9]+")
_EXACT_FLOAT = 2**53


def readings(key: str) -> set[str]:
    """``key`` and each canonical form it takes if read as a whole number, a real number, a date, a
    date-time or a truth value (the forms :func:`~crowdsafe.mechanisms.query_partition.part_key`
    writes)."""
    found = {key}
    text = key.strip()
    if _DIGITS.fullmatch(text) and len(text) <= 4300:  # Python's limit on int(str)
        whole = int(text)
        found.add(str(whole))
        found.add(number_text(float(whole)) if abs(whole) < 2**1023 else str(whole))
    try:
        found.add(number_text(read_number(text)))
    except NotANumber:
        pass
    for reader in (dt.date.fromisoformat, dt.datetime.fromisoformat):
        try:
            moment = reader(text)
        except ValueError:
            continue
        found.add(moment.isoformat())
        if isinstance(moment, dt.datetime):
            if moment.tzinfo is not None:
                found.add(moment.astimezone(dt.UTC).isoformat())
            elif moment.time() == dt.time(0):
                found.add(moment.date().isoformat())
        else:
            found.add(dt.datetime.combine(moment, dt.time(0)).isoformat())
    if text.lower() in ("true", "false"):
        found.add(text.lower())
    return found


def number_text(value: float | int) -> str:
    """A number's canonical text in a part key: an int in digits; a float that is a whole number
    below 2^53 in digits too (−0.0 is ``0``); any other finite float by ``repr``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"not a number: {value!r}")
    if isinstance(value, int):
        return str(value)
    if value == 0.0:
        return "0"
    if value.is_integer() and abs(value) < _EXACT_FLOAT:
        return str(int(value))
    return repr(value)


def merged(parts: dict[str, list[float]]) -> list[list[float]]:
    """The (ε, δ) of each part after joining the stored keys that may name the same part
    (:func:`readings`): each group's entries summed, sequentially composed. A loop over a
    partition's distinct keys (not over rows or entries)."""
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            parent[node] = parent[parent[node]]
            node = parent[node]
        return node

    def join(nodes: Iterable[str]) -> None:
        first, *rest = nodes
        for other in rest:
            parent[root(other)] = root(first)

    for key in parts:
        join(sorted(readings(key)))
    groups: dict[str, list[float]] = {}
    for key, (epsilon, delta) in parts.items():
        total = groups.setdefault(root(key), [0.0, 0.0])
        total[0] += epsilon
        total[1] += delta
    return list(groups.values())


__all__ = ["merged", "number_text", "readings"]
