"""``crowdsafe check DATA``: rows, attributes, missing values, k-anonymity and class sizes,
ℓ-diversity, t-closeness, δ-disclosure, β-likeness, effective anonymity and re-identification risk."""

from __future__ import annotations

import math
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from crowdsafe.cli.lazy import lazy_module, styled
from crowdsafe.cli.options import (
    DataArg,
    DecimalCommaOpt,
    JsonOpt,
    QiOpt,
    SchemaOpt,
    SensitiveListOpt,
    emit,
    number_option,
    plain_notes,
    print_warnings,
    split_names,
    whole_option,
)
from crowdsafe.number_text import quantity

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from crowdsafe import api
    from crowdsafe.models.check_report import CheckReport
else:
    from crowdsafe.cli.lazy import Console, Table
    api = lazy_module("crowdsafe.api")


MissingOpt = Annotated[
    str,
    typer.Option(
        "--missing",
        help="Missing values: 'keep' (a value of its own; the default), 'drop' (remove those rows) or 'error'.",
    ),
]


def render_check(report: CheckReport, console: Console) -> None:
    console.print("custodian only: exact facts about the data, not covered by any guarantee; do not publish them")
    console.print(styled(
        (str(report.dataset), "bold"), f": {quantity(report.rows, 'row')}, {quantity(len(report.attributes), 'attribute')} "
        f"(schema: {report.schema.source})"
    ))
    console.print(f"missing values: {report.missing['description']}")
    attributes = Table(
        title="Attributes (levels: height of the attribute's generalization hierarchy)", title_justify="left"
    )
    for heading in ("attribute", "role", "type", "distinct", "missing", "levels"):
        attributes.add_column(
            heading,
            justify="left" if heading in ("attribute", "role", "type") else "right",
            no_wrap=True,
        )
    for a in report.attributes:
        levels = a["hierarchy_levels"]
        attributes.add_row(
            a["name"], a["role"], a["type"], f"{a['distinct']:,}", f"{a['missing']:,}",
            str(levels) if levels is not None else "-",
        )
    console.print(attributes)
    classes = report.classes
    console.print(f"quasi-identifiers: {', '.join(report.quasi_identifiers)}")
    if report.sensitive:
        console.print(f"sensitive: {', '.join(report.sensitive)}")
    if report.k is None:  # no rows: k-anonymous for every k (the note says so)
        console.print(styled(("k: any (no rows)", "bold"), " (no class: k-anonymous for every k, vacuously)"))
        for note in plain_notes(report.notes):
            console.print(f"note: {note}")
        return
    console.print(styled(
        (f"k = {report.k}", "bold"), " (smallest group of rows sharing one quasi-identifier tuple); "
        f"{classes['groups']:,} distinct tuples, mean class size {classes['mean']:.2f}, largest {classes['largest']:,}"
    ))
    console.print(
        f"sample uniques: {quantity(report.sample_uniques, 'row')} ({report.sample_uniques / report.rows:.1%}) "
        f"{'is' if report.sample_uniques == 1 else 'are'} alone in {'its' if report.sample_uniques == 1 else 'their'} "
        "class"
    )
    sizes = Table(title="Class sizes", title_justify="left")
    for heading in ("class size", "classes", "rows", "share of rows"):
        sizes.add_column(heading, justify="right")
    for bucket in classes["buckets"]:
        if bucket["groups"]:
            sizes.add_row(bucket["sizes"], f"{bucket['groups']:,}", f"{bucket['rows']:,}",
                          f"{bucket['rows'] / report.rows:.1%}")
    console.print(sizes)
    if report.privacy is not None:
        render_privacy(report.privacy.to_dict(), console)
    for note in plain_notes(report.notes):
        console.print(f"note: {note}")


def _number(value: Any, unbounded: bool = False, digits: int = 3) -> str:
    if unbounded or (isinstance(value, float) and math.isinf(value)):
        return "∞"
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.{digits}g}"


