"""Set cells quote a member that needs it (crowdsafe.data.set_cells): written by Mondrian's
``value_sets``, read back exactly by both cell readers and by the syntax alone."""

from __future__ import annotations

import sys

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from crowdsafe.classic.mondrian import value_sets
from crowdsafe.data.cell_reader import CellReader, canonical_texts
from crowdsafe.data.generalized import AttributeDomain, CellKind, canonical_cells, parse_cell
from crowdsafe.data.set_cells import SPACES, format_set, needs_quotes, quote_member, quote_members, set_members
from crowdsafe.errors import InputError

# texts made of what makes a member hard to read: ', ', quotes, braces, spaces (and tabs, NBSP)
TRICKY = st.text(alphabet='ab ,{}"\t\xa0', max_size=6)


def test_the_spaces_are_those_python_strips():
    assert SPACES == "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())


@pytest.mark.parametrize(("member", "written"), [
    ("a", "a"), ("a, b", '"a, b"'), ("a,b", "a,b"), ('x "y"', '"x ""y"""'), ("{z}", '"{z}"'), ("z}", '"z}"'),
    (" s", '" s"'), ("s ", '"s "'), ("", '""'), ("a b", "a b"), ("*", "*"),
    ("Married-civ-spouse", "Married-civ-spouse"),
])
def test_a_member_is_quoted_only_when_it_needs_it(member, written):
    assert quote_member(member) == written
    assert pl.select(quote_members(pl.lit(member, dtype=pl.String))).item() == written


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(TRICKY, st.text(max_size=4)), max_size=12))
def test_polars_quotes_as_python_does(members):
    got = pl.Series("m", members, dtype=pl.String).to_frame().select(quote_members(pl.col("m"))).to_series()
    assert got.to_list() == [quote_member(m) for m in members]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.one_of(TRICKY, st.text(max_size=4)), min_size=1, max_size=6))
def test_a_written_set_reads_back_as_its_members(members):
    written = format_set(members)
    assert set_members(written[1:-1]) == members
    cell = parse_cell(written)
    assert cell.kind is CellKind.SET and list(cell.members) == sorted(members)
    assert parse_cell(cell.text).members == cell.members  # the canonical text reads as the same members


def test_sets_written_before_quoting_read_as_before():
    # no quote that closes: every member unquoted, split at ', ' (a '"' is then a character like any)
    assert set_members('a"b, "c') == ['a"b', '"c']
    assert set_members('"a" b, c') == ['"a" b', "c"]
    assert parse_cell("{b, a}").text == "{a, b}"
    domain = AttributeDomain.from_values(pl.Series("x", ['"q"', "a", "Technical, sales", "b"]))
    cover = domain.cover(pl.Series("x", ['{"q", a}', "{b, Technical, sales}", '{"a", "q"}']), strict=False)
    covered = [domain.values.gather(cover.members(j)).to_list() for j in range(3)]
    # '"q"' written unquoted before is the value '"q"' (its text in quotes, q, is no value); a run
    # whose parts are no values joins into a value
    assert covered == [['"q"', "a"], ["Technical, sales", "b"], ['"q"', "a"]]


def test_a_quoted_member_that_is_no_value_is_named():
    domain = AttributeDomain.from_values(pl.Series("x", ["a, b", "a"]))
    with pytest.raises(InputError, match=r"holds the set member \"b\", which is neither a value"):
        domain.cover(pl.Series("x", ['{a, "b"}']))


@st.composite
def classes(draw):
    """Distinct categories (often hard to read in a set) and a class of each row."""
    values = draw(st.lists(st.one_of(TRICKY, st.sampled_from(["a", "b", "a, b", "{a, b}", '"a"'])),
                           min_size=2, max_size=8, unique=True))
    n_parts = draw(st.integers(1, 4))
    rows = draw(st.lists(st.tuples(st.integers(0, n_parts - 1), st.sampled_from(values)), min_size=n_parts,
                         max_size=20))
    assume(len({p for p, _ in rows}) == n_parts)
    return values, rows, n_parts


@pytest.mark.slow
@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(classes())
def test_mondrian_sets_are_read_back_exactly_by_both_readers(case):
    values, rows, n_parts = case
    labels = pl.Series("c", [v for _, v in rows], dtype=pl.String)
    cells = value_sets(np.array([p for p, _ in rows]), labels, n_parts, "c", pl.Series(values, dtype=pl.String))
    domain = AttributeDomain.from_values(pl.Series("c", values, dtype=pl.String))
    held = [sorted({v for p, v in rows if p == part}) for part in range(n_parts)]
    for part, members in enumerate(held):
        cell = cells[part]
        if len(members) == 1:  # a class of one category writes it alone
            assert cell == members[0]
            assume(cell == cell.strip())  # (a value with spaces around it, alone, is read stripped)
        else:
            assert cell.startswith("{") and set(parse_cell(cell).members) == set(members)
            assume(cell not in values)  # (every member quoted, and still a value: not reached by these texts)
    cover = domain.cover(cells)
    expected = [sorted(domain.values.to_list().index(v) for v in members) for members in held]
    assert [cover.members(j).tolist() for j in range(n_parts)] == expected
    read = CellReader([domain]).read([cells])[0]
    assert [read.indices[a:b].tolist() for a, b in zip(read.indptr[:-1], read.indptr[1:])] == expected
    assert canonical_texts(cells).to_list() == canonical_cells(cells).to_list()


def test_needs_quotes_names_the_cases():
    assert [needs_quotes(m) for m in ["a, b", " a", "a ", "{", "}", '"', "", "a,b", "a"]] == [True] * 7 + [False] * 2
