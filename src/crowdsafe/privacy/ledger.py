"""The persistent privacy-budget ledger: every query and release charged against a dataset's budget.

A custodian sets a total budget (ε, δ) once per dataset (and may later lower it, or raise it on
the record: :mod:`~crowdsafe.privacy.ledger_budget`). Every DP query and every release made from
the dataset is then *charged* before any noise is drawn: the ledger composes what was already
spent with the new charge and refuses (:class:`~crowdsafe.errors.BudgetExceeded`) if the total
would exceed the budget. Nothing is ever refunded: once noise may have been drawn, the privacy is
spent even if the computation later failed or the process died.

Storage: one SQLite file (an embedded database with real transactions), in WAL mode, marked as a
crowdsafe ledger (SQLite's application id; :mod:`~crowdsafe.privacy.ledger_mark`): another
application's database given as the ledger is refused and never written. A charge
is one ``BEGIN IMMEDIATE`` transaction (read what was spent, check, insert), flushed to disk
(``synchronous=FULL``) before the caller may draw noise, so two processes cannot both take the
last part of a budget, and a process killed at any point leaves either the whole entry or none
of it. A charge whose process dies before it finishes
stays recorded as ``charged`` (outcome unknown) and keeps counting against the budget.

Location: ``--ledger PATH`` on the command line, else the ``CROWDSAFE_LEDGER`` environment
variable, else ``$XDG_DATA_HOME/crowdsafe/ledger.sqlite3`` (``~/.local/share/...`` by default;
``%LOCALAPPDATA%\\crowdsafe\\ledger.sqlite3`` on Windows), so that every run by the same custodian
sees the same budget.

Composition, with the calculus (:mod:`crowdsafe.privacy.composition`):

- entries compose **sequentially** (sums), which stays valid however adaptively the custodian
  picks queries and when they stop (basic composition is a valid privacy filter; Rogers, Roth,
  Ullman & Vadhan 2016);
- a dataset's budget has **one neighbour notion**, that of its first charge: a charge under the
  other is refused before anything is computed (an ε under add-remove and an ε under change-one
  neighbours are not the same unit; :func:`~crowdsafe.privacy.ledger_totals.check_notion`);
- entries declared on the parts of a **partition** (e.g. ``sex = 'Female'`` and ``sex = 'Male'``:
  a rule applied to each row alone) compose in **parallel** (McSherry 2009): per part
  sequentially, then the maximum over parts (the two largest under change-one neighbours);
- k runs of one mechanism charged together (``repetitions=k``, fixed in advance) are certified by
  the tightest of summation, Dwork–Rothblum–Vadhan and Kairouz–Oh–Viswanath
  (:func:`~crowdsafe.privacy.composition.compose_homogeneous`). Advanced composition is not applied
  across separately charged entries, because their number and parameters are chosen adaptively.

DP under sampling (DPS): a (β, ε, δ)-DPS release relies on the attacker's uncertainty about who
was sampled; it does not compose with anything else computed on the same sample, not even an ε-DP
query. The ledger records the identity of every sample a DPS release used and refuses
(:class:`~crowdsafe.errors.SampleReuseError`) a second DPS release on it and any query or release
that reads it (a sample that drew every row is the table itself, not a consumed sample). DPS
releases on fresh independent samples are (ε, δ)-DP on the parent dataset and compose sequentially.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import sqlite3
from collections.abc import Callable, Iterator
from typing import Any, Union

from crowdsafe.defaults import DEFAULT_LEDGER
from crowdsafe.errors import LEDGER_REFUSAL, BudgetExceeded, InputError, ParameterError, SampleReuseError
from crowdsafe.identity import dataset_named, keyed_identity
from crowdsafe.number_text import rounded_up
from crowdsafe.privacy import ledger_budget, ledger_identity, run_charges
from crowdsafe.privacy.composition import compose_homogeneous
from crowdsafe.privacy.ledger_mark import (
    check_and_mark,
    disk_failure,
    look,
    open_failure,
    open_read_only,
    read_only_reason,
)
from crowdsafe.privacy.ledger_records import (
    KINDS,
    NEIGHBOURS,
    Budget,
    BudgetChange,
    Charge,
    ChargeRequest,
    Entry,
    ValidatedCharge,
    entry_from_row,
)
from crowdsafe.privacy.ledger_storage import (
    LEDGER_ENV,
    SCHEMA,
    SCHEMA_VERSION,
    create_private,
    default_ledger_path,
    ledger_path,
    now,
    upgrade_from_v1,
)
from crowdsafe.privacy.ledger_totals import check_notion, consumer, fits, notions, spent_totals
from crowdsafe.privacy.loss import PrivacyLoss

# How long a charge waits for another process holding the ledger's write lock.
_BUSY_TIMEOUT_S = 60.0


class Ledger:
    """The budget ledger stored in one SQLite file (created on first use).

    Use one instance per process (a connection is not shared between threads). Every method is
    atomic on its own; :meth:`charge` is the one way to spend budget.
    """

    def __init__(self, path: str | os.PathLike[str] | None = None, *, read_only: bool = False) -> None:
        self.path = ledger_path(path)
        if self.path.exists() and self.path.is_dir():
            raise InputError(f"ledger path {self.path} is a folder, expected a file")
        look(self.path)  # another application's database is refused before SQLite opens it to write
        self._identity_key: bytes | None = None
        if read_only and read_only_reason(self.path) is not None:  # (ledger show of an archived copy)
            self._conn = open_read_only(self.path, SCHEMA_VERSION)
            return
        try:
            create_private(self.path)
            self._conn = sqlite3.connect(
                self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=True
            )
        except (OSError, sqlite3.Error) as exc:
            raise InputError(f"cannot open the privacy ledger at {self.path}: {exc}") from exc
        self._conn.row_factory = sqlite3.Row
        try:
            self._conn.execute(f"PRAGMA busy_timeout = {int(_BUSY_TIMEOUT_S * 1000)}")
            self._conn.execute("PRAGMA synchronous = FULL")
            self._conn.execute("PRAGMA foreign_keys = ON")
            # A new file is still in rollback-journal mode here, so its mark and tables reach the
            # file itself at this commit, not only a write-ahead log; WAL mode is set after.
            with self._write() as conn:
                check_and_mark(conn, self.path)
                conn.execute("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
                row = conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
                if row is not None and int(row["value"]) == 1:
                    upgrade_from_v1(conn)
                elif row is not None and int(row["value"]) != SCHEMA_VERSION:
                    raise InputError(
                        f"the ledger at {self.path} has schema version {row['value']}, this crowdsafe "
                        f"reads version {SCHEMA_VERSION}"
                    )
                for statement in filter(str.strip, SCHEMA.split(";")):
                    conn.execute(statement)
                if row is None:
                    conn.execute("INSERT INTO meta VALUES ('schema_version', ?)", (str(SCHEMA_VERSION),))
                    conn.execute("INSERT INTO meta VALUES ('identity_key', ?)", (os.urandom(32).hex(),))
                ledger_identity.mark_current(conn)  # holding no table, it holds no earlier identity
            self._conn.execute("PRAGMA journal_mode = WAL")
        except InputError:
            self._conn.close()
            raise
        except sqlite3.DatabaseError as exc:
            self._conn.close()
            if "locked" in str(exc).lower():
                raise InputError(f"the ledger {self.path} is locked by another process (waited {_BUSY_TIMEOUT_S:g} s); "
                                 "try again when it has finished") from exc
            raise open_failure(exc, self.path) from exc

    @property
    def identity_key(self) -> bytes:
        """The ledger's secret key (32 random bytes from ``os.urandom``, made with the ledger).

        Datasets and samples are identified in the ledger by row-order-invariant digests keyed
        with it (``dataset.fingerprint(key=ledger.identity_key)``): the same table in any row
        order or file name is the same dataset, and an identity seen outside the ledger lets
        nobody test a guess of the data against it. It never leaves the ledger file."""
        if self._identity_key is None:
            row = self._conn.execute("SELECT value FROM meta WHERE key = 'identity_key'").fetchone()
            self._identity_key = bytes.fromhex(row["value"])
        return self._identity_key

    def identify(self, fingerprint: str) -> str:
        """The ledger's name for a table with this plain ``fingerprint`` (hex): keyed with
        :attr:`identity_key`. ``ledger.identify(dataset.fingerprint())`` equals
        ``dataset.fingerprint(key=ledger.identity_key)``; the Spark engine's digests go through
        this too."""
        return keyed_identity(fingerprint, self.identity_key)

    def identity_of(self, table: ledger_identity.Identified) -> str:
        """The ledger's name for ``table`` (a Dataset): :meth:`identify` of its fingerprint, after
        moving the records of a table registered by an earlier crowdsafe under its former
        fingerprint to it (:mod:`~crowdsafe.privacy.ledger_identity`), so it keeps its budget."""
        return self.adopt(self.identify(table.fingerprint()), lambda: self.identify(table.legacy_fingerprint()))

    @property
    def holds_earlier_identities(self) -> bool:
        """Whether the ledger may hold tables under an earlier crowdsafe's identities (it held some
        when this version first opened it: :mod:`~crowdsafe.privacy.ledger_identity`)."""
        return ledger_identity.may_hold_legacy(self._conn)

    def adopt(self, identity: str, legacy: Callable[[], str]) -> str:
        """``identity`` (keyed), the ledger's records of the table whose earlier identity is
        ``legacy()`` (keyed; computed only when the ledger may hold one and does not know
        ``identity``) moved to it (:func:`~crowdsafe.privacy.ledger_identity.adopt`)."""
        return ledger_identity.adopt(self._conn, identity, legacy, self._write)

    # -- plumbing ---------------------------------------------------------------------------

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def _write(self, commit: bool = True, after: str = "nothing was charged or run") -> Iterator[sqlite3.Connection]:
        """One write transaction that holds SQLite's write lock from its first statement (rolled
        back at the end when not ``commit``: a dry run). A full or failing disk is one line
        (:func:`~crowdsafe.privacy.ledger_mark.disk_failure`; ``after``: what the run did not do)."""
        try:
            self._conn.execute("BEGIN IMMEDIATE")
            try:
                yield self._conn
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    self._conn.execute("ROLLBACK")
                raise
            try:
                self._conn.execute("COMMIT" if commit else "ROLLBACK")
            except sqlite3.Error:
                with contextlib.suppress(sqlite3.Error):  # a failed COMMIT leaves the transaction open
                    self._conn.execute("ROLLBACK")
                raise
        except sqlite3.OperationalError as exc:
            if "readonly" in str(exc):
                raise InputError(
                    f"the ledger {self.path} cannot be written (read-only file or folder); nothing was "
                    "charged. Use a ledger you can write (ledger=PATH or CROWDSAFE_LEDGER)", parameter="ledger",
                ) from None
            failed = disk_failure(exc, self.path, after)
            if failed is None:
                raise
            raise failed from exc

    # -- budgets ----------------------------------------------------------------------------

    def set_budget(self, fingerprint: str, name: str, epsilon: float, delta: float = 0.0) -> Budget:
        """Register a dataset and its total budget (recorded as the first line of its budget
        history). Setting the same value again is a no-op; a different value is refused here:
        :meth:`change_budget` lowers or raises a budget, on the record."""
        with self._write() as conn:
            ledger_budget.register(conn, fingerprint, name, epsilon, delta)
        budget = self.budget(fingerprint)
        assert budget is not None
        return budget

    def change_budget(
        self, dataset: str, epsilon: float, delta: float, *, allow_raise: bool = False, reason: str = ""
    ) -> Budget:
        """Set a registered dataset's total budget (by fingerprint or name) to (ε, δ), on the record
        (:mod:`crowdsafe.privacy.ledger_budget`): lowering is always allowed, also below what was
        spent (nothing more can then be charged); a raise (ε or δ larger) needs
        ``allow_raise=True``. One line is added to the dataset's budget history
        (:meth:`budget_changes`) in the same transaction; no charge is erased."""
        with self._write() as conn:
            fingerprint = ledger_budget.change(conn, self.path, dataset, epsilon, delta, allow_raise, reason)
        budget = self.budget(fingerprint)
        assert budget is not None
        return budget

    def budget_changes(self, dataset: str) -> list[BudgetChange]:
        """A dataset's budget history (by fingerprint or name), oldest first: when its budget was
        set, lowered and raised. Empty for an unknown dataset; a dataset registered by an earlier
        crowdsafe has no 'set' line (its budget's ``created_at`` says when)."""
        budget = self.budget(dataset)
        return [] if budget is None else ledger_budget.history(self._conn, budget.fingerprint)

    def budget(self, dataset: str) -> Budget | None:
        """The budget of a dataset given by fingerprint or name; None if not registered."""
        row = self._conn.execute(
            "SELECT * FROM datasets WHERE fingerprint = ? OR name = ?", (dataset, dataset)
        ).fetchone()
        if row is None:
            return None
        spent, _, count = spent_totals(self._conn, row["fingerprint"])
        found = notions(self._conn, row["fingerprint"])
        return Budget(
            neighbours="change" if len(found) > 1 else (found[0] if found else None),
            mixed_neighbours=len(found) > 1,
            fingerprint=row["fingerprint"],
            name=row["name"],
            budget=PrivacyLoss(row["epsilon_budget"], row["delta_budget"]),
            spent=spent,
            entries=count,
            created_at=row["created_at"],
        )

    def budgets(self) -> list[Budget]:
        names = [r["fingerprint"] for r in self._conn.execute("SELECT fingerprint FROM datasets ORDER BY name")]
        return [b for b in (self.budget(f) for f in names) if b is not None]

    # -- charging ---------------------------------------------------------------------------

    def consumed_by(self, fingerprint: str) -> int | None:
        """The entry id of the DPS release whose sample is the table ``fingerprint``, if any (such a
        table may not be used again: not published, not queried)."""
        return consumer(self._conn, fingerprint)

    def check(self, dataset: str, request: ChargeRequest | None = None, /, *,
              register: tuple[str, float, float] | None = None, **fields: Any) -> PrivacyLoss:
        """Raise exactly as :meth:`charge` would, without recording anything; returns the loss
        that would be charged. Lets a caller refuse before computing anything. ``register``: as
        for :meth:`charge` (registered for the check only, then rolled back)."""
        if register is None:
            req = self._request(dataset, _as_request(request, fields))
            self._validate(self._conn, req)
            return req.loss
        with self._write(commit=False) as conn:
            ledger_budget.register(conn, dataset, *register)
            req = self._request(dataset, _as_request(request, fields))
            self._validate(conn, req)
        return req.loss

    @contextlib.contextmanager
    def charge(self, dataset: str, request: ChargeRequest | None = None, /, *,
               register: tuple[str, float, float] | None = None, **fields: Any) -> Iterator[Charge]:
        """Charge a query or release against ``dataset`` (fingerprint or name), then run it.

        The charge is committed (or refused, raising BudgetExceeded / SampleReuseError) when the
        ``with`` block is entered, before the caller draws any noise. Leaving the block marks it
        ``completed`` (with :meth:`Charge.record`'s outcome) or ``failed``; either way it counts.
        ``register`` = (name, ε, δ): register ``dataset`` with that budget in the same
        transaction (:meth:`set_budget`), so a refused charge registers nothing.

        What is charged is a :class:`ChargeRequest` (see its fields); its fields may also be given
        as keyword arguments, alone or replacing those of ``request``.
        """
        with self._write() as conn:
            if register is not None:
                ledger_budget.register(conn, dataset, *register)
            req = self._request(dataset, _as_request(request, fields))
            self._validate(conn, req)
            entry_id = self._insert(conn, req)
            name = conn.execute("SELECT name FROM datasets WHERE fingerprint = ?", (req.fingerprint,)).fetchone()[0]
        run_charges.charged(run_charges.RunCharge(str(self.path), entry_id, name, req.loss.epsilon, req.loss.delta))
        charge = Charge(self, entry_id, req.loss, req.composition)
        try:
            yield charge
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                self._finish(entry_id, "failed", {**charge.outcome, "error": f"{type(exc).__name__}: {exc}"})
            raise
        self._finish(entry_id, "completed", charge.outcome)
        run_charges.completed(str(self.path), entry_id)

    def _request(self, dataset: str, request: ChargeRequest) -> ValidatedCharge:
        epsilon, delta, kind, neighbours = request.epsilon, request.delta, request.kind, request.neighbours
        repetitions, partition = request.repetitions, request.partition
        known = self._conn.execute(
            "SELECT fingerprint FROM datasets WHERE fingerprint = ? OR name = ?", (dataset, dataset)
        ).fetchone()
        if known is None:
            raise BudgetExceeded(
                f"no privacy budget is set for {dataset_named(dataset)} in the ledger {self.path}; set one "
                "with set_budget(DATA, epsilon=E, delta=D) (or pass budget=(ε, δ))", parameter="budget",
            )
        run_loss = PrivacyLoss(epsilon, delta)
        if kind not in KINDS:
            raise ParameterError(f"a ledger entry's kind must be one of {', '.join(KINDS)}, got {kind!r}")
        if neighbours not in NEIGHBOURS:
            raise ParameterError(f"neighbours must be 'add-remove' or 'change', got {neighbours!r}")
        if isinstance(repetitions, bool) or not isinstance(repetitions, int) or repetitions < 1:
            raise ParameterError(f"repetitions must be a whole number >= 1, got {repetitions!r}")
        samples = tuple(request.sample_ids)
        if kind == "dps-release":
            if not samples:
                raise ParameterError("a DPS release must name the identity of the sample(s) it used")
            if len(samples) != repetitions:
                raise ParameterError(f"{repetitions} DPS release(s) need {repetitions} sample(s), got {len(samples)}")
        elif samples:
            raise ParameterError("only a DPS release records sample identities")
        if partition is not None:
            if len(partition) != 2 or not all(isinstance(p, str) and p for p in partition):
                raise ParameterError("a partition part is (attribute, value), both non-empty text")
            partition = (partition[0], partition[1])
        fingerprint = known["fingerprint"]
        if repetitions == 1:
            loss, composition = run_loss, "single run"
        else:
            budget = self.budget(fingerprint)
            assert budget is not None
            loss, composition = self._composed(budget, run_loss, repetitions, request.delta_slack)
        return ValidatedCharge(
            fingerprint=fingerprint,
            kind=kind,
            description=" ".join(str(request.description).split()),
            mechanism=request.mechanism,
            loss=loss,
            repetitions=repetitions,
            run_loss=run_loss,
            composition=composition,
            neighbours=neighbours,
            partition=partition,
            ran_on=None if kind == "dps-release" else (request.ran_on or fingerprint),
            sample_ids=samples,
            sample_rate=request.sample_rate,
            seeded=bool(request.seeded),
            details=dict(request.details or {}),
        )

    @staticmethod
    def _composed(
        budget: Budget, run: PrivacyLoss, repetitions: int, delta_slack: float | str
    ) -> tuple[PrivacyLoss, str]:
        """The loss of ``repetitions`` runs fixed in advance, by the tightest bound that fits.

        With ``delta_slack="auto"`` the advanced bounds may spend a slack δ' of at most 10% of
        the δ still free, and only when that lowers ε by more than 1%; otherwise δ' = 0 (KOV at
        total δ = kδ, never worse than summation). A given number is used as it is.
        """
        if delta_slack == "auto":
            room = max(0.0, budget.remaining.delta - repetitions * run.delta)
            plain = compose_homogeneous(run.epsilon, run.delta, repetitions, 0.0)
            options = [plain] + [
                compose_homogeneous(run.epsilon, run.delta, repetitions, room * share)
                for share in (0.01, 0.1) if room * share > 0
            ]
            best = min(options, key=lambda o: (o.epsilon, o.delta))
            if best.epsilon > plain.epsilon * 0.99:
                best = plain
        else:
            best = compose_homogeneous(run.epsilon, run.delta, repetitions, float(delta_slack))
        return best.loss, f"{repetitions} runs, {best.bound}: {best.theorem}"

    def _validate(self, conn: sqlite3.Connection, req: ValidatedCharge) -> None:
        """Refuse sample reuse and over-budget charges (inside the caller's transaction)."""
        if req.ran_on is not None:
            consumed = consumer(conn, req.ran_on)
            if consumed is not None:
                raise SampleReuseError(
                    f"this data is a sample already used by the DPS release #{consumed}: "
                    "DP under sampling does not compose with anything else computed on the same sample" + LEDGER_REFUSAL
                )
        row = conn.execute("SELECT * FROM datasets WHERE fingerprint = ?", (req.fingerprint,)).fetchone()
        check_notion(conn, req, row["name"])  # one neighbour notion per budget
        budget = PrivacyLoss(row["epsilon_budget"], row["delta_budget"])
        spent, new, _ = spent_totals(conn, req.fingerprint, pending=req)
        if not (fits(new.epsilon, budget.epsilon) and fits(new.delta, budget.delta)):
            stuck = budget.delta == 0 and req.loss.delta > 0
            raise BudgetExceeded(
                f"refused: {req.description!r} costs (ε={rounded_up(req.loss.epsilon)}, "
                f"δ={rounded_up(req.loss.delta, 3)}) but dataset '{row['name']}' has spent "
                f"(ε={rounded_up(spent.epsilon)}, δ={rounded_up(spent.delta, 3)}) "
                f"of its budget (ε={budget.epsilon:g}, δ={budget.delta:g}); nothing was computed" + LEDGER_REFUSAL
                + (f". A budget with δ = 0 admits nothing that costs δ > 0; if δ was left out by mistake, raise it "
                   f"on the record: change_budget('{row['name']}', epsilon=E, delta=D) with allow_raise=True"
                   if stuck else ""),
                parameter=("budget", "allow_raise") if stuck else None,
            )

    @staticmethod
    def _insert(conn: sqlite3.Connection, req: ValidatedCharge) -> int:
        cursor = conn.execute(
            "INSERT INTO entries (fingerprint, kind, description, mechanism, epsilon, delta, repetitions, "
            "run_epsilon, run_delta, composition, neighbours, partition_key, part, ran_on, seeded, status, "
            "created_at, details) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'charged', ?, ?)",
            (
                req.fingerprint, req.kind, req.description, req.mechanism, req.loss.epsilon, req.loss.delta,
                req.repetitions, req.run_loss.epsilon, req.run_loss.delta, req.composition, req.neighbours,
                req.partition[0] if req.partition else None, req.partition[1] if req.partition else None,
                req.ran_on, int(req.seeded), now(), json.dumps(req.details, default=str),
            ),
        )
        assert cursor.lastrowid is not None  # set by every INSERT
        entry_id = int(cursor.lastrowid)
        key, part = req.partition if req.partition else ("", "")
        conn.execute(
            "INSERT INTO totals VALUES (?, ?, ?, ?, ?, ?, 1) ON CONFLICT DO UPDATE SET "
            "epsilon = epsilon + excluded.epsilon, delta = delta + excluded.delta, entries = entries + 1",
            (req.fingerprint, key, req.neighbours if key else "", part, req.loss.epsilon, req.loss.delta),
        )
        conn.executemany(
            "INSERT OR IGNORE INTO samples VALUES (?, ?, ?)", [(s, entry_id, req.sample_rate) for s in req.sample_ids]
        )
        return entry_id

    def _finish(self, entry_id: int, status: str, outcome: dict[str, Any]) -> None:
        """Record the outcome of a committed charge. This commit skips the disk flush
        (``synchronous=NORMAL``; WAL keeps it atomic and safe from a killed process): if the
        machine itself loses power, at worst the entry stays ``charged``, which still counts."""
        self._conn.execute("PRAGMA synchronous = NORMAL")
        try:
            with self._write(after=f"its entry #{entry_id} stays 'charged' (its charge counts)") as conn:
                conn.execute(
                    "UPDATE entries SET status = ?, finished_at = ?, outcome = ? WHERE id = ?",
                    (status, now(), json.dumps(outcome, default=str), entry_id),
                )
        finally:
            self._conn.execute("PRAGMA synchronous = FULL")

    # -- reading ----------------------------------------------------------------------------

    @staticmethod
    def _entry_rows(conn: sqlite3.Connection, fingerprint: str) -> list[sqlite3.Row]:
        return conn.execute(
            "SELECT * FROM entries WHERE fingerprint = ? ORDER BY id", (fingerprint,)
        ).fetchall()

    def entries(self, dataset: str | None = None) -> list[Entry]:
        """Every entry (of one dataset, by fingerprint or name, when given), oldest first."""
        if dataset is None:
            rows = self._conn.execute("SELECT * FROM entries ORDER BY id").fetchall()
        else:
            budget = self.budget(dataset)
            rows = [] if budget is None else self._entry_rows(self._conn, budget.fingerprint)
        samples: dict[int, list[str]] = {}
        for row in self._conn.execute("SELECT sample_id, entry_id FROM samples ORDER BY rowid"):
            samples.setdefault(row["entry_id"], []).append(row["sample_id"])
        return [entry_from_row(row, tuple(samples.get(row["id"], ()))) for row in rows]

    def export(self) -> dict[str, object]:
        """Everything in the ledger as JSON-able data (``crowdsafe ledger show --json``)."""
        datasets = []
        for budget in self.budgets():
            item = budget.as_dict()
            item["entries"] = [e.as_dict() for e in self.entries(budget.fingerprint)]
            item["budget_changes"] = [c.as_dict() for c in self.budget_changes(budget.fingerprint)]
            datasets.append(item)
        return {"ledger": str(self.path), "schema_version": SCHEMA_VERSION, "datasets": datasets}

    def __repr__(self) -> str:
        return f"Ledger({str(self.path)!r}; custodian only)"

    def _repr_html_(self) -> str:
        """The notebook view of :meth:`export` (:mod:`crowdsafe.report.custodian_views`), custodian-only."""
        from crowdsafe.report.custodian_views import ledger_html

        return ledger_html(self.export())

    def integrity_check(self) -> str:
        """'ok' when SQLite's own check passes and every running total equals the sum of its
        entries; otherwise a description of the first problem."""
        result = str(self._conn.execute("PRAGMA integrity_check").fetchone()[0])
        if result != "ok":
            return result
        mismatch = self._conn.execute(
            "SELECT t.fingerprint, t.partition_key, t.part FROM totals t LEFT JOIN ("
            "  SELECT fingerprint, COALESCE(partition_key, '') AS k, "
            "         CASE WHEN partition_key IS NULL THEN '' ELSE neighbours END AS nb, "
            "         COALESCE(part, '') AS p, SUM(epsilon) AS e, SUM(delta) AS d, COUNT(*) AS n "
            "  FROM entries GROUP BY 1, 2, 3, 4) s "
            "ON s.fingerprint = t.fingerprint AND s.k = t.partition_key AND s.nb = t.neighbours AND s.p = t.part "
            "WHERE s.n IS NULL OR s.n != t.entries OR ABS(s.e - t.epsilon) > 1e-9 * (1 + s.e) "
            "   OR ABS(s.d - t.delta) > 1e-12 * (1 + s.d) LIMIT 1"
        ).fetchone()
        if mismatch is not None:
            return f"running totals disagree with the entries for dataset {mismatch[0][:12]}…"
        orphans = self._conn.execute(
            "SELECT COUNT(*) FROM samples LEFT JOIN entries ON entries.id = samples.entry_id WHERE entries.id IS NULL"
        ).fetchone()[0]
        return "ok" if orphans == 0 else f"{orphans} sample record(s) without their entry"


def _as_request(request: ChargeRequest | None, fields: dict[str, Any]) -> ChargeRequest:
    """The typed request: ``request`` with ``fields`` replacing its own, or built from ``fields``
    (an unknown or missing field raises TypeError, as a wrong keyword argument does)."""
    if request is None:
        return ChargeRequest(**fields)
    return dataclasses.replace(request, **fields) if fields else request


LedgerSpec = Union[Ledger, str, "os.PathLike[str]", None]
DEFAULT = DEFAULT_LEDGER  # crowdsafe.defaults: the signatures of crowdsafe.api name it without this module


@contextlib.contextmanager
def ledger_for(spec: LedgerSpec, *, read_only: bool = False) -> Iterator[Ledger | None]:
    """The ledger a caller asked for: ``"default"`` (the default location), a path, an open
    :class:`Ledger` (left open), or None (no ledger). Ledgers opened here are closed after;
    ``read_only``: one that cannot be written is opened to be read (``Ledger(read_only=True)``)."""
    if spec is None:
        yield None
    elif isinstance(spec, Ledger):
        yield spec
    else:
        ledger = Ledger(None if spec == DEFAULT else spec, read_only=read_only)
        try:
            yield ledger
        finally:
            ledger.close()


__all__ = [
    "LEDGER_ENV",
    "Budget",
    "BudgetChange",
    "Charge",
    "ChargeRequest",
    "Entry",
    "Ledger",
    "default_ledger_path",
    "ledger_for",
]

