"""What the ledger records: a dataset's budget, a charge request, the entry it becomes.

:class:`ChargeRequest` is the typed form of a charge (what a caller asks the ledger to spend);
:meth:`crowdsafe.privacy.ledger.Ledger.charge` validates it into a :class:`ValidatedCharge` (one
composed loss, the dataset's fingerprint) and stores it as an :class:`Entry`. Nothing here reads
data: every field is fixed by the caller before the data is read, or by the ledger itself.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from crowdsafe.privacy.loss import PrivacyLoss

if TYPE_CHECKING:
    from crowdsafe.privacy.ledger import Ledger

KINDS = ("query", "release", "dps-release")
NEIGHBOURS = ("add-remove", "change")


@dataclass(frozen=True)
class Budget:
    """A dataset's budget and what has been spent from it."""

    fingerprint: str
    name: str
    budget: PrivacyLoss
    spent: PrivacyLoss
    entries: int
    created_at: str
    # the notion the budget is accounted under (that of its first charge; None before one); a
    # dataset an earlier crowdsafe charged under both is counted as change-one DP (mixed_neighbours)
    neighbours: str | None = None
    mixed_neighbours: bool = False

    @property
    def remaining(self) -> PrivacyLoss:
        return PrivacyLoss(
            max(0.0, self.budget.epsilon - self.spent.epsilon), max(0.0, self.budget.delta - self.spent.delta)
        )

    def as_dict(self) -> dict[str, object]:
        return {
            "name": self.name,
            "fingerprint": self.fingerprint,
            "budget": self.budget.as_dict(),
            "spent": self.spent.as_dict(),
            "remaining": self.remaining.as_dict(),
            "entries": self.entries,
            "created_at": self.created_at,
            "neighbours": self.neighbours,
            "mixed_neighbours": self.mixed_neighbours,
        }

    def __repr__(self) -> str:
        # as the ledger's own reprs: labelled, and without the dataset's keyed identity (a digest of
        # its rows; ``crowdsafe ledger show`` prints its first 16 characters, and ``fingerprint`` and
        # ``as_dict()`` hold it for the custodian who asks)
        from crowdsafe.number_text import rounded_up  # what was spent: never stated below it

        return (f"Budget({self.name!r}: ε {rounded_up(self.spent.epsilon)} of {self.budget.epsilon:g} spent, "
                f"δ {rounded_up(self.spent.delta)} of {self.budget.delta:g}, {self.entries} entries; custodian only)")


@dataclass(frozen=True)
class BudgetChange:
    """One line of a dataset's budget history: the budget set, lowered or raised (with the
    budget before, None when set), what was spent at that moment, by whom, when and why."""

    id: int
    change: str  # 'set', 'lowered' or 'raised'
    before: PrivacyLoss | None
    after: PrivacyLoss
    spent: PrivacyLoss
    changed_by: str
    reason: str
    created_at: str

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> BudgetChange:
        before = None if row["epsilon_before"] is None else PrivacyLoss(row["epsilon_before"], row["delta_before"])
        return cls(id=row["id"], change=row["change"], before=before,
                   after=PrivacyLoss(row["epsilon_after"], row["delta_after"]),
                   spent=PrivacyLoss(row["spent_epsilon"], row["spent_delta"]), changed_by=row["changed_by"],
                   reason=row["reason"], created_at=row["created_at"])

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "change": self.change,
            "before": None if self.before is None else self.before.as_dict(),
            "after": self.after.as_dict(),
            "spent": self.spent.as_dict(),
            "changed_by": self.changed_by,
            "reason": self.reason,
            "created_at": self.created_at,
        }


@dataclass(frozen=True)
class ChargedFields:
    """What a charge is: the fields shared by a request and the entry it becomes."""

    fingerprint: str
    kind: str
    description: str
    mechanism: str
    loss: PrivacyLoss
    repetitions: int
    run_loss: PrivacyLoss
    composition: str
    neighbours: str
    partition: tuple[str, str] | None
    ran_on: str | None


