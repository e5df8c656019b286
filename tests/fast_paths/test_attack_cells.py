"""The attacks' plain-cell reading (attacks/plain_cells.py, ``read_plain``: at most
``PLAIN_CELLS`` cells, every one plain) against its reference twin, ``CellReader.read``: the
same kinds and covered codes wherever the fast path reads, on both sides of the switch."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.attacks import intersection_attack, locate, plain_cells
from crowdsafe.data import Hierarchy
from crowdsafe.data.cell_reader import CellReader
from crowdsafe.data.generalized import AttributeDomain

ZIP = Hierarchy.from_columns("zip", ["13053", "13068", "14850", "14853"],
                             [["130**", "130**", "148**", "148**"], ["*"] * 4])
DOMAINS = [
    AttributeDomain.from_values(pl.Series("age", [18, 20, 25, 29, 31, 40, 45])),
    AttributeDomain("zip", ZIP.leaves, ZIP),
    AttributeDomain.from_values(pl.Series("s", ["flu", "cold", "hiv", "a, b", "a", "b", 'x "y"', "{z}", " s"])),
    AttributeDomain.from_values(pl.Series("x", [0.5, 1.5, None])),
]
PLAIN = ["25", " 25 ", "[20, 29]", "(20, 29]", "[20, 29)", "(18, 45)", "[-5, 3.5]", "[29, 20]", "]20, 29]", "[20, 29[",
         "]18, 45[", "*", "?",
         "13053", "130**", "148**", "flu", " cold", "unknown", "0.5", "[0.5, 1.5]", "x, y", "a;b", "p=q"]
OTHER = ["25.0", "[20,29]", "[20 ; 29]", "[20 ; 29[", "{flu, hiv}", "{13053}", ">=40", "<20", "1.5K", "inf", "nan", "é",
         "", "a, b", "[20, 29", "2020-01-01", None, "+3",
         # set members in quotes (crowdsafe.data.set_cells): ', ', quotes, braces and spaces in them
         '{"a, b", a}', "{a, a, b}", "{a, b}", '{"a", "b"}', '{"x ""y""", "{z}"}', '{" s", flu}', '"a, b"',
         '{"a, b"}', '{"a, b" , "flu"}', '{"a, b}', '{a"b, flu}', '{"", hiv}', '{"*", flu}', 'x "y"', "{z}"]


def assert_same_covers(got, expected):
    assert len(got) == len(expected)
    for one, other in zip(got, expected):
        assert one.labels.equals(other.labels)
        assert one.kind.tolist() == other.kind.tolist()
        assert one.indptr.dtype == other.indptr.dtype and one.indices.dtype == other.indices.dtype
        assert one.indptr.tolist() == other.indptr.tolist()
        assert one.indices.tolist() == other.indices.tolist()
        assert one.domain_size == other.domain_size


@st.composite
def cell_columns(draw, vocabulary):
    n = draw(st.integers(1, 4))
    domain_of = draw(st.lists(st.integers(0, len(DOMAINS) - 1), min_size=n, max_size=n))
    cells = [pl.Series("c", sorted(set(draw(st.lists(st.sampled_from(vocabulary), min_size=1, max_size=8))),
                                   key=lambda t: (t is None, t or "")), dtype=pl.String)
             for _ in range(n)]
    return cells, domain_of


def reference(cells, domain_of):
    try:
        return CellReader(DOMAINS).read(cells, domain_of)
    except Exception as error:  # (the reference refuses a range in a text domain)
        return error


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(cell_columns(PLAIN))
def test_plain_cells_read_as_the_reader_reads_them(case):
    cells, domain_of = case
    expected = reference(cells, domain_of)
    got = plain_cells.read_plain(cells, domain_of, DOMAINS)
    if isinstance(expected, Exception):
        assert got is None
        return
    if got is not None:
        assert_same_covers(got, expected)


