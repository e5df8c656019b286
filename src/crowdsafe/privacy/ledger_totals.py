"""What a dataset has spent: entries composed sequentially, declared partitions in parallel, under
the dataset's one neighbour notion.

The per-part sums live in the ledger's ``totals`` table, updated in the same transaction as each
entry, so that a charge costs the same with 10 or 100,000 earlier entries.
"""

from __future__ import annotations

import math
import sqlite3
from typing import cast

from crowdsafe.errors import ParameterError
from crowdsafe.privacy.composition import Neighbours, parallel, sequential
from crowdsafe.privacy.ledger_parts import merged
from crowdsafe.privacy.ledger_records import NEIGHBOURS, ValidatedCharge
from crowdsafe.privacy.loss import PrivacyLoss

# Budgets are compared with a relative tolerance, so that e.g. 0.1 + 0.2 fits a budget of 0.3.
_TOLERANCE = 1e-9


def fits(used: float, budget: float) -> bool:
    """Whether ``used`` (a sum of charges) stays within ``budget``, up to a relative 1e-9 for the
    rounding of the sum, and no absolute slack: a budget of 0 admits exactly 0 (a pure ε-DP
    budget, δ = 0, admits no δ at all), and a tiny δ budget is not overspent."""
    return used <= budget * (1.0 + _TOLERANCE)


def notions(conn: sqlite3.Connection, fingerprint: str) -> tuple[str, ...]:
    """The neighbour notions the dataset's entries were charged under, in :data:`NEIGHBOURS` order
    (empty before its first charge; both only in a ledger an earlier crowdsafe wrote). Two indexed
    look-ups, whatever the number of entries."""
    return tuple(notion for notion in NEIGHBOURS if conn.execute(
        "SELECT EXISTS (SELECT 1 FROM entries WHERE fingerprint = ? AND neighbours = ?)", (fingerprint, notion)
    ).fetchone()[0])


def check_notion(conn: sqlite3.Connection, pending: ValidatedCharge, name: str) -> None:
    """Refuse (one line, before the charge) a charge whose neighbour notion is not the dataset's: the
    notion of its first charge. ε under add-remove and ε under change-one neighbours are different
    units, and only one direction converts for every mechanism (:func:`as_change`), so a budget
    keeps one notion. A dataset an earlier crowdsafe charged under both is counted in change-one
    units and takes change charges only. From the ledger and the parameters; no data is read."""
    found = notions(conn, pending.fingerprint)
    if not found or found == (pending.neighbours,) or (len(found) > 1 and pending.neighbours == "change"):
        return
    if len(found) > 1:
        why = (f"dataset '{name}' holds charges under both neighbour notions (written by an earlier crowdsafe), so "
               "its spending is counted as change-one DP (each add-remove total doubled by group privacy) and "
               "only neighbours='change' can be added")
    else:
        why = (f"dataset '{name}' is accounted under {found[0]} neighbours (its first charge); ε under one notion is "
               "not ε under the other, so they cannot share a budget: "
               + (f"use neighbours='{found[0]}'" if pending.kind == "query" else
                  "a release protects add-remove neighbours only, so it cannot be charged to this dataset"))
    raise ParameterError(f"refused: {pending.description!r} is charged under {pending.neighbours} neighbours but "
                         f"{why} (nothing was computed)", parameter="neighbours")


def as_change(loss: PrivacyLoss) -> PrivacyLoss:
    """An (ε, δ)-DP guarantee under add-remove neighbours restated under change-one neighbours: a
    change is a removal then an addition, so group privacy for two steps gives (2ε, (1 + e^ε)δ)
    (Dwork & Roth 2014, Theorem 2.2; ``certify.THEOREM_GROUP``). The converse has no bound: a
    mechanism that publishes the number of rows is 0-DP under change and not DP under add-remove."""
    delta = 0.0 if loss.delta == 0 else min((1.0 + math.exp(min(loss.epsilon, 700.0))) * loss.delta,
                                             math.nextafter(1.0, 0.0))
    return PrivacyLoss(2.0 * loss.epsilon, delta)


