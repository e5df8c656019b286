"""A dataset's budget, changed on the record: lowered freely, raised only when asked, every change
a line of its budget history.

A budget is registered once (``Ledger.set_budget``) but a mistaken one must not leave a dataset
stuck (a budget of δ = 0 admits no release, which needs δ > 0): :func:`change` lowers it, or raises
it when ``allow_raise`` is given. Each change, and the registration itself, adds a row to the
``budget_changes`` table in the same transaction: the budget before and after, what the dataset
had spent at that moment, the operating-system user, the time and the custodian's reason. No
charge is ever erased or changed, so what was spent keeps counting against the new budget and the
history shows when the spending exceeded the budget of its time. Nothing here reads data.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from crowdsafe.errors import LEDGER_REFUSAL, ParameterError
from crowdsafe.identity import dataset_named
from crowdsafe.privacy import ledger_identity
from crowdsafe.privacy.ledger_records import BudgetChange
from crowdsafe.privacy.ledger_storage import custodian, now
from crowdsafe.privacy.ledger_totals import spent_totals
from crowdsafe.privacy.loss import PrivacyLoss, check_delta, check_epsilon


def checked_budget(epsilon: float, delta: float) -> tuple[float, float]:
    """A total budget: ε finite and > 0, δ in [0, 1) (the checks of :mod:`crowdsafe.privacy.loss`)."""
    epsilon, delta = check_epsilon(epsilon), check_delta(delta)
    if epsilon <= 0:
        raise ParameterError("a privacy budget needs epsilon > 0")
    return epsilon, delta


def budget_parameter(budget: object) -> tuple[float, float] | None:
    """The ``budget=(ε, δ)`` parameter of publish, query and perturb (None: none given), checked
    as :func:`checked_budget` checks it, before the data is read or a ledger opened: a pair of
    numbers (a tuple or list of two; a text such as ``"5,1e-5"`` is not one), else a
    ParameterError on ``budget``."""
    if budget is None:
        return None
    if not isinstance(budget, (tuple, list)) or len(budget) != 2:
        raise ParameterError(f"budget must be a pair (epsilon, delta) of numbers, e.g. (1, 1e-6), got {budget!r}",
                             parameter="budget")
    try:
        return checked_budget(*budget)
    except ParameterError as error:
        raise ParameterError(f"budget={tuple(budget)!r}: {error}", parameter="budget") from None


def other_data(name: str, earlier: bool = False) -> str:
    """The refusal of a table whose rows are not those the ledger registered under ``name``: what
    changes a table's identity (the engine too: the Spark engine's identity is not the Polars
    engine's), and what a new name costs (:meth:`crowdsafe.data.Dataset.fingerprint`).
    ``earlier``: the ledger may hold identities of an earlier crowdsafe, which counted the declared
    column types (:mod:`~crowdsafe.privacy.ledger_identity`)."""
    if earlier:
        types = ("how the schema declares a column's type does not count, but this ledger was written by an earlier "
                 "crowdsafe, whose identities counted the types: a table it registered is found when read once with "
                 "the schema it was registered with")
    else:
        types = ("how the schema declares a column's type does not count, except with engine='spark', whose identity "
                 "counts the declared types")
    return (f"the name '{name}' already belongs to other data in the ledger: these rows are not the ones registered "
            f"under it (a row, value or column added, removed or changed; {types}; or it was registered from a run "
            f"on one engine and is read on the other: engine='spark' identifies a table by another digest than the "
            f"Polars engine, so the same rows are not recognised across engines: read them with the engine they "
            f"were registered with, docs/spark.md). If this is a new version of the same people's data, a new name "
            f"(name=NAME) gives it a budget of its own that does not count what '{name}' spent: set that budget with "
            f"this in mind{OTHER_DATA}")


#: The end of :func:`other_data`: that the rows are not those registered under the name is read
#: from the data (their keyed identity), so the message is the custodian's (docs/privacy-boundary.md).
OTHER_DATA = (" (a custodian-only fact about the data: these rows differ from those registered under the name; keep "
              "this message to the custodian)")


def _exact(x: float) -> str:
    """``x`` short (``1e-06``) when that reads back as ``x``, else in full: a budget registered as
    exactly a run's cost (δ = 9.99999997980912e-07) must not read as the 1e-06 it is refused against."""
    short = f"{x:g}"
    return short if float(short) == x else repr(x)