def test_typical_cells_take_the_fast_path():
    cells = [pl.Series("c", ["[20, 29]", "(29, 45]", "25", "*"]), pl.Series("c", ["13053", "130**", "*", "?"]),
             pl.Series("c", ["flu", " cold", "?"]), pl.Series("c", ["0.5", "[0.5, 1.5]", "*"])]
    got = plain_cells.read_plain(cells, [0, 1, 2, 3], DOMAINS)
    assert got is not None
    assert_same_covers(got, CellReader(DOMAINS).read(cells, [0, 1, 2, 3]))


@pytest.mark.slow  # over a second; in the full suite (quick loop: -m 'not slow')
@settings(max_examples=200, deadline=None)
@given(cell_columns(PLAIN + OTHER))
def test_any_cells_read_as_the_reader_reads_them_or_go_to_it(case):
    cells, domain_of = case
    got = plain_cells.read_plain(cells, domain_of, DOMAINS)
    if got is not None:
        assert_same_covers(got, reference(cells, domain_of))


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_the_switch_at_plain_cells(monkeypatch, shift):
    cells = [pl.Series("c", PLAIN[:8]), pl.Series("c", ["13053", "130**", "*"])]
    domain_of = [0, 1]
    expected = CellReader(DOMAINS).read(cells, domain_of)
    monkeypatch.setattr(plain_cells, "PLAIN_CELLS", 11 + shift)  # 11 cells in all
    got = plain_cells.read_plain(cells, domain_of, DOMAINS)
    assert (got is None) == (shift < 0)
    table = locate.class_table(pl.DataFrame({"age": PLAIN[:3], "zip": ["13053", "130**", "*"]}), ["age", "zip"])
    read = locate.read_tables([table], ["age", "zip"], DOMAINS[:2])  # through the switch, whichever side
    assert_same_covers(list(read[0][0].values()), CellReader(DOMAINS[:2]).read(
        [table.distinct_cells["age"], table.distinct_cells["zip"]], [0, 1]))
    if got is not None:
        assert_same_covers(got, expected)


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_attack_is_the_same_on_both_sides_of_plain_cells(monkeypatch, shift):
    releases = [pl.DataFrame({"age": ["[20, 29]", "[20, 29]", "(29, 45]", "(29, 45]"],
                              "zip": ["130**", "130**", "148**", "*"], "s": ["flu", "hiv", "flu", "cold"]}),
                pl.DataFrame({"age": ["[18, 25]", "[18, 25]", "[25, 45]", "[25, 45]"],
                              "zip": ["13053", "*", "14850", "14850"], "s": ["flu", "cold", "flu", "hiv"]})]
    targets = pl.DataFrame({"age": [20, 25, 31, 40], "zip": ["13053", "13068", "14850", "14853"],
                            "s": ["flu", "cold", "flu", "hiv"]})

    def attack():
        result = intersection_attack(releases, targets, ["age", "zip"], "s", hierarchies={"zip": ZIP})
        return result.targets, result.releases, result.summary

    expected = attack()
    n_cells = 16  # the distinct cells read: per release, age 2 + zip 3 + s 3
    taken = []
    read_plain = plain_cells.read_plain

    def spy(*args):
        covers = read_plain(*args)
        taken.append(covers is not None)
        return covers

    monkeypatch.setattr(locate, "read_plain", spy)
    monkeypatch.setattr(plain_cells, "PLAIN_CELLS", n_cells + shift)
    targets_, releases_, summary = attack()
    assert taken == [shift >= 0]
    assert targets_.equals(expected[0]) and releases_.equals(expected[1]) and summary == expected[2]


def test_sorted_numbers_leave_the_missing_value_out():
    values, codes = plain_cells._sorted_numbers(DOMAINS[3])
    assert values.tolist() == [0.5, 1.5] and codes.tolist() == [0, 1]
    assert np.isnan(DOMAINS[3].numbers[2])


