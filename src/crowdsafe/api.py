"""The public functions of crowdsafe. Each is a thin layer over the library's layers; the
command line calls exactly these.

Every function that reads a table takes ``decimal_comma`` (the command line's
``--decimal-comma/--no-decimal-comma``): True, the CSV file writes its numbers ``1.234,5``;
False, with a decimal point only; None (default), as the schema's ``[csv]`` table says, else
found in a ``;``-separated file with a note (:mod:`crowdsafe.data.decimal_comma`).

A list of column names (``qi``, ``sensitive``, ``columns``, ``attributes``) may be one name given
as a string; an unknown keyword is refused naming it (:mod:`crowdsafe.arguments`).

Pandas in gives pandas out, Polars in gives Polars out: the table a run returns
(``publication.release.table``, ``anonymize(...).table``, ``perturb(...).view.table``) is a pandas
DataFrame when the data was given as one, else a Polars DataFrame (``.frame`` is always the
engine's own: Polars; on the Spark engine both are the release's Spark DataFrame, whatever the
input, as a release may not fit in memory). An integer or Boolean column holding missing values comes
back as pandas' nullable ``Int64`` / ``boolean``. A query's answer (a histogram's ``value``) is a
Polars frame whatever the input. Every result has ``.as_dict()``, its public dict (a Publication's
and a Release's is their ``summary()``, a Certificate's its ``to_dict()``; the reports of check and
compare also keep ``.to_dict()``). A pandas DataFrame's index is not read, as Polars' ``from_pandas``
does not read it: an index that holds a column of the table (``df.set_index("zip")``) is left out of
every run; ``df.reset_index()`` makes it a column again."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import fields, replace
from typing import TYPE_CHECKING, Any, cast

from crowdsafe import arguments
from crowdsafe.arguments import keywords, names
from crowdsafe.budgets import change_budget, ledger_report, set_budget  # noqa: F401  (public: api.set_budget, ...)
from crowdsafe.data import DEFAULT_MISSING, MissingPolicy, Schema, load
from crowdsafe.defaults import DEFAULT_DELTA, DEFAULT_LEDGER, DEFAULT_THRESHOLD  # noqa: F401  (check's default, public)
from crowdsafe.errors import ParameterError
from crowdsafe.measures import attack, check, check_dataset, compare  # noqa: F401  (public: api.check, ...)

if TYPE_CHECKING:
    from crowdsafe.anonymize import Release
    from crowdsafe.anonymize.publish import Publication, PublishPlan
    from crowdsafe.mechanisms.queries import QueryAnswer
    from crowdsafe.perturb import AlphaBetaPlan, Estimate, Perturbation
    from crowdsafe.perturb.alpha_beta import Duplicates, PerturbRequest
    from crowdsafe.privacy.ledger import LedgerSpec
    from crowdsafe.randomness import Randomness


def _as_given(data: Any, result: Any) -> Any:
    """``result`` (a Publication, a Release or a Perturbation) whose tables (``release.table``,
    ``view.table``) come back as the kind of frame ``data`` was given as: pandas in gives pandas
    out, Polars in gives Polars out (:func:`crowdsafe.data.io.frame_kind`). ``.frame`` stays the
    engine's own frame."""
    from crowdsafe.data.io import POLARS, frame_kind

    kind = frame_kind(data)
    if kind == POLARS:
        return result
    if hasattr(result, "releases"):
        return replace(result, releases=tuple(replace(r, frame_kind=kind) for r in result.releases))
    view = getattr(result, "view", None)
    if view is not None:
        return replace(result, view=replace(view, frame_kind=kind)) if hasattr(view, "frame_kind") else result
    return replace(result, frame_kind=kind)


