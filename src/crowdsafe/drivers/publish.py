"""The publish driver: the safe pipeline's sequence, once for every engine.

plan → a fixed scheme checked against the declared schema (:func:`check_scheme_before_reading`) →
the table read → refusals from the schema and the paths → ledger check (consumed input, budget) → release
identities → samples drawn → **ledger charge** → per release: count, choose the recoding (Am),
Apply, certify → custodian facts (ledger entry, optional file; a heavy-suppression warning, if
any, goes there only) → write, whatever the release suppressed. The engine
(:class:`~crowdsafe.engines.protocol.Engine`) draws and counts the samples, materialises the
published classes and writes the files; every decision about what leaves the
run is taken here, by the same code for every engine (:mod:`crowdsafe.anonymize.publish` holds
the pipeline's steps: the plan, Am, Apply, the certificate). What the run is asked for arrives
as two typed requests built once by :func:`crowdsafe.api.publish`: the
:class:`~crowdsafe.anonymize.plan.PlanRequest` (fixed before the data is read) and the
:class:`~crowdsafe.anonymize.publish.RunOptions` (how the run is carried out and written).
"""

from __future__ import annotations

import contextlib
import functools
import os
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crowdsafe.anonymize.counted import published_only
from crowdsafe.anonymize.publish import (
    DEFAULT_RUN_OPTIONS,
    Publication,
    PublishPlan,
    RunOptions,
    certify_release,
    choose_recoding,
    outside_hierarchies,
    public_choice,
    release_facts,
)
from crowdsafe.anonymize.published import published_scheme
from crowdsafe.csv_safety import format_note
from crowdsafe.data import Dataset
from crowdsafe.drivers.verify import written_digests
from crowdsafe.errors import LEDGER_REFUSAL, ParameterError, SampleReuseError
from crowdsafe.files import literal_path
from crowdsafe.mechanisms.contribution import refuse_person_rows
from crowdsafe.number_text import rounded_down, rounded_up
from crowdsafe.output_guard import is_local
from crowdsafe.privacy import Certificate, compose_certificates
from crowdsafe.privacy.ledger import Ledger, LedgerSpec, ledger_for
from crowdsafe.progress import working
from crowdsafe.randomness import Randomness, as_randomness
from crowdsafe.stopping import checkpoint, finishing

if TYPE_CHECKING:
    from crowdsafe.anonymize.plan import PlanRequest
    from crowdsafe.anonymize.release import Release
    from crowdsafe.data import MissingPolicy, Schema
    from crowdsafe.engines.protocol import Engine

#: From this many rows on, the values a hierarchy does not list are looked for in a second thread
#: during the choice (:func:`run_publication`); below, the thread costs more than it saves.
OUTSIDE_IN_THREAD_FROM = 200_000

CUSTODIAN_NOTICE = (
    "CUSTODIAN ONLY: exact facts about the data and its samples, NOT covered by the privacy "
    "guarantee; do not publish them, and do not store them beside the release"
)


def publish(
    engine: Engine,
    data: Any,
    request: PlanRequest,
    options: RunOptions,
    *,
    schema: Schema | str | os.PathLike[str] | None = None,
    qi: Sequence[str] | None = None,
    sensitive: Sequence[str] | str | None = None,
    missing: MissingPolicy | str = "keep",
    seed: Randomness | int | None = None,
    ledger: LedgerSpec = None,
) -> Publication:
    """:func:`crowdsafe.api.publish` on ``engine`` (which has checked ``request`` with
    :func:`~crowdsafe.anonymize.plan.plan_publication` before anything is read): the table read
    (``schema``, ``qi``, ``sensitive``, ``missing`` and ``options.name``), the plan for its
    hierarchies, then :func:`run_publication` with ``options`` under the ledger. The output
    paths are checked before the ledger is opened, so a refused name makes no ledger."""
    check_scheme_before_reading(data, request, schema, qi, sensitive)
    table = engine.read_table(data, schema=schema, qi=qi, sensitive=sensitive, missing=missing, name=options.name)
    publish_plan = engine.plan_publication(table, request)
    randomness = as_randomness(seed)
    paths = engine.release_paths(options.out, publish_plan.releases) if options.out is not None else []
    check_custodian_path(options.custodian_report, paths)  # (run_publication checks them again: any caller)
    with ledger_for(ledger) as book:
        return run_publication(engine, table, publish_plan, options, randomness=randomness, ledger=book)


