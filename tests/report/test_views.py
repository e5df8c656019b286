"""The notebook views (issue 35): ``_repr_html_`` and a concise ``__repr__`` of the plan, the
publication, the certificate, a release, the check report and the ledger.

- every repr is under 2 kB and every HTML view under :data:`~crowdsafe.report.views.VIEW_LIMIT`
  (20 kB), on large inputs (a 1M-row publish, thousands of classes, many long column names, many
  releases, a ledger of many entries);
- a publication's or a release's view shows only the plan, the certificate and the released
  classes: a marker value in a row that was suppressed never appears, and on neighbouring tables
  (D and D plus that row, same seed) whose releases are identical the views are identical;
- the check report's and the ledger's views are labelled custodian-only;
- every text is escaped (a column named ``<script>``).

Each check is shown to fail on the broken variant it guards against.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.data import load
from crowdsafe.data.schema_draft import draft_schema
from crowdsafe.datasets import synthetic
from crowdsafe.models import assess
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.report import views
from crowdsafe.report.custodian_views import CUSTODIAN_BANNER
from crowdsafe.report.views import VIEW_LIMIT

REPR_LIMIT = 2048
MARKER = "MARKER-7f3a9"


def sizes(obj) -> tuple[int, int]:
    """(bytes of the HTML view, characters of the repr)."""
    return len(obj._repr_html_().encode("utf-8")), len(repr(obj))


def public_objects(publication) -> list:
    return [publication, publication.plan, publication.certificate, publication.release,
            publication.release.certificate]


def assert_bounded(*objects) -> None:
    for obj in objects:
        html, text = sizes(obj)
        assert html < VIEW_LIMIT, (type(obj).__name__, html)
        assert text < REPR_LIMIT, (type(obj).__name__, text)


# -- sizes -------------------------------------------------------------------------------------------


@pytest.mark.slow
def test_a_million_row_publication_has_small_views():
    publication = api.publish(synthetic(1_000_000, seed=1), epsilon=1.0, seed=1, ledger=None)
    assert publication.release.rows_published > 100_000
    assert_bounded(*public_objects(publication))


def _wide(rows: int, columns: int, name_length: int) -> pl.DataFrame:
    rng = np.random.default_rng(5)
    return pl.DataFrame({f"c{j:02d}_" + "x" * name_length: rng.integers(0, 3, rows).astype(str)
                         for j in range(columns)})


def _many_classes(rows: int = 1_000_000) -> pl.DataFrame:
    """5,000 tuples of 200 rows each (at 1M rows): after sampling nearly every one is a class."""
    rng = np.random.default_rng(7)
    return pl.DataFrame({"a": rng.integers(0, 100, rows), "b": rng.integers(0, 50, rows).astype(str)})


@pytest.mark.slow  # over a second; in the full suite (quick loop: -m 'not slow')
def test_thousands_of_classes_and_many_long_columns_stay_small():
    many = api.publish(_many_classes(), epsilon=1.0, seed=2, ledger=None, scheme="none")
    assert many.release.classes > 4000
    assert_bounded(*public_objects(many))
    assert "… and" in many._repr_html_() and "more classes" in many._repr_html_()
    wide = api.publish(_wide(20_000, 40, 300), epsilon=2.0, seed=3, ledger=None, scheme="none")
    assert_bounded(*public_objects(wide))
    assert "more columns" in wide.release._repr_html_()


def test_many_releases_are_listed_then_counted():
    publication = api.publish(synthetic(20_000, seed=3), epsilon=2.0, seed=3, ledger=None, releases=8,
                              scheme="coarse")
    assert_bounded(publication, publication.certificate)
    assert "… and 3 more releases" in publication._repr_html_()


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_custodian_views_stay_small(tmp_path):
    frame = _wide(2_000, 60, 100)
    report = api.check(frame, qi=list(frame.columns[:5]), sensitive=[frame.columns[6]])
    assert_bounded(report)
    assert "… and 48 more attributes" in report._repr_html_()
    path = tmp_path / "ledger.sqlite3"
    for i in range(6):
        data = synthetic(500, seed=i)
        api.set_budget(data, epsilon=100.0, delta=1e-3, name=f"table {i} " + "y" * 200, ledger=path)
        for _ in range(3 if i else 25):
            api.query(data, "count where sex = 'Female'", epsilon=0.1, ledger=path, randomness=1)
    shown = api.ledger_report(path)
    assert_bounded(shown, Ledger(path))
    html = shown._repr_html_()
    assert "… and 19 more older entries" in html and "… and 2 more datasets" in html


@pytest.mark.slow  # over a second; in the full suite (quick loop: -m 'not slow')
def test_the_size_checks_catch_the_old_reprs(monkeypatch):
    """The default dataclass repr (what CheckReport printed) and a view without its limits
    (every class listed) are over the bounds."""
    report = api.check("adult", qi=["age", "sex"], sensitive=["occupation"])
    fields = ", ".join(f"{f.name}={getattr(report, f.name)!r}" for f in dataclasses.fields(report))
    assert len(f"CheckReport({fields})") > REPR_LIMIT
    many = api.publish(_many_classes(), epsilon=1.0, seed=2, ledger=None, scheme="none")
    monkeypatch.setattr(views, "SHOWN_CLASSES", 10**9)
    assert len(many.release._repr_html_()) > VIEW_LIMIT


# -- what a view may show ---------------------------------------------------------------------


def _neighbours() -> tuple[pl.DataFrame, pl.DataFrame]:
    """D (600 rows that form classes of many rows) and D plus one row whose every value is a marker
    no other row holds: it is a class of one, suppressed whatever the sample."""
    i = np.arange(600)
    d = pl.DataFrame({"sex": np.array(["F", "M"])[i % 2], "band": np.array(["a", "b", "c"])[i % 3],
                      "city": np.array(["Lyon", "Oslo"])[(i // 7) % 2]})
    row = pl.DataFrame({"sex": [f"{MARKER}-sex"], "band": [f"{MARKER}-band"], "city": [f"{MARKER}-city"]})
    return d, pl.concat([d, row])


def _views(publication) -> list[str]:
    return [text for obj in public_objects(publication) for text in (obj._repr_html_(), repr(obj))]


@pytest.mark.parametrize("scheme", ["none", None])  # fixed (strongly safe), chosen by the exponential mechanism
def test_a_suppressed_value_never_shows_and_neighbours_give_the_same_views(scheme):
    d, d_plus = _neighbours()
    runs = [api.publish(frame, epsilon=2.0, delta=1e-4, seed=9, ledger=None, scheme=scheme, report=False)
            for frame in (d, d_plus)]
    for run in runs:
        assert not any(MARKER in text for text in _views(run))
    without, with_row = runs
    if scheme == "none":  # the marker's class of one is suppressed in any sample: the releases are equal
        assert without.release.frame.equals(with_row.release.frame)
    if without.release.frame.equals(with_row.release.frame):
        assert _views(without) == _views(with_row)


def test_the_broken_variant_is_caught(monkeypatch):
    """A view that shows what the release was computed from (its source: here the input, as a
    classic release keeps it) shows the marker, and the check above fails on it."""
    _, d_plus = _neighbours()
    release = api.anonymize(d_plus, k=5, algorithm="lattice", report=False)
    assert MARKER not in release._repr_html_()
    classes_of = views.release_classes

    def from_the_source(release):
        return classes_of(dataclasses.replace(release, rows=release.source.frame))

    monkeypatch.setattr(views, "release_classes", from_the_source)
    assert MARKER in release._repr_html_()


def test_a_publication_view_leaves_out_the_custodian_facts():
    publication = api.publish(synthetic(5_000, seed=4), epsilon=1.0, seed=4, ledger=None)
    html = publication._repr_html_()
    assert "publication.custodian_report()" in html
    custodian = publication.custodian_report()
    sample = custodian["releases"][0]["sample_rows"]
    assert f"{sample:,}" not in html and f">{sample}<" not in html
    assert f"{custodian['input_rows']:,}" not in html


def test_the_custodian_views_say_so(tmp_path):
    report = api.check("adult", qi=["age", "sex"])
    assert CUSTODIAN_BANNER in report._repr_html_().replace("&#x27;", "'") and "CUSTODIAN ONLY" in repr(report)
    # compare's report printed every field of every measure, unlabelled, where a notebook shows it
    utility = api.compare("adult", api.anonymize("adult", k=10, qi=["age", "sex"], report=False).frame,
                          qi=["age", "sex"])
    assert "CUSTODIAN ONLY" in repr(utility) and len(repr(utility)) < 400, repr(utility)
    for loss in (utility.information_loss, api.anonymize("adult", k=10, qi=["age", "sex"], report=False).utility()):
        assert "CUSTODIAN ONLY" in repr(loss) and "np.float64" not in repr(loss), repr(loss)
    # and so did the model layer's report (crowdsafe.models.assess; a check report's .privacy)
    for privacy in (assess(load("adult", qi=["age", "sex"], sensitive="income")), report.privacy):
        assert "CUSTODIAN ONLY" in repr(privacy) and len(repr(privacy)) < 400, repr(privacy)
    # and so did the attacks' results, whose per-target table holds one row per person of the targets
    releases = [api.anonymize("adult", k=k, qi=["age", "sex"], report=False) for k in (5, 10)]
    for attacked in (api.attack(releases, "adult", qi=["age", "sex"], sensitive="income"),
                     api.attack(releases[0], "adult", qi=["age", "sex"], kind="linkage")):
        assert "CUSTODIAN ONLY" in repr(attacked) and len(repr(attacked)) < 400, repr(attacked)
    path = tmp_path / "ledger.sqlite3"
    # a schema draft (read from the data) printed every suggestion: value groups, bounds, rows read
    draft = draft_schema("adult")
    assert "CUSTODIAN ONLY" in repr(draft) and len(repr(draft)) < 400, repr(draft)
    budget = api.set_budget("adult", epsilon=1.0, delta=1e-6, ledger=path)
    # the budget printed every field, the dataset's keyed identity (a digest of its rows) among them
    assert "custodian only" in repr(budget) and budget.fingerprint not in repr(budget), repr(budget)
    for shown in (api.ledger_report(path), Ledger(path)):
        assert CUSTODIAN_BANNER in shown._repr_html_() and "custodian only" in repr(shown)
    assert api.ledger_report(path) == Ledger(path).export()  # still the plain export


# -- escaping ------------------------------------------------------------------------------------------


HOSTILE = "<script>alert(1)</script>"


def test_every_text_is_escaped(tmp_path):
    i = np.arange(400)
    frame = pl.DataFrame({HOSTILE: np.array(["<b>x</b>", "<img src=x onerror=alert(2)>"])[i % 2],
                          'a"b': np.array(["&amp;", "'q'"])[i % 2]})
    publication = api.publish(frame, epsilon=2.0, delta=1e-4, seed=1, ledger=None, scheme="none", report=False)
    anonymized = api.anonymize(frame, k=5, algorithm="lattice", report=False)
    report = api.check(frame, qi=[HOSTILE])
    path = tmp_path / "ledger.sqlite3"
    api.set_budget(frame, epsilon=1.0, delta=1e-6, name=HOSTILE, ledger=path)
    for obj in (*public_objects(publication), anonymized, report, api.ledger_report(path)):
        html = obj._repr_html_()
        assert "<script" not in html and "<img" not in html and "<b>" not in html, type(obj).__name__
        assert "&lt;script&gt;" in html or type(obj).__name__ in ("PublishPlan", "Certificate")