def anonymize(
    data: Any,
    *,
    algorithm: str = "mondrian",
    k: int = 10,
    qi: Sequence[str] | str | None = None,
    sensitive: Sequence[str] | str | None = None,
    l: float | None = None,
    t: float | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    decimal_comma: bool | None = None,
    out: str | os.PathLike[str] | None = None,
    escape_formulas: bool = True,
    report: bool = True,
    force: bool = False,
    **options: Any,
) -> Release:
    """k-anonymize ``data`` with a classic ``algorithm``: ``"mondrian"``, ``"mdav"`` or
    ``"lattice"``, every published group of at least ``k`` rows, over the quasi-identifiers ``qi``
    (one name or a list; None: the schema's). ``schema`` (a :class:`~crowdsafe.data.Schema`, a
    schema file, or None: inferred), ``missing`` (the missing-value policy: ``"keep"``,
    ``"drop"`` or ``"error"``) and ``decimal_comma`` (module docstring) say how ``data`` is read.

    The recoding is fitted to the data, so the release's certificate says "no formal guarantee"
    (use :func:`publish` for a release with one). ``l`` / ``t``: entropy ℓ-diversity and
    t-closeness on ``sensitive`` (Mondrian and lattice). ``options`` are the other fields of
    :class:`crowdsafe.classic.AnonymizeRequest` (mode, categorical, aggregate, loss,
    suppression_limit, search, time_budget, distance), run by
    :func:`crowdsafe.classic.run_anonymization` (``ground``, as :func:`check` names the distance, is
    taken as ``distance``); one the algorithm does not read (``aggregate``
    without ``algorithm="mdav"``, ``loss`` without ``"lattice"``, ``distance`` without ``t``) is
    refused in one line before the data is read (:mod:`crowdsafe.classic.applicable`). With ``out``, the table and its
    certificate (``<name>.certificate.json``) are written atomically, with the HTML report
    (``<name>.report.html``, saying: no formal guarantee) unless ``report`` is False. The certificate and
    ``release.summary()`` hold the parameters and what the release itself shows; exact facts
    about the input (rows read and suppressed, the search's diagnostics) are in
    ``release.custodian_report()``, for the custodian only. A CSV ``out`` is formula-safe unless
    ``escape_formulas`` is False (:mod:`crowdsafe.csv_safety`); an ``out`` that cannot be written
    (a folder, an unwritable folder), that is an input of the run or a special file, or an
    existing file crowdsafe did not write without ``force=True`` (:mod:`crowdsafe.output_guard`)
    is refused before the data is read. An unknown keyword in ``options`` is refused naming it.
    Every column but the
    identifiers is published; with an inferred schema, ``release.notes`` warns about each whose
    name looks like a direct identifier (:func:`crowdsafe.data.identifiers.name_warnings`).
    """
    from crowdsafe.anonymize.release import TABLE_SUFFIXES
    from crowdsafe.classic import AnonymizeRequest, run_anonymization
    from crowdsafe.classic.applicable import refuse_unused
    from crowdsafe.data.identifiers import name_warnings
    from crowdsafe.drivers.run_files import guard, publish_outputs
    from crowdsafe.files import check_output_path

    qi, protected = names(qi, "qi"), names(sensitive, "sensitive")
    arguments.flags(escape_formulas=escape_formulas, report=report, force=force)
    arguments.path(out, "out")
    named = ("algorithm", "k", "sensitive", "l", "t")  # anonymize's own parameters
    if "ground" in options:  # check's name of the distance (crowdsafe anonymize --ground takes it too)
        options["distance"] = arguments.alias(options.pop("distance", None), options.pop("ground"), "distance",
                                              "ground")
    settings = keywords("anonymize", options, [f.name for f in fields(AnonymizeRequest) if f.name not in named])
    one = protected[0] if protected is not None and len(protected) == 1 else None  # what l and t protect
    request = AnonymizeRequest(algorithm, k, sensitive=one, l=l, t=t, **settings)
    refuse_unused(request)  # an option the algorithm does not read, refused before anything is read
    schema = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    if out is not None:
        check_output_path(out, TABLE_SUFFIXES)
    guard(publish_outputs([out] if out is not None else [], report=report), data=data, schema=schema, force=force)
    dataset = load(data, schema=schema, qi=qi, sensitive=protected, missing=missing)
    dataset.validate_domains()  # no guarantee, the custodian's own run: a value outside its hierarchy is named
    release = run_anonymization(dataset, request)  # every non-identifier column is published (QIs recoded)
    release = replace(release, notes=(*name_warnings(dataset.schema, dataset.columns), *release.notes))
    if out is not None:
        release.write(out, escape_formulas=escape_formulas, report=report, force=force)  # as checked above
    return cast("Release", _as_given(data, release))


