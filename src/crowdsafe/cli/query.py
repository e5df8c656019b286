"""``crowdsafe query DATA QUERY --epsilon E``: one differentially private answer, charged to the
budget ledger."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer

from crowdsafe.cli.lazy import lazy_module, styled
from crowdsafe.cli.options import (
    DataArg,
    DecimalCommaOpt,
    EngineOpt,
    ForceOpt,
    JsonOpt,
    LedgerOpt,
    OutOpt,
    SchemaOpt,
    SeedOpt,
    SparkMasterOpt,
    emit,
    ledger_choice,
    number_option,
    parse_budget,
    plain_notes,
    print_warnings,
    whole_option,
)
from crowdsafe.cli.unused import refuse_unused
from crowdsafe.files import write_text_atomic
from crowdsafe.identity import printable
from crowdsafe.number_text import rounded_up

if TYPE_CHECKING:
    from rich.console import Console

    from crowdsafe import api
    from crowdsafe.mechanisms.queries import QueryAnswer
else:
    from crowdsafe.cli.lazy import Console
    api = lazy_module("crowdsafe.api")


def _interval(answer: QueryAnswer) -> str:
    low, high = answer.error_interval
    unit = " rows of rank" if answer.error_unit == "rank" else ""
    if abs(low + high) <= 1e-12 * max(1.0, abs(high)):
        return f"± {high:,.6g}{unit}"
    return f"[{low:+,.6g}, {high:+,.6g}]{unit}"


CUSTODIAN_HEADING = ("custodian only: exact facts about the data, NOT covered by the differential-privacy "
                     "guarantee; do not publish")


def render_answer(answer: QueryAnswer, console: Console, *, custodian: bool = False) -> None:
    """The public answer; with ``custodian``, the custodian-only facts after it, under a heading
    saying they are not covered."""
    import polars as pl

    console.print(styled((printable(answer.query), "bold")))
    if isinstance(answer.value, pl.DataFrame):
        with pl.Config(tbl_rows=60, tbl_hide_dataframe_shape=False):
            console.print(str(answer.value))
        console.print(f"95% interval  {_interval(answer)} per cell (the noise of a cell lies there with probability 0.95)")
    else:
        value = answer.value
        shown = f"{value:,}" if isinstance(value, int) else f"{value:,.6g}"
        console.print(styled("answer        ", (shown, "bold")))
        console.print(f"95% interval  {_interval(answer)} (the error lies there with probability ≥ 0.95)")
    console.print(f"guarantee     (ε = {rounded_up(answer.epsilon)}, δ = {rounded_up(answer.delta)})-differential privacy; "
                  f"{answer.privacy_unit}")
    console.print(f"mechanism     {answer.mechanism}, noise scale {answer.noise_scale:,.6g}")
    console.print(f"sensitivity   {answer.sensitivity.l1:g} ({answer.sensitivity.derivation})")
    if answer.ledger:
        ledger = answer.ledger
        console.print(
            f"ledger        '{printable(ledger['dataset'])}': spent ε {rounded_up(ledger['spent']['epsilon'], 6)} of "
            f"{ledger['budget']['epsilon']:g}, δ {rounded_up(ledger['spent']['delta'], 3)} of {ledger['budget']['delta']:g} "
            f"(entry #{ledger['entry']}, {printable(str(ledger['path']))})"
        )
    fit = "fit for release" if answer.randomness.get("fit_for_release") else "NOT fit for release"
    console.print(f"randomness    {answer.randomness.get('source')} ({fit})")
    for reason in answer.unreviewed_reasons:
        console.print(f"NOT fit for release: {reason}", soft_wrap=True)
    for note in plain_notes(answer.notes):
        console.print(f"note: {note}")
    if custodian:
        console.print(styled((CUSTODIAN_HEADING, "bold")), soft_wrap=True)
        if not answer.custodian_only:
            console.print("  (none for this query)")
        for key, fact in answer.custodian_only.items():
            console.print(f"  {key.replace('_', ' ')}: {fact:,}")


def register(app: typer.Typer) -> None:
    @app.command("query")
    def query_command(
        data: DataArg,
        query: Annotated[str, typer.Argument(help="The query, e.g. \"count where age >= 30\" (see docs/mechanisms.md).")],
        epsilon: Annotated[float, number_option("--epsilon", "-e", help="ε of this query.")],
        delta: Annotated[float, number_option("--delta", help="δ of this query (Gaussian, or histograms without a public domain).")] = 0.0,
        mechanism: Annotated[str | None, typer.Option("--mechanism", help="laplace (ε-DP, default) or gaussian ((ε, δ)-DP), both discrete: discrete-laplace, geometric and discrete-gaussian are taken too.")] = None,
        calibration: Annotated[str | None, typer.Option("--calibration", help="Gaussian σ: analytic (default) or classic (ε < 1 only); --mechanism gaussian only.", show_default="analytic")] = None,
        neighbours: Annotated[str, typer.Option("--neighbours", help="add-remove (default; 'unbounded' DP) or change ('bounded' DP: a row replaced): what one person can do to the data; bounded and unbounded are taken too.")] = "add-remove",
        max_rows_per_person: Annotated[int | None, whole_option("--max-rows-per-person", help="Rows a person may contribute (needed when the schema names a person_id).")] = None,
        partition: Annotated[str | None, typer.Option("--partition", help="A column the filter fixes (col = value): such queries compose in parallel.")] = None,
        budget: Annotated[str | None, typer.Option("--budget", help="Register the dataset's total budget EPSILON,DELTA (e.g. 1,1e-6; 1,0 for pure ε-DP queries only) if it has none.")] = None,
        name: Annotated[str | None, typer.Option("--name", help="The dataset's name in the ledger (default: its file or bundled name).")] = None,
        ledger: LedgerOpt = None,
        no_ledger: Annotated[bool, typer.Option("--no-ledger", help="Do not charge a budget ledger (nothing then limits repeated queries).")] = False,
        schema: SchemaOpt = None,
        decimal_comma: DecimalCommaOpt = None,
        seed: SeedOpt = None,
        out: OutOpt = None,
        force: ForceOpt = False,
        as_json: JsonOpt = False,
        engine: EngineOpt = "polars",
        spark_master: SparkMasterOpt = None,
        custodian: Annotated[bool, typer.Option("--custodian", help="Also show exact facts about the data for the custodian (clamp counts, rows dropped): NOT covered by the guarantee; never written to --out.")] = False,
    ) -> None:
        """Answer a query with differential privacy and charge it to the dataset's budget.

        Queries: count, sum(col) clamp L..U, mean(col) clamp L..U, median(col) clamp L..U,
        quantile(col, q) clamp L..U, histogram col, col[L..U by W], col in ('a', 'b');
        each may end with a filter: where col >= 30 and sex = 'Female'.

        With --engine spark the data (a Parquet or CSV path) is aggregated on Spark; the noise
        and the ledger stay here.

        The printed and JSON answer hold only the DP output and public parameters. --custodian
        adds the exact facts the custodian may need (not DP, not for publication); --out always
        writes the public answer alone.

        Example: crowdsafe query adult "count where age >= 30 and sex = 'Female'" --epsilon 0.1 --budget 1,0
        """
        book = ledger_choice(ledger, no_ledger, budget)
        if out is None:
            refuse_unused({"--force": force}, "--out only (nothing is written without it)")
        if out is not None:  # before the data is read or the ledger charged
            from crowdsafe.drivers.run_files import guard
            from crowdsafe.output_guard import Output, OutputKind

            guard([Output(out, "the answer", OutputKind.JSON)], data=data, schema=schema, ledger=book, force=force)
        answer = api.query(
            data,
            query,
            epsilon=epsilon,
            delta=delta,
            mechanism=mechanism,
            calibration=calibration,
            neighbours=neighbours,
            max_rows_per_person=max_rows_per_person,
            partition=partition,
            schema=schema,
            decimal_comma=decimal_comma,
            randomness=seed,
            ledger=book,
            name=name,
            budget=parse_budget(budget),
            engine=engine,
            spark_master=spark_master,
        )
        print_warnings(answer.notes)
        payload = answer.as_dict()
        if out is not None:
            from crowdsafe.output_guard import json_document
            from crowdsafe.stopping import finishing

            finishing()  # the answer is charged and drawn: writing it finishes
            write_text_atomic(out, json_document(payload, default=str, ensure_ascii=False))
        shown = answer.as_dict(custodian=True) if custodian else payload
        emit(shown, as_json, lambda: render_answer(answer, Console(), custodian=custodian))
