"""``crowdsafe ledger``: set a dataset's privacy budget, change it on the record, and list what
has been spent."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from crowdsafe.cli.lazy import lazy_module, styled
from crowdsafe.cli.options import (
    DataArg,
    DecimalCommaOpt,
    ForceOpt,
    JsonOpt,
    LedgerOpt,
    OutOpt,
    SchemaOpt,
    emit,
    number_option,
)
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import PRIVATE, write_text_atomic
from crowdsafe.identity import printable
from crowdsafe.number_text import budget_words, rounded_up

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
    console.print(f"ledger: {printable(str(report['ledger']))}")
    if not report["datasets"]:
        console.print("no dataset has a budget yet; set one with: crowdsafe ledger init DATA --epsilon E --delta D")
        return
    for dataset in report["datasets"]:
        budget, spent, remaining = dataset["budget"], dataset["spent"], dataset["remaining"]
        console.print(styled(
            "\n", (printable(str(dataset["name"])), "bold"), f" (fingerprint {dataset['fingerprint'][:16]}…): "
            + budget_words(budget, spent, remaining)
            + (f"; neighbours {dataset['neighbours']}" if dataset.get("neighbours") else "")
        ))
        if dataset.get("mixed_neighbours"):
            console.print("  charged under both neighbour notions by an earlier crowdsafe: spent is counted as "
                          "change-one DP (the add-remove charges' total restated by group privacy as "
                          "(2ε, (1 + e^ε)δ)); only --neighbours change can be charged to it")
        for change in dataset.get("budget_changes", []):
            console.print(f"  {_change_line(change)}")
        if not dataset["entries"]:
            continue
        table = Table(show_edge=False)
        for heading in ("#", "when (UTC)", "kind", "ε", "δ", "mechanism", "status", "what"):
            table.add_column(heading, justify="right" if heading in ("#", "ε", "δ") else "left")
        for entry in dataset["entries"]:
            what = printable(entry["description"])
            if entry["repetitions"] > 1:
                what += f" (×{entry['repetitions']}, {entry['composition']})"
            if entry["partition"]:
                what += f" [part {entry['partition'][0]} = {entry['partition'][1]}]"
            if dataset.get("mixed_neighbours"):
                what += f" [{entry['neighbours']}]"
            if entry["samples"]:
                what += f" [samples {', '.join(s[:12] for s in entry['samples'])}]"
            status = entry["status"] + (" (seeded)" if entry["seeded"] else "")
            table.add_row(
                str(entry["id"]), entry["created_at"][:19].replace("T", " "), entry["kind"],
                rounded_up(entry["epsilon"]), rounded_up(entry["delta"], 3), printable(entry["mechanism"]), status, what,
            )
        console.print(table)


def _change_line(change: dict[str, Any]) -> str:
    """One line of a budget history: what changed, when, by whom, what was spent then, and why."""
    after, spent = change["after"], change["spent"]
    what = f"budget {change['change']}"
    if change["before"] is not None:
        what += f" from (ε {change['before']['epsilon']:g}, δ {change['before']['delta']:g})"
    what += f" to (ε {after['epsilon']:g}, δ {after['delta']:g})"
    when = change["created_at"][:19].replace("T", " ")
    line = f"{when} UTC: {what} by {printable(change['changed_by'])} (spent then: ε {rounded_up(spent['epsilon'], 6)}, δ {rounded_up(spent['delta'], 3)})"
    return line + (f": {printable(change['reason'])}" if change["reason"] else "")


def _budget_line(budget: Any) -> str:
    line = (f"'{printable(budget.name)}' has the budget (ε {budget.budget.epsilon:g}, δ {budget.budget.delta:g}); "
            f"spent so far (ε {rounded_up(budget.spent.epsilon, 6)}, δ {rounded_up(budget.spent.delta, 3)})")
    if budget.spent.epsilon > budget.budget.epsilon or budget.spent.delta > budget.budget.delta:
        line += "; more than the budget is spent: nothing more can be charged"
    return line


def register(app: typer.Typer) -> None:
    @ledger_app.command("init")
    def init_command(
        data: DataArg,
        epsilon: Annotated[float, number_option("--epsilon", "-e", help="Total ε for every query and release on this data.")],
        delta: Annotated[float | None, number_option("--delta", help="Total δ (required; 0 for a budget of "
                                                            "pure ε-DP queries only).")] = None,
        name: Annotated[str | None, typer.Option("--name", help="A name for the dataset (default: its file or bundled name).")] = None,
        ledger: LedgerOpt = None,
        schema: SchemaOpt = None,
        decimal_comma: DecimalCommaOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Set a dataset's total privacy budget (change it later with `crowdsafe ledger budget`).

        Example: crowdsafe ledger init adult --epsilon 1 --delta 1e-6
        """
        if delta is None:
            raise ParameterError(
                "--delta is required: the total δ of the budget, e.g. 1e-6, or 0 for a budget of pure ε-DP "
                "queries only (publish needs δ > 0)"
            )
        budget = api.set_budget(data, epsilon=epsilon, delta=delta, name=name, ledger=_spec(ledger), schema=schema,
                                decimal_comma=decimal_comma)
        emit(budget.as_dict(), as_json, lambda: Console().print(_budget_line(budget)))

    @ledger_app.command("budget")
    def budget_command(
        dataset: Annotated[str, typer.Argument(
            help="The dataset: its name or fingerprint in the ledger (see `crowdsafe ledger show`), or its data.")],
        epsilon: Annotated[float, number_option("--epsilon", "-e", help="The new total ε.")],
        delta: Annotated[float, number_option("--delta", help="The new total δ.")],
        allow_raise: Annotated[bool, typer.Option(
            "--raise", help="Allow a larger ε or δ than the budget has now (recorded in the budget history).")] = False,
        reason: Annotated[str, typer.Option("--reason", help="Why, for the budget history.")] = "",
        ledger: LedgerOpt = None,
        schema: SchemaOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Change a dataset's total budget, on the record: lower it, or raise it with --raise.

        Every change is a line of the dataset's budget history (`crowdsafe ledger show`: before,
        after, what was spent then, who, when, --reason); no charge is erased, so what was spent
        keeps counting against the new budget.

        Example: crowdsafe ledger budget adult --epsilon 3 --delta 1e-6 --raise --reason "delta was left out"
        """
        budget = api.change_budget(dataset, epsilon=epsilon, delta=delta, allow_raise=allow_raise, reason=reason,
                                   ledger=_spec(ledger), schema=schema)
        emit(budget.as_dict(), as_json, lambda: Console().print(_budget_line(budget)))

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
            if not out.name.lower().endswith(".json"):
                raise InputError(f"the ledger export is JSON: name it with .json, not {out.name}")
        report = api.ledger_report(_spec(ledger), dataset)
        if out is not None:
            from crowdsafe.output_guard import json_document

            # the ledger's facts, custodian-only: the owner's alone, as the ledger file itself
            write_text_atomic(out, json_document(report, default=str, ensure_ascii=False), mode=PRIVATE)
        emit(report, as_json, lambda: render_report(report, Console()))

    @ledger_app.command("verify")
    def verify_command(
        release: Annotated[Path, typer.Argument(help="The release table, with its certificate beside it.")],
        certificate: Annotated[Path | None, typer.Option("--certificate", help="The certificate, when it is not beside the release (perturb --certificate wrote it elsewhere).")] = None,
        ledger: LedgerOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Check that a release and its certificate are the files a run recorded in this ledger wrote.

        The ledger records the SHA-256 of every table and certificate `crowdsafe publish` and
        `crowdsafe perturb` write (a Spark folder: of its part files, in the order of their paths);
        an edited table or certificate, or another run's table beside the certificate, is refused
        (exit 2), naming the ledger entry.

        Example: crowdsafe ledger verify release/adult.csv
        """
        from crowdsafe.drivers.verify import verify_release

        found = verify_release(release, api.ledger_report(_spec(ledger)), certificate)
        emit(found, as_json, lambda: Console().print(
            f"{printable(found['release'])} and its certificate are the files {printable(found['matches'])} wrote "
            f"(charged ε {rounded_up(found['epsilon'])}, δ {rounded_up(found['delta'], 3)}; SHA-256 of the table "
            f"{found['table_sha256']})", soft_wrap=True))

    app.add_typer(ledger_app)
