"""`--partition`: refused with a person identifier (one person, several parts), and a part keyed on
the literal cast to the column's type (30 and 30.0 are one part), before anything is charged."""

from __future__ import annotations

import datetime as dt
import json

import polars as pl
import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli_helpers import run_command
from crowdsafe.data import Dataset, load
from crowdsafe.errors import BudgetExceeded, ParameterError
from crowdsafe.mechanisms.queries import answer_query, check_query
from crowdsafe.mechanisms.query_partition import part_key
from crowdsafe.mechanisms.query_plan import QueryRequest
from crowdsafe.privacy.ledger import Ledger

# The reviewer's P.csv: 200 people, each with 2 rows in 2020 and 2 in 2021.
PERSON_SCHEMA = ('person_id = "pid"\n[attributes.pid]\nrole = "insensitive"\ntype = "categorical"\n'
                 '[attributes.year]\ntype = "integer"\n[attributes.age]\ntype = "integer"\n')
TABLE_SCHEMA = ('[attributes.age]\ntype = "integer"\n[attributes.sex]\ntype = "categorical"\n'
                '[attributes.hours]\ntype = "real"\n[attributes.day]\ntype = "date"\n')


def _person_files(tmp_path, people: int = 200):
    rows = [f"{p},{year},{20 + (p + k) % 60}" for p in range(people) for year in (2020, 2021) for k in range(2)]
    (tmp_path / "P.csv").write_text("pid,year,age\n" + "\n".join(rows) + "\n")
    (tmp_path / "p.toml").write_text(PERSON_SCHEMA)
    return str(tmp_path / "P.csv"), str(tmp_path / "p.toml")


def _table_files(tmp_path):
    rows = [f"{17 + i % 70},{'Female' if i % 2 else 'Male'},{1 + i % 90}.5,2020-01-{1 + i % 28:02d}"
            for i in range(300)]
    (tmp_path / "D.csv").write_text("age,sex,hours,day\n" + "\n".join(rows) + "\n")
    (tmp_path / "s.toml").write_text(TABLE_SCHEMA)
    return str(tmp_path / "D.csv"), str(tmp_path / "s.toml")


def _entries(capsys) -> list[dict]:
    code, out, _ = run_command(capsys, "ledger", "show", "--json")
    assert code == 0
    datasets = json.loads(out)["datasets"]
    return [e for d in datasets for e in d["entries"]]


def test_the_reviewers_person_partition_is_refused_before_the_charge(capsys, tmp_path):
    data, schema = _person_files(tmp_path)
    first = ["query", data, "count where year = 2020", "-e", "0.6", "--partition", "year",
             "--max-rows-per-person", "2", "--budget", "1,0", "--schema", schema]
    code, out, err = run_command(capsys, *first)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "--partition year is refused" in err and "person identifier 'pid'" in err and "leave out --partition" in err
    assert "or use --partition pid" in err
    assert _entries(capsys) == []  # nothing charged, nothing registered
    # Without --partition the two years compose sequentially: 0.6 + 0.6 > 1, the second refused.
    assert run_command(capsys, *[a for a in first if a not in ("--partition", "year")])[0] == 0
    second = ["query", data, "count where year = 2021", "-e", "0.6", "--max-rows-per-person", "2", "--schema", schema]
    code, _, err = run_command(capsys, *second)
    assert code != 0 and "costs (ε=0.6" in err
    assert [e["partition"] for e in _entries(capsys)] == [None]


def test_a_partition_by_the_person_identifier_composes_in_parallel(capsys, tmp_path):
    data, schema = _person_files(tmp_path)
    for person in ("3", "4"):
        code, _, err = run_command(capsys, "query", data, f"count where pid = '{person}' and year = 2020", "-e", "0.6",
                                   "--partition", "pid", "--max-rows-per-person", "2", "--budget", "1,0",
                                   "--schema", schema)
        assert code == 0, err
    assert [e["partition"] for e in _entries(capsys)] == [["pid", "3"], ["pid", "4"]]


def _typed(tmp_path, frame: pl.DataFrame, schema: str, name: str = "t") -> Dataset:
    path = tmp_path / f"{name}.toml"
    path.write_text(schema)
    return load(frame, schema=path, name=name)


def _neighbour_pair(tmp_path) -> tuple[Dataset, Dataset]:
    """D, and D' = D plus one person whose rows lie in both years (the neighbour F1 is about)."""
    d = pl.DataFrame({"pid": [str(p) for p in range(50) for _ in (0, 1)],
                      "year": [2020 + p % 2 for p in range(50) for _ in (0, 1)], "age": [30] * 100})
    d_plus = pl.concat([d, pl.DataFrame({"pid": ["new", "new"], "year": [2020, 2021], "age": [30, 30]})])
    return _typed(tmp_path, d, PERSON_SCHEMA, "D"), _typed(tmp_path, d_plus, PERSON_SCHEMA, "D")


