"""The table pass's declared-leaves check (engines/spark/declared_values) against its reference
twin, collecting every published column (``CHECK_DECLARED_LEAVES`` off): the same table facts,
the same samples and the same publications; the columns it collects after all (a value outside
the declared leaves) and those it never checks (no declared hierarchy, a CSV file)."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest
from engine_helpers import comparable, text_rows

from crowdsafe.anonymize.publish import PlanRequest, RunOptions, plan_publication
from crowdsafe.data import load
from crowdsafe.engines.spark import declared_values, table
from crowdsafe.randomness import Randomness

pytestmark = pytest.mark.spark


@pytest.fixture(scope="module")
def small():
    adult = load("adult")
    return adult.with_frame(adult.frame.head(4000))


def _collected_columns(monkeypatch) -> list[list[str]]:
    """Record the columns of every collecting pass (domain_scan) the table pass makes."""
    calls: list[list[str]] = []
    real = table.domain_scan

    def spy(frame, columns, extra=()):
        calls.append(list(columns))
        return real(frame, columns, extra)

    monkeypatch.setattr(table, "domain_scan", spy)
    return calls


def _both_ways(monkeypatch, make):
    """``make()`` with the leaves checked, then with every column collected (the twin)."""
    calls = _collected_columns(monkeypatch)
    checked = make()
    checked_calls = list(calls)
    monkeypatch.setattr(declared_values, "CHECK_DECLARED_LEAVES", False)
    calls.clear()
    collected = make()
    return checked, collected, checked_calls, list(calls)


def _same_table(a, b) -> None:
    assert (a.fingerprint, a.n_rows, a.columns, a.notes) == (b.fingerprint, b.n_rows, b.columns, b.notes)
    for c in a.columns:
        assert a.domain.hierarchies[c].leaves.equals(b.domain.hierarchies[c].leaves)
        # every value the rows hold has the same code both ways (the checked dictionary may list
        # leaves no row holds)
        joined = b.dictionaries[c].join(a.dictionaries[c], on="value", how="left", nulls_equal=True)
        assert joined.get_column("code").to_list() == joined.get_column("code_right").to_list(), c


def test_declared_columns_are_checked_and_give_what_collecting_gives(spark, small, monkeypatch, tmp_path):
    """Adult's published columns all have declared hierarchies (three with a missing-value leaf):
    none is collected, and the table, a sample of all rows, and a seeded publication (sample,
    choice, release rows, certificate) are those of the twin."""
    from crowdsafe.engines.spark.publish import count_release_sample, publish_table

    plan = plan_publication(PlanRequest(1.0, 1e-6, k=20))

    def make():
        made = table.spark_table(spark, small)
        whole = count_release_sample(made, 1.0, Randomness(3), None)
        out = tmp_path / f"release-{len(list(tmp_path.iterdir()))}.parquet"
        run = publish_table(made, plan, RunOptions(out=str(out)), randomness=Randomness(5))
        return made, whole, run, out

    checked, collected, checked_calls, collected_calls = _both_ways(monkeypatch, make)
    assert checked_calls == [[]]  # one pass, collecting nothing
    assert collected_calls == [checked[0].columns]
    _same_table(checked[0], collected[0])
    np.testing.assert_array_equal(checked[1].table.codes, collected[1].table.codes)
    np.testing.assert_array_equal(checked[1].table.counts, collected[1].table.counts)
    assert checked[1].identity == collected[1].identity
    runs = checked[2], collected[2]
    assert runs[0].release.recoding.levels == runs[1].release.recoding.levels
    assert comparable(runs[0].certificate) == comparable(runs[1].certificate)
    written = [pl.read_parquet(out / "*.parquet") for out in (checked[3], collected[3])]
    assert text_rows(written[0]).equals(text_rows(written[1]))
    assert json.dumps(runs[0].custodian_report()["releases"], sort_keys=True, default=str) == json.dumps(
        runs[1].custodian_report()["releases"], sort_keys=True, default=str)


def test_a_value_outside_the_leaves_is_collected_after_all(spark, small, monkeypatch, tmp_path):
    """A Parquet file read with a declared schema and the hierarchies given: a 'sex' value the
    hierarchy does not list sends that column alone to a second, collecting pass; a column
    without a declared hierarchy (none given for 'race') is collected in the first pass; the
    outcome is the twin's, the unlisted value published as missing."""
    from crowdsafe.engines.spark.publish import count_release_sample

    frame = small.frame.with_columns(pl.when(pl.int_range(pl.len()) == 7).then(pl.lit("unlisted"))
                                     .otherwise(pl.col("sex")).alias("sex"))
    path = tmp_path / "people.parquet"
    frame.write_parquet(path)
    given = {c: h for c, h in small.hierarchies.items() if c != "race"}

    def make():
        made = table.spark_table(spark, str(path), schema=small.schema, hierarchies=given)
        return made, count_release_sample(made, 1.0, Randomness(3), None)

    checked, collected, checked_calls, collected_calls = _both_ways(monkeypatch, make)
    assert checked_calls == [["race"], ["sex"]]
    assert collected_calls == [checked[0].columns]
    _same_table(checked[0], collected[0])
    np.testing.assert_array_equal(checked[1].table.codes, collected[1].table.codes)
    np.testing.assert_array_equal(checked[1].table.counts, collected[1].table.counts)


