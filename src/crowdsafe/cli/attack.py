"""``crowdsafe attack ...``: run an attack on releases and print what it reveals."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from crowdsafe.cli.lazy import lazy_module, styled
from crowdsafe.cli.options import (
    DecimalCommaOpt,
    EngineOpt,
    EscapeFormulasOpt,
    ForceOpt,
    JsonOpt,
    QiOpt,
    SchemaOpt,
    SensitiveOpt,
    SparkMasterOpt,
    emit,
    split_list,
    split_names,
)
from crowdsafe.cli.unused import refuse_unused
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import parse_number, quantity

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from crowdsafe import api
else:
    from crowdsafe.cli.lazy import Console, Table
    api = lazy_module("crowdsafe.api")


TargetsOpt = Annotated[
    str, typer.Option("--targets", help="The targets: a CSV/Parquet file or bundled dataset holding their "
                                        "quasi-identifiers (and, to score breaches, their true sensitive value).")
]
LocationOpt = Annotated[
    str, typer.Option("--location", help="How a target's class is found: auto, exact (generalization) or "
                                         "nearest (centroids of microaggregation).")
]
LevelsOpt = Annotated[
    str, typer.Option("--levels", help="Confidence levels of the partial-breach rates, comma-separated.")
]
SuppressedOpt = Annotated[
    str | None, typer.Option("--suppressed", help="Cells marking a suppressed quasi-identifier cell in another "
                                                  "tool's releases, comma-separated (sdcMicro writes NA; '' for an "
                                                  "empty cell): read as *, which may stand for any value.")
]
PerTargetOpt = Annotated[
    Path | None, typer.Option("--out", "-o", help="Also write the per-target table (.csv or .parquet): custodian-only "
                                                  "when the targets are your data, so it is created readable by you "
                                                  "alone and may not lie in a release's folder.")
]
TruthOpt = Annotated[
    str | None, typer.Option("--truth-id", help="A record id column in the targets and releases, used only "
                                                  "to measure how often the located class is the true one.")
]


def _tokens(text: str | None) -> list[str]:
    """--suppressed's cells: comma-separated, each stripped (``''`` or ``""`` for an empty cell)."""
    tokens = [t.strip() for t in (text or "").split(",")] if text is not None else []
    return ["" if t in ("''", '""') else t for t in tokens]


def _levels(text: str) -> list[float]:
    return [parse_number(v, "--levels") for v in split_list(text) or []]


#: How to have such cells read: a hierarchy's labels (crowdsafe's own dates, 2024-03, 2020s) need the
#: schema that has it, other tools' bands a rewrite, a suppression mark --suppressed (docs/attacks.md).
UNREAD_FIX = ("under-reports what they reveal; give --schema with the column's hierarchy where they are its labels "
              "(a release's months or decades: 2024-03, 2020s), rewrite them as ranges such as [20, 29], or give --suppressed "
              "NA where they mark a suppressed cell (docs/attacks.md)")


#: What ``--out`` holds: one row per target, scored against its true value when the targets hold it.
TARGETS_NOTICE = ("custodian only: one row per target, with the target's true value where the targets hold it; "
                  "readable by you alone, never to be put beside a release")


