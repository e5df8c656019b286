"""The charges this process committed to a ledger and has not seen complete.

A run stopped midway (Ctrl-C, SIGTERM, a full disk) must say whether it spent budget: a script
that reruns a stopped job needs to know if the ledger moved. The ledger adds a charge here when
it commits it (before any noise is drawn) and removes it when the run completes; a charge marked
failed stays, since it still counts. The command line clears the record when a command starts
and names what is left when the command stops (:func:`stopped_words`).

The record is per process (a command runs in one); a lock keeps it whole when threads charge.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from crowdsafe.identity import printable
from crowdsafe.number_text import rounded_up


@dataclass(frozen=True)
class OpenCharge:
    """One committed charge: its entry in the ledger at ``ledger``, the dataset's name, its loss."""

    ledger: str
    entry_id: int
    dataset: str
    epsilon: float
    delta: float


_lock = threading.Lock()
_open: dict[tuple[str, int], OpenCharge] = {}


def opened(charge: OpenCharge) -> None:
    """Record a charge the ledger has just committed."""
    with _lock:
        _open[(charge.ledger, charge.entry_id)] = charge


def completed(ledger: str, entry_id: int) -> None:
    """Forget a charge whose run completed."""
    with _lock:
        _open.pop((ledger, entry_id), None)


def clear() -> None:
    """Forget every charge (a command starts)."""
    with _lock:
        _open.clear()


def unfinished() -> list[OpenCharge]:
    """The charges committed and not completed, oldest first."""
    with _lock:
        return sorted(_open.values(), key=lambda c: (c.ledger, c.entry_id))


def stopped_words() -> str:
    """What a stopped run spent, in one line's words: that nothing was charged, or each charge
    (entry, dataset, loss rounded up, ledger) and that it stays spent."""
    charges = unfinished()
    if not charges:
        return "nothing was charged to a privacy ledger"
    each = ", ".join(
        f"entry #{c.entry_id} of '{printable(c.dataset)}' (ε={rounded_up(c.epsilon)}, δ={rounded_up(c.delta, 3)}) "
        f"in {printable(c.ledger)}" for c in charges)
    it = "it stays spent" if len(charges) == 1 else "each stays spent"
    return f"the run had charged {each}: {it} ('crowdsafe ledger show' lists it as failed)"
