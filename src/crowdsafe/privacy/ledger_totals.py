"""What a dataset has spent: entries composed sequentially, declared partitions in parallel.

The per-part sums live in the ledger's ``totals`` table, updated in the same transaction as each
entry, so that a charge costs the same with 10 or 100,000 earlier entries.
"""

from __future__ import annotations

import math
import sqlite3
from typing import cast

from crowdsafe.privacy.composition import Neighbours, parallel, sequential
from crowdsafe.privacy.ledger_parts import merged
from crowdsafe.privacy.ledger_records import ValidatedCharge
from crowdsafe.privacy.loss import PrivacyLoss

# Budgets are compared with a relative tolerance, so that e.g. 0.1 + 0.2 fits a budget of 0.3.
_TOLERANCE = 1e-9


def fits(used: float, budget: float) -> bool:
    return used <= budget * (1.0 + _TOLERANCE) + 1e-15


def spent_totals(
    conn: sqlite3.Connection, fingerprint: str, pending: ValidatedCharge | None = None
) -> tuple[PrivacyLoss, PrivacyLoss, int]:
    """What a dataset has spent, the same with ``pending`` added, and the number of entries.

    Sequential over entries; for each declared partition, per part sequentially and then in
    parallel over the parts (stored keys that may name one part joined first: :mod:`ledger_parts`).
    The per-part sums are kept in the ``totals`` table, updated in the
    same transaction as each entry, so a charge costs the same with 10 or 100,000 earlier entries.
    """
    plain_eps, plain_delta, count = 0.0, 0.0, 0
    parts: dict[tuple[str, str], dict[str, list[float]]] = {}
    for key, neighbours, part, eps, delta, n in conn.execute(
        "SELECT partition_key, neighbours, part, epsilon, delta, entries FROM totals WHERE fingerprint = ?",
        (fingerprint,),
    ):
        count += int(n)
        if key == "":
            plain_eps, plain_delta = float(eps), float(delta)
        else:
            parts.setdefault((key, neighbours), {})[part] = [float(eps), float(delta)]
    spent = _combine(plain_eps, plain_delta, parts)
    if pending is None:
        return spent, spent, count
    if pending.partition is None:
        plain_eps += pending.loss.epsilon
        plain_delta += pending.loss.delta
    else:
        key, part = pending.partition
        by_part = parts.setdefault((key, pending.neighbours), {})
        eps, delta = by_part.get(part, [0.0, 0.0])
        by_part[part] = [eps + pending.loss.epsilon, delta + pending.loss.delta]
    return spent, _combine(plain_eps, plain_delta, parts), count + 1


def _combine(plain_eps: float, plain_delta: float, parts: dict[tuple[str, str], dict[str, list[float]]]) -> PrivacyLoss:
    losses = [_loss(plain_eps, plain_delta)]
    for (_, neighbours), by_part in parts.items():
        # the ledger's schema admits only the two Neighbours values (a CHECK constraint)
        # keys that may name the same part (30 and 30.0, an earlier version's spelling) are one part
        losses.append(parallel([_loss(eps, delta) for eps, delta in merged(by_part)],
                               neighbours=cast(Neighbours, neighbours)))
    return _sum(losses)


def _loss(epsilon: float, delta: float) -> PrivacyLoss:
    return PrivacyLoss(epsilon, min(delta, math.nextafter(1.0, 0.0)))


def _sum(losses: list[PrivacyLoss]) -> PrivacyLoss:
    """Sequential composition; a total δ of 1 or more (never within a budget) is capped below 1."""
    if math.fsum(loss.delta for loss in losses) < 1.0:
        return sequential(losses)
    return PrivacyLoss(math.fsum(loss.epsilon for loss in losses), math.nextafter(1.0, 0.0))