# -- DP queries and the budget ledger ------------------------------------------------------------


def query(
    data: Any,
    text: str,
    *,
    epsilon: float,
    delta: float = 0.0,
    mechanism: str | None = None,
    calibration: str | None = None,
    neighbours: str = "add-remove",
    max_rows_per_person: int | None = None,
    domain: Mapping[str, Sequence[Any]] | None = None,
    domains: Mapping[str, Sequence[Any]] | None = None,
    partition: str | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    decimal_comma: bool | None = None,
    seed: Randomness | int | None = None,
    ledger: LedgerSpec = DEFAULT_LEDGER,
    name: str | None = None,
    budget: tuple[float, float] | None = None,
    engine: str = "polars",
    spark_master: str | None = None,
    randomness: Randomness | int | None = None,
) -> QueryAnswer:
    """Answer a query ``text`` (one string, see :mod:`crowdsafe.mechanisms.query_language`) on
    ``data`` with differential privacy, charged to the dataset's budget in the ledger.

    - ``epsilon``, ``delta``: the query's privacy loss (δ > 0 only for the Gaussian mechanism or a
      histogram over values taken from the data);
    - ``mechanism``: ``"laplace"`` (ε-DP; None: the default) or ``"gaussian"`` ((ε, δ)-DP);
      quantiles always use the exponential mechanism (leave it None);
    - ``calibration``: the Gaussian's calibration, ``"analytic"`` (None: the default) or ``"classic"``;
      refused with another mechanism (it would not be read);
    - ``neighbours``: the neighbour notion, ``"add-remove"`` (default; "unbounded" DP) or
      ``"change"`` ("bounded" DP); those two names are taken too;
    - ``max_rows_per_person``: the contribution bound, required when the schema names a person
      identifier (a person's rows beyond it are dropped);
    - ``domain``: the public values of a histogram's columns, a mapping from column name to the
      list of its values (``{"sex": ["Female", "Male"]}``); without it, the bins or values written
      in the query, else the schema's order or declared hierarchy (docs/mechanisms.md); ``domains``
      (as :func:`perturb` spells it) is taken with the same meaning, but not both at once;
    - ``partition``: a column the query's filter fixes with ``column = value``; the ledger then
      composes such queries in parallel;
    - ``seed``: the noise's source: None (default) the secure generator; a
      :class:`~crowdsafe.Randomness` or an int seed makes the answer reproducible and NOT fit for
      release (the name :func:`publish`, :func:`perturb` and ``crowdsafe query --seed`` use; its
      older name ``randomness`` is still taken);
    - ``schema`` (a :class:`~crowdsafe.data.Schema`, a schema file, or None: inferred),
      ``missing`` (the missing-value policy: ``"keep"``, ``"drop"`` or ``"error"``) and
      ``decimal_comma`` (module docstring) say how ``data`` is read.

    ``ledger``: ``"default"`` (``$CROWDSAFE_LEDGER`` or the per-user file), a path, a
    :class:`~crowdsafe.privacy.ledger.Ledger`, or None to run without one. ``budget=(ε, δ)``
    registers the dataset's total budget (under ``name``) if it has none yet (refused with
    ``ledger=None``, which has no ledger to register it in, as ``--no-ledger --budget``). Bad input raises
    before the ledger is touched; an over-budget query raises BudgetExceeded before any noise.
    ``engine``: ``"polars"`` (default, in this process) or ``"spark"``: ``data`` is a Parquet/CSV
    path read on Spark (session from the environment or ``spark_master``); the aggregation runs there, the noise here
    (:mod:`crowdsafe.engines.spark.queries`).
    """
    from crowdsafe.drivers.query import query as run_query
    from crowdsafe.engines import get_engine
    from crowdsafe.mechanisms.query_plan import QueryRequest

    schema = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    name = arguments.label(name, "name", "the dataset's name in the ledger")
    arguments.budget_with_ledger(budget, ledger)
    request = QueryRequest(arguments.text(text, "text", "one query"), epsilon=epsilon, delta=delta,
                           mechanism=mechanism, calibration_name=calibration, neighbours=neighbours,
                           max_rows_per_person=max_rows_per_person,
                           domain=arguments.alias(domain, domains, "domain", "domains"), partition=partition)
    return run_query(get_engine(engine, master=spark_master), data, request, schema=schema, missing=missing,
                     randomness=arguments.either(seed, randomness, "seed", "randomness"), ledger=ledger,
                     name=name, budget=budget)


