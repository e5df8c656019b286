"""The intersection attack with its joins on Spark gives the Polars engine's metrics exactly."""

import json

import numpy as np
import polars as pl
import pytest
from engine_helpers import same

from crowdsafe import cli
from crowdsafe.attacks.intersection import AttackedRelease, intersection_attack
from crowdsafe.engines.spark.attacks import SparkTextRelease, intersection_attack_spark
from crowdsafe.errors import InputError, ParameterError

pytestmark = pytest.mark.spark


def _decade(width):
    low = (pl.col("age") // width) * width
    return pl.format("[{}, {})", low, low + width)


@pytest.fixture(scope="module")
def attack_data():
    rng = np.random.default_rng(3)
    n = 600
    ages = rng.integers(18, 80, n)
    targets = pl.DataFrame({
        "id": np.arange(n).astype(str),
        "age": ages,
        "sex": rng.choice(["Female", "Male"], n),
        "race": pl.Series(rng.choice(["White", "Black", "Asian"], n)).set(pl.Series(rng.random(n) < 0.03), None),
        # the disease follows the age, so classes hold few values and intersections shrink them
        "disease": np.array(["flu", "hiv", "cancer", "none", "cold"])[(ages // 7 + rng.integers(0, 2, n)) % 5],
    })
    r1 = targets.select("id", _decade(10).alias("age"), "sex", pl.lit("*").alias("race"), "disease")
    race = pl.when(pl.col("race") == "White").then(pl.lit("White")).when(pl.col("race").is_null()).then(None)
    r2 = targets.sample(fraction=0.7, seed=1).select(
        "id", _decade(5).alias("age"), race.otherwise(pl.lit("{Black, Asian}")).alias("race"),
        pl.lit("*").alias("sex"),
        pl.when(pl.col("disease").is_in(["flu", "cold"])).then(pl.lit("{flu, cold}")).otherwise("disease")
        .alias("disease"))
    r3 = targets.filter(pl.col("age") < 60).select("id", _decade(20).alias("age"), "sex", "race", "disease")
    releases = [r.with_columns(pl.all().cast(pl.String)) for r in (r1, r2, r3)]
    return targets, releases


def test_spark_attack_metrics_equal_the_polars_engine(spark, attack_data, tmp_path, capsys):
    targets, releases = attack_data
    qi = ["age", "sex", "race"]
    names = ["R1", "R2", "R3"]
    on_polars = intersection_attack([AttackedRelease(r, name) for r, name in zip(releases, names)], targets, qi,
                                    "disease", truth_id="id")
    assert on_polars.summary["perfect_breach"] > 0 and on_polars.summary["average_drop"] > 0  # a real attack
    with pytest.raises(ParameterError, match="nearest-centroid location needs engine='polars'"):
        intersection_attack_spark([SparkTextRelease(spark.createDataFrame(releases[0].to_arrow()), "R1")],
                                  spark.createDataFrame(targets.to_arrow()), qi, "disease", location="nearest")

    # one run through the command line: the files are read on Spark, the metrics written as Parquet,
    # custodian-only (scored against each target's true value): outside the releases' folder, the
    # folder 0700 and every file in it 0600 (they were 0755 and 0644)
    paths = []
    (tmp_path / "releases").mkdir()
    for release, name in zip(releases, names):
        paths.append(str(tmp_path / "releases" / f"{name}.csv"))
        release.write_csv(paths[-1])
    targets.write_parquet(tmp_path / "targets.parquet")
    code = cli.main(["attack", "intersection", *paths, "--targets", str(tmp_path / "targets.parquet"),
                     "--qi", "age,sex,race", "--sensitive", "disease", "--truth-id", "id", "--engine", "spark",
                     "--json", "--out", str(tmp_path / "metrics.parquet")])
    payload = json.loads(capsys.readouterr().out)
    assert code == 0
    assert (tmp_path / "metrics.parquet").stat().st_mode & 0o777 == 0o700
    written = list((tmp_path / "metrics.parquet").iterdir())
    assert written and {p.stat().st_mode & 0o777 for p in written} == {0o600}, written
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder left
    assert same(payload["summary"], on_polars.summary)
    assert same(payload["releases"], on_polars.releases.to_dicts())
    per_target = pl.read_parquet(tmp_path / "metrics.parquet" / "*.parquet").select(
        "id", "posterior_anonymity", "inferred_value", "perfect_breach_true")
    expected = targets.select("id").with_columns(
        on_polars.targets.select("posterior_anonymity", "inferred_value", "perfect_breach_true"))
    assert per_target.sort("id").equals(expected.sort("id"))


def _attack_jobs(spark, attack_data, engine_attack):
    """The Spark jobs one attack of the three releases runs (the inputs already on Spark)."""
    targets, releases = attack_data
    frames = [SparkTextRelease(spark.createDataFrame(r.to_arrow()), f"R{j + 1}") for j, r in enumerate(releases)]
    table = spark.createDataFrame(targets.to_arrow())
    tracker = spark.sparkContext.statusTracker()
    before = set(tracker.getJobIdsForGroup(None))
    result = engine_attack(frames, table, ["age", "sex", "race"], "disease", truth_id="id")
    return len(set(tracker.getJobIdsForGroup(None)) - before), result


def test_the_spark_attack_runs_few_spark_jobs(spark, attack_data):
    """Each Spark job has a fixed cost, most of the attack's time on small inputs: Spark counts
    the targets' values, their tuples and every release's cell combinations, and the rate of
    correct location; the steps over those counts run on the driver (they ran as one Spark job
    per join and group-by: 134 jobs for these three releases, 15 now)."""
    targets, releases = attack_data
    jobs, result = _attack_jobs(spark, attack_data, intersection_attack_spark)
    assert jobs <= 16
    names = ["R1", "R2", "R3"]
    on_polars = intersection_attack([AttackedRelease(r, name) for r, name in zip(releases, names)], targets,
                                    ["age", "sex", "race"], "disease", truth_id="id")
    assert same(result.summary, on_polars.summary)


def test_empty_targets_are_refused_as_on_the_polars_engine(spark, attack_data):
    targets, releases = attack_data
    release = SparkTextRelease(spark.createDataFrame(releases[0].to_arrow()), "R1")
    with pytest.raises(InputError, match="^the targets table is empty$"):
        intersection_attack([AttackedRelease(releases[0], "R1")], targets.head(0), ["age"], "disease")
    with pytest.raises(InputError, match="^the targets table is empty$"):
        intersection_attack_spark([release], spark.createDataFrame(targets.head(0).to_arrow()), ["age"], "disease")


@pytest.mark.parametrize("overlap", [True, False], ids=["common-values", "no-common-value"])
def test_targets_located_by_one_release_or_none_match_the_polars_engine(spark, overlap):
    """200 sensitive values (the Polars engine then intersects sorted keys, not bit masks).
    R1 holds the targets under 50, R2 the women: the men of 50 and over are located by no
    release (their candidates: the values both publish, or none, a contradiction, when the
    releases publish disjoint values), the men under 50 and the older women by one only. The
    Spark engine keeps those tuples' candidates, and those of a class showing '*', as "every
    published value" without writing them out as pairs; the metrics must still be the Polars
    engine's."""
    rng = np.random.default_rng(11)
    n = 400
    ages = rng.integers(20, 80, n)
    sex = rng.choice(["F", "M"], n)
    value = rng.integers(0, 200, n) if overlap else np.where(ages < 50, rng.integers(0, 100, n),
                                                            rng.integers(100, 200, n))
    targets = pl.DataFrame({"id": np.arange(n).astype(str), "age": ages, "sex": sex,
                            "s": [f"v{v:03d}" for v in value]})
    r1 = targets.filter(pl.col("age") < 50).select("id", _decade(1).alias("age"), pl.lit("*").alias("sex"), "s")
    # R2's classes of the seventies show '*' among their values: every value, as not located
    r2 = targets.filter((pl.col("sex") == "F") & ((pl.col("age") >= 50) | overlap)).select(
        "id", _decade(10).alias("age"), "sex",
        pl.when((pl.col("age") >= 70) & (pl.col("id").cast(pl.Int64) % 5 == 0)).then(pl.lit("*")).otherwise("s")
        .alias("s"))
    releases = [r.with_columns(pl.all().cast(pl.String)) for r in (r1, r2)]
    qi = ["age", "sex"]
    on_polars = intersection_attack([AttackedRelease(r, f"R{j + 1}") for j, r in enumerate(releases)], targets, qi,
                                    "s", truth_id="id")
    on_spark = intersection_attack_spark(
        [SparkTextRelease(spark.createDataFrame(r.to_arrow()), f"R{j + 1}") for j, r in enumerate(releases)],
        spark.createDataFrame(targets.to_arrow()), qi, "s", truth_id="id")
    assert (on_polars.summary["contradictions"] > 0) != overlap  # the nowhere-located tuples' contradictions
    assert on_polars.summary["perfect_breach"] > 0 or not overlap
    assert same(on_spark.summary, on_polars.summary)
    assert same(on_spark.releases.to_dicts(), on_polars.releases.to_dicts())
    columns = ["posterior_anonymity", "prior_anonymity", "contradiction", "inferred_value",
               "true_value_in_candidates", "perfect_breach_true"]
    per_target = pl.from_arrow(on_spark.targets.select("id", *columns).toArrow())
    expected = targets.select("id").with_columns(on_polars.targets.select(columns))
    assert per_target.sort("id").equals(expected.sort("id"))
