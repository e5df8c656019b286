"""The perturbation driver: the α-β algorithm on any engine.

Order: the ``budget`` pair checked → what the engine cannot honour (a view path, a ledger) refused
before the data is read → the parameters checked (:func:`check_before_reading`) → the table read →
a run with a ledger and no formal guarantee (exploratory, n or a domain from the data) refused
(:func:`refuse_uncharged`; from the parameters and the schema) →
a missing budget refused → a view too large for memory refused (an engine in memory,
:func:`~crowdsafe.privacy.dgamma.check_view_size`) → the plan, the budget registered
with the ledger charge, and the draw
(:func:`crowdsafe.perturb.perturb`, whose plan is fixed from public domains before the data's
rows are used) → the view and its certificate written → its HTML report, built from those two
files only (:func:`write_view_report`). The engine supplies the reading, the
α-β stages and the writing. With a schema inferred from the data, a published attribute whose
name looks like a direct identifier is warned about (:class:`~crowdsafe.data.identifiers.IdentifierWarning`,
from the names alone, before anything is charged): the view publishes its values as they are.
"""

from __future__ import annotations

import contextlib
import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crowdsafe.data.identifiers import IdentifierWarning, name_warnings
from crowdsafe.drivers.query import budget_at_charge, refuse_a_new_ledger_without_budget
from crowdsafe.mechanisms.contribution import refuse_person_rows
from crowdsafe.privacy.dgamma import check_view_size
from crowdsafe.privacy.ledger import LedgerSpec, ledger_for
from crowdsafe.privacy.ledger_budget import budget_parameter
from crowdsafe.stopping import finishing

if TYPE_CHECKING:
    from crowdsafe.engines.protocol import Engine
    from crowdsafe.perturb.alpha_beta import Perturbation, PerturbRequest
    from crowdsafe.perturb.view import ViewOutput
    from crowdsafe.privacy.dgamma import AlphaBetaPlan
    from crowdsafe.randomness import Randomness


def plan_perturbation(engine: Engine, data: Any, request: PerturbRequest, *, schema: Any = None,
                      missing: Any = "keep") -> AlphaBetaPlan:
    """:func:`crowdsafe.api.plan_perturbation` on ``engine``: the plan for ``request`` (the
    (d, γ) target and the table's public description)."""
    check_before_reading(request)
    source = engine.read_source(data, schema=schema, missing=missing)
    refuse_person_rows(engine.source_dataset(source).schema.person_id, "perturb")
    warn_identifier_names(engine, source, request)
    return engine.plan_perturbation(source, request)



def check_before_reading(request: PerturbRequest) -> None:
    """The request's checks that need no row, made before the table is read, so a parameter
    mistake is refused alike on every table (never replaced by a refusal of the data, the
    ``max_rows`` bound exceeded or ``missing='error'``'s, on a neighbour): the ``domains``' shape
    (:func:`~crowdsafe.data.domain_lists.domain_lists`), the bound on the rows and every
    condition on d, c, γ, α and β that n and m do not decide
    (:func:`~crowdsafe.privacy.dgamma.check_plan_request`)."""
    from crowdsafe.data.domain_lists import domain_lists
    from crowdsafe.perturb.alpha_beta import check_max_rows
    from crowdsafe.privacy.dgamma import check_plan_request

    domain_lists(request.domains, "domains")
    check_max_rows(request.max_rows, request.exploratory)
    check_plan_request(request.target)


def refuse_uncharged(dataset: Any, request: PerturbRequest) -> None:
    """:func:`~crowdsafe.perturb.domain.uncharged_error` when ``request`` would take n or a domain
    from the data, decided from the request and the schema's declared domains alone (no value is
    read), so that a run with a ledger is refused before the ledger is opened, as it is later by
    :func:`crowdsafe.perturb.alpha_beta.charged_run`."""
    from crowdsafe.perturb.alpha_beta import check_attributes, resolve_domain, uncertified_reasons
    from crowdsafe.perturb.domain import uncharged_error

    if not request.exploratory:
        return
    names = check_attributes(dataset, request.attributes, request.duplicates)
    _, sources = resolve_domain(dataset, names, request.domains, exploratory=True)
    if uncertified_reasons(sources, request.max_rows):
        raise uncharged_error()


def warn_identifier_names(engine: Engine, source: Any, request: PerturbRequest) -> None:
    """An :class:`~crowdsafe.data.identifiers.IdentifierWarning` per published attribute (the
    request's, else every non-identifier column) whose name looks like a direct identifier, when
    the schema was inferred (:func:`~crowdsafe.data.identifiers.name_warnings`)."""
    from crowdsafe.perturb.alpha_beta import default_attributes

    dataset = engine.source_dataset(source)
    attributes = list(request.attributes) if request.attributes is not None else default_attributes(dataset)
    for message in name_warnings(dataset.schema, [a for a in attributes if a in dataset.columns]):
        warnings.warn(message, IdentifierWarning, stacklevel=4)