def check_scheme_before_reading(data: Any, request: PlanRequest, schema: Schema | str | os.PathLike[str] | None,
                                qi: Sequence[str] | None, sensitive: Sequence[str] | str | None) -> None:
    """A fixed scheme checked before the table is read, as far as the parameters and a declared
    schema decide it, so a mistake in it is refused alike on every table (never replaced by a
    refusal of the data, ``missing='error'``'s, on a neighbour): its text (a preset, whole levels),
    and each level of a published column whose hierarchy the schema specifies, against the height
    the specification gives whatever the rows (an observed builder's too:
    :func:`crowdsafe.data.builders.from_spec` on a column without a value). The same errors, in
    the same words, as :func:`~crowdsafe.selection.mechanism.fixed_scheme` after the read."""
    import polars as pl

    from crowdsafe.data import Schema
    from crowdsafe.data.builders import from_spec
    from crowdsafe.data.schema import AttributeType, NumberKind, Role
    from crowdsafe.selection.mechanism import check_level, scheme_levels

    if request.scheme is None:
        return
    explicit = scheme_levels(request.scheme)[1]
    if not isinstance(data, (str, os.PathLike)) or schema is None:
        return
    if isinstance(schema, (str, os.PathLike)):
        schema = Schema.from_toml(Path(schema))
    if request.columns is not None:
        published = set(request.columns)
    elif qi is not None:
        published = {*qi, *([sensitive] if isinstance(sensitive, str) else sensitive or ())}
    else:
        published = {a.name for a in schema if a.role in (Role.QUASI_IDENTIFIER, Role.SENSITIVE)}
    dtypes = {AttributeType.DATE: pl.Date, AttributeType.NUMERIC: pl.Float64}
    for column, level in explicit.items():
        if column not in published or column not in schema.names or schema[column].hierarchy is None:
            continue
        attribute = schema[column]
        dtype = pl.Int64 if attribute.numbers is NumberKind.INTEGER else dtypes.get(attribute.type, pl.String)
        try:  # (a specification that cannot be built is refused by the read, as before)
            height = from_spec(attribute.hierarchy, pl.Series(column, [], dtype=dtype), attribute=column).height
        except Exception:  # noqa: BLE001
            continue
        check_level(column, level, height)


def declared_sensitive(table: Any) -> list[str]:
    """The sensitive attributes ``table``'s schema declares (its roles: public), which the certificate
    records among the published columns; the safe pipeline groups them as quasi-identifiers all the
    same. A Dataset's own, a streamed table's domain's, a Spark table's as read (its domain is prepared)."""
    if isinstance(table, Dataset):
        return list(table.sensitive)
    declared = getattr(table, "sensitive", None)
    return list(declared) if declared is not None else list(table.domain.sensitive)


