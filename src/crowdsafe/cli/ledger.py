"""``crowdsafe ledger``: set a dataset's privacy budget, and list what has been spent."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from crowdsafe.cli.lazy import lazy_module
from crowdsafe.cli.options import DataArg, ForceOpt, JsonOpt, OutOpt, SchemaOpt, emit
from crowdsafe.cli.query import LedgerOpt
from crowdsafe.files import write_text_atomic

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from crowdsafe import api
else:
    from crowdsafe.cli.lazy import Console, Table
    api = lazy_module("crowdsafe.api")


ledger_app = typer.Typer(
    name="ledger",
    help="The privacy-budget ledger: budgets per dataset and every query and release charged to them.",
    no_args_is_help=True,
)


def _spec(path: Any) -> Any:
    return path if path is not None else "default"


def render_report(report: dict[str, Any], console: Console) -> None:
    console.print(f"ledger: {report['ledger']}")
    if not report["datasets"]:
        console.print("no dataset has a budget yet; set one with: crowdsafe ledger init DATA --epsilon E --delta D")
        return
    for dataset in report["datasets"]:
        budget, spent, remaining = dataset["budget"], dataset["spent"], dataset["remaining"]
        console.print(
            f"\n[bold]{dataset['name']}[/bold] (fingerprint {dataset['fingerprint'][:16]}…): budget "
            f"(ε {budget['epsilon']:g}, δ {budget['delta']:g}); spent (ε {spent['epsilon']:.6g}, "
            f"δ {spent['delta']:.3g}); remaining (ε {remaining['epsilon']:.6g}, δ {remaining['delta']:.3g})"
        )
        if not dataset["entries"]:
            continue
        table = Table(show_edge=False)
        for heading in ("#", "when (UTC)", "kind", "ε", "δ", "mechanism", "status", "what"):
            table.add_column(heading, justify="right" if heading in ("#", "ε", "δ") else "left")
        for entry in dataset["entries"]:
            what = entry["description"]
            if entry["repetitions"] > 1:
                what += f" (×{entry['repetitions']}, {entry['composition']})"
            if entry["partition"]:
                what += f" [part {entry['partition'][0]} = {entry['partition'][1]}]"
            if entry["samples"]:
                what += f" [samples {', '.join(s[:12] for s in entry['samples'])}]"
            status = entry["status"] + (" (seeded)" if entry["seeded"] else "")
            table.add_row(
                str(entry["id"]), entry["created_at"][:19].replace("T", " "), entry["kind"],
                f"{entry['epsilon']:.6g}", f"{entry['delta']:.3g}", entry["mechanism"], status, what,
            )
        console.print(table)


def register(app: typer.Typer) -> None:
    @ledger_app.command("init")
    def init_command(
        data: DataArg,
        epsilon: Annotated[float, typer.Option("--epsilon", "-e", help="Total ε for every query and release on this data.")],
        delta: Annotated[float, typer.Option("--delta", help="Total δ.")] = 0.0,
        name: Annotated[str | None, typer.Option("--name", help="A name for the dataset (default: its file or bundled name).")] = None,
        ledger: LedgerOpt = None,
        schema: SchemaOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Set a dataset's total privacy budget (once; it cannot be raised later).

        Example: crowdsafe ledger init adult --epsilon 1 --delta 1e-6
        """
        budget = api.set_budget(data, epsilon=epsilon, delta=delta, name=name, ledger=_spec(ledger), schema=schema)
        emit(
            budget.as_dict(),
            as_json,
            lambda: Console().print(
                f"'{budget.name}' has the budget (ε {budget.budget.epsilon:g}, δ {budget.budget.delta:g}); "
                f"spent so far (ε {budget.spent.epsilon:.6g}, δ {budget.spent.delta:.3g})"
            ),
        )

    @ledger_app.command("show")
    def show_command(
        dataset: Annotated[str | None, typer.Argument(help="Only this dataset (name or fingerprint).")] = None,
        ledger: LedgerOpt = None,
        out: OutOpt = None,
        force: ForceOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """List every dataset's budget and each query and release charged to it.

        Example: crowdsafe ledger show adult --json
        """
        if out is not None:  # before the ledger is opened
            from crowdsafe.drivers.run_files import guard
            from crowdsafe.output_guard import Output, OutputKind

            guard([Output(out, "the ledger export", OutputKind.JSON)], ledger=_spec(ledger), force=force)
        report = api.ledger_report(_spec(ledger), dataset)
        if out is not None:
            from crowdsafe.output_guard import json_document

            write_text_atomic(out, json_document(report, default=str, ensure_ascii=False))
        emit(report, as_json, lambda: render_report(report, Console()))

    app.add_typer(ledger_app)
