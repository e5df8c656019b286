"""The column-operation cell reader against the one-cell reader, on random cells and domains."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from crowdsafe.data import Hierarchy
from crowdsafe.data.cell_reader import CellReader, canonical_texts
from crowdsafe.data.generalized import AttributeDomain, CellKind, canonical_cells
from crowdsafe.errors import InputError

LABELS = ["low", "high", "Technical, sales", "[10, 20)", "*"]  # some labels that look like syntax
# values a set quotes (crowdsafe.data.set_cells): ', ', quotes, braces, spaces around, empty
ODD_VALUES = ["a, b", 'x "y"', "{z}", " s", "", '"q"']


def _hierarchy(name: str, leaves: pl.Series) -> Hierarchy:
    """Two levels above the leaves; level-1 labels include ', ' and range look-alikes."""
    n = len(leaves)
    level1 = [LABELS[i * len(LABELS[:4]) // max(n, 1)] for i in range(n)]
    return Hierarchy.from_columns(name, leaves, [level1, ["all"] * n])


@st.composite
def domains(draw) -> AttributeDomain:
    numeric = draw(st.booleans())
    if numeric:
        values = sorted(set(draw(st.lists(st.integers(-5, 60), min_size=1, max_size=12))))
        series = pl.Series("x", values, dtype=pl.Int64)
        if draw(st.booleans()):
            series = series.cast(pl.Float64) / 2  # halves: non-integral floats too
    else:
        values = sorted(set(draw(st.lists(st.sampled_from(["a", "b", "c", "d", "Sales", "Tech-support", "25", "*",
                                                           *ODD_VALUES]), min_size=1, max_size=7))))
        series = pl.Series("x", values, dtype=pl.String)
    if draw(st.booleans()):
        series = series.extend(pl.Series("x", [None], dtype=series.dtype))
    if draw(st.booleans()) and series.null_count() == 0:
        return AttributeDomain("x", _hierarchy("x", series).leaves, _hierarchy("x", series))
    return AttributeDomain("x", series)


NUMBERS = st.one_of(st.integers(-10, 70).map(str), st.sampled_from(
    ["2.5", "25.0", "+3", "-0", "1e1", "2.5E1", ".5", "3.", "0.02k", "0.025k", "0.01K", "1K", "1e-1M", "007", "1_0",
     "inf", "nan"]))


@st.composite
def cells(draw, domain: AttributeDomain, sets: bool = False) -> str | None:
    """A cell of ``domain``'s column; ``sets``: a set, its members mostly values, plain or quoted."""
    values = [v for v in domain.values.to_list() if v is not None]
    value_text = st.sampled_from(values).map(lambda v: str(int(v)) if isinstance(v, float) and v == int(v) else str(v))
    pad = st.sampled_from(["", " ", "  ", "\t"])
    bound = st.one_of(value_text, NUMBERS)  # often a value of the domain: the closed/open ends matter
    ranged = st.builds(lambda o, a, sp, b, c: f"{o}{a},{sp}{b}{c}", st.sampled_from("[(]"), bound,
                       st.sampled_from(["", " ", "  "]), bound, st.sampled_from("])["))  # ]a, b[: ISO 31-11
    open_end = st.builds(lambda op, sp, a: f"{op}{sp}{a}", st.sampled_from([">=", ">", "<", "<="]),
                         st.sampled_from(["", " "]), bound)
    labels = (st.sampled_from([label for level in domain.hierarchy.labels for label in level])
              if domain.hierarchy is not None else st.nothing())
    # a value (or a number) with some of its last characters masked, or stars added: 13**, 2*, Sal**, *5*
    masked = st.builds(lambda text, cut, stars: text[:max(len(text) - cut, 0)] + "*" * stars,
                       st.one_of(value_text, NUMBERS), st.integers(0, 3), st.integers(1, 3))
    band = st.builds(lambda a, sp, b, plus: f"{a}{sp}+" if plus else f"{a}{sp}-{sp}{b}", bound,
                     st.sampled_from(["", " "]), bound, st.booleans())  # 20-29, 20 - 29, 90+ (numeric columns)
    plain = st.one_of(value_text, NUMBERS, ranged, open_end, ranged, open_end, labels, masked, band, st.just("*"),
                      st.sampled_from(["junk", "", "٢٥", "Café", "x\x1cy", "2020-01-31", "{", "{}", "{ }",
                                      "2020-01-31 10:00:00", "[2020-01-31T10:00:00.000000, 2020-02-01]"]))
    # a member as written: as it is, in quotes ("" for "), or with a quote that does not close
    def quoted(texts):
        return st.builds(lambda m, pad: pad + '"' + m.replace('"', '""') + '"' + pad, texts, st.sampled_from(["", " "]))

    odd = st.sampled_from(['"a', 'a"b', '"x" y', '""', '"""', '"*"', '"a, b"', *ODD_VALUES])
    values_quoted = quoted(st.one_of(value_text, st.sampled_from(ODD_VALUES)))
    member = (st.one_of(value_text, values_quoted, odd, plain) if sets
              else st.one_of(plain, plain, quoted(st.one_of(value_text, plain, st.sampled_from(ODD_VALUES))), odd))
    member_set = st.lists(member, min_size=0, max_size=4).map(lambda ms: "{" + ", ".join(ms) + "}")
    cell = draw(member_set if sets else st.one_of(plain, plain, member_set, st.none()))
    if cell is None:
        return None
    return draw(pad) + cell + draw(pad)


