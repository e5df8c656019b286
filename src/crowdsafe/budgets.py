"""A dataset's privacy budget in the ledger, as the public API sets, changes and shows it
(re-exported by :mod:`crowdsafe.api`: ``api.set_budget``, ``api.change_budget``,
``api.ledger_report``).

The ledger (:mod:`crowdsafe.privacy.ledger`) knows a dataset by a digest of its rows keyed with the
ledger's secret; these functions read the data only to compute that identity, and every change of
a budget is a line of its history (no charge is ever erased).
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, cast

from crowdsafe.arguments import flag, label, text
from crowdsafe.data import DEFAULT_MISSING, MissingPolicy, Schema, load
from crowdsafe.defaults import DEFAULT_LEDGER
from crowdsafe.errors import ParameterError

if TYPE_CHECKING:  # the ledger is imported by the functions that open it (crowdsafe.api imports this module)
    from crowdsafe.privacy.ledger import Budget, LedgerSpec

__all__ = ["LedgerReport", "change_budget", "ledger_report", "set_budget"]


class LedgerReport(dict[str, Any]):
    """What :func:`ledger_report` returns: the ledger's export (a plain JSON-able dict, as
    ``crowdsafe ledger show --json`` prints it), with a concise repr and a notebook view
    (:mod:`crowdsafe.report.custodian_views`), both marked custodian-only."""

    def __repr__(self) -> str:
        from crowdsafe.report.custodian_views import ledger_repr

        return ledger_repr(self)

    def _repr_html_(self) -> str:
        from crowdsafe.report.custodian_views import ledger_html

        return ledger_html(self)

    def as_dict(self) -> dict[str, Any]:
        """The export as a plain dict (the name every result's dict has, :mod:`crowdsafe.api`)."""
        return dict(self)


def set_budget(
    data: Any,
    *,
    epsilon: float,
    delta: float = 0.0,
    name: str | None = None,
    ledger: LedgerSpec = DEFAULT_LEDGER,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    decimal_comma: bool | None = None,
) -> Budget:
    """Register ``data`` in the ``ledger`` (``"default"``, a path or a Ledger) with its total
    privacy budget (``epsilon``, ``delta``; set once), under ``name`` (default: the data's name).
    ``schema``, ``missing`` and ``decimal_comma`` say how ``data`` is read (:mod:`crowdsafe.api`),
    which decides its keyed identity. A budget that cannot be one is refused before the data is
    read or the ledger opened (so a refused run makes no ledger)."""
    from crowdsafe.privacy.ledger import ledger_for
    from crowdsafe.privacy.ledger_budget import checked_budget

    epsilon, delta = checked_budget(epsilon, delta)
    name = label(name, "name", "the dataset's name in the ledger")
    schema = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    dataset = load(data, schema=schema, missing=missing)
    with ledger_for(ledger) as book:
        if book is None:
            raise ParameterError("setting a budget needs a ledger")
        return book.set_budget(book.identity_of(dataset), name or dataset.name or "data", epsilon, delta)


def change_budget(
    dataset: Any,
    *,
    epsilon: float,
    delta: float,
    allow_raise: bool = False,
    reason: str = "",
    ledger: LedgerSpec = DEFAULT_LEDGER,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    decimal_comma: bool | None = None,
) -> Budget:
    """Set a dataset's total budget to (``epsilon``, ``delta``) in the ``ledger``: lower it, or raise
    it with ``allow_raise=True``, on the record, with the ``reason`` given
    (:meth:`~crowdsafe.privacy.ledger.Ledger.change_budget`: the history keeps every change and
    no charge is erased). ``dataset``: its name or fingerprint in the ledger, or its data (a
    file, read and identified as :func:`set_budget` does, with the same ``schema``, ``missing``
    and ``decimal_comma``). A budget that cannot be one, or a
    ledger file that does not exist, is refused before any ledger is opened or made."""
    from crowdsafe.privacy.ledger import Ledger, ledger_for
    from crowdsafe.privacy.ledger_budget import checked_budget
    from crowdsafe.privacy.ledger_storage import ledger_path

    checked_budget(epsilon, delta)
    flag(allow_raise, "allow_raise")  # "no" is a true text: it raised the budget
    text(reason, "reason", "why the budget changes")
    reading = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    if ledger is not None and not isinstance(ledger, Ledger):  # changing a budget never makes a ledger
        path = ledger_path(ledger)
        if not path.exists() and not path.is_symlink():
            raise ParameterError(f"there is no ledger at {path} yet: register the dataset's budget first with "
                                 "`crowdsafe ledger init DATA --epsilon E --delta D`")
    with ledger_for(ledger) as book:
        if book is None:
            raise ParameterError("changing a budget needs a ledger")
        known = isinstance(dataset, str) and (book.budget(dataset) is not None or not os.path.exists(dataset))
        identity = dataset if known else book.identity_of(load(dataset, schema=reading, missing=missing))
        return book.change_budget(identity, epsilon, delta, allow_raise=allow_raise, reason=reason)


def ledger_report(ledger: LedgerSpec = DEFAULT_LEDGER, dataset: str | None = None) -> LedgerReport:
    """Everything in the ``ledger`` (or one ``dataset``'s budget and entries, by name or
    fingerprint), as a :class:`LedgerReport` (a dict; custodian-only)."""
    from crowdsafe.privacy.ledger import Ledger, ledger_for
    from crowdsafe.privacy.ledger_storage import SCHEMA_VERSION, ledger_path

    if ledger is not None and not isinstance(ledger, Ledger):  # showing one never makes one: an absent one is empty
        path = ledger_path(ledger)
        if not path.exists() and not path.is_symlink():
            if dataset is not None:
                raise ParameterError(f"dataset {dataset!r} is not in the ledger {path} (there is none yet)")
            return LedgerReport({"ledger": str(path), "schema_version": SCHEMA_VERSION, "datasets": []})
    with ledger_for(ledger, read_only=True) as book:  # an archived, read-only copy is shown too
        if book is None:
            raise ParameterError("there is no ledger to show")
        report = book.export()
        if dataset is not None:
            datasets = cast("list[dict[str, Any]]", report["datasets"])
            chosen = [d for d in datasets if dataset in (d["name"], d["fingerprint"])]
            if not chosen:
                raise ParameterError(f"dataset {dataset!r} is not in the ledger {book.path}")
            report["datasets"] = chosen
        return LedgerReport(report)
