"""``crowdsafe compare ORIGINAL RELEASE``: the utility a release keeps (information loss,
marginal distances, counting-query workload error, classifier accuracy)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from crowdsafe.cli.lazy import lazy_module
from crowdsafe.cli.options import (
    DecimalCommaOpt,
    JsonOpt,
    QiOpt,
    SchemaOpt,
    SeedOpt,
    emit,
    number_option,
    split_names,
    whole_option,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from crowdsafe import api
else:
    from crowdsafe.cli.lazy import Console, Table
    api = lazy_module("crowdsafe.api")



def _table(title: str, rows: list[tuple[str, str]]) -> Table:
    table = Table(title=title, title_justify="left")
    table.add_column("measure", justify="left")
    table.add_column("value", justify="right")
    for label, value in rows:
        table.add_row(label, value)
    return table


def render_utility(report: dict[str, Any], console: Console) -> None:
    console.print("custodian only: measured against the original data, not covered by any guarantee; "
                  "do not publish it")
    loss = report["information_loss"]
    console.print(f"quasi-identifiers: {', '.join(report['quasi_identifiers'])}")
    rows = [
        ("rows in / released / suppressed",
         f"{loss['input_rows']:,} / {loss['released_rows']:,} / {loss['suppressed_rows']:,}"),
        ("suppression rate", f"{loss['suppression_rate']:.2%}"),
        ("equivalence classes", f"{loss['classes']:,}"),
        ("GCP (mean NCP; 0 = nothing lost, 1 = all)", f"{loss['gcp']:.4f}"),
        *[(f"  NCP {name}", f"{value:.4f}") for name, value in loss["ncp"].items()],
        ("discernibility", f"{loss['discernibility']:,.0f}"),
        (f"C_avg (k = {loss['k']})", f"{loss['c_avg']:.3f}"),
        ("generalization height", "-" if loss["height"] is None else str(loss["height"])),
        ("precision (Sweeney)", "-" if loss["precision"] is None else f"{loss['precision']:.4f}"),
        ("non-uniform entropy (bits; share of maximum)",
         f"{loss['entropy']:,.0f} ({loss['entropy_normalized']:.2%})"),
    ]
    console.print(_table("Information loss", rows))
    marginals = report["marginals"]
    rows = []
    for order in ("one_way", "two_way"):
        summary = marginals[order]
        if not summary["marginals"]:
            continue
        label = order.replace("_", "-")
        rows.append((f"{label}: mean / max total variation",
                     f"{summary['mean_total_variation']:.4f} / {summary['max_total_variation']:.4f}"))
        rows.append((f"{label}: worst", ", ".join(summary["worst"])))
        kl = "-" if summary["mean_kl"] is None else f"{summary['mean_kl']:.4f}"
        rows.append((f"{label}: mean KL (undefined for {summary['kl_undefined']})", kl))
    if rows:  # (none for a release without rows: a note says so)
        console.print(_table("Marginal distributions", rows))
    workload = report["workload"]
    console.print(_table(
        f"Counting-query workload ({workload['queries']:,} queries, up to {workload['max_attributes']} attributes, "
        f"seed {workload['seed']})",
        [("mean relative error", f"{workload['mean_relative_error']:.4f}"),
         ("median relative error", f"{workload['median_relative_error']:.4f}"),
         ("95th percentile", f"{workload['p95_relative_error']:.4f}"),
         ("sanity bound (rows)", f"{workload['sanity_bound']:,.1f}")],
    ))
    classifier = report["classifier"]
    if classifier is not None:
        console.print(_table(
            f"Classifier utility ({classifier['model']}, target {classifier['target']}, "
            f"{classifier['test_rows']:,} test rows)",
            [("accuracy trained on the release", f"{classifier['accuracy_release']:.4f}"),
             ("accuracy trained on the original", f"{classifier['accuracy_original']:.4f}"),
             ("majority-class rate (floor)", f"{classifier['majority_rate']:.4f}")],
        ))
    for note in report["notes"] + loss["notes"] + (classifier["notes"] if classifier else []):
        console.print(f"note: {note}")


def register(app: typer.Typer) -> None:
    @app.command("compare")
    def compare_command(
        original: Annotated[str, typer.Argument(help="The original table (file or bundled name).")],
        release: Annotated[str, typer.Argument(help="The release made from it (CSV or Parquet).")],
        qi: QiOpt = None,
        schema: SchemaOpt = None,
        decimal_comma: DecimalCommaOpt = None,
        k: Annotated[int | None, whole_option("--k", help="k for C_avg (default: the release's smallest class).")] = None,
        input_rows: Annotated[int | None, whole_option(
            "--input-rows", help="Rows that went into the anonymizer (the sample size for a sampled release).")] = None,
        queries: Annotated[int, whole_option("--queries", help="Counting queries in the workload.")] = 1000,
        max_attributes: Annotated[int, whole_option("--max-attributes", help="Attributes per query, at most.")] = 3,
        scale: Annotated[float, number_option("--scale", help="Multiply workload estimates (1/β for a sample).")] = 1.0,
        target: Annotated[str | None, typer.Option(
            "--target", help="Class attribute for the classifier (default: the sensitive attribute).")] = None,
        test: Annotated[str | None, typer.Option(
            "--test", help="Held-out original rows for the classifier (default for adult: adult-test).")] = None,
        model: Annotated[str | None, typer.Option("--model", help="Classifier: logistic, tree, forest or majority (each generalized tuple predicts its majority); with a target and test rows only.", show_default="logistic")] = None,
        seed: SeedOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Report the utility a release keeps against its original: information loss (NCP/GCP,
        discernibility, C_avg, suppression, height/precision, non-uniform entropy), one- and
        two-way marginal distances, counting-query workload error, and classifier accuracy.

        Example: crowdsafe compare adult release.csv --k 10
        """
        report = api.compare(
            original, release, qi=split_names(qi, "--qi"), schema=schema, decimal_comma=decimal_comma, k=k, input_rows=input_rows, queries=queries,
            max_attributes=max_attributes, seed=0 if seed is None else seed, scale=scale, target=target,
            test=test, model=model,
        )
        emit(report.to_dict(), as_json, lambda: render_utility(report.to_dict(), Console()))