def _one_cell_reader(domain: AttributeDomain, texts: list[str | None]):
    """The one-cell reader, or the error it raises."""
    try:
        return domain.cover(pl.Series("x", texts, dtype=pl.String), strict=False)
    except InputError as error:
        return error


@pytest.mark.slow
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_reader_gives_the_one_cell_readers_answer(data):
    domain = data.draw(domains())
    texts = data.draw(st.lists(cells(domain), min_size=1, max_size=15, unique=True))
    expected = _one_cell_reader(domain, texts)
    if isinstance(expected, InputError):
        with pytest.raises(InputError, match="holds the range"):
            CellReader([domain]).read([pl.Series("x", texts, dtype=pl.String)])
        return
    got = CellReader([domain]).read([pl.Series("x", texts, dtype=pl.String)])[0]
    assert got.indptr.tolist() == expected.indptr.tolist()
    assert got.indices.tolist() == expected.indices.astype(np.int64).tolist()
    assert list(got.kind) == list(expected.kind)


@pytest.mark.slow
@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_the_reader_reads_sets_as_the_one_cell_reader(data):
    """Sets whose members are values of the domain, written plainly or in quotes
    (crowdsafe.data.set_cells), or with a quote that does not close."""
    domain = data.draw(domains())
    texts = data.draw(st.lists(cells(domain, sets=True), min_size=1, max_size=10, unique=True))
    expected = _one_cell_reader(domain, texts)
    assume(not isinstance(expected, InputError))  # (a range in a text column: above)
    got = CellReader([domain]).read([pl.Series("x", texts, dtype=pl.String)])[0]
    assert got.indptr.tolist() == expected.indptr.tolist()
    assert got.indices.tolist() == expected.indices.astype(np.int64).tolist()
    assert list(got.kind) == list(expected.kind)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.one_of(st.none(), st.text(alphabet=" ,{}[]()<>=*0123456789.kKab-;\t٣é\"", max_size=14)),
                min_size=1, max_size=20))
@pytest.mark.slow
def test_canonical_texts_are_the_one_cell_canonical_cells(texts):
    series = pl.Series("x", texts, dtype=pl.String)
    assert canonical_texts(series).to_list() == canonical_cells(series).to_list()


