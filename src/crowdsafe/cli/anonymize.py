"""``crowdsafe anonymize DATA``: classic k-anonymization (Mondrian, MDAV, lattice search).

It prints (and ``--json`` gives) the release's public summary (parameters, rows and classes of
the release) and, under a heading that says so, the custodian-only facts: rows read and
suppressed, utility against the input, the search's diagnostics. These releases carry no formal
guarantee, and those facts are not part of the release.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

import typer

from crowdsafe.cli.lazy import lazy_module, styled
from crowdsafe.cli.options import (
    DataArg,
    DecimalCommaOpt,
    EscapeFormulasOpt,
    ForceOpt,
    JsonOpt,
    OutOpt,
    QiOpt,
    SchemaOpt,
    SensitiveOpt,
    emit,
    number_option,
    plain_notes,
    print_warnings,
    split_names,
    whole_option,
)
from crowdsafe.cli.unused import refuse_unused
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import quantity

if TYPE_CHECKING:
    from rich.console import Console

    from crowdsafe import api
else:
    from crowdsafe.cli.lazy import Console
    api = lazy_module("crowdsafe.api")


AlgorithmOpt = Annotated[
    str, typer.Option("--algorithm", "-a", help="mondrian, mdav or lattice (full-domain generalization).")
]
KOpt = Annotated[int, whole_option("--k", "-k", help="Every published class holds at least k rows.")]
LOpt = Annotated[
    float | None, number_option("--l", help="Entropy ℓ-diversity of the sensitive attribute in every class.")
]
TOpt = Annotated[
    float | None,
    number_option("--t", help="t-closeness (Earth Mover's Distance) of the sensitive attribute in every class."),
]
DistanceOpt = Annotated[
    str | None,
    typer.Option("--distance", "--ground", help="t-closeness ground distance: equal, ordered or hierarchical "
                                    "(default: ordered for numeric/ordinal, else equal; --ground, as check names it)."),
]
ModeOpt = Annotated[
    str | None, typer.Option("--mode", help="Mondrian partitioning: strict or relaxed.", show_default="strict")
]
CategoricalOpt = Annotated[
    str | None, typer.Option("--categorical", help="Mondrian categorical cells: node (lowest common hierarchy "
                                                   "node) or set (the values present).", show_default="node")
]
AggregateOpt = Annotated[
    str | None, typer.Option("--aggregate", help="MDAV numeric centroids: mean or median.", show_default="mean")
]
LossOpt = Annotated[
    str | None, typer.Option("--loss", help="Lattice: the loss to minimize (gcp, entropy, precision, height, "
                                            "discernibility).", show_default="gcp")
]
SuppressionOpt = Annotated[
    float | None,
    number_option("--suppression-limit", help="Largest share of rows that may be suppressed (lattice default 0)."),
]
SearchOpt = Annotated[
    str | None, typer.Option("--search", help="Lattice search: optimal, greedy or auto.", show_default="auto")
]
BudgetOpt = Annotated[
    float | None,
    number_option("--time-budget", help="Seconds the greedy lattice search may take.", show_default="30"),
]
MissingOpt = Annotated[
    str, typer.Option("--missing", help="Missing values: keep (a value of its own), drop or error.")
]


def _utility(release: Any) -> dict[str, Any]:
    u = release.utility()
    out = {
        "gcp": u.gcp,
        "ncp": u.ncp,
        "discernibility": u.discernibility,
        "c_avg": u.c_avg,
        "average_class_size": u.average_class_size,
        "suppression_rate": u.suppression_rate,
    }
    if getattr(release.recoding, "extents", None) is not None:
        out["note"] = "NCP/GCP of each group's extent (the centroid published lies within it)"
    return out


CUSTODIAN_HEADING = "custodian only (exact facts about the input; do not publish them):"

#: How the lattice search's minimized loss (``--loss``) reads, by metric (crowdsafe.metrics.InformationLoss.loss).
_MINIMIZED = {"gcp": "GCP", "entropy": "non-uniform entropy, normalized (0 = nothing lost, 1 = all suppressed)",
              "precision": "1 - precision", "height": "generalization height", "discernibility": "discernibility"}


def _minimized(payload: dict[str, Any]) -> list[str]:
    """The line giving the value the lattice search minimized, under the name of its ``--loss``
    (an ARX user who asked for non-uniform entropy looks for it): custodian-only, like the rest."""
    search, parameters = payload["custodian_only"].get("search", {}), payload.get("parameters", {})
    metric = parameters.get("search", {}).get("metric") if isinstance(parameters.get("search"), dict) else None
    if metric is None or "loss" not in search:
        return []
    value = search["loss"]
    shown = f"{value:,.0f}" if abs(value) >= 1000 else f"{value:.4g}"
    return [f"minimized       {_MINIMIZED.get(metric, metric)}: {shown} (--loss {metric})"]


def render(payload: dict[str, Any], console: Console) -> None:
    console.print(styled(
        (payload["algorithm"], "bold"), f", k = {payload['k']}: {quantity(payload['rows_published'], 'row')} "
        f"published in {quantity(payload['classes'], 'class', 'classes')} (smallest {payload['smallest_class']})"
    ))
    console.print(f"quasi-identifiers: {', '.join(payload['quasi_identifiers'])}")
    for note in plain_notes(payload["notes"]):
        console.print(f"note: {note}")
    console.print(styled(("guarantee:", "bold"), f" {payload['guarantee']}"))
    if payload.get("written"):
        console.print(f"wrote {payload['written']['table']} and {payload['written']['certificate']}")
        if payload["written"].get("report"):
            console.print(f"report {payload['written']['report']} (no formal guarantee, as the certificate says)")
    custodian = payload["custodian_only"]
    utility = custodian["utility"]
    lines = [
        f"rows read       {custodian['rows_in']:,}; {custodian['rows_suppressed']:,} suppressed "
        f"({custodian['suppression_rate']:.2%})",
        f"GCP (mean NCP)  {utility['gcp']:.4f}",
        *(f"  NCP {_padded(name, 11)} {value:.4f}" for name, value in utility["ncp"].items()),
        f"discernibility  {utility['discernibility']:,.0f}",
        f"C_avg           {utility['c_avg']:.3f}",
        f"suppression     {utility['suppression_rate']:.2%}",
        *_minimized(payload),
        *([f"note: {utility['note']}"] if "note" in utility else []),
        *(f"note: {note}" for note in custodian.get("search", {}).get("notes", [])),
    ]
    console.print(CUSTODIAN_HEADING, markup=False, highlight=False)
    for line in lines:
        console.print(f"  {line}", markup=False, highlight=False, soft_wrap=True)


def _padded(name: str, width: int) -> str:
    """``name`` padded with spaces to ``width`` terminal cells: a Japanese character takes two, a
    combining accent none (``f"{name:<11}"`` counted characters, so the figures after Japanese or
    decomposed names stood out of line)."""
    from rich.cells import cell_len

    return name + " " * max(width - cell_len(name), 0)


def register(app: typer.Typer) -> None:
    @app.command("anonymize")
    def anonymize_command(
        data: DataArg,
        algorithm: AlgorithmOpt = "mondrian",
        k: KOpt = 10,
        qi: QiOpt = None,
        sensitive: SensitiveOpt = None,
        l: LOpt = None,
        t: TOpt = None,
        distance: DistanceOpt = None,
        mode: ModeOpt = None,
        categorical: CategoricalOpt = None,
        aggregate: AggregateOpt = None,
        loss: LossOpt = None,
        suppression_limit: SuppressionOpt = None,
        search: SearchOpt = None,
        time_budget: BudgetOpt = None,
        schema: SchemaOpt = None,
        decimal_comma: DecimalCommaOpt = None,
        missing: MissingOpt = "keep",
        out: OutOpt = None,
        escape_formulas: EscapeFormulasOpt = True,
        force: ForceOpt = False,
        no_report: Annotated[bool, typer.Option("--no-report", help="Do not write the HTML report (<name>.report.html) beside the release.")] = False,
        as_json: JsonOpt = False,
    ) -> None:
        """k-anonymize with a classic algorithm: Mondrian, MDAV microaggregation or a lattice search.

        These algorithms fit the recoding to the data, so the release carries NO formal
        guarantee however large k is (its certificate says so); use `crowdsafe publish` for a
        release with one. The table and its certificate (NAME.certificate.json) are written
        together, atomically.

        Example: crowdsafe anonymize adult --algorithm mondrian --k 10 --l 3 --sensitive occupation --out release.csv
        """
        from crowdsafe.anonymize.release import certificate_path, discard_written
        from crowdsafe.csv_safety import format_note

        if out is None:  # before anything is read
            refuse_unused({"--force": force, "--no-report": no_report}, "--out only (nothing is written without it)")
        if sensitive is not None and "," in sensitive:
            raise ParameterError("anonymize protects one sensitive attribute; give a single name to --sensitive")
        # the outputs are checked before the data is read (api.anonymize: crowdsafe.output_guard)
        release = api.anonymize(
            data, algorithm=algorithm, k=k, qi=split_names(qi, "--qi"), sensitive=sensitive, l=l, t=t,
            schema=schema, missing=missing, decimal_comma=decimal_comma, distance=distance, mode=mode, categorical=categorical,
            aggregate=aggregate, loss=loss, suppression_limit=suppression_limit, search=search,
            time_budget=time_budget, out=out, escape_formulas=escape_formulas, report=not no_report, force=force,
        )
        written = [] if out is None else [out, certificate_path(out)]
        if out is not None and not no_report:
            from crowdsafe.report import report_path

            written.append(report_path(out))
        try:  # the files are written: a failure measuring the release must not leave them behind
            payload = release.summary()
            payload["custodian_only"] = {**release.custodian_report(), "utility": _utility(release)}
        except BaseException:
            discard_written(written)
            raise
        print_warnings(release.notes)
        certificate_of_file = release.certificate
        if out is not None:
            payload["written"] = {"table": str(out), "certificate": str(written[1])}
            if not no_report:
                payload["written"]["report"] = str(written[2])
            certificate_of_file = certificate_of_file.with_format_notes(format_note(out, escape_formulas=escape_formulas))
        payload["certificate"] = certificate_of_file.to_dict()
        emit(payload, as_json, lambda: render(payload, Console()))
