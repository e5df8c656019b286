"""The Spark engine of ``crowdsafe publish`` against the Polars engine (tests/engines/spark/conftest.py
starts one local[2] session per test process)."""

from __future__ import annotations

import json
from dataclasses import replace

import numpy as np
import polars as pl
import pytest
from engine_helpers import comparable, text_rows

from crowdsafe.anonymize.apply import apply
from crowdsafe.anonymize.counted import apply_counts, classes_at, counted
from crowdsafe.anonymize.publish import PlanRequest, RunOptions, plan_publication, prepare_dataset, publish_dataset
from crowdsafe.data import load
from crowdsafe.randomness import Randomness
from crowdsafe.selection.mechanism import choose_scheme

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def adult():
    return load("adult")


@pytest.fixture(scope="module")
def small(adult):
    """5,000 rows of Adult: enough classes to choose among, quick on Spark."""
    return adult.with_frame(adult.frame.head(5000))


@pytest.fixture(scope="module")
def small_table(spark, small):
    from crowdsafe.engines.spark.table import spark_table

    return spark_table(spark, small)


def test_frequency_tables_and_choice_match_polars(small, small_table):
    """Given the same sample (β = 1: all rows), Spark counts the same leaf-code tuples as the
    Polars engine, the chooser (same seed) picks the same scheme from either table, and the
    classes counted on the executors at fixed levels are the driver's roll-up of those counts."""
    from crowdsafe.engines.spark.publish import count_release_sample

    prepared, columns, _ = prepare_dataset(small)
    assert small_table.columns == columns and small_table.n_rows == small.n_rows

    spark_counts = count_release_sample(small_table, 1.0, Randomness(5), None).table
    polars_counts = counted(prepared, columns)
    np.testing.assert_array_equal(spark_counts.codes, polars_counts.codes)
    np.testing.assert_array_equal(spark_counts.counts, polars_counts.counts)

    k = 20
    on_spark = choose_scheme(spark_counts, columns, k, 0.5, Randomness(9))
    on_polars = choose_scheme(prepared, columns, k, 0.5, Randomness(9))
    assert dict(on_spark.scheme.levels) == dict(on_polars.scheme.levels)
    applied = apply(prepared, on_polars.scheme, k)
    on_counts = apply_counts(spark_counts, on_polars.scheme.levels, k)
    assert (on_counts.rows_published, on_counts.classes) == (applied.rows_published, applied.classes)

    levels = {c: min(1, prepared.hierarchies[c].height) for c in columns}
    at_levels = count_release_sample(small_table, 1.0, Randomness(5), levels).table
    codes, sizes = classes_at(polars_counts, levels)
    np.testing.assert_array_equal(at_levels.codes, codes)
    np.testing.assert_array_equal(at_levels.counts, sizes)


def test_the_sample_identity_comes_from_the_table_and_the_sample_counts(small_table):
    """The sample is never materialised, so its identity digests what the run made of it (the
    table's identity and the sample's frequency table, engines/spark/fingerprint.sample_digest),
    not its rows: with β = 1 every seed counts the whole table and gets the same identity; the
    same sample counted at other levels, or drawn from a table with another identity, gets
    another; it is never the table's own identity."""
    from crowdsafe.engines.spark.publish import count_release_sample

    whole = count_release_sample(small_table, 1.0, Randomness(5), None)
    assert whole.identity == count_release_sample(small_table, 1.0, Randomness(6), None).identity
    assert whole.identity != small_table.fingerprint
    hierarchies = small_table.domain.hierarchies
    levels = {c: min(1, hierarchies[c].height) for c in small_table.columns}
    assert count_release_sample(small_table, 1.0, Randomness(5), levels).identity != whole.identity
    renamed = replace(small_table, fingerprint="0" * 64)
    assert count_release_sample(renamed, 1.0, Randomness(5), None).identity != whole.identity


