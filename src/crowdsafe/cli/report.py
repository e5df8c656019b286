"""``crowdsafe report RELEASE [--out FILE]``: rebuild a release's (or an α-β view's) HTML report.

The report is built from the release file and its certificate only, by the same function that
``publish`` and ``anonymize`` call when they write it, so without ``--before`` the file rebuilt
equals the one written beside the release, byte for byte. ``--before DATA --before-epsilon E``
adds noisy, differentially private distributions of the original data: DP histogram queries
charged to the data's budget in the ledger (E in total), each labelled with its ε; that report
goes to ``<stem>.before.report.html`` unless ``--out`` says otherwise, so the report written at
publish is kept.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from crowdsafe.cli.options import DecimalCommaOpt, ForceOpt, JsonOpt, SchemaOpt, SeedOpt, emit, number_option
from crowdsafe.errors import ParameterError
from crowdsafe.identity import printable
from crowdsafe.number_text import rounded_up


def _guard(release: Path, certificate: Path | None, out: Path | None, before: str | None, schema: Path | None,
           ledger: Path | None, force: bool) -> Path:
    """The report's path (``--out``, else ``<stem>.report.html``, with ``--before``
    ``<stem>.before.report.html``), checked against what the run reads (the release and its certificate;
    with --before the original data, its schema and the ledger) before anything is read or
    charged (:mod:`crowdsafe.output_guard`)."""
    from crowdsafe.drivers.run_files import guard, release_inputs
    from crowdsafe.output_guard import Output, OutputKind
    from crowdsafe.report.build import report_path

    target = out if out is not None else report_path(release, before=before is not None)
    guard([Output(target, "the report", OutputKind.REPORT, of=release)], inputs=release_inputs(release, certificate),
          data=before, schema=schema if before is not None else None,
          ledger=(ledger if ledger is not None else "default") if before is not None else None, force=force)
    return target


def register(app: typer.Typer) -> None:
    @app.command("report")
    def report_command(
        release: Annotated[Path, typer.Argument(help="The release table or α-β view (.csv or .parquet, or a Spark folder), with its certificate beside it.")],
        certificate: Annotated[Path | None, typer.Option("--certificate", help="An α-β view's certificate when it is not beside the view (default: <stem>.certificate.json).")] = None,
        out: Annotated[Path | None, typer.Option("--out", "-o", help="Where to write the report (default: <stem>.report.html beside the release; with --before, <stem>.before.report.html, so the report written at publish is kept).")] = None,
        before: Annotated[str | None, typer.Option("--before", help="The original table (file or bundled name): add noisy DP distributions of it, charged to its budget (needs --before-epsilon).")] = None,
        before_epsilon: Annotated[float | None, number_option("--before-epsilon", help="ε spent on the before-distributions in total, split evenly between the attributes.")] = None,
        before_delta: Annotated[float, number_option("--before-delta", help="δ of each before-histogram (0: every column needs a public domain).")] = 0.0,
        schema: SchemaOpt = None,
        decimal_comma: DecimalCommaOpt = None,
        ledger: Annotated[Path | None, typer.Option("--ledger", help="The budget ledger charged for --before (default: $CROWDSAFE_LEDGER, else $XDG_DATA_HOME/crowdsafe/ledger.sqlite3, ~/.local/share/crowdsafe/ledger.sqlite3 without it).")] = None,
        name: Annotated[str | None, typer.Option("--name", help="The original table's name in the ledger (as given to publish).")] = None,
        seed: SeedOpt = None,
        force: ForceOpt = False,
        as_json: JsonOpt = False,
    ) -> None:
        """Rebuild the self-contained HTML report of a release or an alpha-beta view from the table and its certificate.

        Example: crowdsafe report release/adult.csv

        Example (a view written by crowdsafe perturb): crowdsafe report view.csv

        Example (with noisy before-distributions, ε = 0.5 in total): crowdsafe report release/adult.csv --before adult --before-epsilon 0.5
        """
        from crowdsafe.report import write_report

        if (before is None) != (before_epsilon is None):
            raise ParameterError("--before DATA and --before-epsilon E go together")
        if out is not None and out.suffix.lower() not in (".html", ".htm"):
            raise ParameterError(f"the report is HTML: give --out a .html file name, not {out}")
        target = _guard(release, certificate, out, before, schema, ledger, force)
        distributions = []
        if before is not None and before_epsilon is not None:
            from crowdsafe.report.build import read_certificate
            from crowdsafe.report.view_content import is_view_certificate

            if is_view_certificate(read_certificate(release, certificate)):
                raise ParameterError("--before is for releases: a view's report shows the estimates computed from "
                                     "the view itself")
            from crowdsafe.report.before import before_distributions
            from crowdsafe.report.build import release_content

            columns = release_content(release).quasi_identifiers  # refuse a bad release before anything is charged
            distributions = before_distributions(before, columns, before_epsilon, delta=before_delta, schema=schema,
                                                 ledger=ledger if ledger is not None else "default", name=name,
                                                 seed=seed, decimal_comma=decimal_comma)
        written = write_report(release, target, distributions, certificate)
        payload: dict[str, Any] = {"report": str(written), "before": [
            {"attribute": b.name, "epsilon": b.epsilon, "delta": b.delta} for b in distributions]}
        charges = [b.ledger for b in distributions if b.ledger is not None]
        if charges:  # which ledger was charged, as publish, query and perturb say (the last charge's totals)
            payload["ledger"] = {"path": charges[-1]["path"], "dataset": charges[-1]["dataset"],
                                 "entries": [c["entry"] for c in charges], "spent": charges[-1]["spent"],
                                 "budget": charges[-1]["budget"]}

        def show() -> None:
            typer.echo(f"wrote {written}")
            for b in distributions:
                typer.echo(f"  before-distribution of {b.name}: DP histogram, epsilon = {rounded_up(b.epsilon)}, "
                           f"delta = {rounded_up(b.delta)} (charged)")
            if charges:
                booked = payload["ledger"]
                entries = booked["entries"]
                listed = f"#{entries[0]}" + (f" to #{entries[-1]}" if len(entries) > 1 else "")
                typer.echo(f"  ledger: charged to '{printable(booked['dataset'])}' (entries {listed}); spent epsilon "
                           f"{rounded_up(booked['spent']['epsilon'], 6)} of {booked['budget']['epsilon']:g}, delta "
                           f"{rounded_up(booked['spent']['delta'], 3)} of {booked['budget']['delta']:g} "
                           f"({printable(booked['path'])})")

        emit(payload, as_json, show)