# -- alpha-beta perturbation -------------------------------------------------------------------


def plan_perturbation(
    data: Any,
    *,
    attributes: Sequence[str] | str | None = None,
    domains: Mapping[str, Sequence[Any]] | None = None,
    max_rows: int | None = None,
    exploratory: bool = False,
    duplicates: str = "collapse",
    confidence: float = 0.95,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    decimal_comma: bool | None = None,
    engine: str = "polars",
    spark_master: str | None = None,
    domain: Mapping[str, Sequence[Any]] | None = None,
    columns: Sequence[str] | str | None = None,
    **target: Any,
) -> AlphaBetaPlan:
    """The α-β plan for ``data`` without perturbing: α, the smallest admissible β, the expected
    view size and ratio |V|/N, the equivalent ε, the utility bound and warnings. ``target``
    is what :func:`perturb` takes: ``gamma`` and ``d`` or ``c``, optionally ``alpha``, ``beta``,
    ``exclusive_correlations``, ``max_view_rows``. ``attributes`` (or ``columns``), ``domains`` (or
    ``domain``), ``max_rows``,
    ``exploratory``, ``duplicates``, ``confidence``, ``schema``, ``missing``, ``decimal_comma``,
    ``engine`` and ``spark_master`` mean what they mean for :func:`perturb`. With public domains
    and ``max_rows`` the plan is made from public things only (see :func:`perturb`)."""
    from crowdsafe.drivers.perturb import plan_perturbation as plan_run
    from crowdsafe.engines import get_engine

    schema = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    runner = get_engine(engine, master=spark_master)
    request = _perturb_request(arguments.alias(attributes, columns, "attributes", "columns"),
                               arguments.alias(domains, domain, "domains", "domain"), max_rows,
                               exploratory, duplicates, confidence, target, "plan_perturbation")
    return plan_run(runner, data, request, schema=schema, missing=missing)


