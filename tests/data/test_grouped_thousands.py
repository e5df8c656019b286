"""Numbers whose thousands are grouped by a space, a no-break space (U+00A0) or a narrow no-break
space (U+202F), as French, Swiss and Nordic exports write ``29 824,00``, are read as numbers
when the decimal comma is asked for (intlsweep #8), and only then."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe.data import Schema, load
from crowdsafe.data import decimal_comma as comma
from crowdsafe.data.io import read_table
from crowdsafe.data.streaming import scan_table
from crowdsafe.errors import SchemaError

SPACES = {"space": " ", "nbsp": "\u00a0", "narrow": "\u202f"}
VALUES = ["29{s}824,00", "9{s}428,78", "1{s}234{s}567,5", "812,25", "-3{s}000"]
NUMBERS = [29824.0, 9428.78, 1234567.5, 812.25, -3000.0]


@pytest.mark.parametrize(("text", "matches"), [
    ("29 824,00", True), ("29\u00a0824,00", True), ("1\u202f234\u202f567,5", True), ("7", True), ("1.234,5", True),
    ("12 34,5", False), ("1 2345,0", False), ("1 234\u00a0567,0", False), ("1 234.567,0", False), (" 1", False),
    ("1  234", False), ("a 123", False),
])
def test_the_grouped_pattern(text, matches):
    assert pl.Series([text]).str.contains(comma.GROUPED).item() is matches


@pytest.mark.parametrize("space", SPACES.values(), ids=list(SPACES))
def test_decimal_comma_reads_space_grouped_thousands(tmp_path, space):
    path = tmp_path / "fr.csv"
    rows = [f"{i};{VALUES[i % 5].format(s=space)};{20 + i}" for i in range(50)]
    path.write_text("id;revenu;age\n" + "\n".join(rows) + "\n", encoding="utf-8")
    frame = read_table(path, decimal_comma=True)
    assert frame.schema["revenu"] == pl.Float64
    assert frame["revenu"].head(5).to_list() == NUMBERS
    lazy = scan_table(path, decimal_comma=True)
    assert lazy.reading == "on"
    declared = load(path, schema=Schema.of({"id": "numeric", "revenu": "numeric", "age": "numeric"}),
                    decimal_comma=True)
    assert declared.frame["revenu"].head(5).to_list() == NUMBERS


def test_without_the_flag_space_grouped_numbers_are_not_guessed(tmp_path):
    path = tmp_path / "fr.csv"
    rows = [f"{i};{VALUES[i % 5].format(s=' ')}" for i in range(50)]
    path.write_text("id;revenu\n" + "\n".join(rows) + "\n", encoding="utf-8")
    assert read_table(path).schema["revenu"] == pl.String  # "auto": a space in a value is not guessed


def test_a_declared_number_grouped_by_spaces_without_the_flag_gets_the_hint():
    frame = pl.DataFrame({"revenu": ["29 824,00", "812,25"]})
    with pytest.raises(SchemaError, match="a decimal comma\\? give --decimal-comma"):
        load(frame, schema=Schema.of({"revenu": "numeric"}))