def perturb(engine: Engine, data: Any, request: PerturbRequest, output: ViewOutput, *, schema: Any = None,
            missing: Any = "keep", randomness: Randomness | int | None = None, ledger: LedgerSpec = None,
            name: str | None = None, budget: tuple[float, float] | None = None) -> Perturbation:
    """:func:`crowdsafe.api.perturb` on ``engine``: ``request`` as :func:`plan_perturbation`,
    ``output`` where the view and its certificate are written; ``name`` and ``budget`` register
    the table's budget in the ledger (:func:`~crowdsafe.drivers.query.with_budget`)."""
    from crowdsafe.perturb.domain import uncharged_error

    budget = budget_parameter(budget)  # a pair of numbers: before the table is read or a ledger made
    engine.check_perturbation(output.out, ledger)
    check_before_reading(request)
    if ledger is not None and request.exploratory and request.max_rows is None:  # n from the data: no guarantee
        raise uncharged_error()
    source = engine.read_source(data, schema=schema, missing=missing)
    refuse_person_rows(engine.source_dataset(source).schema.person_id, "perturb")
    warn_identifier_names(engine, source, request)
    if engine.in_memory and ledger is not None:  # an uncertified run has nothing to charge: before the budget
        refuse_uncharged(engine.source_dataset(source), request)
    refuse_a_new_ledger_without_budget(ledger, name or engine.source_dataset(source).name or "data", budget)
    if engine.in_memory and ledger is not None and not request.exploratory:  # before a ledger is made
        check_view_size(engine.plan_perturbation(source, request), request.target.max_view_rows)  # (and in the run)
    with ledger_for(ledger) as book, contextlib.ExitStack() as stack:
        charged: Any = book
        if book is not None:  # a new budget is registered with the charge: a refused plan leaves none
            dataset = engine.source_dataset(source)
            charged = HeldCharge(budget_at_charge(book, engine.source_identity(source, book),
                                                  name or dataset.name or "data", budget), stack)
        result = engine.perturb(source, request, randomness=randomness, ledger=charged, output=output)
        finishing()  # the view is drawn and charged: writing it finishes (crowdsafe.stopping)
        engine.write_view(result, output)
        if isinstance(charged, HeldCharge) and charged.held is not None:
            charged.held.record(**view_digests(output))
    write_view_report(output)
    return result


class HeldCharge:
    """The ledger ``book`` (or :class:`~crowdsafe.drivers.query.BudgetAtCharge`), its charge held
    open on ``stack`` until the view and its certificate are written, so that its entry records
    their SHA-256 (:func:`view_digests`) as a publication's does, and a write that fails marks
    the entry failed (it still counts). Everything else is the ledger's own."""

    def __init__(self, book: Any, stack: contextlib.ExitStack) -> None:
        self._book, self._stack = book, stack
        self.held: Any = None

    def __getattr__(self, name: str) -> Any:
        return getattr(self._book, name)

    def charge(self, *args: Any, **kwargs: Any) -> contextlib.AbstractContextManager[Any]:
        self.held = self._stack.enter_context(self._book.charge(*args, **kwargs))
        return contextlib.nullcontext(self.held)


def view_digests(output: ViewOutput) -> dict[str, Any]:
    """What a view's ledger entry records of the files written (``crowdsafe ledger verify``
    checks them): the view and its certificate with their SHA-256
    (:func:`~crowdsafe.drivers.verify.written_digests`; a view has no release id)."""
    from crowdsafe.drivers.publish import ledger_paths
    from crowdsafe.drivers.verify import written_digests
    from crowdsafe.perturb.view import certificate_path

    if output.out is None:
        return {}
    table = str(output.out)
    certificate = str(output.certificate if output.certificate is not None else certificate_path(table))
    return {"written": ledger_paths([table]),
            "files": written_digests({"tables": [table], "certificates": [certificate]}, [None])}


def write_view_report(output: ViewOutput) -> Path | None:
    """The view's HTML report, when ``output`` asks for it and the view is a local path: built
    from the view file and its certificate just written (:func:`crowdsafe.report.write_report`),
    written atomically as ``<stem>.report.html`` beside the view. Returns where it went.

    A report that cannot be built leaves the view and its certificate standing (they are whole,
    and the run may be charged): it warns (:class:`~crowdsafe.report.build.ReportWarning`) with
    the command that rebuilds it, removes any report of an earlier view at that path, and
    returns None."""
    if not output.report or output.out is None or "://" in str(output.out):
        return None
    from crowdsafe.report.build import ReportWarning, report_path, write_report

    try:
        return write_report(output.out, certificate=output.certificate)
    except Exception as exc:  # any failure: the view stands; say how to rebuild its report
        report_path(output.out).unlink(missing_ok=True)  # a report of an earlier view must not stand beside it
        rebuild = f"crowdsafe report {output.out}" + (f" --certificate {output.certificate}"
                                                       if output.certificate is not None else "")
        warnings.warn(f"the view {output.out} and its certificate are written, but its report could not be "
                      f"({exc}); rebuild it with `{rebuild}`", ReportWarning, stacklevel=3)
        return None
