"""The report is public: its non-DP parts do not move between neighbouring tables, and it holds
no fingerprint, sample size or other custodian-only fact (docs/privacy-boundary.md).

Neighbours as in tests/privacy_boundary: the small table D and D minus one row (the first row,
and a row whose quasi-identifier tuple is unique), published with the same seed and a fresh
ledger each. The guarantee, the plan and the closing section are fixed before the data is read,
so they must be identical; the rest (class sizes, distributions, utility, risk) is computed from
the release, a DP output. The whole page is then searched for every custodian-only value of the
run (input rows, sample rows, suppressed rows, expected sample size, nodes scored, suppression
rate, NCP) and for the ledger's keyed identity and any 32+ hex run.
"""

from __future__ import annotations

import re

import polars as pl
import pytest

from report_tables import QI, publish_small, small_table

FIXED_SECTIONS = ("guarantee", "plan", "serves", "sources")
HEX_RUN = re.compile(r"[0-9a-fA-F]{32,}")


def section(page: str, name: str) -> str:
    match = re.search(rf'<section id="{name}">.*?</section>', page, re.DOTALL)
    assert match, f"the report has no {name} section"
    return match.group(0)


def visible_text(page: str) -> str:
    """What a reader sees: the page without tags and attributes (SVG labels included)."""
    return re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>", " ", page, flags=re.DOTALL))


def number_forms(value: float) -> set[str]:
    if float(value).is_integer():
        n = int(value)
        return {str(n), f"{n:,}"}
    forms = {f"{value:.3g}", f"{value:.4g}"}
    if value < 1:  # a rate: as a share
        forms |= {f"{value:.1%}", f"{value:.2%}"}
    if value >= 100:  # an expected count: rounded
        forms |= {f"{value:,.0f}", f"{value:,.1f}", f"{value:.0f}"}
    return forms


def custodian_values(facts: dict) -> dict[str, float]:
    values = {"input_rows": facts["input_rows"], "expected_sample_rows": facts["expected_sample_rows"]}
    for release in facts["releases"]:
        values["sample_rows"] = release["sample_rows"]
        values["suppressed_rows"] = release["suppressed_rows"]
        values["suppression_rate"] = release["suppression_rate"]
        values["nodes_scored"] = release["nodes_scored"]
        values["ncp"] = release["utility"]["ncp"]
    return values


def unique_row(frame: pl.DataFrame) -> int:
    indexed = frame.with_row_index("_row")
    sizes = indexed.group_by(QI).agg(pl.col("_row").min().alias("first"), pl.len().alias("size"))
    return int(sizes.filter((pl.col("size") == 1) & (pl.col("first") > 0)).sort("first")["first"][0])


def run(directory, frame):
    ledger = directory / "ledger.sqlite3"
    publication = publish_small(directory, frame, ledger=str(ledger), budget=(10.0, 1e-5))
    page = (directory / "out" / "r.report.html").read_text(encoding="utf-8")
    return page, publication.custodian_report()


@pytest.mark.parametrize("removed", ["first", "unique-qi"])
def test_the_report_on_neighbouring_tables(removed, tmp_path):
    table = small_table()
    row = 0 if removed == "first" else unique_row(table)
    neighbour = pl.concat([table.head(row), table.slice(row + 1)])
    page, facts = run(tmp_path / "D", table)
    page_minus, facts_minus = run(tmp_path / "D-1", neighbour)
    assert facts["input_rows"] == facts_minus["input_rows"] + 1
    for name in FIXED_SECTIONS:
        assert section(page, name) == section(page_minus, name), f"the {name} section depends on the data"
    for text, custodian in ((page, facts), (page_minus, facts_minus)):
        assert HEX_RUN.search(text) is None, "the report holds a digest-like hex run"
        assert custodian["ledger"]["dataset_identity"] not in text
        seen = visible_text(text)
        for name, value in custodian_values(custodian).items():
            if value in (0, 1) or (float(value).is_integer() and value < 100):
                continue  # a small count or an empty rate may equal a published number by chance
            for form in number_forms(value):
                assert re.search(rf"(?<![\d.,]){re.escape(form)}(?![\d.,]|\d)", seen) is None, \
                    f"the report shows the custodian-only {name} ({form})"
        for word in ("custodian_only", "fingerprint", "sample_rows", "input_rows", "suppression_rate"):
            assert word not in text


def _rows(part: str) -> list[list[str]]:
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in re.findall(r"<tr>(.*?)</tr>", part, re.DOTALL)]
    return [row for row in cells if row]  # header rows (th) left out


