"""A numeric sensitive attribute published as ranges (found by an API sweep, 2026-11-30): a
Mondrian release recodes every quasi-identifier into ranges, so attacking it on one of them
(``attack(anonymize(df, k=5), df, qi=[...], sensitive="income")``) was refused with "column
'income' holds the range '[54576.08, 60018.85]', but the original values are not numbers", said of
a numeric column: the sensitive domain was built as text. A range now stands for every value of
the targets' domain it covers, as a set or ``*`` does (docs/attacks.md)."""

from __future__ import annotations

import polars as pl

from crowdsafe import api

TARGETS = pl.DataFrame({"sex": ["F", "F", "M", "M"], "salary": [10, 20, 30, 50]})
# the F class covers salaries 10 and 20, then 20 and 30; the M class 30 and 50, then 50 only
FIRST = pl.DataFrame({"sex": ["F", "F", "M", "M"], "salary": ["[10, 20]", "[10, 20]", "[30, 50]", "[30, 50]"]})
SECOND = pl.DataFrame({"sex": ["F", "F", "M", "M"], "salary": ["[20, 30]", "[20, 30]", "[50, 60]", "[50, 60]"]})


def test_a_range_of_sensitive_values_covers_the_values_in_it():
    result = api.attack([FIRST, SECOND], TARGETS, qi="sex", sensitive="salary")
    summary = result.as_dict()["summary"]
    assert summary["perfect_breach"] == 1.0  # F: {10, 20} ∩ {20, 30}; M: {30, 50} ∩ {50}
    assert summary["perfect_breach_true"] == 0.5  # the targets earning 20 and 50
    assert result.targets.get_column("inferred_value").to_list() == ["20", "20", "50", "50"]


def test_a_mondrian_release_is_attacked_on_a_column_it_recoded():
    people = pl.DataFrame({"age": [30 + i % 17 for i in range(60)], "sex": ["F", "M", "M"] * 20,
                           "income": [1000.5 + 37 * i for i in range(60)]})
    release = api.anonymize(people, k=4, report=False)  # income recoded into ranges, as a quasi-identifier
    assert release.frame.get_column("income").str.starts_with("[").all()
    summary = api.attack(release, people, qi=["age", "sex"], sensitive="income").as_dict()["summary"]
    assert summary["true_value_in_candidates"] == 1.0  # one release: every target's value is a candidate
