"""The release page's custodian panel says, per column, how many values its hierarchy did not
list and how they were published (the template, rendered as the page renders it)."""

from __future__ import annotations

from crowdsafe.app.pages import _environment


def _panel(outside: dict) -> str:
    env = _environment()
    source = env.loader.get_source(env, "release.html")[0]
    start = source.index("{% for column, outside in facts.outside_hierarchies.items() %}")
    stop = source.index("{% endfor %}", start) + len("{% endfor %}")
    return " ".join(env.from_string(source[start:stop]).render(facts={"outside_hierarchies": outside}).split())


def test_the_values_outside_a_hierarchy_are_counted_in_words():
    text = _panel({"city": {"distinct_values": 2, "unicode_form_differs": 2}, "zip": {"distinct_values": 1}})
    assert ("city: 2 distinct values outside the hierarchy were published as missing (? in a generalized "
            "column, an empty cell where the column is published as it is); 2 of them only in Unicode form "
            "(NFD beside NFC)") in text
    assert ("zip: 1 distinct value outside the hierarchy was published as missing (? in a generalized "
            "column, an empty cell where the column is published as it is).") in text
    assert _panel({}) == ""