def test_same_sample_same_release_and_certificate(small, small_table, tmp_path):
    """β = 1 (no engine-dependent randomness in the sample): the whole pipeline on both engines
    gives the same choice, the same rows up to order, the same certificate up to identities."""
    from crowdsafe.engines.spark.publish import publish_table

    plan = replace(plan_publication(PlanRequest(1.0, 1e-6, k=25)), beta=1.0)
    polars_run = publish_dataset(small, plan, RunOptions(out=tmp_path / "polars.parquet"), randomness=Randomness(21))
    out = tmp_path / "release.parquet"
    spark_run = publish_table(small_table, plan, RunOptions(out=str(out)), randomness=Randomness(21))

    assert spark_run.release.recoding.levels == polars_run.release.recoding.levels
    spark_facts, polars_facts = (r.custodian_report()["releases"][0] for r in (spark_run, polars_run))
    assert spark_facts["sample_rows"] == polars_facts["sample_rows"] == small.n_rows
    assert spark_run.release.rows_published == polars_run.release.rows_published
    written = pl.read_parquet(out / "*.parquet")
    assert text_rows(written).equals(text_rows(polars_run.release.frame))
    assert comparable(spark_run.certificate) == comparable(polars_run.certificate)
    assert spark_facts["utility"]["ncp"] == pytest.approx(polars_facts["utility"]["ncp"])
    assert spark_facts["utility"]["discernibility"] == pytest.approx(polars_facts["utility"]["discernibility"])
    assert spark_facts["suppressed_rows"] == polars_facts["suppressed_rows"]
    beside = json.loads((tmp_path / "release.certificate.json").read_text())
    assert beside["sample"] == json.loads(spark_run.certificate.to_json())["sample"]
    assert "fingerprint" not in json.dumps(beside)
    assert spark_run.release.source is None and spark_run.release.applied.class_kept.all()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary left


def test_fixed_scheme_sampling_is_binomial(spark, adult):
    """Where the engines' randomness differs (per-partition streams), the samples agree in law:
    the sample size and every value's sampled count lie within 4.5 standard deviations of
    Binomial(n, β) (fixed seed: a false alarm has probability < 1e-4 per check); a fixed
    scheme's certificate is the Polars engine's up to identities; release-mode runs draw
    different samples."""
    from crowdsafe.engines.spark.publish import count_release_sample, publish_table
    from crowdsafe.engines.spark.table import spark_table

    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    table = spark_table(spark, adult)
    spark_run = publish_table(table, plan, randomness=Randomness())
    polars_run = publish_dataset(adult, plan, randomness=Randomness())
    assert comparable(spark_run.certificate) == comparable(polars_run.certificate)
    assert not spark_run.certificate.seeded  # secure randomness; no ledger, so not fit for release:
    assert spark_run.certificate.unfit_reasons == (
        "no ledger: nothing records the sample's use or limits further releases",)

    n, beta = adult.n_rows, plan.beta
    seeded = count_release_sample(table, beta, Randomness(8), None)
    assert abs(seeded.rows - n * beta) < 4.5 * np.sqrt(n * beta * (1 - beta))
    column = table.columns.index("race")
    full = np.bincount(adult.encoded("race").codes)  # the same hierarchy, so the same leaf codes
    per_value = np.bincount(seeded.table.codes[:, column], weights=seeded.table.counts, minlength=len(full))
    z = (per_value - full * beta) / np.sqrt(full * beta * (1 - beta))
    assert np.all(np.abs(z) < 4.5), z

    again = count_release_sample(table, beta, Randomness(), None)
    assert again.identity != count_release_sample(table, beta, Randomness(), None).identity


def test_no_rows_reach_the_driver(spark, tmp_path):
    """Rows generated on Spark, far more than spark.driver.maxResultSize lets the driver collect
    (checked: collecting them fails), are published: only frequency tables reach the driver."""
    from pyspark.sql import functions as F

    from crowdsafe.engines.spark.publish import publish_table
    from crowdsafe.engines.spark.table import spark_table

    n = 300_000
    rows = spark.range(n).select(
        (F.col("id") % 7).alias("a"),
        (F.xxhash64("id") % 5).alias("b"),
        F.concat(F.lit("v"), (F.col("id") % 3).cast("string")).alias("c"),
    )
    conf = spark.sparkContext._jsc.sc().conf()
    before = conf.get("spark.driver.maxResultSize", "1g")
    conf.set("spark.driver.maxResultSize", "1m")
    try:
        with pytest.raises(Exception, match="maxResultSize|bigger than"):
            rows.toArrow()
        table = spark_table(spark, rows)
        plan = plan_publication(PlanRequest(1.0, 1e-6))
        out = tmp_path / "big.parquet"
        run = publish_table(table, plan, RunOptions(out=str(out)), randomness=Randomness(2))
    finally:
        conf.set("spark.driver.maxResultSize", before)
    assert table.n_rows == n
    facts = run.custodian_report()["releases"][0]
    assert run.release.rows_published + facts["suppressed_rows"] == facts["sample_rows"]
    assert abs(facts["sample_rows"] - n * plan.beta) < 4.5 * np.sqrt(n * plan.beta * (1 - plan.beta))
    assert pl.scan_parquet(out / "*.parquet").select(pl.len()).collect().item() == run.release.rows_published


