"""The report beside every α-β view: written by ``perturb``, rebuilt byte for byte by ``crowdsafe
report VIEW``, honest to the (d, γ) guarantee, built from the view and the public certificate
fields only, and never half-written."""

from __future__ import annotations

import json
import re
import shutil
from html import escape
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from test_report_files import external_resources

from crowdsafe import api
from crowdsafe.cli import main
from crowdsafe.report import build_report, report_path, view_content
from crowdsafe.report.content import _number

CITIES = [f"city-{i:02d}" for i in range(45)]  # more than ALL_VALUES: the top values and "other"
DOMAINS = {"age": list(range(18, 60)), "sex": ["Female", "Male"], "city": CITIES, "band": list(range(50))}


def people(rows: int = 400, seed: int = 9) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({
        "age": rng.integers(18, 60, rows),
        "sex": rng.choice(["Female", "Male"], rows),
        "city": rng.choice(CITIES[:12], rows),
        "band": rng.integers(0, 50, rows),
    })


def perturb_to(out: Path, frame: pl.DataFrame | None = None, **options):
    out.parent.mkdir(parents=True, exist_ok=True)
    options.setdefault("seed", 5)
    options.setdefault("missing", "drop")  # the table has none: no missing value in the domains
    options.setdefault("ledger", None)
    return api.perturb(people() if frame is None else frame, domains=DOMAINS, max_rows=1000, c=2.0, gamma=0.3,
                       out=str(out), **options)


@pytest.fixture(scope="module")
def view(tmp_path_factory) -> Path:
    """A view (CSV) with its certificate and report: the view's path."""
    out = tmp_path_factory.mktemp("view") / "view.csv"
    perturb_to(out)
    return out


def certificate_of(view: Path) -> dict:
    return json.loads(view.with_name("view.certificate.json").read_text(encoding="utf-8"))


def section(page: str, name: str) -> str:
    found = re.search(rf'<section id="{name}">.*?</section>', page, re.DOTALL)
    assert found, f"no section {name}"
    return found.group(0)


# -- written beside the view ---------------------------------------------------------------------


def test_perturb_writes_the_report_beside_the_view(view):
    report = report_path(view)
    assert report == view.with_name("view.report.html") and report.is_file()
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and "<title>View report: view.csv</title>" in page
    assert all(f'id="plot-distribution-{i}"' in page for i in range(4))
    assert external_resources(page) == [] and "<script" not in page.lower()
    assert "NOT fit for release" in page  # seeded
    # a view is not k-anonymous: no class-size histogram claiming k
    assert "plot-class-sizes" not in page and "k-anonym" not in page and "class size" not in page.lower()


def test_the_guarantee_words_come_from_the_certificate(view):
    certificate = certificate_of(view)
    p = certificate["parameters"]
    page = report_path(view).read_text(encoding="utf-8")
    guarantee = section(page, "guarantee")
    for value in (p["d"], p["gamma"], p["alpha"], p["beta"], certificate["epsilon"]):
        assert _number(value) in guarantee
    assert "δ = 0" in guarantee and escape(certificate["theorem"]) in guarantee
    assert "for this one view" in guarantee and "second view" in guarantee
    for assumption in certificate["assumptions"]:
        assert escape(assumption) in guarantee
    # another certificate says other words: they are read from it, not fixed in the page
    edited = {**certificate, "epsilon": 3.25, "parameters": {**p, "gamma": 0.45}}
    words = " ".join(view_content.view_guarantee_words(view_content.public_view_certificate(edited)))
    assert "γ = 0.45" in words and "= 3.25" in words
    plan = section(page, "plan")
    assert f"{p['max_rows']:,} (declared)" in plan and f"{p['m']:,}" in plan


def test_the_view_section_says_raw_counts_are_not_counts_of_the_data(view):
    page = report_path(view).read_text(encoding="utf-8")
    held = section(page, "view")
    rows = certificate_of(view)["parameters"]["view_rows"]
    assert f"The view has {rows:,} rows" in held and "NOT counts of the data" in held
    assert "inserted" in held and "distinct tuples" in held