@settings(max_examples=60, deadline=None)
@given(cell_columns(PLAIN + OTHER))
def test_the_memo_reads_as_its_loop_twin(case):
    """read_plain (each domain's memo of the texts it has read, gathered by NumPy) against its
    twin read_plain_by_loop (every text read in a loop, no memo): the same covers or both None."""
    cells, domain_of = case
    twin = plain_cells.read_plain_by_loop(cells, domain_of, DOMAINS)
    for _ in range(2):  # texts met for the first time, then remembered
        got = plain_cells.read_plain(cells, domain_of, DOMAINS)
        assert (got is None) == (twin is None)
        if got is not None:
            assert_same_covers(got, twin)


@pytest.mark.parametrize("room", [-1, 0])
def test_the_switch_at_a_full_memo(monkeypatch, room):
    domains = [AttributeDomain.from_values(pl.Series("age", [18, 20, 25, 29, 31, 40, 45])),  # (fresh: empty memos)
               AttributeDomain("zip", ZIP.leaves, ZIP)]
    cells = [pl.Series("c", ["[20, 29]", "(29, 45]", "25", "*"]), pl.Series("c", ["13053", "130**", "*"])]
    looped = []
    loop = plain_cells.read_plain_by_loop

    def spy(*args):
        looped.append(True)
        return loop(*args)

    monkeypatch.setattr(plain_cells, "read_plain_by_loop", spy)
    monkeypatch.setattr(plain_cells, "MEMO_TEXTS", 4 + room)  # the first domain's 4 texts fill it
    got = plain_cells.read_plain(cells, [0, 1], domains)
    assert looped == ([True] if room < 0 else [])
    assert got is not None
    assert_same_covers(got, CellReader(domains).read(cells, [0, 1]))


def test_a_memo_holding_many_codes_stops_growing(monkeypatch):
    """A range of a wide numeric domain covers many codes: past MEMO_CODES kept codes a domain's
    memo takes no new text (the loop twin reads it, the same covers), so a long-running app's
    memory stays bounded whatever the texts."""
    domains = [AttributeDomain.from_values(pl.Series("age", list(range(1000))))]  # (fresh: an empty memo)
    monkeypatch.setattr(plain_cells, "MEMO_CODES", 1500)
    kept = []
    for low in range(0, 1000, 100):  # ten ranges of 500 codes each, one read each
        cells = [pl.Series("c", [f"[{low}, {low + 499}]"])]
        got = plain_cells.read_plain(cells, [0], domains)
        assert got is not None
        assert_same_covers(got, plain_cells.read_plain_by_loop(cells, [0], domains))
        kept.append(len(plain_cells._MEMOS[domains[0]].arrays[3]))
    assert max(kept) <= 1500 + 500  # the read that crossed the bound was the last one kept
    assert kept[-1] == kept[3]


def test_the_memo_grows_across_reads():
    """Texts added by a later read are appended to the memo's arrays: earlier and later texts
    read together still read as the twin reads them."""
    domains = [AttributeDomain.from_values(pl.Series("age", [18, 20, 25, 29, 31, 40, 45])),  # (fresh: empty memos)
               AttributeDomain("zip", ZIP.leaves, ZIP)]
    reads = [[pl.Series("c", ["[20, 29]", "*"]), pl.Series("c", ["130**"])],
             [pl.Series("c", ["(29, 45]", "25"]), pl.Series("c", ["13053", "148**", "?"])],
             [pl.Series("c", ["25", "(29, 45]", "[20, 29]", "[18, 18]"]), pl.Series("c", ["148**", "130**", "*"])]]
    for cells in reads:
        got = plain_cells.read_plain(cells, [0, 1], domains)
        assert got is not None
        assert_same_covers(got, plain_cells.read_plain_by_loop(cells, [0, 1], domains))
        assert_same_covers(got, CellReader(domains).read(cells, [0, 1]))