def test_what_is_never_checked(spark, small, monkeypatch, tmp_path):
    """A CSV file (its values are tidied after collecting) and a file read without a declared
    schema are collected whole; so is a column whose leaves do not convert to its type."""
    path = tmp_path / "people.csv"
    small.frame.write_csv(path)
    calls = _collected_columns(monkeypatch)
    made = table.spark_table(spark, str(path), schema=small.schema, hierarchies=small.hierarchies)
    assert calls == [made.columns]
    parquet = tmp_path / "people.parquet"
    small.frame.write_parquet(parquet)
    calls.clear()
    inferred = table.spark_table(spark, str(parquet), hierarchies=small.hierarchies)
    assert calls == [inferred.columns]  # (every column is published when no schema names the roles)
    ages = declared_values.leaves_to_check({"age": "bigint"}, {"age": pl.Int64}, ["age"], small.schema,
                                           {"age": small.hierarchies["age"]})
    assert list(ages) == ["age"]  # integers in an integer column: checked
    words = small.hierarchies["sex"]  # text leaves that are no integers: not for an integer column
    assert declared_values.leaves_to_check({"sex": "bigint"}, {"sex": pl.Int64}, ["sex"], small.schema,
                                           {"sex": words}) == {}


def test_a_schema_files_declared_hierarchies_are_checked(spark, monkeypatch, tmp_path):
    """The command line's way: a Parquet file and a schema file. The hierarchy file ('country')
    and the named groups ('sex') are declared, so checked; the intervals over the values read
    ('age') make an observed hierarchy, so collected; 'Atlantis', which the hierarchy file does
    not list, sends 'country' to a second pass. The table, a seeded publication and the
    custodian's count of unlisted values are the twin's."""
    from crowdsafe.engines.spark.publish import publish_table

    listed = ["NL", "DE", "FR", "ES"]
    (tmp_path / "country.csv").write_text("".join(f"{v};EU;*\n" for v in listed))
    (tmp_path / "schema.toml").write_text(
        '[attributes.country]\ntype = "categorical"\nhierarchy = "country.csv"\n'
        '[attributes.sex]\ntype = "categorical"\nhierarchy = { groups = [{ "*" = ["F", "M"] }] }\n'
        '[attributes.age]\ntype = "numeric"\nhierarchy = { widths = [10, 20], bottom = 0, top = 100 }\n'
        '[attributes.income]\nrole = "sensitive"\ntype = "categorical"\n')
    rng = np.random.default_rng(4)
    n = 3000
    frame = pl.DataFrame({"country": [*rng.choice(listed, n - 1), "Atlantis"], "sex": rng.choice(["F", "M"], n),
                          "age": rng.integers(18, 90, n), "income": rng.choice(["<=50K", ">50K"], n)})
    frame.write_parquet(tmp_path / "people.parquet")
    plan = plan_publication(PlanRequest(1.0, 1e-4, k=10))

    def make():
        made = table.spark_table(spark, str(tmp_path / "people.parquet"), schema=str(tmp_path / "schema.toml"))
        out = tmp_path / f"release-{len(list(tmp_path.iterdir()))}.parquet"
        return made, publish_table(made, plan, RunOptions(out=str(out)), randomness=Randomness(6))

    checked, collected, checked_calls, collected_calls = _both_ways(monkeypatch, make)
    assert checked_calls == [["age", "income"], ["country"]]
    assert collected_calls == [["country", "sex", "age", "income"]]
    _same_table(checked[0], collected[0])
    assert comparable(checked[1].certificate) == comparable(collected[1].certificate)
    facts = [run.custodian_report() for run in (checked[1], collected[1])]
    assert facts[0]["outside_hierarchies"] == facts[1]["outside_hierarchies"] == {
        "country": {"distinct_values": 1, "published_as": "missing (?, or empty where not generalized)",
                    "named_by": "crowdsafe check"}}
    assert facts[0]["releases"] == facts[1]["releases"]


def test_the_count_beside_the_pass_is_kept_only_when_its_codes_are_the_final_ones(spark, small, monkeypatch):
    """Every published column declared: the table is counted beside the pass, with the leaves
    and the missing value as each column's values, once. When the final dictionaries' codes were
    not those (forced here), the table is counted again with the final ones; either way the counts
    are the twin's."""
    counts: list[int] = []
    real = table._Description.count

    def spy(self, frame):
        counts.append(len(self.columns))
        return real(self, frame)

    monkeypatch.setattr(table._Description, "count", spy)
    kept = table.spark_table(spark, small)
    assert len(counts) == 1
    counts.clear()
    monkeypatch.setattr(table._Description, "codes_within", lambda self, other: False)
    recounted = table.spark_table(spark, small)
    assert len(counts) == 2
    monkeypatch.setattr(declared_values, "CHECK_DECLARED_LEAVES", False)
    twin = table.spark_table(spark, small)
    for made in (kept, recounted):
        _same_table(made, twin)
        cells = np.arange(made.counted.n_cells)
        np.testing.assert_array_equal(made.counted.tuples(cells), twin.counted.tuples(np.arange(twin.counted.n_cells)))
        np.testing.assert_array_equal(made.counted.counts, twin.counted.counts)


def test_codes_within_compares_every_value_and_code():
    def described(**dictionaries):
        frames = {c: pl.DataFrame({"value": v, "code": k}) for c, (v, k) in dictionaries.items()}
        return table._Description(None, list(frames), frames, [])  # type: ignore[arg-type]

    final = described(a=(["x", "y"], [0, 1]))
    assert final.codes_within(described(a=(["x", "y", None], [0, 1, 2])))  # a superset, same codes
    assert not final.codes_within(described(a=(["x", "y", None], [1, 0, 2])))  # other codes
    assert not final.codes_within(described(a=(["x", None], [0, 2])))  # a value missing
    assert not final.codes_within(described(b=(["x", "y"], [0, 1])))  # other columns
    with_missing = described(a=(["x", None], [0, 2]))
    assert with_missing.codes_within(described(a=(["x", "y", None], [0, 1, 2])))
    assert not with_missing.codes_within(described(a=(["x", "y"], [0, 1])))  # the missing value's code
