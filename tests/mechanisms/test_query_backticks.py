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