def perturb(
    data: Any,
    *,
    attributes: Sequence[str] | str | None = None,
    domains: Mapping[str, Sequence[Any]] | None = None,
    max_rows: int | None = None,
    exploratory: bool = False,
    duplicates: str = "collapse",
    confidence: float = 0.95,
    seed: Randomness | int | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    decimal_comma: bool | None = None,
    out: str | os.PathLike[str] | None = None,
    certificate: str | os.PathLike[str] | None = None,
    engine: str = "polars",
    spark_master: str | None = None,
    ledger: LedgerSpec = DEFAULT_LEDGER,
    name: str | None = None,
    budget: tuple[float, float] | None = None,
    escape_formulas: bool = True,
    report: bool = True,
    force: bool = False,
    domain: Mapping[str, Sequence[Any]] | None = None,
    columns: Sequence[str] | str | None = None,
    **target: Any,
) -> Perturbation:
    """Publish a (d, γ)-private view of ``data`` by random deletion and insertion (α-β algorithm,
    Rastogi, Suciu, Hong 2007).

    ``target``: ``gamma`` and either ``d`` or ``c`` (d = c·N/m), optionally ``alpha`` (default 1/2),
    ``beta`` (default: the smallest admissible), ``exclusive_correlations`` and ``max_view_rows``
    (the largest expected view: a plan expecting more is refused before any charge or draw; None:
    no limit; default :data:`~crowdsafe.defaults.LARGE_VIEW_ROWS` for the in-memory Polars engine,
    none for ``engine="spark"``, which writes its view in parts); an unknown or
    missing keyword is refused naming it. The failure probability of the utility bound is 1 −
    ``confidence`` (there is no ``failure`` keyword). ``schema``, ``missing`` and ``decimal_comma``
    say how ``data`` is read (module docstring). ``attributes`` (one name or a list; ``columns``, as
    :func:`publish` spells it, is taken with the same meaning, not both at once) default to every
    non-identifier column. The guarantee holds for a domain and parameters fixed before the
    data is read, so each attribute needs a public domain (``domains`` declares value lists, and
    ``domain``, as :func:`query` spells it, is taken with the same meaning, not both at once; else
    the schema's ``order`` or a declared hierarchy's leaves; null in each exactly when ``missing``
    keeps missing values; a row outside them is left out, counted custodian-only) and ``max_rows``
    is a public bound N on the rows, used in place of n; a run without them is refused, unless
    ``exploratory=True``, which takes them from the data and certifies "no formal guarantee".
    Duplicate rows are collapsed (the view is a set) or, with ``duplicates="error"``, refused.
    Returns a :class:`~crowdsafe.perturb.Perturbation` (``.view`` with ``.certificate``, ``.plan``,
    the public ``.as_dict()`` and the custodian-only ``.custodian_report()``); with ``out`` the view
    and its certificate JSON (at ``certificate``, default beside the view) are written, each
    atomically (the custodian report is not written). ``seed`` makes the run reproducible and NOT
    fit for release. ``engine="spark"`` (a session from the environment or ``spark_master``):
    ``data`` is a path read on Spark, the view is written by Spark as a Parquet directory ``out``
    (required) and ``.view`` is a :class:`~crowdsafe.engines.spark.alpha_beta.SparkView`
    (:mod:`crowdsafe.engines.spark.alpha_beta`). ``ledger`` (``"default"``: ``$CROWDSAFE_LEDGER``,
    else the per-user file, as :func:`publish` and :func:`query`; a path or a Ledger; None: no
    charge, which an ``exploratory`` run and the Spark engine need): the view's equivalent ε is
    charged to the dataset's budget, the dataset identified by its keyed fingerprint, and a dataset
    with no budget is refused before anything is drawn; ``budget=(ε, δ)`` registers that budget
    under ``name`` if it has none (refused without a ledger; so is ``certificate`` without ``out``). A
    CSV view is formula-safe unless ``escape_formulas`` is False (its
    certificate says which; Parquet keeps raw values); an ``out`` that cannot be written, that is an
    input of the run (the data, the schema and its hierarchy files, the ledger and its companions)
    or a special file, or an existing file crowdsafe did not write without ``force=True``, is
    refused before anything is read or charged (:mod:`crowdsafe.output_guard`).
    With ``out``, the view's HTML report (``<stem>.report.html``, :mod:`crowdsafe.report`) is
    written beside it, from the view and its certificate only, unless ``report`` is False.
    """
    from crowdsafe.drivers.perturb import perturb as perturb_run
    from crowdsafe.drivers.run_files import guard, view_outputs
    from crowdsafe.engines import get_engine
    from crowdsafe.perturb.view import ViewOutput

    arguments.flags(escape_formulas=escape_formulas, report=report, force=force)
    out, certificate = arguments.path(out, "out"), arguments.path(certificate, "certificate")
    name = arguments.label(name, "name", "the dataset's name in the ledger")
    arguments.budget_with_ledger(budget, ledger)
    if certificate is not None and out is None:
        raise ParameterError("the certificate parameter names where the view's certificate is written beside out=, "
                             "and no view is written: give out=VIEW too, or leave certificate out",
                             parameter="certificate")
    schema = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    runner = get_engine(engine, master=spark_master)
    if not runner.in_memory and "max_view_rows" not in target:  # written in parts: no limit unless given
        target = {**target, "max_view_rows": None}
    request = _perturb_request(arguments.alias(attributes, columns, "attributes", "columns"),
                               arguments.alias(domains, domain, "domains", "domain"), max_rows,
                               exploratory, duplicates, confidence, target, "perturb")
    output = ViewOutput(out=out, certificate=certificate, escape_formulas=escape_formulas, report=report)
    runner.check_perturbation(out, ledger)  # a path the engine cannot write, first
    guard(view_outputs(output), data=data, schema=schema, ledger=ledger, force=force)
    return cast("Perturbation", _as_given(data, perturb_run(runner, data, request, output, schema=schema,
                                                            missing=missing, randomness=seed, ledger=ledger,
                                                            name=name, budget=budget)))


