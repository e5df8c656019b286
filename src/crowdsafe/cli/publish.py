"""``crowdsafe publish DATA --epsilon E --delta D --out PATH``: the main job.

Sampling + safe k-anonymization, certified (ε, δ)-differentially private, charged to the ledger.

What it prints is in two parts: the public part (the plan, fixed before the data is read; the
scheme and the rows and classes of the release, DP outputs; the guarantee) and, under a heading
that says so, the custodian-only part (exact sample sizes, suppression, utility against the
sample, input rows, the ledger entry): not covered by the guarantee. ``--json`` gives the same
split (``custodian_only``). ``--custodian-report PATH`` also writes the custodian part to a JSON
file, refused in the release's own folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from crowdsafe.cli.options import (
    DataArg,
    DecimalCommaOpt,
    EscapeFormulasOpt,
    ForceOpt,
    JsonOpt,
    LedgerOpt,
    QiOpt,
    SchemaOpt,
    SeedOpt,
    SensitiveListOpt,
    emit,
    ledger_choice,
    naming_options,
    number_option,
    plain_notes,
    plan_only_writes_nothing,
    print_warnings,
    split_names,
    whole_option,
)
from crowdsafe.defaults import (
    CELLS_PER_CLASS,
    COUNT_SHARE,
    DEFAULT_DELTA,
    EPSILON1_LOSS_CLASSES,
    EPSILON1_SHARE_RANGE,
    EPSILON1_SHARE_UNSIZED,
    RATE_TOLERANCE,
)
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import quantity, rounded_down, rounded_up

if TYPE_CHECKING:
    from crowdsafe.anonymize.plan import PlanRequest

def render_plan(plan: dict[str, Any], print_: Any) -> None:
    print_("plan")
    print_(f"  target        (epsilon = {plan['epsilon']:g}, delta = {plan['delta_target']:g}) per release")
    print_(f"  sampling      beta = {rounded_down(plan['beta'], 4)} (each row kept independently with this probability)")
    if plan.get("beta_rule") not in (None, "given"):
        print_(f"                chosen as {plan['beta_rule']}")
    selection = (f"epsilon1 = {rounded_up(plan['epsilon1'], 4)} for the exponential mechanism over the lattice, scored on "
                 "the sample" if plan["scheme"] is None else f"fixed scheme '{plan['scheme']}' (strongly safe, epsilon1 = 0)")
    if plan["scheme"] is None and plan.get("count_share"):
        counted = plan["count_share"] * plan["epsilon1"]
        selection = (f"epsilon1 = {rounded_up(plan['epsilon1'], 4)} for the selection: about "
                     f"{rounded_up(counted, 4)} for a noisy count of the sample, the rest for the exponential mechanism "
                     "over the lattice, scored on the sample")
    if plan["scheme"] is None and plan.get("selection_source") == "table":
        selection = (f"epsilon1 = {rounded_up(plan['epsilon1'], 4)} for the exponential mechanism over the lattice, "
                     "scored on the whole table")
    print_(f"  recoding      {selection}")
    rule = "k given: d(k, beta, " if plan.get("k_rule") == "given" else "smallest k with d(k, beta, "
    print_(f"  k             {plan['k']} ({rule}{rounded_up(plan['epsilon_anon'], 4)}) = "
           f"{rounded_up(plan['delta'], 3)} <= {plan['delta_target']:g})")
    if plan.get("scheme") is None and plan.get("objective"):
        target = f" of '{plan['target']}'" if plan.get("target") else ""
        candidates = f" among {plan['candidates']:,} candidate schemes" if plan.get("candidates") else ""
        print_(f"  objective     {plan['objective']}{target}{candidates}; epsilon1 {plan.get('epsilon1_rule', '')}")
        if plan.get("objective_rule") not in (None, "given"):
            print_(f"                {plan['objective_rule']}")
    if plan.get("scheme") is None and (plan.get("count_rule") or plan.get("selection_rule")):
        print_(f"  selection     {plan.get('selection_rule') or plan['count_rule']}")
    if plan["releases"] > 1:
        print_(f"  releases      {plan['releases']} on fresh samples: (epsilon = {rounded_up(plan['total_epsilon'])}, "
               f"delta = {rounded_up(plan['total_delta'], 3)}) in total [{plan['composition']}]")


CUSTODIAN_HEADING = ("custodian only (exact facts about the data: NOT covered by the guarantee; "
                     "do not publish them)")


def render_plan_facts(facts: dict[str, Any], print_: Any) -> None:
    """The custodian-only facts of ``--plan-only`` (the table's row count), under their heading."""
    from crowdsafe.anonymize.publish import plan_fact_lines

    print_(CUSTODIAN_HEADING)
    for label, text in plan_fact_lines(facts):
        print_(f"  {label:<13} {text}")

# the planner's parameters and the options that set them
PLAN_OPTIONS = {"epsilon": "--epsilon", "epsilon1": "--epsilon1", "delta": "--delta", "beta": "--beta", "k": "--k"}


def _classes(count: float) -> str:
    return f"{count:g} class{'' if count == 1 else 'es'}"


# What the planner does when an option is left out, in the words of its constants
# (crowdsafe.defaults; crowdsafe.anonymize.plan reads the same ones).
EPSILON1_HELP = (
    "ε spent choosing the scheme from the data (default: ε1 = m·(ln L + ln 20) / "
    f"{'k' if EPSILON1_LOSS_CLASSES == 1 else f'({EPSILON1_LOSS_CLASSES:g}·k)'} for L candidate schemes, m = 1 "
    "for a monotone objective, else 2: just enough that the chosen scheme scores, with 95% probability, within "
    f"{_classes(EPSILON1_LOSS_CLASSES)} of k rows of the best; kept within "
    f"{EPSILON1_SHARE_RANGE[0]:.0%}–{EPSILON1_SHARE_RANGE[1]:.0%} of ε; at the top of that range "
    f"{COUNT_SHARE:.0%} of ε1 pays for a noisy count of the sample that keeps the schemes with at most "
    f"{CELLS_PER_CLASS}·count/k possible tuples; {EPSILON1_SHARE_UNSIZED:.0%} of ε with "
    "--engine spark, which plans before it counts L; --plan-only prints the value)."
)
BETA_HELP = (
    f"Fix the sampling rate (default: the largest rate whose β/k is within {RATE_TOLERANCE:.0%} of the best, "
    "at most 1 − e^−(ε − ε1); with --k, the largest rate that k allows)."
)


def register(app: typer.Typer) -> None:
    @app.command("publish")
    def publish_command(
        data: DataArg,
        epsilon: Annotated[float, number_option("--epsilon", "-e", help="ε of each release (selection included).")] = 1.0,
        delta: Annotated[float, number_option("--delta", help="δ of each release (must be below β).")] = DEFAULT_DELTA,
        k: Annotated[int | None, whole_option("--k", "-k", help="Fix k (default: the smallest k reaching δ).")] = None,
        beta: Annotated[float | None, number_option("--beta", help=BETA_HELP)] = None,
        epsilon1: Annotated[float | None, number_option("--epsilon1", help=EPSILON1_HELP)] = None,
        scheme: Annotated[str | None, typer.Option("--scheme", help="A fixed scheme, chosen without the data: a preset (none, fine, medium, coarse) and/or col=level pairs, e.g. 'medium,age=1'. Makes the release strongly safe (ε1 = 0).")] = None,
        objective: Annotated[str | None, typer.Option("--objective", help="What the scheme selection optimises: retained, loss, discernibility, entropy, marginals (the error of every 1- and 2-way marginal), or classification (with --target). Default: chosen by the plan from public facts, marginals where its choice is sharp enough at this epsilon (on Adult from 0.045) and every published column has a declared hierarchy, else retained (docs/publish.md, 'The default objective').")] = None,
        target: Annotated[str | None, typer.Option("--target", help="The column a release for a model must predict (--objective classification): kept as it is, never generalized.")] = None,
        columns: Annotated[list[str] | None, typer.Option("--columns", help="Publish exactly these comma-separated columns (the guarantee covers what is released). With --plan-only, give it several times to compare column sets.")] = None,
        releases: Annotated[int, whole_option("--releases", help="Number of releases, each from a fresh independent sample; certified together.")] = 1,
        plan_only: Annotated[bool, typer.Option("--plan-only", help="Print the plan and the expected size, read nothing else, write nothing.")] = False,
        custodian_report: Annotated[Path | None, typer.Option("--custodian-report", help="Also write the custodian-only facts (sample sizes, suppression, utility, ledger entry; not covered by the guarantee) to this JSON file, which may not lie in the release's folder.")] = None,
        force: ForceOpt = False,
        qi: QiOpt = None,
        sensitive: SensitiveListOpt = None,
        schema: SchemaOpt = None,
        decimal_comma: DecimalCommaOpt = None,
        budget: Annotated[str | None, typer.Option("--budget", help="Register the dataset's total budget EPSILON,DELTA (e.g. 10,1e-5) if it has none (default: this publication's cost); the same again is a no-op, another is refused: `crowdsafe ledger budget` changes it.")] = None,
        name: Annotated[str | None, typer.Option("--name", help="The dataset's name in the ledger (default: its file or bundled name).")] = None,
        ledger: LedgerOpt = None,
        no_ledger: Annotated[bool, typer.Option("--no-ledger", help="Do not record the release (nothing then refuses a second use of the data).")] = False,
        seed: SeedOpt = None,
        out: Annotated[str | None, typer.Option("--out", "-o", help="Where to write the release (.csv or .parquet; with --engine spark any path Spark writes, e.g. s3a://bucket/r.parquet).")] = None,
        escape_formulas: EscapeFormulasOpt = True,
        no_report: Annotated[bool, typer.Option("--no-report", help="Do not write the HTML report (<name>.report.html) beside the release; `crowdsafe report` builds it later.")] = False,
        engine: Annotated[str, typer.Option("--engine", help="Where the per-row stages run: polars (in this process) or spark (Apache Spark; pip install 'crowdsafe\\[spark]'; the release is a directory of part files).")] = "polars",
        spark_master: Annotated[str | None, typer.Option("--spark-master", help="Spark master URL for --engine spark, e.g. local[4] or spark://host:7077 (default: $CROWDSAFE_SPARK_MASTER, else Spark's default).")] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Publish a k-anonymous sample with a proven (ε, δ)-differential privacy guarantee.

        Bernoulli(β) sampling + a safe generalization scheme + suppression of classes smaller than k
        (Li, Qardaji, Su 2012). Writes the table and its certificate (<name>.certificate.json).

        Example: crowdsafe publish adult --epsilon 1 --delta 1e-6 --budget 10,1e-5 --out release/adult.csv

        Example (Spark): crowdsafe publish s3a://bucket/people.parquet --engine spark --spark-master local[4] --out release/people.parquet
        """
        from crowdsafe import api
        from crowdsafe.anonymize.plan import PlanRequest, check_publication
        from crowdsafe.cli.options import parse_budget

        book = ledger_choice(ledger, no_ledger, budget)
        column_sets = [split_names(c, "--columns") for c in columns] if columns else [None]
        request = PlanRequest(epsilon, delta, k=k, beta=beta, epsilon1=epsilon1, scheme=scheme, releases=releases,
                              objective=objective, target=target)
        if plan_only:
            with naming_options(**PLAN_OPTIONS):
                check_publication(request, lattice_later=True)  # refuse bad parameters before reading anything
            _plan_only(data, request, column_sets, qi, sensitive, schema, engine, spark_master, as_json,
                       decimal_comma)
            plan_only_writes_nothing(out=out, custodian_report=custodian_report)
            return
        if len(column_sets) > 1:
            raise ParameterError("give --columns once to publish (several sets are for --plan-only)")
        if out is None:
            raise ParameterError("give --out PATH (.csv or .parquet) for the release, or --plan-only")
        with naming_options(**PLAN_OPTIONS):  # the plan's refusals name the option the user gave
            check_publication(request, lattice_later=True)
        publication = api.publish(
            data, epsilon=epsilon, delta=delta, k=k, beta=beta, epsilon1=epsilon1, scheme=scheme,
            releases=releases, qi=split_names(qi, "--qi"), sensitive=split_names(sensitive, "--sensitive"), schema=schema,
            decimal_comma=decimal_comma,
            out=out, seed=seed,
            ledger=book,
            name=name, budget=parse_budget(budget), engine=engine, spark_master=spark_master,
            custodian_report=custodian_report, escape_formulas=escape_formulas, objective=objective, target=target,
            columns=column_sets[0], report=not no_report, force=force,
        )
        print_warnings(publication.notes)
        payload = publication.summary()
        payload["custodian_only"] = publication.custodian_report()
        if custodian_report is not None:
            payload["custodian_only"]["written_to"] = str(custodian_report)
        emit(payload, as_json, lambda: _render(payload, typer.echo))


def _plan_only(data: str, request: PlanRequest, column_sets: list[Any], qi: str | None, sensitive: str | None,
               schema: Any, engine: str, spark_master: str | None, as_json: bool,
               decimal_comma: bool | None = None) -> None:
    """``--plan-only``: the plan of each column set (public: fixed by the parameters, the schema and
    the hierarchies), and under the custodian heading the table's size, the expected sample and
    the finest uniform resolution its classes could reach (:func:`resolution_outlook`). ``request``:
    the plan's parameters, without the column sets (each planned in turn). A published column with
    a ``from_data`` marker in the schema gets a warning that its release would not be fit for
    release (from the schema alone, before anything is charged)."""
    from dataclasses import replace

    from crowdsafe.anonymize.publish import plan_for_dataset, prepare_dataset, resolution_outlook
    from crowdsafe.data import Dataset, Schema
    from crowdsafe.data.streamed_table import load_or_stream
    from crowdsafe.engines import get_engine
    from crowdsafe.identity import warning_line
    from crowdsafe.privacy.certificate import unreviewed_reasons

    chosen_engine = get_engine(engine, master=spark_master)
    if not chosen_engine.in_memory:  # the plan the run would make: for the table's hierarchies (one pass, no count)
        table = chosen_engine.read_plan_table(data, schema=Schema.reading(schema, decimal_comma=decimal_comma),
                                              qi=split_names(qi, "--qi"), sensitive=split_names(sensitive, "--sensitive"))
        plan = chosen_engine.plan_publication(table, request)
        rows = int(table.n_rows)
        plans: list[tuple[Any, list[str] | None, dict[str, Any]]]
        plans = [(plan, None, {"input_rows": rows, "expected_sample_rows": plan.expected_sample_rows(rows)})]
    else:
        # a file larger than memory: its domain (schema, hierarchies) and row count, read batch by batch
        table = load_or_stream(data, schema=Schema.reading(schema, decimal_comma=decimal_comma), qi=split_names(qi, "--qi"),
                               sensitive=split_names(sensitive, "--sensitive"))
        dataset = table if isinstance(table, Dataset) else table.domain
        rows = table.n_rows
        plans = []
        warned: list[str] = []
        unreviewed: list[str] = []  # the schema's from_data markers of the published columns (public)
        for chosen in column_sets:
            with naming_options(**PLAN_OPTIONS):
                plan = plan_for_dataset(dataset, replace(request, columns=chosen))
            prepared, published, notes = prepare_dataset(dataset, chosen)
            warned.extend(notes)
            unreviewed.extend(warning_line(f"a release would be NOT fit for release: {reason}")
                              for reason in unreviewed_reasons(dataset.schema.unreviewed(published)))
            plans.append((plan, published, {
                "input_rows": rows,
                "expected_sample_rows": plan.expected_sample_rows(rows),
                "resolution": resolution_outlook(prepared, published, plan, rows),
            }))
        print_warnings(dict.fromkeys(warned))  # once per column, whatever the column sets
        for line in dict.fromkeys(unreviewed):
            typer.echo(line, err=True)
    notice = ("CUSTODIAN ONLY: computed from the table's exact size and, for a hierarchy read from the data, from "
              "the values its column holds (the resolution's possible tuples); NOT covered by the privacy guarantee")
    payload: dict[str, Any] = {"plans": [{"columns": published, "plan": plan.as_dict(),
                          "custodian_only": {"notice": notice, **facts}} for plan, published, facts in plans]}
    if len(plans) == 1:
        payload["plan"] = payload["plans"][0]["plan"]
        payload["custodian_only"] = payload["plans"][0]["custodian_only"]

    def show() -> None:
        for plan, published, facts in plans:
            if published is not None:
                typer.echo(f"columns       {', '.join(published)}")
            render_plan(plan.as_dict(), typer.echo)
            render_plan_facts(facts, typer.echo)
            typer.echo("")

    emit(payload, as_json, show)


def _render(payload: dict[str, Any], print_: Any) -> None:
    render_plan(payload["plan"], print_)
    _render_releases(payload["releases"], payload["plan"]["k"], print_)
    print_("guarantee")
    print_(f"  {payload['guarantee']}")
    if payload["fit_for_release"]:
        print_("  fit for release")
    else:
        print_("  NOT fit for release:")
        for reason in payload["unfit_reasons"]:
            print_(f"    {reason}")
    written = payload["written"]
    print_("written")
    for table, certificate in zip(written.get("tables", []), written.get("certificates", [])):
        print_(f"  {table}")
        print_(f"  {certificate}")
    for report in written.get("reports", []):
        print_(f"  {report} (report: open it in a browser)")
    if written.get("combined_certificate"):
        print_(f"  {written['combined_certificate']} (all releases together)")
    for note in plain_notes(payload["notes"]):
        print_(f"note: {note}")
    _render_custodian(payload["custodian_only"], print_)


def _render_releases(releases: list[dict[str, Any]], k: int, print_: Any) -> None:
    """The DP outputs of each release: one release as two lines; several as one labelled line each."""
    def scheme(output: dict[str, Any]) -> str:
        return ", ".join(f"{c}={v}" for c, v in output["scheme"].items())

    if len(releases) == 1:
        output = releases[0]["dp_output"]
        print_("release (DP outputs: the scheme the mechanism chose; rows and classes counted on the release)")
        print_(f"  scheme        {scheme(output)}")
        print_(f"  published     {quantity(output['rows_published'], 'row')} in {quantity(output['classes'], 'class', 'classes')} of >= {k} rows")
        return
    print_(f"releases (DP outputs: the scheme the mechanism chose for each of the {len(releases)}; rows and classes "
           "counted on each release)")
    for i, release in enumerate(releases, 1):
        output = release["dp_output"]
        print_(f"  {f'release {i}':<13} scheme {scheme(output)}; published {quantity(output['rows_published'], 'row')} in "
               f"{quantity(output['classes'], 'class', 'classes')} of >= {k} rows")


def _render_custodian(custodian: dict[str, Any], print_: Any) -> None:
    print_(CUSTODIAN_HEADING)
    print_(f"  input         {quantity(custodian['input_rows'], 'row')}")
    for i, facts in enumerate(custodian["releases"]):
        utility = facts["utility"]
        label = "sample" if len(custodian["releases"]) == 1 else f"sample {i + 1}"
        print_(f"  {label:<13} {quantity(facts['sample_rows'], 'row')}; {facts['suppressed_rows']:,} suppressed "
               f"({facts['suppression_rate']:.1%}); NCP {utility['ncp']:.3f} (0 = exact values, 1 = all '*'), "
               f"average class {utility['average_class_size']:,.1f} rows")
    for warning in custodian.get("warnings", []):
        print_(f"  warning       {warning}")
    for column, facts in custodian.get("outside_hierarchies", {}).items():
        n = facts["distinct_values"]
        forms = facts.get("unicode_form_differs", 0)
        forms_note = (f"; {forms} of them only in Unicode form (NFD/NFC): write the data and the hierarchy "
                      "in the same form") if forms else ""
        print_(f"  outside       {column!r}: {n:,} distinct value{'s' * (n > 1)} not in its hierarchy, published "
               f"as {facts['published_as']}{forms_note}; 'crowdsafe check DATA --schema SCHEMA' names them")
    ledger = custodian.get("ledger")
    if ledger:
        budget = ledger["budget"]
        print_(f"  ledger        '{ledger['dataset']}' entry #{ledger['entry']}: spent epsilon "
               f"{rounded_up(budget['spent']['epsilon'])} of {budget['budget']['epsilon']:g} ({ledger['path']})")
    if custodian.get("written_to"):
        print_(f"  written to    {custodian['written_to']}")
