"""What a notebook shows of an α-β view and its plan (found by an API sweep, 2026-11-30): ``View``
printed its dataclass fields, the whole frame and every value of every attribute's domain over a
dozen lines (``Perturbation`` beside it printed one), and ``AlphaBetaPlan`` every figure of its
utility bound on one 500-character line, with N and m of an exploratory plan, read from the data,
unlabelled. Now each is one short line; an exploratory plan's N and m are labelled custodian-only."""

from __future__ import annotations

import polars as pl

from crowdsafe import api

DOMAINS = {"sex": ["F", "M"], "zip": ["13053", "13068", "14850"]}
TABLE = pl.DataFrame({"sex": ["F", "M", "F", "M"] * 10, "zip": ["13053", "13068", "14850", "13053"] * 10})


def perturbed(table: pl.DataFrame, **options):
    return api.perturb(table, gamma=0.5, d=0.1, attributes=["sex", "zip"], seed=3, ledger=None, **options)


def test_a_view_is_one_short_line_without_its_domain():
    view = perturbed(TABLE, domains=DOMAINS, max_rows=1000).view
    shown = repr(view)
    assert "\n" not in shown and len(shown) < 200
    assert shown.startswith(f"View({view.rows:,} row") and "sex, zip" in shown
    assert view.certificate.headline() in shown and "fit_for_release=False" in shown  # seeded
    assert "13068" not in shown  # a domain value (the old repr listed them all)


def test_neighbouring_views_differ_only_in_their_rows():
    plus_one = pl.concat([TABLE, pl.DataFrame({"sex": ["M"], "zip": ["14850"]})])
    first, second = (perturbed(t, domains=DOMAINS, max_rows=1000).view for t in (TABLE, plus_one))
    assert repr(first).replace(f"{first.rows:,} row", "") == repr(second).replace(f"{second.rows:,} row", "")


def test_a_plan_is_one_line_and_labels_what_it_read_from_the_data():
    public = api.plan_perturbation(TABLE, gamma=0.5, d=0.1, attributes=["sex", "zip"], domains=DOMAINS,
                                   max_rows=1000)
    shown = repr(public)
    assert len(shown) < 200 and "custodian-only" not in shown and "TheoremBound" not in shown
    exploratory = api.plan_perturbation(TABLE, gamma=0.5, d=0.1, attributes=["sex", "zip"], exploratory=True)
    assert set(exploratory.from_data) == {"n", "m"}
    assert repr(exploratory).endswith("; N and m read from the data: custodian-only)")