@dataclass(frozen=True)
class Entry(ChargedFields):
    """One charge in the ledger."""

    id: int = 0
    seeded: bool = False
    status: str = "charged"
    created_at: str = ""
    finished_at: str | None = None
    samples: tuple[str, ...] = ()
    details: dict[str, Any] = field(default_factory=dict)
    outcome: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, object]:
        return {
            "id": self.id,
            "kind": self.kind,
            "description": self.description,
            "mechanism": self.mechanism,
            "epsilon": self.loss.epsilon,
            "delta": self.loss.delta,
            "repetitions": self.repetitions,
            "per_run": self.run_loss.as_dict(),
            "composition": self.composition,
            "neighbours": self.neighbours,
            "partition": list(self.partition) if self.partition else None,
            "ran_on": self.ran_on,
            "samples": list(self.samples),
            "seeded": self.seeded,
            "status": self.status,
            "created_at": self.created_at,
            "finished_at": self.finished_at,
            "details": self.details,
            "outcome": self.outcome,
        }


@dataclass
class Charge:
    """A charge that has been committed; the caller adds the outcome while the release runs."""

    ledger: Ledger
    entry_id: int
    loss: PrivacyLoss
    composition: str
    outcome: dict[str, Any] = field(default_factory=dict)

    def record(self, **outcome: Any) -> None:
        """Add facts about the outcome (stored when the charge finishes)."""
        self.outcome.update(outcome)



@dataclass(frozen=True, kw_only=True)
class ChargeRequest:
    """One charge a caller asks for: the loss of each run and what it is, fixed before the data is read.

    ``epsilon``, ``delta``: the loss of one run; ``kind``: 'query', 'release' or 'dps-release';
    ``neighbours``: 'add-remove' or 'change'; ``repetitions``: k runs fixed in advance, composed by
    the tightest bound that fits; ``delta_slack``: 'auto' or a number (advanced composition);
    ``partition``: (attribute, value) of the partition part the run reads; ``ran_on``: fingerprint
    of the data read (default the dataset); ``sample_ids`` and ``sample_rate``: the samples of a DPS
    release; ``seeded``; ``details``: a JSON-able dict. The ledger checks every field when charging.
    """

    epsilon: float
    description: str
    mechanism: str
    delta: float = 0.0
    kind: str = "query"
    neighbours: str = "add-remove"
    repetitions: int = 1
    delta_slack: float | str = "auto"
    partition: tuple[str, str] | None = None
    ran_on: str | None = None
    sample_ids: Sequence[str] = ()
    sample_rate: float | None = None
    seeded: bool = False
    details: dict[str, Any] | None = None


@dataclass(frozen=True)
class ValidatedCharge(ChargedFields):
    """A checked :class:`ChargeRequest`: its composed loss, against the dataset's fingerprint."""

    sample_ids: tuple[str, ...] = ()
    sample_rate: float | None = None
    seeded: bool = False
    details: dict[str, Any] = field(default_factory=dict)


def entry_from_row(row: sqlite3.Row, samples: tuple[str, ...]) -> Entry:
    partition = (row["partition_key"], row["part"]) if row["partition_key"] is not None else None
    return Entry(
        id=row["id"],
        fingerprint=row["fingerprint"],
        kind=row["kind"],
        description=row["description"],
        mechanism=row["mechanism"],
        loss=PrivacyLoss(row["epsilon"], row["delta"]),
        repetitions=row["repetitions"],
        run_loss=PrivacyLoss(row["run_epsilon"], row["run_delta"]),
        composition=row["composition"],
        neighbours=row["neighbours"],
        partition=partition,
        ran_on=row["ran_on"],
        seeded=bool(row["seeded"]),
        status=row["status"],
        created_at=row["created_at"],
        finished_at=row["finished_at"],
        samples=samples,
        details=json.loads(row["details"]),
        outcome=json.loads(row["outcome"]),
    )
