"""``crowdsafe datasets``: list the bundled datasets, export one, or write a synthetic Adult."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from crowdsafe.cli.check import MissingOpt
from crowdsafe.cli.lazy import lazy_module
from crowdsafe.cli.options import EscapeFormulasOpt, ForceOpt, JsonOpt, StrictNumber, emit, whole_option
from crowdsafe.number_text import quantity

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from crowdsafe import datasets as bundled
else:
    from crowdsafe.cli.lazy import Console, Table

    bundled = lazy_module("crowdsafe.datasets")

# The bundled datasets' names, for the help of ``datasets export`` without importing the data
# layer; tests/cli/test_lazy_imports.py checks them against crowdsafe.datasets.names().
BUNDLED_NAMES = ("adult", "adult-test", "adult-all", "people", "german-customers")


def _guard(out: Path, force: bool) -> None:
    """A special file, or an existing file without --force, is refused before anything is made
    (:mod:`crowdsafe.output_guard`: a plain table carries no mark of crowdsafe's)."""
    from crowdsafe.output_guard import Output, OutputKind, check_outputs

    check_outputs([Output(out, "the output", OutputKind.PLAIN, parameter=None)], force=force)


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="The bundled datasets and the synthetic Adult generator.", no_args_is_help=True)
    app.add_typer(group, name="datasets")

    @group.command("list")
    def list_command(as_json: JsonOpt = False) -> None:
        """List the bundled datasets.

        Example: crowdsafe datasets list --json
        """
        entries = bundled.catalogue()

        def render() -> None:
            table = Table(title="Bundled datasets", title_justify="left")
            for heading in ("name", "rows", "description"):
                table.add_column(heading, justify="right" if heading == "rows" else "left")
            for entry in entries:
                table.add_row(entry["name"], f"{entry['rows']:,}", entry["description"])
            console = Console()
            console.print(table)
            for source in dict.fromkeys(entry["source"] for entry in entries):
                named = ", ".join(e["name"] for e in entries if e["source"] == source)
                console.print(f"source of {named}: {source}")

        emit(entries, as_json, render)

    @group.command("export")
    def export_command(
        name: Annotated[str, typer.Argument(help="A bundled dataset: " + ", ".join(BUNDLED_NAMES))],
        out: Annotated[Path, typer.Argument(help="Output file (.csv or .parquet).")],
        missing: MissingOpt = "keep",
        escape_formulas: EscapeFormulasOpt = True,
        force: ForceOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Write a bundled dataset to a CSV or Parquet file (atomically; CSV cells formula-safe
        unless --no-escape-formulas).

        Example: crowdsafe datasets export adult out.csv --missing drop
        """
        from crowdsafe.data import write

        _guard(out, force)
        dataset = bundled.load_bundled(name, missing=missing)
        write(dataset, out, escape_formulas=escape_formulas)
        payload = {"dataset": name, "rows": dataset.n_rows, "path": str(out),
                   "missing": dataset.missing.describe()}
        emit(payload, as_json, lambda: typer.echo(
            f"wrote {quantity(dataset.n_rows, 'row')} of {name} to {out} (missing values: {dataset.missing.describe()})"
        ))

    @group.command("synthetic")
    def synthetic_command(
        rows: Annotated[int, typer.Argument(help="Number of rows, e.g. 1000000.", parser=StrictNumber("ROWS", whole=True))],
        out: Annotated[Path, typer.Argument(help="Output file (.csv or .parquet).")],
        seed: Annotated[int, whole_option("--seed", help="Seed of the generator (benchmark data, not a release).")] = 0,
        force: ForceOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Write a synthetic Adult with ROWS rows (Adult's marginals and rough correlations).

        Example: crowdsafe datasets synthetic 1000000 adult-1m.parquet --seed 1
        """
        from crowdsafe.data import write

        _guard(out, force)
        dataset = bundled.synthetic(rows, seed)
        write(dataset, out)
        emit({"rows": rows, "seed": seed, "path": str(out)}, as_json,
             lambda: typer.echo(f"wrote {rows:,} synthetic Adult rows to {out} (seed {seed})"))