def test_the_estimates_are_the_estimator_s(view):
    """Each value's estimate and error bar are those of ``crowdsafe estimate`` on the view; a
    group's are those of the group's query."""
    from crowdsafe.perturb import read_view

    published = read_view(view)
    content = view_content.view_report_content(published, view_content.public_view_certificate(certificate_of(view)),
                                               view.name)
    by_name = {a.name: a for a in content.attributes}
    assert sorted(a.name for a in content.attributes) == ["age", "band", "city", "sex"]
    sex = by_name["sex"]
    assert [v.label for v in sex.values] == ["Female", "Male"] and sex.grouped is None
    for shown in sex.values:
        expected = api.estimate(published, f"count where sex = '{shown.label}'")
        assert shown.estimate == pytest.approx(expected.estimate, rel=1e-12, abs=1e-9)
        assert shown.error == pytest.approx(expected.error, rel=1e-12)
        assert shown.n_view == expected.n_view and shown.n_domain == expected.n_domain
    age = by_name["age"]  # 42 values: more than ALL_VALUES, an ordered domain: consecutive ranges
    assert age.grouped and len(age.values) == view_content.GROUPS
    first = age.values[0]
    low, high = (int(x) for x in first.label.split(" – "))
    expected = api.estimate(published, f"count where age between {low} and {high}")
    assert first.estimate == pytest.approx(expected.estimate, rel=1e-9) and first.n_view == expected.n_view
    assert first.error == pytest.approx(expected.error, rel=1e-12)
    assert sum(v.n_view for v in age.values) == published.rows
    city = by_name["city"]  # 45 text values: the 20 largest estimates and "other"
    assert city.values[-1].label == "other (25 values)" and len(city.values) == view_content.GROUPS + 1
    shown = [v.label for v in city.values[:-1]]
    rest = ", ".join(f"'{c}'" for c in CITIES if c not in shown)
    expected = api.estimate(published, f"count where city in ({rest})")
    assert city.values[-1].estimate == pytest.approx(expected.estimate, rel=1e-9)
    assert city.values[-1].error == pytest.approx(expected.error, rel=1e-12)
    # the page's table shows them
    page = report_path(view).read_text(encoding="utf-8")
    assert f"{sex.values[0].estimate:,.1f}" in page and f"± {sex.values[0].error:,.1f}" in page


# -- rebuilt byte for byte -----------------------------------------------------------------------


def test_the_report_is_rebuilt_byte_for_byte(view, tmp_path):
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(view, copy / "view.csv")
    shutil.copy(view.with_name("view.certificate.json"), copy / "view.certificate.json")
    assert main(["report", str(copy / "view.csv")]) == 0
    assert (copy / "view.report.html").read_bytes() == report_path(view).read_bytes()
    assert main(["report", str(copy / "view.csv"), "--out", str(tmp_path / "again.html")]) == 0
    assert (tmp_path / "again.html").read_bytes() == report_path(view).read_bytes()


def test_a_parquet_view_and_a_certificate_elsewhere(tmp_path, capsys):
    out, certificate = tmp_path / "out" / "v.parquet", tmp_path / "certs" / "v.json"
    certificate.parent.mkdir()
    perturb_to(out, certificate=str(certificate))
    written = tmp_path / "out" / "v.report.html"
    assert "View report: v.parquet" in written.read_text(encoding="utf-8")
    again = tmp_path / "again.html"
    assert main(["report", str(out), "--certificate", str(certificate), "--out", str(again)]) == 0
    assert again.read_bytes() == written.read_bytes()
    capsys.readouterr()
    assert main(["report", str(out)]) == 2  # no certificate beside it
    assert "no certificate beside it" in capsys.readouterr().err


def test_before_is_refused_for_a_view(view, capsys):
    assert main(["report", str(view), "--before", "adult", "--before-epsilon", "1", "--out", "x.html"]) == 2
    assert "--before is for releases" in capsys.readouterr().err


def test_an_exploratory_view_says_no_formal_guarantee(tmp_path):
    out = tmp_path / "e.csv"
    api.perturb(people(), c=0.5, gamma=0.3, exploratory=True, seed=1, out=str(out), ledger=None)
    page = report_path(out).read_text(encoding="utf-8")
    assert "NO formal privacy guarantee" in section(page, "guarantee") and "Do not publish it" in page
    assert "(d, γ)-private" not in page


# -- --no-report, the CLI's output, failures -----------------------------------------------------