def register(conn: sqlite3.Connection, fingerprint: str, name: str, epsilon: float, delta: float) -> None:
    """Inside the caller's write transaction: register ``fingerprint`` under ``name`` with the
    total budget (ε, δ), recorded as the first line of its history. The same budget again is a
    no-op; another budget, or a name that belongs to other data, is refused (custodian-only: the
    ledger finds the table by its rows)."""
    epsilon, delta = checked_budget(epsilon, delta)
    name = name.strip()
    if not name or not fingerprint:
        raise ParameterError("a dataset in the ledger needs a name and a fingerprint")
    row = conn.execute("SELECT * FROM datasets WHERE fingerprint = ?", (fingerprint,)).fetchone()
    if row is not None:
        if (row["epsilon_budget"], row["delta_budget"]) != (epsilon, delta):
            raise ParameterError(
                f"dataset '{row['name']}' already has the budget (ε={_exact(row['epsilon_budget'])}, "
                f"δ={_exact(row['delta_budget'])}); change it on the record with change_budget('{row['name']}', "
                "epsilon=E, delta=D) (a raise also needs allow_raise=True)" + LEDGER_REFUSAL,
                parameter=("budget", "allow_raise"),
            )
        return
    if conn.execute("SELECT 1 FROM datasets WHERE name = ?", (name,)).fetchone() is not None:
        raise ParameterError(other_data(name, ledger_identity.may_hold_legacy(conn)), parameter=("name", "engine"))
    conn.execute("INSERT INTO datasets VALUES (?, ?, ?, ?, ?)", (fingerprint, name, epsilon, delta, now()))
    record(conn, fingerprint, "set", None, PrivacyLoss(epsilon, delta), "")


def change(conn: sqlite3.Connection, path: Path, dataset: str, epsilon: float, delta: float, allow_raise: bool,
           reason: str) -> str:
    """Inside the caller's write transaction: set the budget of ``dataset`` (fingerprint or name)
    to (ε, δ) and record the change; refuse an unknown dataset, and a raise (ε or δ larger)
    without ``allow_raise``. The same budget again records nothing. Returns the fingerprint."""
    epsilon, delta = checked_budget(epsilon, delta)
    row = conn.execute("SELECT * FROM datasets WHERE fingerprint = ? OR name = ?", (dataset, dataset)).fetchone()
    if row is None:
        raise ParameterError(
            f"{dataset_named(dataset)} has no budget in the ledger {path}; register one with "
            f"set_budget(DATA, epsilon=E, delta=D)", parameter="budget",
        )
    before, after = PrivacyLoss(row["epsilon_budget"], row["delta_budget"]), PrivacyLoss(epsilon, delta)
    raised = after.epsilon > before.epsilon or after.delta > before.delta
    if raised and not allow_raise:
        raise ParameterError(
            f"(ε={epsilon:g}, δ={delta:g}) would raise the budget of '{row['name']}' from "
            f"(ε={before.epsilon:g}, δ={before.delta:g}): a raise needs allow_raise=True, and is "
            "recorded in the ledger's history", parameter="allow_raise",
        )
    if after != before:
        conn.execute("UPDATE datasets SET epsilon_budget = ?, delta_budget = ? WHERE fingerprint = ?",
                     (after.epsilon, after.delta, row["fingerprint"]))
        record(conn, row["fingerprint"], "raised" if raised else "lowered", before, after, reason)
    return str(row["fingerprint"])


def record(conn: sqlite3.Connection, fingerprint: str, kind: str, before: PrivacyLoss | None, after: PrivacyLoss,
           reason: str) -> None:
    """Add a line to the budget history, with what the dataset has spent now (inside the
    caller's transaction). ``kind``: 'set' (``before`` None), 'lowered' or 'raised'."""
    spent, _, _ = spent_totals(conn, fingerprint)
    conn.execute(
        "INSERT INTO budget_changes (fingerprint, change, epsilon_before, delta_before, epsilon_after, "
        "delta_after, spent_epsilon, spent_delta, changed_by, reason, created_at) "
        "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
        (fingerprint, kind, None if before is None else before.epsilon, None if before is None else before.delta,
         after.epsilon, after.delta, spent.epsilon, spent.delta, custodian(), " ".join(str(reason).split()), now()),
    )


def history(conn: sqlite3.Connection, fingerprint: str) -> list[BudgetChange]:
    """The budget history of the dataset ``fingerprint``, oldest first."""
    rows = conn.execute("SELECT * FROM budget_changes WHERE fingerprint = ? ORDER BY id", (fingerprint,)).fetchall()
    return [BudgetChange.from_row(row) for row in rows]
