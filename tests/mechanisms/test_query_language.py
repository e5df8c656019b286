"""The query language: what parses, what it means, and clear errors for what does not."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe.errors import QuerySyntaxError, SchemaError
from crowdsafe.mechanisms.query_language import (
    And,
    Between,
    Comparison,
    InList,
    IsNull,
    Not,
    Or,
    check_columns,
    compile_filter,
    equality_value,
    parse,
)


def test_the_issue_example_parses():
    q = parse("count where age >= 30 and sex = 'Female'")
    assert q.kind == "count"
    assert q.where == And((Comparison("age", ">=", 30), Comparison("sex", "==", "Female")))
    assert q.columns == ("age", "sex")


@pytest.mark.parametrize(
    ("text", "kind", "column", "q", "bounds"),
    [
        ("COUNT(*)", "count", None, None, None),
        ("sum(hours-per-week) clamp 0..99", "sum", "hours-per-week", None, (0.0, 99.0)),
        ("avg(age) clamp 17..90 where sex = \"Male\"", "mean", "age", None, (17.0, 90.0)),
        ("median(age) clamp -5.5..1e2", "quantile", "age", 0.5, (-5.5, 100.0)),
        ("quantile(`capital gain`, 0.9) clamp 0..10000", "quantile", "capital gain", 0.9, (0.0, 10000.0)),
    ],
)
def test_aggregates(text, kind, column, q, bounds):
    parsed = parse(text)
    assert (parsed.kind, parsed.column, parsed.q, parsed.bounds) == (kind, column, q, bounds)


def test_histogram_dimensions_with_bins_and_values():
    q = parse("table age[0..100 by 10], race in ('White', 'Other'), sex where not income = '>50K'")
    assert q.kind == "histogram"
    age, race, sex = q.dimensions
    assert (age.bins.low, age.bins.high, age.bins.width, age.bins.count) == (0, 100, 10, 10)
    assert age.bins.labels()[0] == "[0, 10)" and age.bins.labels()[-1] == "[90, 100]"
    assert race.values == ("White", "Other") and sex.bins is None and sex.values is None
    assert q.where == Not(Comparison("income", "==", ">50K"))


def test_filter_forms_and_precedence():
    q = parse("count where a = 1 or b in (2, 3) and not c is null or d not between 1 and 5 or e is not null")
    assert q.where == Or((
        Comparison("a", "==", 1),
        And((InList("b", (2, 3)), Not(IsNull("c")))),
        Between("d", 1, 5, negated=True),
        IsNull("e", negated=True),
    ))
    assert parse("count where name = 'O''Brien'").where == Comparison("name", "==", "O'Brien")
    assert parse("count where (a = 1 or a = 2) and b <> 'x'").where == And(
        (Or((Comparison("a", "==", 1), Comparison("a", "==", 2))), Comparison("b", "!=", "x"))
    )


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("counts where age > 3", "expected count, sum"),
        ("count wher age > 3", "expected 'where' or the end"),
        ("count where age >", "expected a value"),
        ("count where (age > 3", "expected ')'"),
        ("count where age > 3 ;", "unexpected ';'"),
        ("count where age = Female", "expected a value"),
        ("sum(age) clamp 1..", "expected an upper bound"),
        ("sum(age) clamp 1 90", "'..'"),
        ("histogram", "a column name"),
        ("histogram age[0..100]", "'by'"),
        ("quantile(age) clamp 0..1", "','"),
        ("quantile(age, 1.5) clamp 0..1", "between 0 and 1"),
        ("count where count > 3", "keyword"),
        ("count where age between 3 or 5", "'and'"),
        ("histogram age[10..0 by 5]", "low < high"),
        # numbers: plain decimal or scientific notation in the digits 0-9 (crowdsafe.number_text)
        ("count where age = １２", "unexpected '１' (write numbers in the digits 0-9)"),
        ("count where age > ٣", "unexpected '٣' (write numbers in the digits 0-9)"),
        ("count where age = 1_0", "found '_0'"),
        ("sum(age) clamp 0..1e400", "character 19: '1e400' is too large"),
        ("count where age > 1e-400", "'1e-400' is too close to 0"),
        ("count where age = 1" + "0" * 5000, "a whole number of 5001 digits is too large"),
        ("histogram age[0..1e300 by 1]", "more than 1,000,000 bins"),
        ("histogram age[0..1 by 1e-7]", "more than 1,000,000 bins"),
    ],
)
def test_parse_errors_name_the_problem(text, fragment):
    with pytest.raises(QuerySyntaxError) as info:
        parse(text)
    message = str(info.value)
    assert fragment in message and "\n" not in message


def test_numbers_are_read_exactly_and_the_most_bins_are_allowed():
    q = parse("histogram age[0..1000000 by 1] where age >= 1e1 and age < 12.5 and age != -3")
    assert q.dimensions[0].bins.count == 1_000_000
    assert q.where == And((Comparison("age", ">=", 10.0), Comparison("age", "<", 12.5), Comparison("age", "!=", -3)))
    assert isinstance(q.where.operands[2].value, int)


FRAME = pl.DataFrame({
    "age": [20, 35, None, 50],
    "sex": pl.Series(["Female", "Male", "Female", None], dtype=pl.Categorical),
    "income": ["<=50K", ">50K", ">50K", "<=50K"],
})


def _matches(text: str) -> list[int]:
    q = parse(text)
    check_columns(q, FRAME.columns)
    mask = FRAME.with_columns(compile_filter(q.where, dict(FRAME.schema)).alias("m")).get_column("m")
    return [i for i, v in enumerate(mask.to_list()) if v]


def test_filters_evaluate_like_sql_with_missing_values():
    assert _matches("count where age >= 30") == [1, 3]
    assert _matches("count where not age >= 30") == [0]  # the missing age matches neither
    assert _matches("count where sex = 'Female'") == [0, 2]
    assert _matches("count where sex != 'Female'") == [1]
    assert _matches("count where sex is null or age between 18 and 21") == [0, 3]
    assert _matches("count where income in ('>50K') and sex not in ('Male')") == [2]
    assert _matches("count where age in (20, 35.0) or age in (50)") == [0, 1, 3]
    assert _matches("count where sex between 'A' and 'G'") == [0, 2]
    assert _matches("count") == [0, 1, 2, 3]


def test_unknown_columns_and_type_mismatches_are_schema_errors():
    with pytest.raises(SchemaError, match="unknown column 'agee'; did you mean 'age'"):
        check_columns(parse("count where agee > 3"), FRAME.columns)
    with pytest.raises(SchemaError, match="the columns are"):
        check_columns(parse("count where zzz > 3"), FRAME.columns)
    with pytest.raises(SchemaError, match="holds text") as text:
        compile_filter(parse("count where sex = 03").where, dict(FRAME.schema))
    assert "'3'" not in str(text.value)  # the number read from 03 is 3: not the text to write
    with pytest.raises(SchemaError, match="holds numbers"):
        compile_filter(parse("count where age = '3'").where, dict(FRAME.schema))


def test_equality_value_finds_the_partition_part():
    assert equality_value(parse("count where sex = 'F' and age > 3").where, "sex") == "F"
    assert equality_value(parse("count where sex = 'F' or age > 3").where, "sex") is None
    assert equality_value(parse("count where sex != 'F'").where, "sex") is None


DATES = pl.DataFrame({"born": pl.Series(["1989-10-12", "1990-01-01", "2001-06-30", None]).str.to_date(),
                      "seen": pl.Series(["2024-06-26 10:00:00", "2024-06-26 12:30:00", None, None]).str.to_datetime()})


def test_dates_are_compared_as_dates():
    """A quoted date against a Date column compares dates (it compared text: '1990' and 'x'
    matched by their letters)."""
    def matches(text: str) -> list[int]:
        where = compile_filter(parse(text).where, dict(DATES.schema))
        return DATES.with_row_index().filter(where).get_column("index").to_list()

    assert matches("count where born >= '1990-01-01'") == [1, 2]
    assert matches("count where born < '1990-01-01'") == [0]
    assert matches("count where born = '2001-06-30'") == [2]
    assert matches("count where seen > '2024-06-26 11:00:00'") == [1]


@pytest.mark.parametrize("literal", ["x", "1990", "2000-13-45", "12/10/1989"])
def test_text_that_is_no_date_is_refused_against_dates(literal):
    with pytest.raises(SchemaError, match=f"holds dates: compare it with a date written YYYY-MM-DD, not '{literal}'"):
        compile_filter(parse(f"count where born >= '{literal}'").where, dict(DATES.schema))


def test_a_refused_date_literal_charges_nothing(tmp_path):
    """The refusal comes from the query and the schema, before the ledger is touched."""
    from crowdsafe import api
    from crowdsafe.privacy.ledger import Ledger

    ledger = tmp_path / "ledger.sqlite3"
    data = tmp_path / "d.parquet"
    DATES.write_parquet(data)
    with pytest.raises(SchemaError, match="holds dates"):
        api.query(data, "count where born >= '1990'", epsilon=1.0, ledger=str(ledger), budget=(5.0, 0.0), randomness=1)
    if ledger.exists():
        with Ledger(ledger) as book:
            assert book.entries() == []
