"""A parse error on a letter beyond A-Z says that such a column name goes in backticks
(intlsweep #7), naming the whole name; other unexpected characters get no such hint."""

from __future__ import annotations

import pytest

from crowdsafe.errors import QuerySyntaxError
from crowdsafe.mechanisms.query_language import parse


@pytest.mark.parametrize(("text", "name"), [
    ("mean(Größe) clamp 100..220", "Größe"), ("count where Région = 'x'", "Région"), ("histogram 年齢", "年齢"),
    ("count where Re\u0301gion = 'x'", "Re\u0301gion"), ("histogram الجنس", "الجنس"), ("histogram Yaş", "Yaş"),
])
def test_a_name_with_letters_beyond_a_to_z_is_told_to_go_in_backticks(text, name):
    with pytest.raises(QuerySyntaxError) as raised:
        parse(text)
    assert f"goes in backticks: `{name}`" in str(raised.value)
    parse(text.replace(name, f"`{name}`"))  # and so written, it parses


@pytest.mark.parametrize("text", ["count where a = 1 ;", "count where a = $", "count where a = ١٢"])
def test_other_characters_get_no_backtick_hint(text):
    with pytest.raises(QuerySyntaxError) as raised:
        parse(text)
    assert "backticks" not in str(raised.value)


@pytest.mark.parametrize(("text", "meant"), [
    ("count where Gewicht > 80,5", "80.5"), ("mean(Gewicht) clamp 0..300,5", "300.5"),
    ("count where Gewicht between 70,5 and 80", "70.5"),
])
def test_a_decimal_comma_is_told_to_be_a_point(text, meant):
    """A German user's ``Gewicht > 80,5`` got "expected 'and', 'or' or the end, found ','" and
    no word of the decimal point (found by a new user's walk-through, 2026-11-30)."""
    with pytest.raises(QuerySyntaxError) as raised:
        parse(text)
    assert f"(write numbers with a decimal point: {meant})" in str(raised.value)
    parse(text.replace(meant.replace(".", ","), meant))  # and so written, it parses


@pytest.mark.parametrize("text", ["count where a in (1, 2) ,", "count where a = 1 , 2", "count where a = 1,"])
def test_a_comma_between_other_tokens_gets_no_decimal_hint(text):
    with pytest.raises(QuerySyntaxError) as raised:
        parse(text)
    assert "decimal point" not in str(raised.value)