def test_the_fixed_parts_of_every_section_on_neighbouring_tables(tmp_path):
    """An officer's sweep (2026-11-30): the boundary test above compared whole sections, so the
    sections that mix DP outputs with fixed text were not compared at all. With a fixed scheme
    (strongly safe: the scheme is fixed, not chosen) on D and D minus one row, same seed: the
    header differs only in the record count (counted on the release), the "what was generalized"
    table only in the values published and their shares (each attribute's level and what it does
    are the scheme's), the risk table's guarantee row not at all, and the page's end is the same."""
    table = small_table()
    pages = []
    for name, frame in (("D", table), ("D-1", pl.concat([table.head(5), table.slice(6)]))):
        publish_small(tmp_path / name, frame, ledger=str(tmp_path / name / "ledger.sqlite3"), budget=(10.0, 1e-5),
                      scheme="medium")
        pages.append((tmp_path / name / "out" / "r.report.html").read_text(encoding="utf-8"))
    heads = [re.sub(r"<p class=\"note\">[\d,]+ records, ", "", p.split("<section")[0]) for p in pages]
    assert heads[0] == heads[1] and "records" not in heads[0].split("<header>")[-1]
    generalized = [_rows(section(p, "generalized")) for p in pages]
    assert [r[:3] for r in generalized[0]] == [r[:3] for r in generalized[1]] and generalized[0]
    risk = [[r for r in _rows(section(p, "risk")) if r[0] == "differential privacy"] for p in pages]
    assert risk[0] == risk[1] and len(risk[0]) == 1
    assert pages[0][pages[0].rindex("</section>"):] == pages[1][pages[1].rindex("</section>"):]
    for name in FIXED_SECTIONS:
        assert section(pages[0], name) == section(pages[1], name), f"the {name} section depends on the data"


def test_before_distributions_are_dp_answers_charged_to_the_ledger(tmp_path):
    from crowdsafe.cli import main
    from crowdsafe.privacy.ledger import Ledger

    ledger = tmp_path / "ledger.sqlite3"
    publish_small(tmp_path, small_table(), ledger=str(ledger), budget=(10.0, 1e-5))
    release = tmp_path / "out" / "r.csv"
    written = release.with_name("r.report.html").read_bytes()
    args = ["report", str(release), "--before", str(tmp_path / "data.parquet"), "--schema",
            str(tmp_path / "schema.toml"), "--ledger", str(ledger), "--seed", "1", "--out", str(tmp_path / "b.html")]
    assert main([*args, "--before-epsilon", "0.6"]) == 2  # age has no public domain with δ = 0: refused
    with Ledger(ledger) as book:
        before_refusal = len(book.entries())
    assert before_refusal == 1  # only the publication: the refusal charged nothing
    assert main([*args, "--before-epsilon", "0.6", "--before-delta", "1e-7"]) == 0
    page = (tmp_path / "b.html").read_text(encoding="utf-8")
    assert page.count("original, noisy (ε = 0.1)") == len(QI)
    assert "a noisy DP histogram (ε = 0.1, δ = 1e-07)" in page
    with Ledger(ledger) as book:
        assert len(book.entries()) == 1 + len(QI)
    assert release.with_name("r.report.html").read_bytes() == written  # the published report is untouched


def test_a_before_report_is_written_beside_the_published_one(tmp_path, capsys):
    """Found by a docs sweep: ``report R --before ...`` without ``--out`` wrote over
    ``<stem>.report.html``, the report written at publish. It now goes to
    ``<stem>.before.report.html`` (the published one stays byte for byte); ``--out`` naming the
    published report still replaces it (crowdsafe's own file); the API's default is the same."""
    from crowdsafe.cli import main
    from crowdsafe.report import write_report
    from crowdsafe.report.before import before_distributions

    ledger = tmp_path / "ledger.sqlite3"
    publish_small(tmp_path, small_table(), ledger=str(ledger), budget=(10.0, 1e-5))
    release = tmp_path / "out" / "r.csv"
    published, before_page = release.with_name("r.report.html"), release.with_name("r.before.report.html")
    written = published.read_bytes()
    args = ["report", str(release), "--before", str(tmp_path / "data.parquet"), "--schema",
            str(tmp_path / "schema.toml"), "--ledger", str(ledger), "--seed", "1", "--before-epsilon", "0.6",
            "--before-delta", "1e-7"]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"wrote {before_page}"
    assert published.read_bytes() == written
    assert "original, noisy (ε = 0.1)" in before_page.read_text(encoding="utf-8")
    before_page.unlink()
    distributions = before_distributions(str(tmp_path / "data.parquet"), QI, 0.6, delta=1e-7,
                                         schema=str(tmp_path / "schema.toml"), ledger=str(ledger), seed=1)
    assert write_report(release, before=distributions) == before_page and before_page.exists()
    assert published.read_bytes() == written
    assert main([*args, "--out", str(published)]) == 0  # asked for by name: replaced
    assert "original, noisy (ε = 0.1)" in published.read_text(encoding="utf-8")


def test_a_replaced_release_takes_its_before_report_with_it(tmp_path):
    """A release published again over ``r.csv`` removes the ``r.before.report.html`` that
    ``report --before`` wrote of the old one, as it removes the old report and certificate: it
    describes rows that are gone. A table ``r.before.csv`` beside it owns that name (its own
    report), and it is then left alone. Fails when replaced_first lists only ``r.report.html``."""
    from crowdsafe.output_guard import REPORT_MARK

    release = tmp_path / "out" / "r.csv"
    publish_small(tmp_path, small_table())
    before_page = release.with_name("r.before.report.html")
    before_page.write_text(f"<!doctype html>{REPORT_MARK}<p>old</p>", encoding="utf-8")
    publish_small(tmp_path, small_table(), seed=8)
    assert release.exists() and not before_page.exists()

    before_page.write_text(f"<!doctype html>{REPORT_MARK}<p>old</p>", encoding="utf-8")
    release.with_name("r.before.csv").write_text("a\n1\n", encoding="utf-8")
    publish_small(tmp_path, small_table(), seed=9)
    assert before_page.exists()  # the report of r.before.csv