def test_the_ledger_knows_the_table_and_its_sample_by_keyed_identities(spark, small, small_table, tmp_path):
    """With a ledger: the table's identity is its multiset digest keyed with the ledger's secret,
    the sample is recorded by its keyed digest, the certificate is fit for release and holds
    neither; without one the run is not fit for release."""
    from crowdsafe.engines.spark.publish import publish_table
    from crowdsafe.identity import keyed_identity
    from crowdsafe.privacy.ledger import Ledger

    ledger = Ledger(tmp_path / "ledger.sqlite3")
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    run = publish_table(small_table, plan, RunOptions(), randomness=Randomness(), ledger=ledger)
    entry = ledger.entries()[-1]
    assert entry.fingerprint == keyed_identity(small_table.fingerprint, ledger.identity_key) != small_table.fingerprint
    assert len(entry.samples) == 1 and run.custodian_report()["ledger"]["dataset_identity"] == entry.fingerprint
    text = run.certificate.to_json()
    assert small_table.fingerprint not in text and entry.fingerprint not in text and entry.samples[0] not in text
    assert run.certificate.fit_for_release
    unrecorded = publish_table(small_table, plan, RunOptions(), randomness=Randomness())
    assert not unrecorded.certificate.fit_for_release and unrecorded.certificate.accounting["ledger"] is False


def test_marginals_without_declared_hierarchies_is_refused_before_the_charge(spark, small):
    """As on the Polars engine: ``marginals`` spreads a cell over its declared leaves, so a column
    whose hierarchy was read from the data is refused in ``prepare``, before any sample is drawn or
    charged (the schema decides it, not the values)."""
    from crowdsafe.engines.spark.engine import SparkEngine
    from crowdsafe.engines.spark.table import spark_table
    from crowdsafe.errors import ParameterError

    bare = replace(small, hierarchies={c: h for c, h in small.hierarchies.items() if c != "occupation"})
    plan = plan_publication(PlanRequest(1.0, 1e-6, objective="marginals"))
    with pytest.raises(ParameterError, match="declared hierarchy"):
        SparkEngine().prepare(spark_table(spark, bare), plan, None)
    SparkEngine().prepare(spark_table(spark, small), plan, None)  # declared everywhere: accepted


@pytest.mark.parametrize("epsilon", [1.0, 0.1])
def test_the_plan_and_the_table_counts_are_the_polars_engines(spark, small, small_table, epsilon):
    """The Spark engine plans as the Polars engine does for the same table (the lattice sized from
    the hierarchies, the default objective from the declared ones, and at small ε the choice on
    the whole table); its count of the table is the Polars engine's; a seeded publication chooses
    on the source the plan names, and on the whole table it picks the Polars engine's scheme (both
    samples read one word of the stream per row here, the Polars engine's mask and the thinning
    alike, no tuple having more than LARGE_CELL rows, so the choice's draws start at the same point
    of the stream; on a sample, the two engines' samples differ)."""
    from crowdsafe.anonymize.publish import plan_for_dataset
    from crowdsafe.engines.polars_engine import PolarsEngine
    from crowdsafe.engines.spark.engine import SparkEngine
    from crowdsafe.engines.spark.publish import publish_table
    from crowdsafe.mechanisms.thinning import LARGE_CELL

    request = PlanRequest(epsilon, 1e-6)
    plan = SparkEngine().plan_publication(small_table, request)
    assert plan.as_dict() == plan_for_dataset(small, request).as_dict()
    assert plan.selection_source == ("table" if epsilon < 0.5 else "sample")
    whole = SparkEngine().count_table(small_table)
    polars_table, _ = PolarsEngine().prepare(small, plan, None)
    reference = PolarsEngine().count_table(polars_table)
    np.testing.assert_array_equal(whole.codes, reference.codes)
    np.testing.assert_array_equal(whole.counts, reference.counts)
    assert whole.counts.max() <= LARGE_CELL

    spark_run = publish_table(small_table, plan, randomness=Randomness(21))
    polars_run = publish_dataset(small, plan, randomness=Randomness(21))
    recode = [[m for m in run.certificate.to_dict()["mechanisms"] if m["step"] == "recode"][0]
              for run in (spark_run, polars_run)]
    assert recode[0]["parameters"]["chosen_on"] == recode[1]["parameters"]["chosen_on"] == plan.selection_source
    assert spark_run.certificate.theorem == polars_run.certificate.theorem
    if plan.selection_source == "table":
        assert dict(spark_run.release.recoding.levels) == dict(polars_run.release.recoding.levels)


def test_the_combined_certificate_of_seeded_releases_is_seeded(small_table, tmp_path):
    from crowdsafe.engines.spark.publish import publish_table

    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse", releases=2))
    run = publish_table(small_table, plan, RunOptions(out=str(tmp_path / "r.parquet")), randomness=Randomness(5))
    assert [c.seeded for c in run.certificate.components] == [True, True] and run.certificate.seeded
    written = json.loads((tmp_path / "r.certificate.json").read_text(encoding="utf-8"))
    assert written["seeded"] is True and written["randomness"]["seeded"] is True
    assert written["fit_for_release"] is False
