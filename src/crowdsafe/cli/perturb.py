"""``crowdsafe perturb`` and ``crowdsafe estimate``: the α-β algorithm and its estimator."""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from crowdsafe.cli.lazy import lazy_module, styled
from crowdsafe.cli.options import (
    DataArg,
    DecimalCommaOpt,
    EngineOpt,
    EscapeFormulasOpt,
    ForceOpt,
    JsonOpt,
    LedgerOpt,
    OutOpt,
    SchemaOpt,
    SeedOpt,
    SparkMasterOpt,
    emit,
    identifier_warnings,
    ledger_choice,
    number_option,
    parse_budget,
    plan_only_writes_nothing,
    split_names,
    whole_option,
)
from crowdsafe.cli.unused import refuse_unused
from crowdsafe.defaults import LARGE_VIEW_ROWS, MAX_EQUALITY_QUERIES
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import PRIVATE, atomic_paths, write_text_atomic
from crowdsafe.number_text import quantity, rounded_down, rounded_up

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from crowdsafe import api, csv_safety
    from crowdsafe.perturb import AlphaBetaPlan
else:
    from crowdsafe.cli.lazy import Console, Table
    api = lazy_module("crowdsafe.api")
    csv_safety = lazy_module("crowdsafe.csv_safety")


CertificateOpt = Annotated[
    Path | None,
    typer.Option("--certificate", help="The certificate JSON (default: <view stem>.certificate.json beside the view)."),
]
ConfidenceOpt = Annotated[
    float, number_option("--confidence", help="Confidence of the error bars (default 0.95).")
]


