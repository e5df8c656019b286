"""The charges this process committed to a ledger during the current command.

A run stopped midway (Ctrl-C, SIGTERM, a full disk) must say whether it spent budget: a script
that reruns a stopped job needs to know if the ledger moved. The ledger adds a charge here when
it commits it (before any noise is drawn) and marks it completed when the run inside the charge
ends well; either way it counts. A run may be stopped after its charge completed (``perturb``
and ``query --out`` write their result after it), so every charge is kept, with its status. The
command line clears the record when a command starts and names what it holds when the command
stops (:func:`stopped_words`).

The record is per process (a command runs in one); a lock keeps it whole when threads charge.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace

from crowdsafe.identity import printable
from crowdsafe.number_text import rounded_up


@dataclass(frozen=True)
class RunCharge:
    """One committed charge: its entry in the ledger at ``ledger``, the dataset's name, its loss,
    and whether the run inside it completed (else the ledger lists it as failed, or, if the
    process dies first, as charged)."""

    ledger: str
    entry_id: int
    dataset: str
    epsilon: float
    delta: float
    completed: bool = False


_lock = threading.Lock()
_charges: dict[tuple[str, int], RunCharge] = {}


def charged(charge: RunCharge) -> None:
    """Record a charge the ledger has just committed."""
    with _lock:
        _charges[(charge.ledger, charge.entry_id)] = charge


def completed(ledger: str, entry_id: int) -> None:
    """Mark a charge whose run completed."""
    with _lock:
        key = (ledger, entry_id)
        if key in _charges:
            _charges[key] = replace(_charges[key], completed=True)


def clear() -> None:
    """Forget every charge (a command starts)."""
    with _lock:
        _charges.clear()


def charges() -> list[RunCharge]:
    """The charges recorded, oldest first."""
    with _lock:
        return sorted(_charges.values(), key=lambda c: (c.ledger, c.entry_id))


def stopped_words() -> str:
    """What a stopped run spent, in one line's words: that nothing was charged, or each charge
    (entry, dataset, loss rounded up, ledger, how the ledger lists it) and that it stays spent."""
    made = charges()
    if not made:
        return "nothing was charged to a privacy ledger"
    each = ", ".join(
        f"entry #{c.entry_id} of '{printable(c.dataset)}' (ε={rounded_up(c.epsilon)}, δ={rounded_up(c.delta, 3)}) "
        f"in {printable(c.ledger)}, listed as {'completed' if c.completed else 'failed'}" for c in made)
    it = "it stays spent" if len(made) == 1 else "each stays spent"
    return f"the run had charged {each} by 'crowdsafe ledger show': {it}"