def run_publication(
    engine: Engine,
    table: Any,
    publish_plan: PublishPlan,
    options: RunOptions = DEFAULT_RUN_OPTIONS,
    *,
    randomness: Randomness,
    ledger: Ledger | None = None,
) -> Publication:
    """Run the safe pipeline on ``table`` (read by ``engine``) under ``publish_plan``, carried out
    and written as ``options`` (:class:`~crowdsafe.anonymize.publish.RunOptions`) says.

    Everything that can be decided from the schema, the hierarchies and the options is refused
    before the ledger is charged and before any file is touched (the engine's
    :meth:`~crowdsafe.engines.protocol.Engine.prepare` and ``release_paths``, a custodian report
    beside the release, a consumed sample, an exhausted budget). The samples are drawn, then the
    ledger is charged, then everything is computed from them; without a ledger the certificate is
    not fit for release. Every release is written and returned whatever it suppresses: the set of
    files and the exit status are the same on any data; a release that suppresses more than
    ``options.max_suppression`` of its sample gets a warning in the custodian facts only
    (:func:`suppression_warnings`). CSV
    cells are formula-safe unless ``options.escape_formulas`` is False; each certificate written says
    which (fixed by the option and the names before the data is read)."""
    name, out, escape_formulas = options.name, options.out, options.escape_formulas
    prepared, fixed = engine.prepare(table, publish_plan, name)
    refuse_person_rows(prepared.domain.schema.person_id, "publish")  # the theorem is about rows
    notes = list(prepared.notes)
    columns = prepared.columns
    sensitive = declared_sensitive(table)  # the schema's (public); prepare made every published column a QI
    paths = engine.release_paths(out, publish_plan.releases) if out is not None else []
    report_path = check_custodian_path(options.custodian_report, paths)
    notes_of_files = [format_note(p, escape_formulas=escape_formulas) for p in paths]
    charge_request: dict[str, Any] = {}
    identity = None
    ledger_notes: list[str] = []  # custodian-only: whether the ledger held this table's budget is read from its rows
    if ledger is not None:  # the table as given: the identity `crowdsafe query` and `ledger init` see
        identity = prepared.identity(ledger)
        charge_request = ledger_request(ledger, identity, prepared.label, publish_plan, fixed is not None,
                                        options.budget, randomness, ledger_notes)

    streams = randomness.spawn(publish_plan.releases) if publish_plan.releases > 1 else [randomness]
    release_ids = [new_release_id(s) for s in streams]  # before any data-dependent draw
    levels = dict(fixed.levels) if fixed is not None else None
    samples = [engine.sample(prepared, publish_plan.beta, s, levels) for s in streams]
    checkpoint()  # an app stopped now leaves no ledger entry

    with contextlib.ExitStack() as stack:
        # a custodian-only fact read from the whole table, not from the samples: on a large
        # table computed in a second thread while the samples are counted and the scheme chosen
        # (Polars reads the table without the GIL); on a small one the thread costs more than it saves
        # in the thread one column at a time: the publication needs the cores
        in_thread = prepared.n_rows >= OUTSIDE_IN_THREAD_FROM
        outside: Callable[[], dict[str, dict[str, Any]]] = functools.partial(
            outside_hierarchies, prepared.domain, columns, side_by_side=not in_thread)
        if in_thread:
            outside = stack.enter_context(ThreadPoolExecutor(max_workers=1)).submit(outside).result
        charge = None
        if ledger is not None and identity is not None:  # identity: set with the ledger
            # independent samples compose whatever they contain: two that came out identical are
            # no reason to stop (the ledger records a repeated identity once)
            sample_ids = [engine.sample_identity(s, ledger) for s in samples]
            charge = stack.enter_context(ledger.charge(identity, **charge_request,
                                                       sample_ids=sample_ids))
        releases: list[Release] = []
        choices: list[Any] = []
        facts: list[dict[str, Any]] = []
        # a plan that chooses the scheme on the whole table (anonymize.plan.TABLE_RULE): counted once,
        # after the charge; each release's choice reads it with its own stream
        whole = engine.count_table(prepared) if fixed is None and publish_plan.selection_source == "table" else None
        for sample, release_id, stream in zip(samples, release_ids, streams):
            checkpoint()  # stopped from here on: the entry is marked failed (crowdsafe.stopping)
            counts = engine.count(prepared, sample)
            with working("choosing the generalization"):  # (a terminal's transient display only)
                scheme, profile, choice = choose_recoding(counts, columns, publish_plan, fixed, stream, whole)
            applied = engine.apply(counts, scheme, publish_plan.k, fixed is not None)
            facts.append(release_facts(applied, scheme, columns, choice))
            unreviewed = prepared.domain.schema.unreviewed(columns)  # the schema's from_data markers (public)
            certificate, parameters = certify_release(publish_plan, columns, scheme, profile, choice, release_id,
                                                      stream, ledger is not None, unreviewed, sensitive)
            parameters.update(engine.certificate_tags)
            # what leaves the run keeps the values of the published classes only, not the hierarchies
            published, public_scheme = published_scheme(published_only(applied), scheme, columns)
            releases.append(engine.materialise(prepared, public_scheme, published, certificate, parameters,
                                               publish_plan.k))
            choices.append(public_choice(choice, public_scheme))
        samples.clear()  # the samples leave with this frame
        custodian = custodian_facts(prepared.n_rows, publish_plan, facts, options.max_suppression)
        custodian["outside_hierarchies"] = outside()
        custodian["warnings"].extend(ledger_notes)
        if charge is not None and ledger is not None and identity is not None:  # a charge has both
            custodian["ledger"] = ledger_summary(ledger, charge, prepared.label, identity)
            charge.record(custodian_report=custodian)
        checkpoint()  # the last point: a run that starts writing a file finishes
        finishing()  # (a stop signal from here on is deferred by the command line: crowdsafe.stopping)
        if report_path is not None:
            write_custodian_report(report_path, custodian)
        certificate = publication_certificate(releases)
        written: dict[str, Any] = {}
        if paths:  # the certificates say how the files hold their cells (fixed by the options)
            releases = [replace(r, certificate=r.certificate.with_format_notes(n))
                        for r, n in zip(releases, notes_of_files)]
            certificate = certificate.with_format_notes(notes_of_files[0])
            written = engine.write(prepared, releases, certificate, paths, escape_formulas=escape_formulas)
            if options.report:  # built from the files just written: the release and its certificate only
                from crowdsafe.report import write_reports
                from crowdsafe.report.classes import written_classes

                # the classes just written let the report read the file as its class lines (checked
                # against the file's bytes) instead of parsing every row again
                wrote = [written_classes(r, escape_formulas) for r in releases]
                written["reports"], report_notes = write_reports(written["tables"], wrote)
                notes.extend(report_notes)
        if charge is not None:
            # each file's SHA-256 and release id: `crowdsafe ledger verify` checks a release against them
            files = written_digests(written, release_ids) if written else []
            charge.record(written=ledger_paths(written.get("tables", [])), files=files,
                          rows_published=[r.rows_published for r in releases], **engine.ledger_tags)
    if ledger is None:
        notes.append("no ledger: nothing records that these samples are used, nor limits further releases; "
                     "NOT fit for release")
    notes.extend(engine.publication_notes(randomness.seeded))
    return Publication(publish_plan, tuple(releases), certificate, tuple(choices), tuple(notes), written, custodian)