def _domains(path: Path | None) -> dict[str, list[Any]] | None:
    if path is None:
        return None
    from crowdsafe.files import read_input_text
    from crowdsafe.perturb.declared_values import refusing_repeated_keys

    try:  # a key given twice is refused, not "the last one wins"
        # a byte-order mark (Windows Notepad writes one) is dropped, as in data, schema and hierarchy files
        data = json.loads(read_input_text(path, "domain file").removeprefix("\ufeff"),
                          object_pairs_hook=refusing_repeated_keys(f"the domain file {path}"))
    except OSError as exc:
        raise InputError(f"cannot read the domain file {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"the domain file {path} is not UTF-8 text") from None
    except json.JSONDecodeError as exc:
        raise InputError(f"the domain file {path} is not valid JSON: {exc.msg} (line {exc.lineno})") from None
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise InputError(f"the domain file {path} must map each attribute to a list of values")
    return data


def _check_custodian_path(path: Path, view: Path, cert: Path) -> None:
    """The custodian-only report is written only where asked, never onto the view, its
    certificate or its (public) HTML report, nor in the view's folder or below it (shared with
    the view, it would go too)."""
    from crowdsafe.report.build import report_path

    if path.resolve() in (Path(view).resolve(), Path(cert).resolve(), report_path(view).resolve()):
        raise ParameterError("--custodian-report must not be the view, its certificate or its report")
    if Path(view).resolve().parent in path.resolve().parents:
        raise ParameterError(f"the custodian report {path} would lie in the view's folder {Path(view).parent}: it holds "
                             "exact facts about the data that the guarantee does not cover; write it outside that folder")
    if path.is_dir():
        raise InputError(f"--custodian-report {path} is a folder, expected a file name")


def _guard(data: str, out: Path, certificate: Path | None, report: bool, custodian_report: Path | None,
           schema: Path | None, ledger: Path | str | None, domains: Path | None, force: bool) -> None:
    """The view's files and the custodian report, checked against the run's inputs (the domain
    file too) before anything is read or charged (:mod:`crowdsafe.output_guard`). A view that is
    an existing folder is left to the engine (a Spark view is one; elsewhere it is refused), and
    :func:`crowdsafe.api.perturb` checks the view's files again."""
    from crowdsafe.drivers.run_files import file_input, guard, view_outputs
    from crowdsafe.output_guard import Output, OutputKind
    from crowdsafe.perturb.view import ViewOutput

    outputs = [o for o in view_outputs(ViewOutput(out=out, certificate=certificate, report=report))
               if not (o.kind is OutputKind.TABLE and Path(o.path).is_dir())]
    if custodian_report is not None:
        outputs.append(Output(custodian_report, "the custodian report", OutputKind.JSON, parameter="custodian_report"))
    guard(outputs, data=data, schema=schema, ledger=ledger, inputs=file_input(domains, "the domain file"),
          force=force)


@contextlib.contextmanager
def _report_warnings() -> Iterator[list[str]]:
    """Print a :class:`~crowdsafe.report.build.ReportWarning` raised inside as one ``crowdsafe: warning:``
    line on stderr; the list yielded holds their messages (empty: the report was written)."""
    from crowdsafe.identity import warning_line
    from crowdsafe.report.build import ReportWarning

    seen: list[str] = []
    with warnings.catch_warnings():
        passing_on = warnings.showwarning

        def show(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                 file: Any = None, line: str | None = None) -> None:
            if issubclass(category, ReportWarning):
                seen.append(str(message))
                typer.echo(warning_line(str(message)), err=True)
            else:
                passing_on(message, category, filename, lineno, file, line)

        warnings.showwarning = show
        warnings.simplefilter("always", ReportWarning)
        yield seen


def _plan_rows(plan: AlphaBetaPlan) -> list[tuple[str, str]]:
    """The plan's lines: parameters, the bound N used in place of n, the domain size m (each
    labelled custodian-only where an exploratory run read it from the data). The equivalent ε
    and the largest posterior are rounded up, the prior bound d down: none is stated stronger
    than proven."""
    out = [
        ("N (read from the data, in place of n: custodian-only)" if "n" in plan.from_data
         else "N (public bound on n, in place of n)", f"{plan.n:,}"),
        ("m (domain size read from the data: custodian-only)" if "m" in plan.from_data
         else "m (public domain size)", f"{plan.m:,}" if plan.m < 10**15 else f"{plan.m:.4e}"),
        ("d (prior bound)" + (f" = {plan.c:g} N/m" if plan.c is not None else ""), rounded_down(plan.d)),
        ("gamma (posterior bound)", f"{plan.gamma:.6g}"),
        ("alpha (keep)", rounded_down(plan.alpha)),  # at most 1 - d/gamma: typed back as --alpha, it is taken
        ("beta (insert)", rounded_up(plan.beta)),  # at least the floor: typed back as --beta, it is taken
        ("equivalent epsilon (unbounded DP)", rounded_up(plan.epsilon)),
        ("largest posterior of a tuple seen", rounded_up(plan.posterior_present_max)),
        ("expected view size, at most", f"{plan.expected_view:,.0f}"),
        ("expected |V| / N", f"{plan.ratio:.4g}"),
    ]
    utility = plan.utility
    if utility.applies:
        out.append((f"error bound, per query fixed in advance ({1 - utility.failure:.0%})", f"± {utility.error:,.0f}"))
    else:
        out.append(("error bound of the theorem", f"not applicable: {utility.reason}"))
    return out


def _render_plan(plan: AlphaBetaPlan, console: Console, title: str) -> None:
    table = Table(title=title, title_justify="left")
    table.add_column("", justify="left")
    table.add_column("", justify="right")
    for name, value in _plan_rows(plan):
        table.add_row(name, value)
    console.print(table)
    for note in plan.notes:
        console.print(f"note: {note}")
    for warning in plan.warnings:
        console.print(styled(("warning:", "bold yellow"), f" {warning}"))


def register(app: typer.Typer) -> None:
    @app.command("perturb")
    def perturb_command(
        data: DataArg,
        gamma: Annotated[float, number_option("--gamma", help="Largest posterior an attacker may reach (0 < gamma < 1).")],
        d: Annotated[float | None, number_option("--d", help="Largest prior of the attacker for any tuple.")] = None,
        c: Annotated[float | None, number_option("--c", help="Set d = c*N/m (N the public bound --max-rows, m the domain size).")] = None,
        alpha: Annotated[float | None, number_option("--alpha", help="Probability of keeping a tuple (default 1/2).")] = None,
        beta: Annotated[float | None, number_option("--beta", help="Probability of inserting a tuple (default: the smallest admissible).")] = None,
        attributes: Annotated[str | None, typer.Option("--attributes", help="Comma-separated attributes to publish (default: every non-identifier).")] = None,
        domains: Annotated[Path | None, typer.Option("--domains", help="JSON file declaring the public value list of each attribute (else the schema's order or a declared hierarchy's leaves); rows with a value outside are left out.")] = None,
        max_rows: Annotated[int | None, whole_option("--max-rows", help="A public bound on the rows of the data, fixed without looking at it; used in place of n.")] = None,
        exploratory: Annotated[bool, typer.Option("--exploratory", help="Allow the data's own values and n where no public domain or --max-rows is given: NO formal guarantee.")] = False,
        ledger: LedgerOpt = None,
        no_ledger: Annotated[bool, typer.Option("--no-ledger", help="Do not charge the view to a budget ledger (nothing then records it or limits further views; an uncertified --exploratory run needs it).")] = False,
        budget: Annotated[str | None, typer.Option("--budget", help="Register the dataset's total budget EPSILON,DELTA (e.g. 10,0: the view costs ε only) if it has none; without one the run is refused before anything is charged.")] = None,
        name: Annotated[str | None, typer.Option("--name", help="The dataset's name in the ledger (default: its file or bundled name).")] = None,
        custodian_report: Annotated[Path | None, typer.Option("--custodian-report", help="Also write the custodian-only facts (exact rows, rows outside the domain, distinct tuples, duplicates) to this JSON file; never publish it.")] = None,
        duplicates: Annotated[str, typer.Option("--duplicates", help="Duplicate rows: 'collapse' (the view is a set; default) or 'error'.")] = "collapse",
        exclusive_correlations: Annotated[bool, typer.Option("--exclusive-correlations", help="Also cover 'exactly one of a set' correlated priors (alpha = 1/2, larger beta).")] = False,
        max_view_rows: Annotated[int | None, whole_option("--max-view-rows", help=f"Refuse, before any charge, a plan whose expected view holds more rows than this (default {LARGE_VIEW_ROWS:,}: the view is made in memory; none with --engine spark, which writes it in parts).")] = None,
        confidence: ConfidenceOpt = 0.95,
        plan_only: Annotated[bool, typer.Option("--plan-only", help="Print the plan without perturbing or writing.")] = False,
        out: OutOpt = None,
        escape_formulas: EscapeFormulasOpt = True,
        certificate: CertificateOpt = None,
        force: ForceOpt = False,
        no_report: Annotated[bool, typer.Option("--no-report", help="Do not write the HTML report (<view stem>.report.html) beside the view; `crowdsafe report VIEW` builds it later.")] = False,
        schema: SchemaOpt = None,
        decimal_comma: DecimalCommaOpt = None,
        missing: Annotated[str, typer.Option("--missing", help="Missing values: 'keep' (a value of its own; default), 'drop' or 'error'.")] = "keep",
        seed: SeedOpt = None,
        as_json: JsonOpt = False,
        engine: EngineOpt = "polars",
        spark_master: SparkMasterOpt = None,
    ) -> None:
        """Publish a (d, gamma)-private view by random deletion and insertion (the alpha-beta algorithm).

        Each distinct tuple is kept with probability alpha, each other tuple of the domain is inserted
        with probability beta, and the view lists its tuples in the domain's order. The guarantee needs a public domain for every
        attribute (--domains, or the schema's order or hierarchy leaves) and a public bound --max-rows
        on the rows, used in place of n; without them the run is refused (or, with --exploratory, runs
        with no formal guarantee). The view and its certificate (alpha, beta, the domains, the
        guarantee and its equivalent epsilon) are written atomically; what is printed holds only
        parameters and what is computed from the view (exact counts go to --custodian-report only). The
        view's equivalent epsilon is charged to the dataset's budget in the ledger (--ledger, else
        $CROWDSAFE_LEDGER, else the per-user file; --budget registers one, --no-ledger charges none)
        before anything is drawn, and the ledger's SHA-256 of the two files lets `crowdsafe ledger
        verify VIEW` check them. With
        --engine spark the data (a Parquet or CSV path) is perturbed on Spark and the view is
        written as a Parquet directory (--out view.parquet).

        Example: crowdsafe perturb adult --c 5 --gamma 0.2 --max-rows 50000 --attributes age,education,occupation,native-country,sex,income --out view.csv
        """
        from crowdsafe.perturb import certificate_path

        options: dict[str, Any] = dict(gamma=gamma, d=d, c=c, alpha=alpha, beta=beta, attributes=split_names(attributes, "--attributes"),
                       domains=_domains(domains), max_rows=max_rows, exploratory=exploratory, duplicates=duplicates,
                       exclusive_correlations=exclusive_correlations, confidence=confidence,
                       **({} if max_view_rows is None else {"max_view_rows": max_view_rows}),
                       schema=schema, missing=missing, decimal_comma=decimal_comma, engine=engine,
                       spark_master=spark_master)
        if plan_only:
            with identifier_warnings():
                plan = api.plan_perturbation(data, **options)
            emit({"plan": plan.as_dict()}, as_json, lambda: _render_plan(plan, Console(), "alpha-beta plan"))
            plan_only_writes_nothing(out=out, certificate=certificate, custodian_report=custodian_report)
            return
        if out is None:
            raise ParameterError("name the view file with --out view.csv (or use --plan-only)")
        cert_path = certificate or certificate_path(out)
        if custodian_report is not None:
            _check_custodian_path(custodian_report, out, cert_path)
        book = ledger_choice(ledger, no_ledger, budget)
        _guard(data, out, certificate, not no_report, custodian_report, schema, book, domains, force)
        with identifier_warnings(), _report_warnings() as report_failed:
            result = api.perturb(data, seed=seed, out=out, certificate=certificate, ledger=book, name=name,
                                 budget=parse_budget(budget), escape_formulas=escape_formulas,
                                 report=not no_report, force=force, **options)
        from crowdsafe.output_guard import json_document
        from crowdsafe.privacy.certificate import unfit_line
        from crowdsafe.report.build import report_path

        report = None if no_report or report_failed or "://" in str(out) else report_path(out)
        if custodian_report is not None:
            write_text_atomic(custodian_report, json_document(result.custodian_report(), sort_keys=True),
                              mode=PRIVATE)  # the custodian's alone, as the ledger

        def render() -> None:
            console = Console()
            _render_plan(result.plan, console, "alpha-beta view")
            console.print(f"view: {quantity(result.view.rows, 'row')} -> {out}")
            console.print(f"certificate -> {cert_path}")
            if report is not None:
                console.print(f"report -> {report} (open it in a browser)")
            if custodian_report is not None:
                console.print(f"custodian-only report (never publish it) -> {custodian_report}")
            if result.ledger is not None:
                booked = result.ledger
                console.print(f"ledger: charged epsilon {rounded_up(booked['charged']['epsilon'], 6)} to '{booked['dataset']}' "
                              f"(entry #{booked['entry']}); spent {rounded_up(booked['spent']['epsilon'], 6)} of "
                              f"{booked['budget']['epsilon']:g} ({booked['path']})")
            console.print(f"guarantee: {result.view.certificate.summary()}")
            unfit = unfit_line(result.view.certificate.unfit_reasons)
            if unfit:
                console.print(unfit, soft_wrap=True)

        payload = {**result.as_dict(), "view": str(out), "certificate_file": str(cert_path)}
        if report is not None:
            payload["report_file"] = str(report)
        if custodian_report is not None:
            payload["custodian_report_file"] = str(custodian_report)
        emit(payload, as_json, render)

    @app.command("estimate")
    def estimate_command(
        view: Annotated[Path, typer.Argument(help="A view written by 'crowdsafe perturb' (CSV or Parquet).")],
        queries: Annotated[list[str] | None, typer.Argument(help="Counting queries, e.g. \"count where age between 26 and 32 and sex = 'Female'\".")] = None,
        equality: Annotated[int | None, whole_option("--equality", help="Estimate every equality query over every set of up to this many attributes; write them to --out.")] = None,
        max_queries: Annotated[int | None, whole_option("--max-queries", help="Refuse an --equality sweep that may hold more queries than this (about 100 bytes of CSV each).", show_default=f"{MAX_EQUALITY_QUERIES:,}")] = None,
        out: OutOpt = None,
        certificate: CertificateOpt = None,
        confidence: ConfidenceOpt = 0.95,
        force: ForceOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Estimate counting queries from an alpha-beta view: EST = (n_V - beta n_D) / (alpha - beta).

        alpha, beta and the domains are read from the view's certificate, and so is its fitness: the
        estimates of a view that is not fit for release (a seeded one) say so. Every estimate comes with
        its error bar (a per-query Bernstein bound) and the theorem's per-query bound (for a query fixed
        before the view is seen, not for all queries at once).

        Example: crowdsafe estimate view.csv "count where age between 26 and 32 and sex = 'Female'"
        """
        from crowdsafe.perturb import equality_estimates, read_view
        from crowdsafe.perturb.estimator import COUNTS_WHAT
        from crowdsafe.privacy.certificate import unfit_line

        if not queries and equality is None:
            raise ParameterError("give a query such as \"count where age >= 30\", or --equality 3 --out estimates.csv")
        if equality is None:
            refuse_unused({"--max-queries": max_queries}, "--equality only")
        max_queries = MAX_EQUALITY_QUERIES if max_queries is None else max_queries  # the documented default
        if equality is not None and out is None:
            raise ParameterError("--equality writes its estimates to a file: add --out estimates.csv")
        if out is not None:  # --equality's sweep, else the queries' estimates, one row per query
            from crowdsafe.drivers.run_files import guard, release_inputs
            from crowdsafe.output_guard import Output, OutputKind, replaced_first

            if not str(out).lower().endswith(".csv"):
                raise ParameterError(f"--out of estimate must be a .csv file, got {out}")
            guard([Output(out, "the estimates", OutputKind.PLAIN)],
                  inputs=release_inputs(view, certificate, "the view"), force=force)
        published = read_view(view, certificate)
        found = api.estimate(published, queries, confidence=confidence) if queries else []
        estimates = found if isinstance(found, list) else [found]  # a list of queries: a list of estimates
        # what the view's certificate says of its fitness (a seeded view: NOT fit), as perturb printed it
        reasons = list(published.certificate.unfit_reasons)
        payload: dict[str, Any] = {"view": str(view), "rows": published.rows,
                                   "alpha": published.alpha, "beta": published.beta,
                                   "estimates": [e.as_dict() for e in estimates], "counts": COUNTS_WHAT,
                                   "fit_for_release": not reasons, "unfit_reasons": reasons}
        if equality is not None:
            assert out is not None
            import polars as pl

            sweep = equality_estimates(published, max_attributes=equality, confidence=confidence, max_queries=max_queries)
            # the view's fitness in every row, as the queries' file has it (unfit reasons: one cell)
            fitness = [pl.lit(sweep.fit_for_release).alias("fit_for_release"),
                       pl.lit("; ".join(sweep.unfit_reasons)).alias("unfit_reasons")]
            with atomic_paths([out], remove_first=replaced_first(out)) as (tmp,):
                csv_safety.write_csv(sweep.frame.with_columns(fitness), tmp)
            payload["equality"] = {"max_attributes": equality, "queries": sweep.queries, "file": str(out),
                                   "theorem_bound": sweep.theorem.as_dict()}
        elif out is not None:
            import polars as pl

            # a domain count past 64 bits (a domain of 2^64 tuples or more) is written as a float
            rows = [{k: float(v) if isinstance(v, int) and abs(v) >= 2**63 else "; ".join(v) if isinstance(v, list)
                     else v for k, v in e.as_dict().items()} for e in estimates]  # unfit reasons: one cell
            with atomic_paths([out], remove_first=replaced_first(out)) as (tmp,):
                csv_safety.write_csv(pl.DataFrame(rows), tmp)
            payload["file"] = str(out)

        def render() -> None:
            console = Console()
            if estimates:
                table = Table(title=f"Estimates from {view} ({quantity(published.rows, 'row')})", title_justify="left")
                for heading in ("query", "estimate", f"± ({confidence:.0%})", "n_view", "n_domain"):
                    table.add_column(heading, justify="left" if heading == "query" else "right")
                for e in estimates:
                    table.add_row(e.query, f"{e.estimate:,.1f}", f"{e.error:,.1f}", f"{e.n_view:,}", f"{e.n_domain:,}")
                console.print(table)
                bound = estimates[0].theorem_error
                if bound is not None:
                    console.print(f"theorem bound per query ({confidence:.0%}, each query fixed before looking at "
                                  f"the view; not all queries at once): ± {bound:,.0f}")
                console.print(COUNTS_WHAT)
                for note in dict.fromkeys(n for e in estimates for n in e.notes):
                    console.print(f"note: {note}", soft_wrap=True)
                if equality is None and out is not None:
                    console.print(f"{quantity(len(estimates), 'estimate')} -> {out}")
            if equality is not None:
                console.print(f"{payload['equality']['queries']:,} equality queries over up to {equality} "
                              f"attributes -> {out}")
            unfit = unfit_line(reasons)
            if unfit:
                console.print(unfit, soft_wrap=True)

        emit(payload, as_json, render)
