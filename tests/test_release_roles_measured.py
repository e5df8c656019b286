"""``check`` and ``compare`` of a Release object measure it over the roles it was made with (found
by an API sweep, 2026-11-30): ``check(anonymize(df, qi=["age", "sex"], k=2))`` read the release's
frame alone, every column a quasi-identifier, so a column published as it is (``income``, unique
per row) made the report say k = 1 of a 2-anonymous release; ``check(..., original=df)`` took the
original's inferred roles, the same; and ``compare`` averaged its NCP over that unrecoded column
too. Roles given by the caller still win."""

from __future__ import annotations

import polars as pl

from crowdsafe import api

FRAME = pl.DataFrame({
    "age": [30, 31, 32, 40, 41, 42, 50, 51] * 3,
    "sex": ["F", "M"] * 12,
    "income": [1000 + 7 * i for i in range(24)],  # unique per row, published as it is
    "job": ["x", "y", "z"] * 8,
})


def test_check_of_a_release_reads_the_roles_it_was_made_with():
    release = api.anonymize(FRAME, k=2, qi=["age", "sex"], sensitive="job", report=False)
    for report in (api.check(release), api.check(release, original=FRAME)):
        assert report.quasi_identifiers == ["age", "sex"]
        assert report.sensitive == ["job"]
        assert report.k is not None and report.k >= 2
    assert api.check(release, qi=["age", "sex", "income"]).k == 1  # the caller's roles win


def test_compare_of_a_release_measures_the_quasi_identifiers_it_was_made_with():
    release = api.anonymize(FRAME, k=2, qi=["age", "sex"], report=False)
    assert api.compare(FRAME, release).quasi_identifiers == ["age", "sex"]
    assert api.compare(FRAME, release, qi=["age"]).quasi_identifiers == ["age"]