def test_before_distributions_over_the_budget_charge_nothing(tmp_path, monkeypatch):
    """The whole cost is checked against the remaining budget before the first histogram is
    charged: over it, the refusal leaves the ledger as it was and writes no report. The broken
    variant (no total check: each histogram charged until one no longer fits) spends part of
    the budget for nothing, and the same assertion sees it."""
    from crowdsafe.cli import main
    from crowdsafe.privacy.ledger import Ledger
    from crowdsafe.report import before

    ledger = tmp_path / "ledger.sqlite3"
    publish_small(tmp_path, small_table(), ledger=str(ledger), budget=(1.5, 1e-5))  # 1 is spent: 0.5 left
    release = tmp_path / "out" / "r.csv"
    args = ["report", str(release), "--before", str(tmp_path / "data.parquet"), "--schema",
            str(tmp_path / "schema.toml"), "--ledger", str(ledger), "--seed", "1", "--before-epsilon", "0.9",
            "--before-delta", "1e-7"]

    def entries_after(out: str) -> int:
        assert main([*args, "--out", str(tmp_path / out)]) == 3  # refused by the ledger
        assert not (tmp_path / out).exists()
        with Ledger(ledger) as book:
            return len(book.entries())

    assert entries_after("b.html") == 1  # only the publication
    monkeypatch.setattr(before, "_check_total", lambda *a, **k: None)
    assert entries_after("c.html") > 1  # histograms charged before one no longer fitted


def test_before_distributions_without_a_budget_say_to_set_one_first(tmp_path, capsys):
    """``report`` takes no ``--budget``: its refusal of a table with no budget says to set one
    with ``crowdsafe ledger init`` (it once told the user to pass ``--budget``, which ``report``
    refuses as an unknown option). One line, nothing charged, no page written."""
    from crowdsafe.cli import main

    publish_small(tmp_path, small_table(), ledger=str(tmp_path / "other.sqlite3"), budget=(10.0, 1e-5))
    ledger = tmp_path / "empty.sqlite3"
    capsys.readouterr()
    code = main(["report", str(tmp_path / "out" / "r.csv"), "--before", str(tmp_path / "data.parquet"), "--schema",
                 str(tmp_path / "schema.toml"), "--ledger", str(ledger), "--before-epsilon", "0.6",
                 "--before-delta", "1e-7", "--out", str(tmp_path / "b.html")])
    err = capsys.readouterr().err
    assert code == 3 and err.count("\n") == 1 and "no privacy budget is set for" in err
    assert "crowdsafe ledger init" in err and "--budget" not in err
    assert not (tmp_path / "b.html").exists()


def _report_with_before(tmp_path, *extra: str) -> str:
    """A release with secure noise and a ledger (not fit only for its schema's numeric kinds), then
    its report rebuilt with before-distributions: the page's guarantee section."""
    from crowdsafe.cli import main

    ledger = tmp_path / "ledger.sqlite3"
    publish_small(tmp_path, small_table(), seed=None, ledger=str(ledger), budget=(10.0, 1e-5))
    args = ["report", str(tmp_path / "out" / "r.csv"), "--before", str(tmp_path / "data.parquet"), "--schema",
            str(tmp_path / "schema.toml"), "--ledger", str(ledger), "--before-epsilon", "0.6", "--before-delta",
            "1e-7", "--out", str(tmp_path / "b.html"), *extra]
    assert main(args) == 0
    return section((tmp_path / "b.html").read_text(encoding="utf-8"), "guarantee")


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_seeded_before_distributions_make_the_report_not_fit(tmp_path):
    """Found by a sweep: seeded before-distributions (or ones on a schema choice read from the
    data) were shown under "Fit for release."; the answers' own verdict now reaches the page."""
    secure = _report_with_before(tmp_path / "secure")
    assert "its noise was seeded" not in secure
    assert "the before-distribution of age: numbers read by their values" in secure  # the schema's own reason
    seeded = _report_with_before(tmp_path / "seeded", "--seed", "1")
    assert "NOT fit for release" in seeded
    for column in QI:
        item = (f"<li>the before-distribution of {column}: its noise was seeded (reproducible), not drawn from a "
                "secure source</li>")
        assert seeded.count(item) == 1
        seeded = seeded.replace(item, "")
    assert seeded == secure


def test_the_before_verdict_can_fail(tmp_path, monkeypatch):
    """Broken variant: the answers' verdict dropped, as before: the seeded page does not say so."""
    from crowdsafe.report import before

    monkeypatch.setattr(before, "answer_unfit_reasons", lambda answer, recorded: ())
    assert "its noise was seeded" not in _report_with_before(tmp_path, "--seed", "1")
