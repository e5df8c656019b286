"""The engine conformance suite: every registered engine (crowdsafe.engines.registry) runs each
operation of the Engine protocol on the same small tables and gives the Polars engine's results
(the reference): the same prepared columns and fixed scheme, the same frequency tables and
classes, the same release rows and certificate (up to the names of the release and of its
randomness), the same exact query aggregates and seeded answers, the same α-β plan and the same
attack metrics. Where an engine's randomness is its own (Spark draws per partition), the
comparison uses β = 1 or a plan, as the engine-specific tests do (tests/engines/spark)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from engine_helpers import comparable, public_part, same, text_rows

from crowdsafe import api
from crowdsafe.anonymize.publish import PlanRequest, RunOptions, plan_publication
from crowdsafe.attacks import AttackRequest
from crowdsafe.data import load
from crowdsafe.drivers.publish import run_publication
from crowdsafe.engines import ENGINES, Engine, PublicationTable, get_engine
from crowdsafe.errors import HierarchyError, ParameterError
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness
from mechanism_spy import input_differences
from neighbour_tables import PAIR, run_pair


def _param(name: str):
    return pytest.param(name, marks=pytest.mark.spark) if name == "spark" else name


@pytest.fixture(params=[_param(name) for name in ENGINES])
def engine(request) -> Engine:
    if request.param == "spark":
        request.getfixturevalue("spark")  # the shared local session (tests/engines/conftest.py)
    return get_engine(request.param)


@pytest.fixture(scope="module")
def reference() -> Engine:
    return get_engine("polars")


@pytest.fixture(scope="module")
def small():
    """2,000 rows of Adult with its hierarchies: several classes at every level, quick on Spark."""
    adult = load("adult")
    return adult.with_frame(adult.frame.head(2000))


def _read_table(path) -> pl.DataFrame:
    """A written release: a Parquet file, or a directory of part files."""
    return pl.read_parquet(path / "*.parquet") if path.is_dir() else pl.read_parquet(path)


def test_the_registry_names_every_engine_and_each_implements_the_protocol():
    assert ENGINES[0] == "polars" and "spark" in ENGINES
    for name in ENGINES:
        engine = get_engine(name)  # no session is started: the engines import lazily
        assert isinstance(engine, Engine) and engine.name == name
    with pytest.raises(ParameterError, match="unknown engine 'dask'"):
        get_engine("dask")


# -- the protocol's operations, one by one --------------------------------------------------------


def test_read_and_prepare(engine, reference, small):
    """The same published columns, size and label; a fixed scheme resolved to the same levels;
    the table's identity keyed with the ledger's secret."""
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    prepared, fixed = engine.prepare(engine.read_table(small), plan, "adult-head")
    expected, expected_fixed = reference.prepare(reference.read_table(small), plan, "adult-head")
    assert isinstance(prepared, PublicationTable)
    assert prepared.columns == expected.columns and prepared.n_rows == expected.n_rows == small.n_rows
    assert prepared.label == expected.label
    assert dict(fixed.levels) == dict(expected_fixed.levels)
    assert engine.prepare(engine.read_table(small), plan_publication(PlanRequest(1.0, 1e-6)), None)[1] is None


def test_identities_are_keyed(engine, small, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    prepared, _ = engine.prepare(engine.read_table(small), plan_publication(PlanRequest(1.0, 1e-6)), None)
    identity = prepared.identity(ledger)
    assert identity == prepared.identity(ledger) and len(identity) == 64
    other = Ledger(tmp_path / "other.sqlite3")
    assert prepared.identity(other) != identity  # the ledger's secret key enters it


def test_sample_count_apply(engine, reference, small):
    """β = 1 (the sample is the table): the same frequency table, the same classes at a fixed
    scheme (counted at its levels or rolled up) and after the chooser's scheme."""
    fixed_plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))

    def run(e: Engine, plan, fixed_levels: bool):
        prepared, fixed = e.prepare(e.read_table(small), plan, None)
        levels = dict(fixed.levels) if fixed is not None and fixed_levels else None
        sample = e.sample(prepared, 1.0, Randomness(5), levels)
        counts = e.count(prepared, sample)
        return prepared, fixed, counts

    prepared, fixed, counts = run(engine, fixed_plan, False)
    _, _, expected = run(reference, fixed_plan, False)
    np.testing.assert_array_equal(counts.codes, expected.codes)
    np.testing.assert_array_equal(counts.counts, expected.counts)
    assert tuple(counts.columns) == tuple(expected.columns)

    _, _, at_levels = run(engine, fixed_plan, True)
    applied = engine.apply(at_levels, fixed, 20, True)
    wanted = reference.apply(expected, fixed, 20, True)
    assert (applied.rows_in, applied.rows_published, applied.classes) == \
        (wanted.rows_in, wanted.rows_published, wanted.classes)
    np.testing.assert_array_equal(np.sort(applied.class_sizes[applied.class_kept]),
                                  np.sort(wanted.class_sizes[wanted.class_kept]))