def render_privacy(privacy: dict[str, Any], console: Console) -> None:
    """The sensitive-attribute models and the risk figures of a check report."""
    if privacy["target_k"] is not None:
        console.print(
            f"classes below k = {privacy['target_k']}: {privacy['classes_below_target_k']:,} "
            f"holding {quantity(privacy['rows_below_target_k'], 'row')}"
        )
    if privacy["sensitive"]:
        table = Table(title="Sensitive attributes (each value is the table's: its worst class)", title_justify="left")
        table.add_column("model", justify="left")
        for s in privacy["sensitive"]:
            table.add_column(s["attribute"], justify="right")
        each = privacy["sensitive"]
        rows = [
            ("distinct values", [_number(s["distinct_values"]) for s in each]),
            ("ℓ-diversity, distinct", [_number(s["l_distinct"]) for s in each]),
            ("ℓ-diversity, entropy", [_number(s["l_entropy"]) for s in each]),
            (f"recursive (c, ℓ={each[0]['recursive_l']}): c above",
             [_number(s["recursive_c"], s["recursive_c_unbounded"]) for s in each]),
            ("t-closeness (ground distance)", [f"{_number(s['t'])} ({s['ground_distance']})" for s in each]),
            ("δ-disclosure", [_number(s["delta"], s["delta_unbounded"]) for s in each]),
            ("δ over values present", [_number(s["delta_present"]) for s in each]),
            ("classes missing a value", [_number(s["classes_missing_a_value"]) for s in each]),
            ("β-likeness, basic", [_number(s["beta"]) for s in each]),
            ("β-likeness, enhanced", [_number(s["beta_enhanced"], s["beta_enhanced_unbounded"]) for s in each]),
            ("effective anonymity, min", [_number(s["effective_anonymity_min"]) for s in each]),
            ("effective anonymity, mean per record", [f"{s['effective_anonymity_mean_record']:.2f}" for s in each]),
        ]
        for label, values in rows:
            table.add_row(label, *values)
        console.print(table)
        console.print(
            "recursive (c, ℓ) holds for every c above the value shown; δ = ∞ when a class lacks a value "
            "of the table (δ present: over the values a class holds); β enhanced = ∞ when no β holds."
        )
    risk = privacy["risk"]
    table = Table(title=f"Re-identification risk (threshold {risk['threshold']:g})", title_justify="left")
    for heading in ("attacker", "highest", "average", "records at highest", "records above threshold"):
        table.add_column(heading, justify="left" if heading == "attacker" else "right")
    for name in ("prosecutor", "journalist"):
        figures = risk[name]
        if figures is None:
            continue
        table.add_row(name, f"{figures['highest']:.3g}", f"{figures['average']:.3g}",
                      f"{figures['records_at_highest']:,}", f"{figures['share_above_threshold']:.1%}")
    table.add_row("marketer", "-", f"{risk['marketer']:.3g}", "-", "-")
    console.print(table)
    console.print(f"sample uniques: {risk['sample_uniques']:,} ({risk['sample_unique_share']:.1%} of rows)")
    estimate = risk["population_uniques"]
    if estimate is not None:
        console.print(
            f"population uniques (Zayatz, population {estimate['population_size']:,}, sampling fraction "
            f"{estimate['sampling_fraction']:.3g}): about {estimate['estimate']:,.0f} "
            f"({estimate['probability']:.1%} of sample uniques); assumes {estimate['assumptions']}"
        )


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check_command(
        data: DataArg,
        qi: QiOpt = None,
        sensitive: SensitiveListOpt = None,
        schema: SchemaOpt = None,
        missing: MissingOpt = "keep",
        decimal_comma: DecimalCommaOpt = None,
        k: Annotated[int | None, whole_option("--k", help="Count the classes smaller than this k.")] = None,
        l: Annotated[int | None, whole_option("--l", help="The ℓ of recursive (c, ℓ)-diversity (sensitive attributes only).", show_default="2")] = None,
        ground: Annotated[str | None, typer.Option(
            "--ground", "--distance", show_default="auto",
            help="t-closeness ground distance: auto, equal, ordered or hierarchical (--distance, as anonymize names it; sensitive attributes only).")] = None,
        threshold: Annotated[float, number_option(
            "--risk-threshold", help="Record-risk threshold for the share of records at risk.")] = 0.2,
        original: Annotated[str | None, typer.Option(
            "--original", help="The table a release was made from: generalized cells are read against it.")] = None,
        population: Annotated[Path | None, typer.Option(
            "--population", help="A population table: enables journalist risk.")] = None,
        population_size: Annotated[int | None, whole_option(
            "--population-size", help="Population size: enables the Zayatz estimate of population uniques.")] = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Report what an attacker could learn from a table: k-anonymity and class sizes,
        ℓ-diversity (distinct, entropy, recursive), t-closeness, δ-disclosure, β-likeness and
        effective anonymity per sensitive attribute, and re-identification risk.

        k is the size of the smallest group of rows that share one quasi-identifier tuple.

        Example: crowdsafe check adult --qi age,sex,race --sensitive occupation --k 5 --population-size 200000
        """
        report = api.check(
            data, qi=split_names(qi, "--qi"), sensitive=split_names(sensitive, "--sensitive"), schema=schema, missing=missing,
            decimal_comma=decimal_comma,
            original=original, target_k=k, l=l, ground=ground, threshold=threshold,
            population=population, population_size=population_size,
        )
        print_warnings(report.notes)
        emit(report.to_dict(), as_json, lambda: render_check(report, Console()))
