"""The public functions that measure a table or a release without publishing anything:
:func:`check` (what an attacker could learn), :func:`compare` (the utility a release keeps) and
:func:`attack` (what releases reveal). Re-exported by :mod:`crowdsafe.api`, which documents the
conventions they share (``decimal_comma``; a single column name where a list is expected)."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, cast, overload

from crowdsafe.arguments import alias, either, items, names, one_name, strings
from crowdsafe.data import DEFAULT_MISSING, Dataset, MissingPolicy, Schema, load
from crowdsafe.data.pipeline import load_release
from crowdsafe.defaults import DEFAULT_THRESHOLD
from crowdsafe.errors import ParameterError

if TYPE_CHECKING:
    from crowdsafe.attacks.intersection import IntersectionResult, Location
    from crowdsafe.attacks.linkage import LinkageResult
    from crowdsafe.engines.spark.attacks import SparkIntersectionResult
    from crowdsafe.metrics import UtilityReport
    from crowdsafe.models.check_report import CheckReport


def _table(data: Any) -> Any:
    """``data``, or a :class:`~crowdsafe.anonymize.Release`'s frame (which :func:`load` does not read)."""
    from crowdsafe.anonymize.release import Release

    return data.frame if isinstance(data, Release) else data


def _release_roles(data: Any, qi: tuple[str, ...] | None, sensitive: tuple[str, ...] | None
                   ) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None]:
    """``qi`` and ``sensitive``, or, where one is None and ``data`` is a
    :class:`~crowdsafe.anonymize.Release`, the release's own (those it was made with): its frame
    alone reads every column as a quasi-identifier, so ``check(anonymize(df, qi=["age"]))``
    counted an unrecoded column among them and reported k = 1."""
    from crowdsafe.anonymize.release import Release

    if not isinstance(data, Release):
        return qi, sensitive
    if sensitive is None and data.source is not None:
        sensitive = tuple(c for c in data.source.sensitive if c in data.frame.columns) or None
    elif sensitive is None and data.sensitive is not None:
        sensitive = (data.sensitive,)
    return (qi if qi is not None else tuple(data.quasi_identifiers) or None), sensitive


def check(
    data: Any,
    *,
    qi: Sequence[str] | str | None = None,
    sensitive: Sequence[str] | str | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    decimal_comma: bool | None = None,
    original: Any = None,
    k: int | None = None,
    l: int | None = None,
    ground: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    population: Any = None,
    population_size: int | None = None,
    target_k: int | None = None,
    distance: str | None = None,
) -> CheckReport:
    """Load ``data`` (a path, a bundled name, a frame, a Dataset or a Release) and report what an attacker
    could learn: k-anonymity and the class sizes, ℓ-diversity (distinct, entropy, recursive
    (c, ℓ)), t-closeness, δ-disclosure, β-likeness and effective anonymity for each sensitive
    attribute, and re-identification risk (:func:`crowdsafe.models.assess`).

    k is the size of the smallest group of rows sharing one quasi-identifier tuple (Sweeney
    2002); sample uniques are rows alone in their group. ``qi`` and ``sensitive`` (one name or a
    list) set the roles; the default quasi-identifiers are the schema's (inferred: every
    attribute; for a Release, those it was made with). ``schema`` (a :class:`~crowdsafe.data.Schema`, a schema file,
    or None: inferred), ``missing``
    (the missing-value policy: ``"keep"``, ``"drop"`` or ``"error"``) and ``decimal_comma``
    (:mod:`crowdsafe.api`) say how ``data`` is read. ``original``: the table a release
    was made from, so generalized cells are read as what they cover and the release takes its
    roles (a microaggregated release, whose centroids cover no original value, is refused: check it
    alone). ``k``: count the classes smaller than this k (``--k`` of ``crowdsafe check``; its
    older name ``target_k`` is still taken); ``l``: the ℓ of recursive
    (c, ℓ)-diversity (None: 2); ``ground``: the t-closeness ground distance
    (:data:`~crowdsafe.models.GROUND_DISTANCES`; None: auto; ``distance``, as :func:`anonymize`
    names it, is taken with the same meaning, not both at once), both refused where no sensitive
    attribute is assessed (they would not be read); ``threshold``: the record-risk threshold of the
    re-identification risk. ``population`` (a table) enables journalist risk; ``population_size``
    the Zayatz estimate of population uniques. The options measured form one
    :class:`~crowdsafe.models.AssessRequest` (:func:`check_report`).
    """
    from crowdsafe.data.release_roles import release_dataset
    from crowdsafe.data.streamed_table import load_or_stream
    from crowdsafe.models import AssessRequest
    from crowdsafe.models.check_report import check_report, streamed_check_report

    qi, sensitive = _release_roles(data, names(qi, "qi"), names(sensitive, "sensitive"))
    data = _table(data)
    target_k, ground = either(k, target_k, "k", "target_k"), alias(ground, distance, "ground", "distance")
    schema = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    if original is not None:
        source = load(original, schema=schema, missing=missing).outside_as_missing()  # as publish published it
        dataset = release_dataset(load_release(data, missing=missing), source)
        dataset = dataset.with_roles(qi=qi, sensitive=sensitive) if qi is not None or sensitive is not None else dataset
    else:  # a file larger than memory is read batch by batch (streamed_check_report; twin: check_report)
        source = None
        table = load_or_stream(data, schema=schema, qi=qi, sensitive=sensitive, missing=missing, empty=True)
        dataset = table if isinstance(table, Dataset) else table.domain
        dataset.validate_domains()  # the custodian's own report: a value outside its hierarchy is named
    people = load(population, missing=missing) if population is not None else None
    request = AssessRequest(target_k=target_k, l=l, ground=ground, threshold=threshold,
                            population_size=population_size)
    if original is None and not isinstance(table, Dataset):
        streamed = streamed_check_report(table, request, population=people)
        if streamed is not None:
            return streamed
        dataset = dataset.with_frame(table.rows.collect())  # a key too wide for the frequency table: the rows
    return check_report(dataset, request, original=source, population=people)


