"""What the report's table of generalized attributes says (issue 35): each level in words, the
missing value named, and the number of distinct values consistent with the values listed."""

from __future__ import annotations

import re
from html import unescape

import polars as pl

from crowdsafe import api
from crowdsafe.report.content import EXAMPLE_VALUES, MISSING_SHOWN, AttributeView, report_content
from crowdsafe.report.html import render_html

CERTIFICATE = {
    "guarantee": "dps", "epsilon": 1.0, "delta": 1e-6, "theorem": "Theorem 6",
    "parameters": {"k": 2, "quasi_identifiers": ["age", "job", "zip"], "scheme": {"age": 2, "job": 0, "zip": 2},
                   "scheme_level_names": {"age": "width 10", "job": "value", "zip": "2 masked"},
                   "scheme_level_descriptions": {"age": "age in ranges of 10", "job": "job: exact values",
                                                 "zip": "zip: last 2 digits masked"}},
    "randomness": {"source": "os", "fit_for_release": True}, "accounting": {"ledger": True},
    "fit_for_release": True, "unfit_reasons": [],
}
JOBS = [f"job{i:02d}" for i in range(12)]
FRAME = pl.DataFrame({
    "age": ["[20, 30)", "[30, 40)", "", "?"] * 6,
    "job": (JOBS * 2),
    "zip": ["021**", "100**", "021**", "945**"] * 6,
})


def listed_count(examples: tuple[str, ...], cell: str) -> int:
    """How many values a 'published values' cell names: the ``examples`` it lists (it must begin
    with them) plus its '… and N more'."""
    assert cell.startswith(", ".join(examples))
    more = re.search(r", … and ([\d,]+) more$", cell)
    return len(examples) + (int(more.group(1).replace(",", "")) if more else 0)


def test_each_level_is_named_by_what_it_does():
    content = report_content(FRAME, CERTIFICATE, "r.csv")
    age, job, zip_ = content.attributes
    assert (age.description, job.description, zip_.description) == (
        "age in ranges of 10", "job: exact values", "zip: last 2 digits masked")
    page = unescape(render_html(content))
    assert "<th>what the level does</th>" in page and "zip: last 2 digits masked" in page
    assert "level name" not in page


def test_a_certificate_without_descriptions_gets_words_from_the_level_names():
    older = {**CERTIFICATE, "parameters": {k: v for k, v in CERTIFICATE["parameters"].items()
                                           if k != "scheme_level_descriptions"}}
    age, job, zip_ = report_content(FRAME, older, "r.csv").attributes
    assert (age.description, job.description, zip_.description) == (
        "age in ranges of 10", "job: exact values", "zip: last 2 characters masked")


def test_a_missing_value_is_named_and_explained():
    """An empty cell (a column published as it is) and '?' (above level 0) are one bar, labelled
    "missing (?)", and the figure's caption and text alternative say what it means."""
    content = report_content(FRAME, CERTIFICATE, "r.csv")
    age = content.attributes[0]
    assert dict(age.values)[MISSING_SHOWN] == 12 and age.has_missing
    assert "?" not in dict(age.values) and "" not in dict(age.values)
    assert age.values[-1][0] == MISSING_SHOWN  # after the ranges, in their order
    page = render_html(content)
    figure = re.search(r'<figure class="plot distribution" id="plot-distribution-0">.*?</figure>', page, re.S)[0]
    assert ">missing (?)</text>" in figure
    assert re.search(r'aria-label="Distribution of age; missing \(\?\): records whose value is missing', figure)
    assert "Missing (?): records whose value is missing" in figure.split("<figcaption>")[1]
    job_figure = re.search(r'id="plot-distribution-1">.*?</figure>', page, re.S)[0]
    assert "missing" not in job_figure  # no missing value, no note