def ledger_paths(tables: Sequence[str]) -> list[str]:
    """The tables a release wrote as the ledger records them: a local path made absolute (a URL such
    as ``hdfs:///...`` as it is). The app's attack and a later session read earlier releases by
    these paths; ``release/r.csv``, recorded as typed, was read against another working folder,
    and a release that was there was listed as missing."""
    return [os.path.abspath(t) if is_local(t) else str(t) for t in tables]


def new_release_id(stream: Randomness) -> str:
    """128 random bits (hex) naming one release in its certificate, drawn from a child stream of
    ``stream`` before any data-dependent draw: fresh OS randomness in release mode; on a seeded
    run the same on neighbouring tables. Never derived from the data."""
    return stream.spawn(1)[0].generator.bytes(16).hex()


def ledger_request(
    ledger: Ledger, identity: str, label: str, publish_plan: PublishPlan, strongly_safe: bool,
    budget: tuple[float, float] | None, randomness: Randomness, notes: list[str],
) -> dict[str, Any]:
    """Refuse a consumed sample or an exhausted budget (nothing is charged yet); return the keyword
    arguments of the ``dps-release`` charge, which registers a budget for a dataset without one in
    the charge's own transaction (``register``: a refused run registers nothing).
    ``identity``: the dataset's digest keyed with ``ledger.identity_key``. ``notes``: custodian-only
    notes (a budget registered here: whether the ledger held one for this table is found from its
    rows, so a public note would tell D from D plus a row whose budget was set). A ``budget`` given
    for a dataset that has one is checked the same way: the same budget is a no-op (a rerun of the
    same command), another is refused as ``query`` and ``perturb`` refuse it, since a budget is
    changed on the record only (it was ignored: a script that lowered its --budget went on
    spending the old one)."""
    consumed = ledger.consumed_by(identity)
    if consumed is not None:
        raise SampleReuseError(
            f"this data is a sample already used by the DPS release #{consumed} in {ledger.path}: "
            "a sample may be used only once; publish from the full dataset instead" + LEDGER_REFUSAL
        )
    if ledger.budget(identity) is None and budget is None:
        budget = (publish_plan.total_epsilon, publish_plan.total_delta)
        notes.append(
            f"no budget was set for '{label}': registered this publication's cost "
            f"(epsilon = {rounded_up(budget[0])}, delta = {rounded_up(budget[1], 3)}) as its total budget, "
            "so any further query or release on it is refused; raise it on the record with "
            f"`crowdsafe ledger budget '{label}' --epsilon E --delta D --raise`"
        )
    register = (label, *budget) if budget is not None else None
    kind = "strongly safe" if strongly_safe else "epsilon1-safe"
    charge_request: dict[str, Any] = dict(
        epsilon=publish_plan.epsilon, delta=publish_plan.delta, kind="dps-release",
        description=f"publish {label}: {publish_plan.releases} x sampling (beta = "
        f"{rounded_down(publish_plan.beta, 4)}) + {kind} k-anonymization (k = {publish_plan.k})",  # beta as printed
        mechanism="sampling + safe k-anonymization (Li, Qardaji, Su 2012)",
        repetitions=publish_plan.releases, delta_slack=0.0, sample_rate=publish_plan.beta,
        seeded=randomness.seeded, details={"plan": publish_plan.as_dict()}, register=register,
    )
    placeholder = [f"pending-{i}" for i in range(publish_plan.releases)]
    ledger.check(identity, **charge_request, sample_ids=placeholder)
    return charge_request