def check_dataset(
    dataset: Dataset,
    *,
    original: Dataset | None = None,
    k: int | None = None,
    l: int | None = None,
    ground: str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    population: Dataset | None = None,
    population_size: int | None = None,
    target_k: int | None = None,
) -> CheckReport:
    """:func:`check` for a loaded ``dataset`` (and, for a release, its loaded ``original``,
    ``population``), with the same ``k`` (or its older name ``target_k``), ``l``, ``ground``,
    ``threshold`` and ``population_size``."""
    from crowdsafe.models import AssessRequest
    from crowdsafe.models.check_report import check_report

    request = AssessRequest(target_k=either(k, target_k, "k", "target_k"), l=l, ground=ground, threshold=threshold,
                            population_size=population_size)
    return check_report(dataset, request, original=original, population=population)


def compare(
    original: Any,
    release: Any,
    *,
    qi: Sequence[str] | str | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    missing: MissingPolicy | str = DEFAULT_MISSING,
    decimal_comma: bool | None = None,
    k: int | None = None,
    input_rows: int | None = None,
    queries: int = 1000,
    max_attributes: int = 3,
    seed: int = 0,
    scale: float = 1.0,
    target: str | None = None,
    test: Any = None,
    model: str | None = None,
) -> UtilityReport:
    """Utility of ``release`` against ``original`` (:func:`crowdsafe.metrics.measure_utility`
    for a :class:`~crowdsafe.metrics.UtilityRequest`): information loss, marginal distances,
    workload error and classifier accuracy (custodian only).

    ``original`` is anything :func:`load` reads (``schema``, a :class:`~crowdsafe.data.Schema`,
    a schema file or None: inferred; ``missing``, the missing-value policy: ``"keep"``,
    ``"drop"`` or ``"error"``; and ``decimal_comma``, :mod:`crowdsafe.api`, say how);
    ``release`` a release file, a frame or a :class:`~crowdsafe.anonymize.Release`. A
    microaggregated release (MDAV's centroids, which cover no original value) is refused in one
    line: compare measures generalized releases. ``qi`` (one name or a list): the
    quasi-identifiers measured (None: a Release's own, else the original's that the release holds); ``k`` /
    ``input_rows``: the k and the rows read (None: taken from the release); ``queries``,
    ``max_attributes``: the counting-query workload's size and widest query; ``scale``: what the
    release's counts are multiplied by (1/β for a sample); ``seed``: the seed of the workload and
    the classifier. ``target`` (the attribute the ``model``, ``"logistic"`` by default, predicts)
    defaults to the original's sensitive attribute when it has exactly one and the
    release holds it; ``test`` (held-out original rows) defaults to Adult's test file when the
    original is the bundled ``adult``.
    """
    from dataclasses import replace

    from crowdsafe.data.release_roles import release_dataset
    from crowdsafe.metrics import UtilityRequest, measure_utility

    measured = _release_roles(release, names(qi, "qi"), None)[0]  # a Release's own quasi-identifiers
    request = UtilityRequest(qi=measured, k=k, input_rows=input_rows, queries=queries,
                             max_attributes=max_attributes, seed=seed, scale=scale, target=target, model=model)
    schema = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    source = load(original, schema=schema, missing=missing).outside_as_missing()  # as publish published it
    published = release_dataset(load_release(_table(release), missing=missing), source)
    if target is None and len(source.sensitive) == 1 and source.sensitive[0] in published.columns:
        target = source.sensitive[0]
    if test is None and isinstance(original, str) and original == "adult" and target is not None:
        test = "adult-test"
    held_out = load(test, schema=schema, missing=missing) if test is not None else None
    report = measure_utility(source, published, replace(request, target=target), test=held_out)
    rate = _sampling_rate(release)
    if rate is not None and input_rows is None:
        report.notes.append(SAMPLED_NOTE.format(beta=rate, scale=1.0 / rate))
    return report