def render(payload: dict[str, Any], console: Console) -> None:
    s = payload["summary"]
    releases, targets = s["releases"], s["targets"]
    console.print(styled(("Intersection attack", "bold"), f" on {releases} release{'s' * (releases != 1)}, "
                         f"{targets:,} target{'s' * (targets != 1)} (sensitive: {s['sensitive']})"))
    table = Table(title="Releases", title_justify="left")
    for column in ("release", "presumed k", "classes", "location", "located", "correct location",
                   "avg partition", "avg prior anonymity"):
        table.add_column(column, justify="right")
    for r in payload["releases"]:
        correct = "-" if r["correct_location"] is None else f"{r['correct_location']:.1%}"
        partition = "-" if r["average_partition_size"] is None else f"{r['average_partition_size']:.1f}"
        table.add_row(r["release"], str(r["presumed_k"] or "-"), f"{r['classes']:,}", r["location"],
                      f"{r['located']:.1%}", correct, partition, f"{r['average_prior_anonymity']:.2f}")
    console.print(table)
    console.print(f"effective anonymity: prior {s['average_prior_anonymity']:.2f} -> posterior "
                  f"{s['average_posterior_anonymity']:.2f} (average drop {s['average_drop']:.2f})")
    console.print(f"vulnerable (positive drop): {s['vulnerable']:.1%}")
    line = f"perfect breach: {s['perfect_breach']:.1%}"
    if "perfect_breach_true" in s:
        line += f" (true value: {s['perfect_breach_true']:.1%})"
    console.print(line)
    console.print("partial breach: " + ", ".join(f"confidence >= {c}: {v:.1%}" for c, v in s["partial_breach"].items()))
    if s["contradictions"]:
        console.print(f"note: {quantity(s['contradictions'], 'target')} got contradictory candidate sets (not in every release)")
    for r in payload["releases"]:
        if r.get("unread_cells"):
            console.print(f"note: release {r['release']} holds cells the attack cannot read, taken to cover no value "
                          f"({r['unread_cells']}): the classes holding them locate no target, so the attack "
                          f"{UNREAD_FIX}")
        if s["targets"] and not r["located"]:
            console.print(f"note: release {r['release']} holds none of the targets: no class has cells covering a "
                          "target's values (hierarchy labels need --schema with the column's hierarchy; the cells "
                          "read are listed in docs/attacks.md)")
    if payload.get("written"):
        console.print(f"wrote {payload['written']} ({TARGETS_NOTICE})", markup=False, highlight=False)


def _declared_roles(schema: Path, names: list[str] | None, sensitive: str | None) -> tuple[list[str] | None, str | None]:
    """--qi and --sensitive where not given, from the roles ``schema`` declares: its one sensitive
    attribute, and its quasi-identifiers but that one (what the app's attack takes the attacker
    to know). A new user's walk-through found ``--schema`` with every role declared refused for
    want of ``--qi``. Read from the schema file only, before any data."""
    from crowdsafe.data import Schema

    declared = Schema.from_toml(schema)
    if sensitive is None and len(declared.sensitive) == 1:
        sensitive = declared.sensitive[0]
    if not names:
        names = [c for c in declared.quasi_identifiers if c != sensitive] or None
    return names, sensitive


