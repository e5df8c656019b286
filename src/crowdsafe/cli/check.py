"""``crowdsafe check DATA``: rows, attributes, missing values, and the table's k-anonymity."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from crowdsafe import api
from crowdsafe.cli.options import DataArg, JsonOpt, QiOpt, SchemaOpt, SensitiveOpt, emit, split_list

MissingOpt = Annotated[
    str,
    typer.Option(
        "--missing",
        help="Missing values: 'keep' (a value of its own; the default), 'drop' (remove those rows) or 'error'.",
    ),
]


def render_check(report: api.CheckReport, console: Console) -> None:
    console.print(
        f"[bold]{report.dataset}[/bold]: {report.rows:,} rows, {len(report.attributes)} attributes "
        f"(schema: {report.schema.source})"
    )
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
    console.print(
        f"[bold]k = {report.k}[/bold] (smallest group of rows sharing one quasi-identifier tuple); "
        f"{classes['groups']:,} distinct tuples, mean class size {classes['mean']:.2f}, largest {classes['largest']:,}"
    )
    console.print(
        f"sample uniques: {report.sample_uniques:,} rows ({report.sample_uniques / report.rows:.1%}) "
        "are alone in their class"
    )
    sizes = Table(title="Class sizes", title_justify="left")
    for heading in ("class size", "classes", "rows", "share of rows"):
        sizes.add_column(heading, justify="right")
    for bucket in classes["buckets"]:
        if bucket["groups"]:
            sizes.add_row(bucket["sizes"], f"{bucket['groups']:,}", f"{bucket['rows']:,}",
                          f"{bucket['rows'] / report.rows:.1%}")
    console.print(sizes)
    for note in report.notes:
        console.print(f"note: {note}")


def register(app: typer.Typer) -> None:
    @app.command("check")
    def check_command(
        data: DataArg,
        qi: QiOpt = None,
        sensitive: SensitiveOpt = None,
        schema: SchemaOpt = None,
        missing: MissingOpt = "keep",
        as_json: JsonOpt = False,
    ) -> None:
        """Report a table's size, attributes, missing values and k-anonymity.

        k is the size of the smallest group of rows that share one quasi-identifier tuple.

        Example: crowdsafe check adult --qi age,sex,race --sensitive income
        """
        report = api.check(
            data, qi=split_list(qi), sensitive=split_list(sensitive), schema=schema, missing=missing
        )
        emit(report.to_dict(), as_json, lambda: render_check(report, Console()))