def test_the_refusal_is_the_same_on_neighbouring_tables_and_reads_no_row(monkeypatch, tmp_path):
    """D and D' (one more person, in both parts): the refusal comes from the schema alone, with the
    same message on both, and no row is read."""
    from crowdsafe.mechanisms import query_aggregates

    def must_not_run(*args, **kwargs):
        raise AssertionError("the data was read for a refused query")

    monkeypatch.setattr(query_aggregates, "_rows", must_not_run)
    messages = []
    for table in _neighbour_pair(tmp_path):
        with pytest.raises(ParameterError) as refused:
            answer_query(table, QueryRequest("count where year = 2020", epsilon=0.5, partition="year",
                                             max_rows_per_person=2))
        messages.append(str(refused.value))
    assert messages[0] == messages[1] and "\n" not in messages[0] and "new" not in messages[0]


def test_the_person_in_both_parts_spends_in_both(tmp_path):
    """Why parallel composition fails: D' adds one person whose rows change the count of both
    parts, so a 'parallel' charge of max(ε, ε) = ε would cover a loss of 2ε."""
    d, d_plus = _neighbour_pair(tmp_path)
    by_year = [t.frame.group_by("year").len().sort("year")["len"].to_list() for t in (d, d_plus)]
    assert [b - a for a, b in zip(*by_year)] == [1, 1]


def test_the_reviewers_spellings_are_one_part(capsys, tmp_path):
    data, schema = _table_files(tmp_path)
    base = ["-e", "0.6", "--partition", "age", "--budget", "1,0", "--schema", schema]
    assert run_command(capsys, "query", data, "count where age = 30", *base)[0] == 0
    code, _, err = run_command(capsys, "query", data, "count where age = 30.0", *base)
    assert code != 0 and "has spent (ε=0.6" in err  # the same part: 0.6 + 0.6 > 1
    assert [e["partition"] for e in _entries(capsys)] == [["age", "30"]]


@pytest.mark.parametrize(("column", "spellings", "key"), [
    ("age", ["0", "0.0", "-0.0", "-0", "0e5"], "0"),
    ("age", ["30", "30.0", "30.00", "3e1", "030"], "30"),
    ("hours", ["30", "30.0", "3e1"], "30"),
    ("hours", ["-0.0", "0"], "0"),
    ("hours", ["2.5", "2.50", "25e-1"], "2.5"),
    ("day", ["'2020-01-01'", "'20200101'", "' 2020-01-01'"], "2020-01-01"),
    ("sex", ["'Female'"], "Female"),
])
def test_each_spelling_gives_the_canonical_key(tmp_path, column, spellings, key):
    data = _typed(tmp_path, pl.DataFrame({"age": [1], "sex": ["Female"], "hours": [1.0],
                                          "day": [dt.date(2020, 1, 1)]}), TABLE_SCHEMA)
    for spelling in spellings:
        ledger = Ledger(tmp_path / f"{column}-{spellings.index(spelling)}.sqlite3")
        fingerprint = data.fingerprint(key=ledger.identity_key)
        ledger.set_budget(fingerprint, "t", 10.0, 0.0)
        answer_query(data, QueryRequest(f"count where {column} = {spelling}", epsilon=0.5, partition=column),
                     ledger=ledger, randomness=1)
        assert ledger.entries()[0].partition == (column, key), spelling
        ledger.close()


@given(st.integers(-(2**53) + 1, 2**53 - 1))
def test_an_integer_and_its_float_spelling_share_a_key(value):
    assert part_key("age", pl.Int64(), value) == part_key("age", pl.Int64(), float(value)) == str(value)
    assert part_key("hours", pl.Float64(), value) == part_key("hours", pl.Float64(), float(value))


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_equal_floats_share_a_key_and_different_floats_do_not(value):
    key = part_key("hours", pl.Float64(), value)
    assert key == part_key("hours", pl.Float64(), float(repr(value)))
    assert float(key) == value
    nearby = value + 1.0 if abs(value) < 2**52 else value * 2 if value else 1.0
    if nearby != value:
        assert part_key("hours", pl.Float64(), nearby) != key


def test_a_float_literal_past_2_53_on_an_integer_column_is_refused_before_the_charge(tmp_path):
    data = _typed(tmp_path, pl.DataFrame({"n": [2**53, 2**53 + 1]}), '[attributes.n]\ntype = "integer"\n')
    # Polars compares it as floats: 9007199254740992.0 matches both rows, so its part overlaps 2^53 + 1's.
    assert data.frame.filter(pl.col("n") == float(2**53)).height == 2
    with pytest.raises(ParameterError, match="write the whole number in digits"):
        check_query(data, QueryRequest(f"count where n = {float(2**53)!r}", epsilon=0.5, partition="n"))
    check_query(data, QueryRequest(f"count where n = {2**53 + 1}", epsilon=0.5, partition="n"))


def test_parts_keyed_canonically_still_compose_in_parallel(tmp_path):
    data = _typed(tmp_path, pl.DataFrame({"age": [30, 31, 0]}), '[attributes.age]\ntype = "integer"\n')
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.set_budget(data.fingerprint(key=ledger.identity_key), "t", 1.0, 0.0)
        for spelling in ("30", "31.0", "-0.0"):
            answer_query(data, QueryRequest(f"count where age = {spelling}", epsilon=0.6, partition="age"),
                         ledger=ledger, randomness=1)
        assert ledger.budget("t").spent.epsilon == pytest.approx(0.6)
        with pytest.raises(BudgetExceeded):
            answer_query(data, QueryRequest("count where age = 0", epsilon=0.6, partition="age"), ledger=ledger)