def spent_totals(
    conn: sqlite3.Connection, fingerprint: str, pending: ValidatedCharge | None = None
) -> tuple[PrivacyLoss, PrivacyLoss, int]:
    """What a dataset has spent, the same with ``pending`` added, and the number of entries.

    Sequential over entries; for each declared partition, per part sequentially and then in
    parallel over the parts (stored keys that may name one part joined first: :mod:`ledger_parts`).
    The per-part sums are kept in the ``totals`` table, updated in the
    same transaction as each entry, so a charge costs the same with 10 or 100,000 earlier entries.

    A dataset's entries share one neighbour notion (the ledger refuses a charge under the other).
    A ledger of an earlier crowdsafe may hold both: its spending is then counted as change-one DP,
    the add-remove entries' total restated by :func:`as_change` (:func:`_mixed_totals`).
    """
    found = set(notions(conn, fingerprint)) | ({pending.neighbours} if pending is not None else set())
    if len(found) > 1:
        return _mixed_totals(conn, fingerprint, pending)
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
    plain = [plain_eps, plain_delta]
    _add(pending, plain, parts)
    return spent, _combine(plain[0], plain[1], parts), count + 1


def _add(pending: ValidatedCharge, plain: list[float], parts: dict[tuple[str, str], dict[str, list[float]]]) -> None:
    if pending.partition is None:
        plain[0] += pending.loss.epsilon
        plain[1] += pending.loss.delta
    else:
        key, part = pending.partition
        by_part = parts.setdefault((key, pending.neighbours), {})
        eps, delta = by_part.get(part, [0.0, 0.0])
        by_part[part] = [eps + pending.loss.epsilon, delta + pending.loss.delta]


def _mixed_totals(
    conn: sqlite3.Connection, fingerprint: str, pending: ValidatedCharge | None
) -> tuple[PrivacyLoss, PrivacyLoss, int]:
    """:func:`spent_totals` of a dataset with entries under both notions, in change-one units: the
    change entries composed as they are, the add-remove entries composed then restated by
    :func:`as_change`, the two summed. The unpartitioned sums per notion are read from the entries
    (the ``totals`` table keeps one sum for both), so this reads every entry of such a dataset."""
    plain = {notion: [0.0, 0.0] for notion in NEIGHBOURS}
    count = 0
    for notion, eps, delta, n in conn.execute(
        "SELECT neighbours, SUM(epsilon), SUM(delta), COUNT(*) FROM entries "
        "WHERE fingerprint = ? AND partition_key IS NULL GROUP BY neighbours", (fingerprint,),
    ):
        plain[notion] = [float(eps), float(delta)]
        count += int(n)
    parts: dict[tuple[str, str], dict[str, list[float]]] = {}
    for key, notion, part, eps, delta, n in conn.execute(
        "SELECT partition_key, neighbours, part, epsilon, delta, entries FROM totals "
        "WHERE fingerprint = ? AND partition_key != ''", (fingerprint,),
    ):
        parts.setdefault((key, notion), {})[part] = [float(eps), float(delta)]
        count += int(n)

    def total() -> PrivacyLoss:
        by_notion = {notion: _combine(plain[notion][0], plain[notion][1],
                                      {k: v for k, v in parts.items() if k[1] == notion})
                     for notion in NEIGHBOURS}
        return _sum([by_notion["change"], as_change(by_notion["add-remove"])])

    spent = total()
    if pending is None:
        return spent, spent, count
    _add(pending, plain[pending.neighbours], parts)
    return spent, total(), count + 1


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


def consumer(conn: sqlite3.Connection, fingerprint: str) -> int | None:
    """The entry id of the DPS release that consumed the table ``fingerprint`` as its sample, if any.

    A sample that drew every row of its source is that table itself (its identity is the
    table's): it is not a separate consumed sample, and the table's later charges compose against
    its budget as after any release. Whether the sample held every row is a custodian-only fact
    (β^n), so refusing the table for it would make a refusal depend on the draw and strand the budget.
    """
    row = conn.execute(
        "SELECT samples.entry_id FROM samples JOIN entries ON entries.id = samples.entry_id "
        "WHERE samples.sample_id = ? AND entries.fingerprint != samples.sample_id ORDER BY samples.rowid",
        (fingerprint,),
    ).fetchone()
    return None if row is None else int(row["entry_id"])