def test_several_columns_read_at_once_and_by_hand():
    age = AttributeDomain("age", pl.Series("age", [17, 25, 30, 34, 90], dtype=pl.Int64))
    job = AttributeDomain("job", pl.Series("job", ["clerk", "cook", "nurse", None], dtype=pl.String))
    read = CellReader([age, job]).read([
        pl.Series("age", ["[25, 34]", "(25,34)", ">=90", "25.0", "*", "{17, >=30}", None]),
        pl.Series("job", ["{cook, nurse}", "cook", "*", None, "chef"]),
    ])
    age_read, job_read = read
    as_lists = [age_read.indices[a:b].tolist() for a, b in zip(age_read.indptr[:-1], age_read.indptr[1:])]
    assert as_lists == [[1, 2, 3], [2], [4], [1], [0, 1, 2, 3, 4], [0, 2, 3, 4], []]
    assert list(age_read.kind) == [CellKind.RANGE, CellKind.RANGE, CellKind.RANGE, CellKind.VALUE, CellKind.ANY,
                                   CellKind.SET, CellKind.MISSING]
    as_lists = [job_read.indices[a:b].tolist() for a, b in zip(job_read.indptr[:-1], job_read.indptr[1:])]
    assert as_lists == [[1, 2], [1], [0, 1, 2, 3], [3], []]
    assert age_read.domain_size == 5 and job_read.domain_size == 4


def test_a_range_in_a_text_column_is_named():
    job = AttributeDomain("job", pl.Series("job", ["clerk", "cook"], dtype=pl.String))
    with pytest.raises(InputError, match=r"column 'job' holds the range '\[1, 2\]'"):
        CellReader([job]).read([pl.Series("job", ["cook", "[1, 2]"])])


def test_a_star_value_is_a_value_alone_and_everything_in_a_set():
    # the one-cell reader's order: an original value first for a cell, '*' first for a set member
    odd = AttributeDomain("x", pl.Series("x", ["*", "a", "b"], dtype=pl.String))
    read = CellReader([odd]).read([pl.Series("x", ["*", "{*}", "{*, a}"])])[0]
    assert read.indices.tolist() == [0, 0, 1, 2, 0, 1, 2]
    assert read.indptr.tolist() == [0, 1, 4, 7]


def test_timestamps_are_read_as_ranges_and_values_by_both_readers():
    # Mondrian and MDAV publish a timestamp column's ranges and centroids as ISO timestamps, with a
    # space or a 'T' (found by a black-box sweep, F6: anonymize refused its own output)
    values = pl.Series("seen", ["2024-01-10 10:00:00", "2024-01-12 11:30:00.5", "2024-01-14 11:00:00",
                                "2300-01-01 00:00:00", "1677-09-21 00:12:43"]).str.to_datetime()
    domain = AttributeDomain("seen", values.sort())
    texts = ["[2024-01-10 10:00:00.000000, 2024-01-14 11:00:00.000000]", "2024-01-12T11:30:00.500000",
             "(2024-01-10T10:00:00, 2024-01-14 11:00:00)", ">=2024-01-12 11:30:00.5", "<2024-01-11",
             "[1677-09-21 00:12:43.000000, 2300-01-01T00:00:00.000000]", "{2024-01-10 10:00:00, 2300-01-01}",
             "2024-01-13 00:00:00"]
    expected = domain.cover(pl.Series("seen", texts), strict=False)
    got = CellReader([domain]).read([pl.Series("seen", texts)])[0]
    assert got.indptr.tolist() == expected.indptr.tolist() and list(got.kind) == list(expected.kind)
    assert got.indices.tolist() == expected.indices.astype(np.int64).tolist()
    as_lists = [got.indices[a:b].tolist() for a, b in zip(got.indptr[:-1], got.indptr[1:])]
    assert as_lists == [[1, 2, 3], [2], [2], [2, 3, 4], [0, 1], [0, 1, 2, 3, 4], [1, 4], []]