def test_distinct_values_and_the_values_listed_agree():
    content = report_content(FRAME, CERTIFICATE, "r.csv")
    age, job, zip_ = content.attributes
    assert zip_.distinct == 3 and zip_.values_text == "021**, 100**, 945**"  # few: all of them
    assert age.distinct == 3 and listed_count(age.examples, age.values_text) == 3
    assert job.distinct == 12 and job.values_text.endswith(f", … and {12 - EXAMPLE_VALUES} more")
    for view in content.attributes:
        assert listed_count(view.examples, view.values_text) == view.distinct
    page = unescape(render_html(content)).replace("<bdi>", "").replace("</bdi>", "")
    assert f"<td>{job.values_text}</td>" in page


def test_each_published_value_is_laid_out_on_its_own():
    """A value holding a right-to-left override (or Arabic text) reversed the values after it in
    the list: each is now in its own <bdi>, the list's commas and "more" outside."""
    frame = FRAME.with_columns(pl.col("zip").replace({"021**": "\u202e021**", "100**": "القاهرة"}))
    page = render_html(report_content(frame, CERTIFICATE, "r.csv"))
    assert "<td><bdi>\u202e021**</bdi>, <bdi>945**</bdi>, <bdi>القاهرة</bdi></td>" in page
    assert re.search(r"<td>(<bdi>job\d\d</bdi>, ){5}… and \d+ more</td>", page)


def test_the_broken_variant_is_caught():
    """The table as it was: three examples beside "distinct values 4"."""
    old = AttributeView("workclass", 1, "groups 1", 4, 0.0, (), ("Private", "Self-employed", "Government"))
    assert listed_count(old.examples, ", ".join(old.examples)) != old.distinct
    assert listed_count(old.examples, old.values_text) == old.distinct  # what the table shows now


def test_a_publication_report_names_its_levels(tmp_path):
    api.publish("adult", epsilon=1.0, seed=1, ledger=None, out=tmp_path / "a.csv")
    page = unescape((tmp_path / "a.report.html").read_text())
    cells = re.findall(r"<tr><td>([^<]*)</td><td class=\"number\">(\d+)</td><td>([^<]*)</td>", page)
    described = {name: words for name, _, words in cells}
    assert described["age"].startswith("age") and "level" not in described["age"]
    assert not any(re.fullmatch(r"(level|groups|intervals) \d+", words) for words in described.values())


def _serves_section(certificate):
    content = report_content(FRAME, certificate, "words")
    found = re.search(r'<section id="serves">(.*?)</section>', render_html(content))
    return unescape(found.group(1)) if found else None


def test_the_report_says_what_the_table_serves_from_the_certificate_alone():
    """Issue 36: a certified release's report says which analyses it serves and where DP marginals
    or synthetic data serve better, in words fixed by the certificate's public fields (the
    guarantee, the objective, the target, β); a table without a guarantee gets no such section."""
    from crowdsafe.report.content import serves_words

    plain = _serves_section(CERTIFICATE)
    assert plain is not None and "true record" in plain and "DP synthetic data" in plain
    assert "sampling rate" not in plain  # no β in this certificate: no sample to scale from
    chosen = {**CERTIFICATE, "parameters": {**CERTIFICATE["parameters"], "beta": 0.3,
                                            "selection": {"objective": "classification", "target": "income"}}}
    words = " ".join(serves_words(chosen))
    assert "predicting income" in words and "sampling rate" in words
    marginal = {**chosen, "parameters": {**chosen["parameters"], "selection": {"objective": "marginals"}}}
    assert "1- and 2-way marginals" in " ".join(serves_words(marginal))
    assert serves_words({**CERTIFICATE, "guarantee": "none", "reason": "fitted to the data"}) == ()
    assert _serves_section({**CERTIFICATE, "guarantee": "none", "reason": "fitted to the data"}) is None
    # the words read nothing but those fields: a certificate with every other field changed says the same
    noisy = {**chosen, "epsilon": 0.5, "delta": 1e-9, "theorem": "another", "randomness": {"source": "seed"},
             "parameters": {**chosen["parameters"], "k": 40, "scheme": {"age": 0, "job": 1, "zip": 0}}}
    assert serves_words(noisy) == serves_words(chosen)