#: Why a sampled release's suppression reads high against the whole original: the rows the sample left out.
SAMPLED_NOTE = ("the release is a Bernoulli sample of the original (beta = {beta:.4g}, its certificate): the rows "
                "not sampled count as suppressed above; give the sample size (the custodian lines of the publish) "
                "as the input rows (--input-rows N) to count only the rows it suppressed, and scale the workload's "
                "counts by 1/beta (--scale {scale:.4g})")


def _sampling_rate(release: Any) -> float | None:
    """The sampling rate β a release's certificate states (a file's, beside it; a Release's own), or
    None: what ``compare`` compares against the whole original although only a sample was read
    (found by a new user's walk-through: the publish said 13.9% suppressed, compare 72.2%)."""
    from crowdsafe.anonymize.release import Release

    if isinstance(release, Release):
        sample = release.certificate.sample or {}
    elif isinstance(release, (str, os.PathLike)):
        from crowdsafe.csv_safety import certificate_beside

        sample = certificate_beside(release).get("sample") or {}
    else:
        return None
    rate = sample.get("rate") if isinstance(sample, dict) else None
    return float(rate) if isinstance(rate, (int, float)) and 0 < rate < 1 else None


# -- attacks -------------------------------------------------------------------------------------


@overload
def attack(
    releases: Sequence[Any] | Any,
    targets: Any,
    *,
    qi: Sequence[str] | str,
    sensitive: Sequence[str] | str | None = None,
    kind: Literal["intersection"] = "intersection",
    location: str = "auto",
    levels: Sequence[float] | float = (0.25, 0.5),
    truth_id: str | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    decimal_comma: bool | None = None,
    engine: str = "polars",
    spark_master: str | None = None,
    suppressed: Sequence[str] | str = (),
) -> IntersectionResult | SparkIntersectionResult: ...


@overload
def attack(
    releases: Sequence[Any] | Any,
    targets: Any,
    *,
    qi: Sequence[str] | str,
    kind: Literal["linkage"],
    truth_id: str | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    decimal_comma: bool | None = None,
    engine: str = "polars",
    spark_master: str | None = None,
    suppressed: Sequence[str] | str = (),
) -> LinkageResult: ...


@overload
def attack(
    releases: Sequence[Any] | Any,
    targets: Any,
    *,
    qi: Sequence[str] | str,
    sensitive: Sequence[str] | str | None = None,
    kind: str = "intersection",
    location: str = "auto",
    levels: Sequence[float] | float = (0.25, 0.5),
    truth_id: str | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    decimal_comma: bool | None = None,
    engine: str = "polars",
    spark_master: str | None = None,
    suppressed: Sequence[str] | str = (),
) -> IntersectionResult | LinkageResult | SparkIntersectionResult: ...