def _perturb_request(attributes: Sequence[str] | str | None, domains: Mapping[str, Sequence[Any]] | None,
                     max_rows: int | None, exploratory: bool, duplicates: str, confidence: float,
                     target: dict[str, Any], function: str) -> PerturbRequest:
    """The request :func:`plan_perturbation` and :func:`perturb` (``function``) build from their
    keywords (``target``: gamma and d or c, optionally alpha, beta, exclusive_correlations,
    max_view_rows; an unknown or missing keyword named, :func:`crowdsafe.arguments.keywords`);
    nothing else in it is checked yet but the confidence, as before."""
    from crowdsafe.perturb.alpha_beta import PerturbRequest
    from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest, failure_of

    taken = [f.name for f in fields(AlphaBetaPlanRequest) if f.name != "failure"]
    given = keywords(function, target, taken, required=("gamma",),
                     instead={"failure": "confidence (1 - the failure probability)",
                              "random_state": "seed (an int makes the run reproducible and NOT fit for release)"})
    return PerturbRequest(AlphaBetaPlanRequest(failure=failure_of(confidence), **given),
                          attributes=names(attributes, "attributes"), domains=domains, max_rows=max_rows,
                          exploratory=bool(arguments.flag(exploratory, "exploratory")),
                          duplicates=cast("Duplicates", duplicates))


def estimate(
    view: Any,
    queries: str | Sequence[str],
    *,
    confidence: float = 0.95,
    certificate: str | os.PathLike[str] | None = None,
) -> Estimate | list[Estimate]:
    """Estimate counting ``queries`` ("count where age between 26 and 32 and sex = 'Female'") from
    an α-β ``view`` (a :class:`~crowdsafe.perturb.View`, the :class:`~crowdsafe.perturb.Perturbation`
    :func:`perturb` returned, or the path of a view file, whose certificate, beside it or at
    ``certificate``, gives α, β and the domain; anything else is refused in one line). One query (a
    string) gives an :class:`~crowdsafe.perturb.Estimate`, a list gives a list; anything else is
    refused in one line. Each carries its error bar at ``confidence``, and whether the view is fit
    for release as its certificate says (a seeded view's estimates are not: ``unfit_reasons``)."""
    from crowdsafe.perturb import Perturbation, View, read_view
    from crowdsafe.perturb import estimate as estimate_one

    queries = arguments.texts(queries, "queries", "a counting query")
    certificate = arguments.path(certificate, "certificate")
    if isinstance(view, Perturbation) and isinstance(view.view, View):  # what perturb returned
        view = view.view
    if not isinstance(view, (View, str, os.PathLike)):
        raise ParameterError(f"view must be a View, the Perturbation perturb returned, or the path of a view "
                             f"file; got {arguments.kind(view)}", parameter="view")
    if not isinstance(view, View):
        view = read_view(view, certificate)
    if isinstance(queries, str):
        return estimate_one(view, queries, confidence=confidence)
    return [estimate_one(view, q, confidence=confidence) for q in queries]


# -- the safe pipeline: sampling + safe k-anonymization ----------------------------------------


def plan_publish(
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    *,
    k: int | None = None,
    beta: float | None = None,
    epsilon1: float | None = None,
    scheme: str | Mapping[str, int] | None = None,
    releases: int = 1,
    objective: str | None = None,
    target: str | None = None,
    columns: Sequence[str] | str | None = None,
    candidates: int | None = None,
    declared_domains: bool | None = None,
    table_counts: bool = False,
    attributes: Sequence[str] | str | None = None,
) -> PublishPlan:
    """The plan :func:`publish` would run (k, β, ε1, cost of all releases), without reading data.
    ``delta`` defaults to :data:`crowdsafe.defaults.DEFAULT_DELTA` (10⁻⁶), as in :func:`publish`.
    ``epsilon``: the target ε of one release (ε1 included); ``k``: the least class size (None: the
    smallest that reaches δ); ``beta``: the sampling rate (None: the planner's); ``epsilon1``: the
    selection's share of ε (None: the planner's); ``scheme``: a fixed scheme (strongly safe; its
    levels whole numbers >= 0); ``releases``: how many; ``objective`` / ``target``: what the
    selection optimises; ``columns``: the published columns (one name or a list; ``attributes``, as
    :func:`perturb` spells it, is taken with the same meaning, not both at once); ``candidates``:
    the lattice's size (a whole number >= 1); ``declared_domains``: whether every published column
    has a declared hierarchy; ``table_counts``: whether the selection reads the
    whole table's counts.
    The keywords are one :class:`~crowdsafe.anonymize.plan.PlanRequest` (its fields' meanings there),
    checked by :func:`~crowdsafe.anonymize.plan.plan_publication`; without ``candidates`` (the
    lattice's size) ε1 is 10% of ε. (``plan.expected_sample_rows(n)`` is custodian-only.)"""
    from crowdsafe.anonymize.plan import PlanRequest, plan_publication

    arguments.flag(table_counts, "table_counts")
    arguments.flag(declared_domains, "declared_domains", none=True)
    return plan_publication(PlanRequest(epsilon, delta, k=k, beta=beta, epsilon1=epsilon1, scheme=scheme,
                                        releases=releases, objective=objective, target=target,
                                        columns=_published(columns, attributes), candidates=candidates,
                                        declared_domains=declared_domains, table_counts=table_counts))