def test_materialise_and_write(engine, reference, small, tmp_path):
    """The same published rows from the same classes, written with the certificate beside them."""
    from crowdsafe.anonymize.counted import published_only

    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    # any certificate
    certificate = run_publication(reference, small, plan, RunOptions(), randomness=Randomness(1)).certificate
    written = {}
    for e, folder in ((engine, "engine"), (reference, "reference")):
        prepared, fixed = e.prepare(e.read_table(small), plan, None)
        counts = e.count(prepared, e.sample(prepared, 1.0, Randomness(5), dict(fixed.levels)))
        published = published_only(e.apply(counts, fixed, plan.k, True))
        release = e.materialise(prepared, fixed, published, certificate, {}, plan.k)
        assert release.rows_published == published.rows_published and release.classes == published.classes
        (tmp_path / folder).mkdir()
        paths = e.release_paths(tmp_path / folder / "release.parquet", 1)
        result = e.write(prepared, [release], certificate, paths, escape_formulas=True)
        written[folder] = (result, paths[0])
    (engine_result, engine_path), (ref_result, ref_path) = written["engine"], written["reference"]
    assert text_rows(_read_table(Path(engine_path))).equals(text_rows(_read_table(ref_path)))
    assert len(engine_result["tables"]) == len(ref_result["tables"]) == 1
    beside = [json.loads((tmp_path / f / "release.certificate.json").read_text()) for f in ("engine", "reference")]
    assert beside[0] == beside[1]


def test_query_aggregates_and_seeded_answers(engine, reference, tmp_path):
    """The same exact aggregates, so the same answers from the same seed."""
    from crowdsafe.mechanisms import queries
    from crowdsafe.mechanisms.query_plan import QueryRequest

    rng = np.random.default_rng(4)
    n = 1500
    frame = pl.DataFrame({"age": rng.integers(18, 90, n), "sex": rng.choice(["Female", "Male"], n),
                          "hours": rng.integers(1, 80, n)})
    path = tmp_path / "people.parquet"
    frame.write_parquet(path)
    texts = ["count where age >= 40", "sum(hours) clamp 0..60 where sex = 'Male'",
             "histogram age[0..100 by 20], sex in ('Female', 'Male')"]
    source, expected_source = engine.read_source(path), reference.read_source(path)
    for text in texts:
        plan = queries._plan(engine.source_dataset(source), QueryRequest(text, epsilon=1.0))
        aggregate = engine.aggregate(source) or queries.polars_aggregate
        exact, _ = aggregate(engine.source_dataset(source), plan, Randomness(1))
        wanted, _ = queries.polars_aggregate(reference.source_dataset(expected_source), plan, Randomness(1))
        for key, value in wanted.values.items():
            got = exact.values[key]
            if isinstance(value, pl.DataFrame):
                by = [c for c in value.columns if c != "count"]
                assert got.sort(by).equals(value.sort(by)), (text, key)
            else:
                assert same(got, value), (text, key)
        answers = [api.query(path, text, epsilon=1.0, ledger=None, randomness=Randomness(7), engine=name)
                   for name in (engine.name, reference.name)]
        assert same(answers[0].as_dict(), answers[1].as_dict()), text


def test_perturbation_plan(engine, reference, tmp_path):
    """The same domain, bound and α-β plan from the same public inputs."""
    from crowdsafe.perturb.alpha_beta import PerturbRequest
    from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest

    rng = np.random.default_rng(8)
    frame = pl.DataFrame({"a": rng.integers(0, 10, 800), "b": rng.choice(["x", "y", "z"], 800),
                          "c": rng.integers(0, 200, 800)})
    path = tmp_path / "rows.parquet"
    frame.write_parquet(path)
    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.5, c=1.0, failure=0.05),
                             domains={"a": list(range(10)), "b": ["x", "y", "z"], "c": list(range(200))},
                             max_rows=1000, exploratory=False, duplicates="collapse", attributes=None)
    plans = [e.plan_perturbation(e.read_source(path), request) for e in (engine, reference)]
    assert same(plans[0].as_dict(), plans[1].as_dict())