def attack(
    releases: Sequence[Any] | Any,
    targets: Any,
    *,
    qi: Sequence[str] | str,
    sensitive: Sequence[str] | str | None = None,
    kind: str = "intersection",
    location: str = "auto",
    levels: Sequence[float] | float = (0.25, 0.5),
    truth_id: str | None = None,
    schema: Schema | str | os.PathLike[str] | None = None,
    decimal_comma: bool | None = None,
    engine: str = "polars",
    spark_master: str | None = None,
    suppressed: Sequence[str] | str = (),
) -> IntersectionResult | LinkageResult | SparkIntersectionResult:
    """Run an attack on ``releases`` and report what it reveals: an
    :class:`~crowdsafe.attacks.IntersectionResult` (``kind="intersection"``; with ``engine="spark"``
    a :class:`~crowdsafe.engines.spark.attacks.SparkIntersectionResult`, its ``targets`` a Spark
    DataFrame) or a :class:`~crowdsafe.attacks.LinkageResult` (``kind="linkage"``).

    - ``kind="intersection"``: the composition attack of Ganta, Kasiviswanathan and Smith
      (2008) on ``targets`` (:func:`crowdsafe.attacks.intersection_attack`): ``targets`` hold
      ``qi`` and optionally the true ``sensitive`` value, used only for scoring.
    - ``kind="linkage"``: Sweeney's linkage of one release with ``targets``, an identified
      external table holding ``qi`` (:func:`crowdsafe.attacks.linkage_attack`).

    ``releases``: Release objects, frames (Polars or pandas) or files (one alone, or a list); a
    Publication stands for each of its releases.
    ``qi``: one name or a list; ``sensitive``: one name (or a list of one, as check takes it).
    ``location``: how a target's class is located (``"exact"``,
    ``"nearest"`` or ``"auto"``); ``levels``: the confidence levels (one or a list) the intersection attack
    reports breaches at; these three are the intersection attack's, refused with
    ``kind="linkage"`` (which would not read them; ``crowdsafe attack linkage`` has none of them).
    ``schema`` and ``decimal_comma`` say how the targets are read.
    ``targets``: anything :func:`load` reads; its hierarchies resolve hierarchy labels in the
    releases. ``truth_id``: a record id in both,
    used only to score the attack. ``suppressed``: quasi-identifier cells marking a suppressed cell
    in another tool's releases (``["NA"]``), read as ``*``. ``engine="spark"`` (intersection
    only; a session from the environment or ``spark_master``): releases and targets are paths
    read on Spark, the joins run there (:mod:`crowdsafe.engines.spark.attacks`), and the result's
    ``targets`` is a Spark DataFrame. The options form one
    :class:`~crowdsafe.attacks.AttackRequest`, passed to :mod:`crowdsafe.drivers.attack`.
    """
    from crowdsafe.attacks.request import AttackRequest
    from crowdsafe.drivers.attack import attack as attack_run
    from crowdsafe.drivers.attack import check_kind
    from crowdsafe.engines import get_engine

    schema = Schema.reading(schema, decimal_comma=decimal_comma)  # how a CSV file writes its numbers
    check_kind(kind)  # before the engine is chosen
    if kind == "linkage":  # what only the intersection attack reads: refused, not ignored (as anonymize's options)
        unread = [name for name, given in (("sensitive", sensitive is not None), ("location", location != "auto"),
                                           ("levels", levels != (0.25, 0.5))) if given]
        if unread:
            raise ParameterError(f"the {unread[0]} parameter applies to the intersection attack only: the linkage "
                                 "attack would not read it; leave it out", parameter=unread[0])
    chosen = get_engine(engine, master=spark_master)
    marks = strings(suppressed, "suppressed", "a cell marking a suppressed value")
    sensitive = one_name(sensitive, "sensitive", "an attack infers one sensitive attribute")
    request = AttackRequest(kind=kind, qi=names(qi, "qi") or (), sensitive=sensitive,
                            location=cast("Location", location), truth_id=truth_id,
                            levels=(levels,) if isinstance(levels, (int, float)) else tuple(levels),  # one level
                            schema=schema, suppressed=marks)
    return attack_run(chosen, _releases(items(releases, "releases")), targets, request)


def _releases(given: Sequence[Any]) -> tuple[Any, ...]:
    """The releases attacked: a :class:`~crowdsafe.anonymize.publish.Publication` (what
    :func:`crowdsafe.api.publish` returns, refused before as "cannot attack a
    crowdsafe.Publication") stands for each of its releases, in order."""
    from crowdsafe.anonymize.publish import Publication

    return tuple(r for item in given for r in (item.releases if isinstance(item, Publication) else (item,)))
