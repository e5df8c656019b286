"""The Spark table counter's twins (engines/spark/sampling): the packed key looked up on the JVM
and the raw values counted by Spark and encoded on the driver give the same frequency table, on
either side of the rule ``packs_on_jvm`` (``PACK_LIMIT``, ``JVM_DICTIONARY_LIMIT`` patched to the
data's own values); both refuse a value their dictionary lacks; a sample drawn from the counts at
a scheme's levels is the roll-up of the one drawn at the leaves with the same seed."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import packing
from crowdsafe.engines.spark import sampling
from crowdsafe.randomness import Randomness

pytestmark = pytest.mark.spark

COLUMNS = ["t", "i", "b"]


@pytest.fixture(scope="module")
def case(spark):
    """Rows (text with nulls, integers, booleans) in 3 partitions, their dictionaries (several
    spellings share a code, codes not dense), the same rows counted by Polars, and a map to a
    coarser level."""
    rng = np.random.default_rng(5)
    n = 30_000
    text = np.array(["a", "b", " c", "c", "dd", None], dtype=object)[rng.integers(0, 6, n)]
    frame = pl.DataFrame({"t": list(text), "i": rng.integers(-3, 40, n), "b": rng.random(n) < 0.3})
    data = spark.createDataFrame(frame.to_arrow()).repartition(3)
    dictionaries = (
        pl.DataFrame({"value": ["a", "b", " c", "c", "dd", None], "code": [0, 1, 2, 2, 4, 5]}),
        pl.DataFrame({"value": list(range(-3, 40)), "code": list(range(43))}),
        pl.DataFrame({"value": [False, True], "code": [1, 0]}),
    )
    coded = frame.select(
        pl.col("t").replace_strict({"a": 0, "b": 1, " c": 2, "c": 2, "dd": 4}, default=5, return_dtype=pl.Int64),
        (pl.col("i") + 3).cast(pl.Int64),
        pl.when(pl.col("b")).then(0).otherwise(1).cast(pl.Int64).alias("b"),
    )
    expected = coded.group_by(COLUMNS).len().sort(COLUMNS)
    coarse = (np.array([0, 0, 1, 1, 1, 2]), None, np.array([0, 0]))
    return data, dictionaries, expected, coarse


def _same_as_polars(counted: sampling.TableCounts, expected: pl.DataFrame) -> None:
    codes = counted.tuples(np.arange(counted.n_cells))
    np.testing.assert_array_equal(codes, expected.select(COLUMNS).to_numpy())
    np.testing.assert_array_equal(counted.counts, expected.get_column("len").to_numpy())


def test_twins_agree_at_the_pack_limit(case, monkeypatch):
    data, dictionaries, expected, _ = case
    grid = packing.span(sampling.radices_of(dictionaries))
    types = [f.dataType.simpleString() for f in data.schema.fields]
    for limit, fast in ((grid - 1, False), (grid, False), (grid + 1, True)):
        monkeypatch.setattr(sampling, "PACK_LIMIT", limit)
        assert sampling.packs_on_jvm(types, dictionaries) is fast
        _same_as_polars(sampling.count_table(data, COLUMNS, dictionaries), expected)


def test_twins_agree_at_the_dictionary_limit(case, monkeypatch):
    data, dictionaries, expected, _ = case
    largest = max(d.height for d in dictionaries)
    types = [f.dataType.simpleString() for f in data.schema.fields]
    for limit, fast in ((largest - 1, False), (largest, True)):
        monkeypatch.setattr(sampling, "JVM_DICTIONARY_LIMIT", limit)
        assert sampling.packs_on_jvm(types, dictionaries) is fast
        _same_as_polars(sampling.count_table(data, COLUMNS, dictionaries), expected)


@pytest.mark.parametrize("packed", [True, False])
def test_a_value_without_a_code_is_noticed_by_both_twins(case, monkeypatch, packed):
    """'dd' left out of the dictionary, then the null value: no table, whichever way it counts."""
    data, dictionaries, _, _ = case
    monkeypatch.setattr(sampling, "PACK_LIMIT", 2.0**62 if packed else 1.0)
    for dropped in (pl.col("value") == "dd", pl.col("value").is_null()):
        lacking = (dictionaries[0].filter(~dropped.fill_null(False)), *dictionaries[1:])
        assert sampling.count_table(data, COLUMNS, lacking) is None


def test_a_sample_at_levels_is_the_roll_up_of_the_leaf_sample(case):
    data, dictionaries, expected, coarse = case
    counted = sampling.count_table(data, COLUMNS, dictionaries)
    codes, counts = sampling.sample_counts(counted, 0.4, Randomness(9), (None, None, None))
    assert 0 < counts.sum() < expected.get_column("len").sum() and np.all(counts > 0)
    rolled = (pl.DataFrame({"t": coarse[0][codes[:, 0]], "i": codes[:, 1], "b": coarse[2][codes[:, 2]],
                            "n": counts}).group_by(COLUMNS).agg(pl.col("n").sum()).sort(COLUMNS))
    at_levels = sampling.sample_counts(counted, 0.4, Randomness(9), coarse)
    np.testing.assert_array_equal(at_levels[0], rolled.select(COLUMNS).to_numpy())
    np.testing.assert_array_equal(at_levels[1], rolled.get_column("n").to_numpy())


def test_other_types_take_the_twin():
    dictionary = pl.DataFrame({"value": [0.5, 1.5], "code": [0, 1]})
    assert not sampling.packs_on_jvm(["double"], [dictionary])
    assert sampling.packs_on_jvm(["bigint"], [dictionary.with_columns(pl.col("value").cast(pl.Int64))])


def test_the_json_map_and_the_literal_map_give_the_same_codes(case, spark):
    """code_expression's map written as one JSON text and its twin's one literal per key give
    every row the same code (text with quotes, backslashes and accents; integers; booleans), and
    Spark folds the JSON into a literal map while planning: no row parses it."""
    from pyspark.sql import functions as F

    data, dictionaries, _, _ = case
    tricky = pl.DataFrame({"value": ['qu"ote', "back\\slash", "é ü 東京", "a", None], "code": [3, 1, 4, 0, 2]})
    rows = data.withColumn("t", F.when(F.col("i") % 7 == 0, F.lit('qu"ote'))
                           .when(F.col("i") % 7 == 1, F.lit("back\\slash"))
                           .when(F.col("i") % 7 == 2, F.lit("é ü 東京")).otherwise(F.col("t")))
    types = {f.name: f.dataType.simpleString() for f in rows.schema.fields}
    for column, dictionary in (("t", dictionaries[0]), ("t", tricky), ("i", dictionaries[1]), ("b", dictionaries[2])):
        fast = sampling.code_expression(column, types[column], dictionary).alias("fast")
        slow = sampling.code_expression_by_literals(column, types[column], dictionary).alias("slow")
        both = pl.from_arrow(rows.select(fast, slow).toArrow())
        assert both.get_column("fast").null_count() < both.height  # (a real lookup, not all missing)
        assert both.get_column("fast").equals(both.get_column("slow"), check_names=False)
        plan = rows.select(fast)._jdf.queryExecution().optimizedPlan().toString().lower()
        assert "from_json" not in plan and "jsontostructs" not in plan


def test_a_table_held_in_memory_is_coded_by_compiled_code(case, spark):
    """A local relation (rows made on the driver, as every table crowdsafe hands to Spark from
    memory is, or a user's ``createDataFrame``) gets a plan node between it and the lookup
    (``session.planned_on_executors``): the JSON map is folded, not parsed once per row while the
    optimiser evaluates the projection on the driver; the rows and their order are unchanged, and
    a frame that is not local is left as it is."""
    from crowdsafe.engines.spark.session import planned_on_executors

    data, dictionaries, expected, _ = case
    assert planned_on_executors(data) is data
    rows = pl.from_arrow(data.toArrow())
    local = spark.createDataFrame(rows.to_arrow())
    assert local.isLocal()
    planned = planned_on_executors(local)
    assert not planned.isLocal()
    assert pl.from_arrow(planned.toArrow()).equals(rows)
    plan = sampling.packed_codes(planned, COLUMNS, dictionaries)._jdf.queryExecution().optimizedPlan().toString()
    assert "map(keys:" in plan and not plan.startswith("LocalRelation")
    _same_as_polars(sampling.count_table(planned, COLUMNS, dictionaries), expected)


def test_tables_read_from_memory_reach_spark_planned_on_executors(spark):
    """The Spark engine's two ways in from memory: a table crowdsafe loads (a Polars frame, a
    bundled dataset) and a Spark DataFrame of driver-side rows."""
    from crowdsafe.engines.spark.table import spark_table

    frame = pl.DataFrame({"age": [30, 41, 30, 52] * 5, "sex": ["f", "m", "m", "f"] * 5})
    for given in (frame, spark.createDataFrame(frame.to_arrow())):
        table = spark_table(spark, given, qi=["age", "sex"])
        assert not table.frame.isLocal()
        assert pl.from_arrow(table.frame.toArrow()).equals(frame)