def test_attack_tables_give_the_same_metrics(engine, reference, tmp_path):
    rng = np.random.default_rng(3)
    n = 300
    ages = rng.integers(18, 80, n)
    targets = pl.DataFrame({"id": np.arange(n).astype(str), "age": ages, "sex": rng.choice(["Female", "Male"], n),
                            "disease": np.array(["flu", "hiv", "cancer", "none"])[
                                (ages // 9 + rng.integers(0, 2, n)) % 4]})
    def bins(width):
        low = (pl.col("age") // width) * width
        return pl.format("[{}, {})", low, low + width).alias("age")

    r1 = targets.select("id", bins(10), "sex", "disease")
    r2 = targets.sample(fraction=0.7, seed=1).select("id", bins(5), pl.lit("*").alias("sex"), "disease")
    paths = []
    for j, release in enumerate((r1, r2)):
        paths.append(tmp_path / f"R{j + 1}.csv")
        release.with_columns(pl.all().cast(pl.String)).write_csv(paths[-1])
    targets.write_parquet(tmp_path / "targets.parquet")
    results = []
    for e in (engine, reference):
        table = e.attack_targets(tmp_path / "targets.parquet")
        releases = e.attack_releases([str(p) for p in paths], table)
        request = AttackRequest("intersection", ("age", "sex"), "disease", location="auto", levels=(0.5, 1.0),
                                truth_id="id")
        results.append(e.intersection_attack(releases, table, request))
    assert results[1].summary["targets"] == n and results[1].summary["contradictions"] >= 0
    assert same(results[0].summary, results[1].summary)
    assert same(results[0].releases.to_dicts(), results[1].releases.to_dicts())


# -- end to end, with fixed seeds -------------------------------------------------------------


def test_publish_end_to_end(engine, reference, small, tmp_path):
    """The publish driver on each engine, β = 1 (no engine-dependent randomness in the sample):
    the same choice, rows, custodian facts and certificate up to identities."""
    plan = replace(plan_publication(PlanRequest(1.0, 1e-6, k=25)), beta=1.0)
    runs = []
    for e, name in ((engine, "engine"), (reference, "reference")):
        (tmp_path / name).mkdir()
        out = tmp_path / name / "release.parquet"
        runs.append((run_publication(e, e.read_table(small), plan, RunOptions(out=out),
                                     randomness=Randomness(21)), out))
    (got, got_out), (wanted, wanted_out) = runs
    assert got.release.recoding.levels == wanted.release.recoding.levels
    assert got.release.rows_published == wanted.release.rows_published
    facts, expected = got.custodian_report()["releases"][0], wanted.custodian_report()["releases"][0]
    assert facts["sample_rows"] == expected["sample_rows"] == small.n_rows
    assert facts["suppressed_rows"] == expected["suppressed_rows"]
    assert text_rows(_read_table(got_out)).equals(text_rows(_read_table(wanted_out)))
    assert comparable(got.certificate) == comparable(wanted.certificate)
    assert got.summary()["plan"] == wanted.summary()["plan"]


def test_publish_refusals_come_before_the_charge(engine, small, tmp_path):
    """An unknown scheme level is refused by every engine before the ledger is touched."""
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="age=99"))
    with pytest.raises(HierarchyError):
        run_publication(engine, engine.read_table(small), plan, randomness=Randomness(1), ledger=ledger)
    assert ledger.entries() == []


def test_attack_metric_files(engine, reference, tmp_path):
    """The attack's per-target metrics written as Parquet."""
    frame = pl.DataFrame({"a": list(range(50)), "b": ["x", "y"] * 25})
    path = tmp_path / "rows.parquet"
    frame.write_parquet(path)
    targets = engine.read_source(path).frame  # the engine's own frame
    (tmp_path / "out").mkdir()
    written = engine.write_attack_targets(targets, tmp_path / "out" / "metrics.parquet", escape_formulas=True)
    assert text_rows(_read_table(Path(written))).equals(text_rows(frame))
    with pytest.raises(ParameterError):
        engine.write_attack_targets(targets, tmp_path / "out" / "metrics.txt", escape_formulas=True)


# -- the mechanism's inputs on neighbouring tables (issue 32) ---------------------------------------


@pytest.mark.parametrize("pair_id", ["schemaless-constant-made-non-constant",
                                     "schema-value-outside-declared-hierarchy"])
def test_publish_builds_the_mechanism_from_the_same_inputs_on_neighbours(engine, reference, pair_id, tmp_path,
                                                                         monkeypatch, mechanism_spy):
    """The neighbouring-input comparison of tests/privacy_boundary/test_mechanism_inputs.py on each
    engine: the same inputs on D and D + one row (a constant column made non-constant, a value
    outside a declared hierarchy), the same public outputs up to the DP outputs, and the same
    inputs and the same plan as the Polars engine's (both engines plan from the table's
    hierarchies)."""
    pair = PAIR[pair_id]
    runs = {}
    for e in {engine.name: engine, reference.name: reference}.values():
        folder = tmp_path / e.name
        runs[e.name] = run_pair(mechanism_spy, pair, "retained", folder, monkeypatch, engine=e.name, epsilon1=0.1,
                                out=None)
        d, d1 = runs[e.name]
        assert d.refused is None and d1.refused is None and d.tables and d1.tables
        assert input_differences(d, d1) == []
        assert public_part(d.returned, folder / "D") == public_part(d1.returned, folder / "D+1")
    for got, wanted in zip(runs[engine.name], runs[reference.name]):
        assert got.plan is not None and wanted.plan is not None
        assert got.plan == wanted.plan
        assert input_differences(got, wanted) == []