def register(app: typer.Typer) -> None:
    attack_app = typer.Typer(help="Attacks on releases: what an attacker learns.", no_args_is_help=True)
    app.add_typer(attack_app, name="attack")

    @attack_app.command("intersection")
    def intersection_command(
        releases: Annotated[list[Path], typer.Argument(
            help="Release files (CSV or Parquet): two or more to intersect (one gives its own homogeneity).")],
        targets: TargetsOpt,
        qi: QiOpt = None,
        sensitive: SensitiveOpt = None,
        location: LocationOpt = "auto",
        levels: LevelsOpt = "0.25,0.5",
        truth_id: TruthOpt = None,
        suppressed: SuppressedOpt = None,
        schema: SchemaOpt = None,
        decimal_comma: DecimalCommaOpt = None,
        out: PerTargetOpt = None,
        escape_formulas: EscapeFormulasOpt = True,
        force: ForceOpt = False,
        as_json: JsonOpt = False,
        engine: EngineOpt = "polars",
        spark_master: SparkMasterOpt = None,
    ) -> None:
        """Intersect what independent releases say about each target (composition attack).

        For every target, locate its class in every release from its quasi-identifiers, and
        intersect the sets of sensitive values of those classes. Prints effective anonymity
        before and after, the anonymity drop, and perfect / partial breach rates. With --engine
        spark the joins run on Spark (releases and targets are paths; --out writes Parquet).

        Example: crowdsafe attack intersection r1.csv r2.csv --targets targets.csv --qi age,sex,zip --sensitive disease
        """
        names = split_names(qi, "--qi")
        if schema is not None and (not names or sensitive is None):  # the roles the schema declares
            names, sensitive = _declared_roles(schema, names, sensitive)
        if not names:
            raise ParameterError("name the quasi-identifiers the attacker knows with --qi a,b,c (or give a --schema "
                                 "that declares them)")
        if sensitive is None:
            raise ParameterError("name the sensitive attribute with --sensitive (or give a --schema that declares "
                                 "one)")
        if sensitive in names:  # the attacker would be handed the value it is after
            raise ParameterError(f"'{sensitive}' cannot be both a quasi-identifier (--qi) and the sensitive "
                                 "attribute (--sensitive)")
        if out is None:
            refuse_unused({"--force": force}, "--out only (nothing is written without it)")
        if out is not None:  # before anything is read
            from crowdsafe.drivers.run_files import data_inputs, guard, release_inputs
            from crowdsafe.engines import get_engine
            from crowdsafe.output_guard import Output, OutputKind

            read = [i for r in releases for i in release_inputs(r)] + data_inputs(targets, "the targets")
            runner = get_engine(engine, master=spark_master)
            runner.check_attack_out(out)  # the engine's own refusal, before the attack runs
            # custodian-only (one row per target, scored against its true value): never in a release's folder;
            # on Spark a folder of parts, which a rerun replaces with --force as the Polars engine's file
            guard([Output(out, "the per-target table", OutputKind.PLAIN, custodian=True, folder=runner.folder_tables)],
                  schema=schema, inputs=read, force=force)
        result = api.attack(list(releases), targets, qi=names, sensitive=sensitive, location=location,
                            levels=_levels(levels), truth_id=truth_id, schema=schema, decimal_comma=decimal_comma,
                            engine=engine, spark_master=spark_master, suppressed=_tokens(suppressed))
        payload = result.as_dict()
        if out is not None:
            from crowdsafe.engines import get_engine

            payload["written"] = get_engine(engine, master=spark_master).write_attack_targets(
                result.targets, out, escape_formulas=escape_formulas)
            payload["written_notice"] = TARGETS_NOTICE
        emit(payload, as_json, lambda: render(payload, Console()))

    @attack_app.command("linkage")
    def linkage_command(
        release: Annotated[Path, typer.Argument(help="The release file (CSV or Parquet).")],
        external: Annotated[str, typer.Option("--external", help="The identified external table (e.g. a voter "
                                                                "list): a CSV/Parquet file holding the --qi columns.")],
        qi: QiOpt = None,
        truth_id: TruthOpt = None,
        suppressed: SuppressedOpt = None,
        schema: SchemaOpt = None,
        decimal_comma: DecimalCommaOpt = None,
        as_json: JsonOpt = False,
    ) -> None:
        """Link a release with an identified table on shared quasi-identifiers (re-identification).

        Counts the published rows consistent with exactly one external record (re-identified
        uniquely) and with at most two (named with probability at least 1/2).

        Example: crowdsafe attack linkage release.csv --external voters.csv --qi age,sex,zip
        """
        names = split_names(qi, "--qi")
        if not names:
            raise ParameterError("name the quasi-identifiers shared with the external table with --qi a,b,c")
        result = api.attack([release], external, qi=names, kind="linkage", truth_id=truth_id, schema=schema,
                            decimal_comma=decimal_comma, suppressed=_tokens(suppressed))
        payload = result.as_dict()

        def show() -> None:
            s = payload["summary"]
            console = Console()
            console.print(styled(("Linkage attack", "bold"), f": {s['release_rows']:,} published rows against "
                                 f"{s['external_records']:,} identified records on {', '.join(s['quasi_identifiers'])}"))
            console.print(f"re-identified uniquely: {s['reidentified_uniquely']:,}")
            console.print(f"re-identified with probability >= 1/2: {s['reidentified_with_probability_at_least_half']:,}")
            console.print(f"expected correct links (if every row's person is listed): "
                          f"{s['expected_correct_links_if_listed']:,.1f}")
            if "reidentified_uniquely_correct" in s:
                console.print(f"unique links naming the right person: {s['reidentified_uniquely_correct']:,}")
            if s.get("unread_cells"):
                console.print(f"note: the release holds cells the attack cannot read, taken to cover no value "
                              f"({s['unread_cells']}): the rows holding them link to nobody, so the attack {UNREAD_FIX}")

        emit(payload, as_json, show)