def ledger_summary(ledger: Ledger, charge: Any, label: str, identity: str) -> dict[str, Any]:
    """The publication's ledger entry (custodian-only: it holds the keyed identity)."""
    budget_now = ledger.budget(identity)
    assert budget_now is not None
    return {
        "path": str(ledger.path),
        "dataset": label,
        "dataset_identity": identity,
        "entry": charge.entry_id,
        "charged": charge.loss.as_dict(),
        "budget": budget_now.as_dict(),
    }


def publication_certificate(releases: Sequence[Release]) -> Certificate:
    """The certificate of the whole publication: one release's, or the composition of several."""
    if len(releases) == 1:
        return releases[0].certificate
    return compose_certificates([r.certificate for r in releases], delta_slack=0.0)


def suppression_warnings(releases: Sequence[Mapping[str, Any]], max_suppression: float) -> list[str]:
    """Custodian-only warnings, one per release that suppressed more than ``max_suppression`` of
    its sample (``releases``: each release's custodian facts, :func:`release_facts`).

    The rate is an exact count on the sample, not a DP output, so it decides nothing that leaves
    the run: the release is written and returned either way, and the warning goes only where the
    custodian facts go (:meth:`Publication.custodian_report`, the ledger entry, the
    ``custodian_report`` file, ``custodian_only`` in the command line's JSON and under its
    custodian-only heading). It may therefore state the exact rate."""
    warnings = []
    for i, facts in enumerate(releases):
        if facts["suppression_rate"] > max_suppression:
            which = "the release" if len(releases) == 1 else f"release {i + 1} of {len(releases)}"
            warnings.append(
                f"{which} suppressed {facts['suppression_rate']:.1%} of its sample ({facts['suppressed_rows']:,} "
                f"of {facts['sample_rows']:,} rows), more than {max_suppression:.0%}: it was written, but holds "
                "little of the data. To suppress less: a coarser scheme, a larger epsilon or delta (a smaller k), "
                "a larger beta, or fewer quasi-identifiers"
            )
    return warnings


def check_custodian_path(path: str | os.PathLike[str] | None, release_paths: Sequence[str | os.PathLike[str]]
                         ) -> Path | None:
    """The custodian report's path, refused (before anything is charged) when it lies in a
    release's own folder or any folder below it (shared with the release, it would go too),
    inside a release (a Spark directory), or has no .json name."""
    if path is None:
        return None
    target = literal_path(path).resolve()
    if target.suffix.lower() != ".json":
        raise ParameterError(f"the custodian report is JSON: give a .json file name, not {path}")
    for release in release_paths:
        table = literal_path(release).resolve()
        if table.parent in target.parents or table in target.parents:
            raise ParameterError(
                f"the custodian report {path} would lie in the release's folder {table.parent}: it holds exact "
                "facts about the data that the guarantee does not cover; write it outside that folder"
            )
    return target


def write_custodian_report(path: Path, report: Mapping[str, Any]) -> Path:
    """Write the custodian-only report (JSON) atomically, readable by its owner only (``0600``,
    as the ledger holding the same facts)."""
    from crowdsafe.files import PRIVATE, write_text_atomic
    from crowdsafe.output_guard import json_document

    return write_text_atomic(path, json_document(report, sort_keys=True, default=str), mode=PRIVATE)


def custodian_facts(input_rows: int, publish_plan: PublishPlan, releases: Sequence[Mapping[str, Any]],
                    max_suppression: float) -> dict[str, Any]:
    """The custodian-only report of a publication (see :meth:`Publication.custodian_report`),
    with the heavy-suppression warnings (:func:`suppression_warnings`; an empty list when none),
    to which :func:`ledger_request`'s note of a budget registered by the run is added."""
    return {
        "notice": CUSTODIAN_NOTICE,
        "input_rows": int(input_rows),
        "expected_sample_rows": publish_plan.expected_sample_rows(int(input_rows)),
        "releases": [dict(r) for r in releases],
        "warnings": suppression_warnings(releases, max_suppression),
        "ledger": None,
    }