def _published(columns: Any, attributes: Any) -> tuple[str, ...] | None:
    """The ``columns`` (or ``attributes``) :func:`plan_publish` and :func:`publish` take: None, or
    one name or more; none at all (``[]``, ``[""]``) is refused here, before anything is read
    (``plan_publish(columns=[])`` planned, and ``publish`` refused it once the table was read)."""
    chosen = names(arguments.alias(columns, attributes, "columns", "attributes"), "columns")
    if chosen is not None and not any(c.strip() for c in chosen):
        raise ParameterError("the columns parameter names no column", parameter="columns")
    return chosen


def publish(
    data: Any,
    *,
    epsilon: float,
    delta: float = DEFAULT_DELTA,
    k: int | None = None,
    beta: float | None = None,
    epsilon1: float | None = None,
    scheme: str | Mapping[str, int] | None = None,
    releases: int = 1,
    qi: Sequence[str] | str | None = None,
    sensitive: Sequence[str] | str | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    decimal_comma: bool | None = None,
    out: str | os.PathLike[str] | None = None,
    force: bool = False,
    seed: Randomness | int | None = None,
    ledger: LedgerSpec = DEFAULT_LEDGER,
    name: str | None = None,
    budget: tuple[float, float] | None = None,
    engine: str | None = None,
    spark_master: str | None = None,
    custodian_report: str | os.PathLike[str] | None = None,
    escape_formulas: bool = True,
    objective: str | None = None,
    target: str | None = None,
    columns: Sequence[str] | str | None = None,
    report: bool = True,
    attributes: Sequence[str] | str | None = None,
) -> Publication:
    """Publish ``data`` k-anonymized with a proven (ε, δ)-DP guarantee per release: Bernoulli(β)
    sampling, then a safe recoding (a fixed ``scheme``: strongly safe; else an ε1-DP choice over
    the generalization lattice), then suppression of tuples held by fewer than k rows (Li,
    Qardaji, Su 2012, Theorems 5 and 6). See :mod:`crowdsafe.anonymize.publish`.

    ``delta`` defaults to :data:`crowdsafe.defaults.DEFAULT_DELTA` (10⁻⁶), the default of
    ``crowdsafe publish --delta``: one constant for both. ``epsilon`` has no default: choose it.

    ``releases=N`` draws N fresh independent samples; their certificates compose into one.
    With ``out``, each table and its certificate are written atomically, and its HTML report beside
    it unless ``report`` is False (:mod:`crowdsafe.report`). The ledger
    (``"default"``, a path, a Ledger, or None) is charged before anything is computed from the
    data; a dataset with no budget gets ``budget`` or, without it, exactly this publication's
    cost (``budget`` with ``ledger=None`` is refused: no ledger would register it; a ``budget``
    other than the one a dataset has is refused, as :func:`query` refuses it: change a budget
    with :func:`change_budget`). ``seed`` makes the run reproducible and NOT fit for release; so
    does ``ledger=None`` (nothing then records the sample's use or limits further releases).
    ``name``: the dataset's name in the ledger. ``k``, ``beta``, ``epsilon1``, ``scheme`` are
    :func:`plan_publish`'s. ``qi`` and ``sensitive`` (one name or a list) set the roles;
    ``schema``, ``missing`` and ``decimal_comma`` say how ``data`` is read (module docstring).

    Every release is written and returned whatever it suppresses; one that suppresses more than
    90% of its sample gets a warning in ``custodian_report()["warnings"]`` only (docs/publish.md,
    "Heavy suppression").

    Before anything is read, every file it would write is checked against the files the run
    reads (the data, the schema and its hierarchy files, the ledger and its -wal/-shm/-journal
    files) and for special files; an existing file crowdsafe did not write is replaced only with
    ``force=True`` (:mod:`crowdsafe.output_guard`, docs/hostile-input.md).

    The returned :class:`~crowdsafe.anonymize.publish.Publication` holds no sample: its
    ``summary()`` is public (the plan and DP outputs); the exact facts (sample sizes,
    suppression, utility, input rows, ledger identities) are in ``custodian_report()``, in the
    ledger entry, and in the JSON file ``custodian_report`` names (refused in the release's
    folder).

    ``engine="spark"`` runs the per-row stages on Apache Spark (``pip install 'crowdsafe[spark]'``;
    the active session, else one on ``spark_master`` / ``$CROWDSAFE_SPARK_MASTER``): ``data`` may
    then also be any Parquet/CSV path Spark reads, or a Spark DataFrame; ``out`` is written as a
    directory of part files. See docs/spark.md.

    A CSV ``out`` is formula-safe (a text cell a spreadsheet would run as a formula gets a
    leading apostrophe, :mod:`crowdsafe.csv_safety`) unless ``escape_formulas`` is False;
    Parquet keeps raw values. The certificate written says which in its ``format_notes``.

    ``objective`` (:data:`crowdsafe.selection.score.OBJECTIVES`; ``classification`` keeps ``target``
    as it is; None: the plan's :func:`~crowdsafe.anonymize.plan.default_objective`) is what the
    selection optimises. ``columns`` publishes exactly these columns (``attributes``, as :func:`perturb`
    spells it, is taken with the same meaning, not both at once). Unless ``epsilon1`` is given,
    the planner splits ε from the lattice's size (:func:`crowdsafe.anonymize.plan.planned_epsilon1`).

    The keywords are gathered once into a :class:`~crowdsafe.anonymize.plan.PlanRequest` (what the
    plan depends on, checked before anything is read) and a
    :class:`~crowdsafe.anonymize.publish.RunOptions` (how the run is carried out and written),
    passed down unchanged to :func:`crowdsafe.drivers.publish.publish`.
    """
    from crowdsafe.anonymize.plan import PlanRequest, check_publication
    from crowdsafe.anonymize.publish import RunOptions
    from crowdsafe.drivers.publish import publish as publish_run
    from crowdsafe.drivers.run_files import guard, publish_outputs, refuse_stale_releases
    from crowdsafe.engines import get_engine

    qi, sensitive = names(qi, "qi"), names(sensitive, "sensitive")
    arguments.flags(force=force, escape_formulas=escape_formulas, report=report)
    out, custodian_report = arguments.path(out, "out"), arguments.path(custodian_report, "custodian_report")
    name = arguments.label(name, "name", "the dataset's name in the ledger")
    arguments.budget_with_ledger(budget, ledger)
    request = PlanRequest(epsilon, delta, k=k, beta=beta, epsilon1=epsilon1, scheme=scheme, releases=releases,
                          objective=objective, target=target,
                          columns=_published(columns, attributes))
    run = RunOptions(name=name, budget=budget, out=out, custodian_report=custodian_report,
                     escape_formulas=escape_formulas, report=report)
    check_publication(request, lattice_later=True)  # bad parameters refused before the read (the plan: after it)
    schema = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    chosen = get_engine(engine, master=spark_master)
    tables = chosen.release_paths(out, releases) if out is not None else []
    guard(publish_outputs(tables, report=report, custodian_report=custodian_report), data=data, schema=schema,
          ledger=ledger, force=force)
    refuse_stale_releases(out, tables, force)
    return cast("Publication", _as_given(data, publish_run(chosen, data, request, run, schema=schema, qi=qi,
                                                           sensitive=sensitive, missing=missing, seed=seed,
                                                           ledger=ledger)))