def test_the_cli_prints_the_report_and_no_report_writes_none(tmp_path, capsys):
    data, domains = tmp_path / "people.csv", tmp_path / "domains.json"
    people().write_csv(data)
    domains.write_text(json.dumps(DOMAINS), encoding="utf-8")
    args = ["perturb", "--no-ledger", str(data), "--domains", str(domains), "--max-rows", "1000", "--c", "2",
            "--gamma", "0.3",
            "--seed", "3"]
    assert main([*args, "--out", str(tmp_path / "a" / "view.csv"), "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["report_file"] == str(tmp_path / "a" / "view.report.html")
    assert (tmp_path / "a" / "view.report.html").is_file()
    assert main([*args, "--out", str(tmp_path / "b" / "view.csv"), "--no-report", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert "report_file" not in payload
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == ["view.certificate.json", "view.csv"]
    perturb_to(tmp_path / "c" / "view.csv", report=False)
    assert sorted(p.name for p in (tmp_path / "c").iterdir()) == ["view.certificate.json", "view.csv"]


def test_a_report_that_fails_leaves_nothing_half_written(tmp_path, monkeypatch, capsys):
    """A failure while building or while putting the file in place: no report and no temporary
    file; the view and its certificate stand whole; a report of an earlier view is removed; the
    CLI says so in one warning line with the command that rebuilds it."""
    from crowdsafe import files
    from crowdsafe.report import view_html
    from crowdsafe.report.build import ReportWarning

    out = tmp_path / "out" / "view.csv"
    perturb_to(out)
    assert report_path(out).is_file()

    def broken(*args, **kwargs):
        raise RuntimeError("disk on fire")

    def half_written(target, text):  # dies half way through writing the report
        with files.atomic_path(target) as tmp:
            tmp.write_text(text[: len(text) // 2], encoding="utf-8")
            raise RuntimeError("disk on fire")

    monkeypatch.setattr(files, "write_text_atomic", half_written)
    with pytest.warns(ReportWarning, match="crowdsafe report"):
        result = perturb_to(out, seed=6)
    assert result.view.rows > 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["view.certificate.json", "view.csv"]
    assert pl.read_csv(out).height == certificate_of(out)["parameters"]["view_rows"]
    monkeypatch.undo()

    monkeypatch.setattr(view_html, "render_view_html", broken)
    data, domains = tmp_path / "people.csv", tmp_path / "domains.json"
    people().write_csv(data)
    domains.write_text(json.dumps(DOMAINS), encoding="utf-8")
    assert main(["perturb", "--no-ledger", str(data), "--domains", str(domains), "--max-rows", "1000", "--c", "2",
                 "--gamma", "0.3",
                 "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert "crowdsafe: warning: the view" in captured.err and "disk on fire" in captured.err
    assert "report ->" not in captured.out
    assert sorted(p.name for p in out.parent.iterdir()) == ["view.certificate.json", "view.csv"]


# -- the privacy boundary ------------------------------------------------------------------------

PLANTED = {
    "sample": {"release_id": "ab" * 16, "rows": 400},
    "accounting": {"ledger": True, "entry": 7, "identity": "f" * 64},
    "custodian_only": {"rows": 400, "distinct_tuples": 398, "duplicate_rows_collapsed": 2},
    "fingerprint": "e" * 64,
}
PLANTED_PARAMETERS = {"rows": 400, "distinct_tuples": 398, "n_exact": 398, "input_digest": "d" * 64}


def planted_copy(view: Path, folder: Path) -> Path:
    """The view beside a hand-edited copy of its certificate holding custodian-only fields."""
    folder.mkdir(parents=True)
    shutil.copy(view, folder / "view.csv")
    certificate = certificate_of(view)
    certificate.update(PLANTED)
    certificate["parameters"].update(PLANTED_PARAMETERS)
    (folder / "view.certificate.json").write_text(json.dumps(certificate), encoding="utf-8")
    return folder / "view.csv"


def test_the_report_reads_only_the_view_and_the_public_certificate(view, tmp_path):
    copy = planted_copy(view, tmp_path / "planted")
    page = build_report(copy)
    assert page == report_path(view).read_text(encoding="utf-8")
    assert not re.search(r"[0-9a-f]{32,}", page)


def test_the_boundary_check_fails_when_the_report_reads_something_else(view, tmp_path, monkeypatch):
    """The check above has power: a report that reads the whole certificate (and shows one field
    the public list leaves out) gives another page on the planted copy."""
    copy = planted_copy(view, tmp_path / "planted")
    plan_rows = view_content.view_plan_rows
    monkeypatch.setattr(view_content, "public_view_certificate", lambda certificate: dict(certificate))
    monkeypatch.setattr(view_content, "view_plan_rows", lambda certificate: (
        *plan_rows(certificate), ("sample", json.dumps(certificate.get("sample"))),))
    with pytest.raises(AssertionError):
        test_the_report_reads_only_the_view_and_the_public_certificate(view, tmp_path / "again")
    assert build_report(copy) != report_path(view).read_text(encoding="utf-8")


def test_neighbouring_tables_give_the_same_fixed_sections(tmp_path):
    """The table and the table minus one row, same seed: the guarantee, the plan and the closing
    section are the same; only what is computed from the view (DP output) may differ."""
    frame = people()
    perturb_to(tmp_path / "d" / "view.csv", frame)
    perturb_to(tmp_path / "d1" / "view.csv", frame.slice(1))
    pages = [(tmp_path / f / "view.report.html").read_text(encoding="utf-8") for f in ("d", "d1")]
    for name in ("guarantee", "plan", "sources"):
        assert section(pages[0], name) == section(pages[1], name)
    for page in pages:  # the exact number of rows (400) is nowhere in them
        assert not {"400", "399"} & set(re.findall(r"\d+", section(page, "guarantee") + section(page, "plan")))


def test_a_missing_value_is_shown_apart_from_the_ranges(tmp_path):
    """A kept missing value of an ordered attribute is its own row, after the ranges."""
    from crowdsafe.perturb import read_view

    rng = np.random.default_rng(2)
    frame = pl.DataFrame({"age": [None if x < 4 else int(x) for x in rng.integers(0, 60, 300)],
                          "sex": rng.choice(["Female", "Male"], 300)})
    out = tmp_path / "m.csv"
    api.perturb(frame, gamma=0.5, d=0.05, seed=1, out=str(out), exploratory=True, ledger=None)
    published = read_view(out)
    age = view_content.attribute_estimates(published, "age", "the data")
    assert age.values[-1].label == view_content.MISSING_LABEL
    assert all(view_content.MISSING_LABEL not in v.label for v in age.values[:-1])
    expected = api.estimate(published, "count where age is null")
    assert age.values[-1].estimate == pytest.approx(expected.estimate, rel=1e-12, abs=1e-9)
    assert "(missing)" in report_path(out).read_text(encoding="utf-8")
