"""The report beside every release: written by publish and anonymize, rebuilt byte for byte by
``crowdsafe report``, self-contained (no external resource)."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.cli import main
from crowdsafe.errors import InputError
from crowdsafe.report import build_report, report_path
from report_tables import publish_small, small_table

EXTERNAL = (
    re.compile(r"""\b(?:src|href|xlink:href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//""", re.IGNORECASE),
    re.compile(r"<script\b[^>]*\bsrc\s*=", re.IGNORECASE),
    re.compile(r"<link\b[^>]*\brel\s*=\s*[\"']?stylesheet", re.IGNORECASE),
    re.compile(r"url\(\s*[\"']?\s*(?:https?:)?//", re.IGNORECASE),
    re.compile(r"@import", re.IGNORECASE),
)


def external_resources(page: str) -> list[str]:
    return [m.group(0) for pattern in EXTERNAL for m in pattern.finditer(page)]


def test_publish_writes_the_report_beside_the_release(published):
    report = report_path(published)
    assert report == published.with_name("r.report.html") and report.is_file()
    page = report.read_text(encoding="utf-8")
    assert page.startswith("<!DOCTYPE html>") and 'id="plot-class-sizes"' in page and 'id="plot-distribution-0"' in page
    assert "NOT fit for release" in page  # seeded, no ledger


def test_the_report_is_rebuilt_byte_for_byte(published, tmp_path):
    """Rebuilt later from the two files only (copied elsewhere, nothing else beside them)."""
    copy = tmp_path / "copy"
    copy.mkdir()
    shutil.copy(published, copy / "r.csv")
    shutil.copy(published.with_name("r.certificate.json"), copy / "r.certificate.json")
    assert main(["report", str(copy / "r.csv")]) == 0
    assert (copy / "r.report.html").read_bytes() == report_path(published).read_bytes()
    assert main(["report", str(copy / "r.csv"), "--out", str(tmp_path / "again.html")]) == 0
    assert (tmp_path / "again.html").read_bytes() == report_path(published).read_bytes()


def test_the_report_has_no_external_resource(published):
    page = report_path(published).read_text(encoding="utf-8")
    assert external_resources(page) == []
    assert "<script" not in page.lower()
    assert external_resources('<img src="https://x.org/a.png">') and external_resources('<script src="a.js">')


def test_no_report_skips_it(tmp_path):
    publication = publish_small(tmp_path, small_table(800), report=False)
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.certificate.json", "r.csv"]
    assert "reports" not in publication.written


def test_the_cli_prints_where_the_report_went(tmp_path, capsys):
    from report_tables import write_inputs

    data, schema = write_inputs(tmp_path, small_table(800))
    out = tmp_path / "out" / "r.parquet"
    assert main(["publish", str(data), "--schema", str(schema), "--seed", "3", "--no-ledger", "--out", str(out)]) == 0
    assert f"{tmp_path / 'out' / 'r.report.html'} (report" in capsys.readouterr().out
    page = (tmp_path / "out" / "r.report.html").read_text(encoding="utf-8")
    assert "Release report: r.parquet" in page
    assert main(["publish", str(data), "--schema", str(schema), "--seed", "3", "--no-ledger", "--no-report",
                 "--out", str(tmp_path / "o2" / "r.csv")]) == 0
    assert not (tmp_path / "o2" / "r.report.html").exists()


def test_several_releases_each_get_a_report(tmp_path):
    publication = publish_small(tmp_path, small_table(1500), releases=2)
    assert publication.written["reports"] == [str(tmp_path / "out" / "r-1.report.html"),
                                              str(tmp_path / "out" / "r-2.report.html")]


def test_anonymize_writes_a_report_saying_no_formal_guarantee(tmp_path):
    api.anonymize(small_table(600), algorithm="mondrian", k=5, out=tmp_path / "a.csv")
    page = (tmp_path / "a.report.html").read_text(encoding="utf-8")
    assert "NO formal privacy guarantee: data-dependent recoding (Mondrian)" in page
    assert page == build_report(tmp_path / "a.csv")
    api.anonymize(small_table(600), algorithm="mondrian", k=5, out=tmp_path / "b.csv", report=False)
    assert not (tmp_path / "b.report.html").exists()


def test_report_refuses_a_release_without_its_certificate(tmp_path, capsys):
    (tmp_path / "x.csv").write_text("a\n1\n", encoding="utf-8")
    with pytest.raises(InputError, match="no certificate beside it"):
        build_report(tmp_path / "x.csv")
    assert main(["report", str(tmp_path / "x.csv")]) == 2
    assert "no certificate beside it" in capsys.readouterr().err
    assert main(["report", str(tmp_path / "missing.csv")]) == 2
    assert main(["report", str(tmp_path / "x.csv"), "--before-epsilon", "1"]) == 2
    assert "go together" in capsys.readouterr().err


def test_report_refuses_a_certificate_naming_columns_the_table_lacks(tmp_path, capsys):
    """The certificate of another table (or a table whose columns were cut) is refused, not
    silently reported over the columns it happens to share."""
    api.anonymize(small_table(600), algorithm="mondrian", k=5, out=tmp_path / "a.csv", report=False)
    other = tmp_path / "other.csv"
    other.write_text("colour\nred\nblue\n", encoding="utf-8")
    shutil.copy(tmp_path / "a.certificate.json", tmp_path / "other.certificate.json")
    assert main(["report", str(other)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "which other.csv does not hold" in err
    assert not (tmp_path / "other.report.html").exists()
    assert main(["report", str(tmp_path / "a.csv")]) == 0  # its own certificate


def _refused(capsys, table: Path, says: str) -> None:
    assert main(["report", str(table)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and says in err, err
    assert not report_path(table).exists()


def test_report_refuses_a_table_its_certificate_cannot_certify(tmp_path, capsys):
    """An officer's sweep (2026-11-30): a release with one row added (a class of 1 under k), the
    release of another run with a smaller k, and the release with a raw column appended were each
    reported "Fit for release" under the certificate beside them. Each is now refused."""
    publication = publish_small(tmp_path / "p", small_table())
    release = tmp_path / "p" / "out" / "r.csv"
    k = publication.plan.k
    rows = pl.read_csv(release, infer_schema=False)
    assert main(["report", str(release)]) == 0  # the release as written: reported
    capsys.readouterr()

    def beside(name: str, frame: pl.DataFrame) -> Path:
        frame.write_csv(tmp_path / f"{name}.csv")
        shutil.copy(release.with_name("r.certificate.json"), tmp_path / f"{name}.certificate.json")
        return tmp_path / f"{name}.csv"

    added = rows.head(1).with_columns(pl.lit("[90, 100)").alias("age"))
    _refused(capsys, beside("added", pl.concat([rows, added])), f"a class of 1 record, below its certificate's k = {k}")
    other = publish_small(tmp_path / "q", small_table(), scheme="coarse", beta=0.05)
    assert other.plan.k < k
    other_rows = pl.read_csv(tmp_path / "q" / "out" / "r.csv", infer_schema=False)
    _refused(capsys, beside("other", other_rows), f"below its certificate's k = {k}")
    _refused(capsys, beside("raw", rows.with_columns(pl.lit("1").alias("fnlwgt"))),
             "holds the column 'fnlwgt', which its certificate does not certify")


def test_report_refuses_a_certificate_whose_verdict_or_delta_does_not_follow_from_it(tmp_path, capsys, published):
    """An officer's sweep (2026-11-30): the report showed the certificate's verdict and delta as
    written, so a seeded release's certificate edited to say fit_for_release read "Fit for
    release", and a delta lowered a thousandfold was stated. Both are refused now; a delta stated
    above the theorem's (a weaker claim) is not."""
    import json

    certificate = json.loads(published.with_name("r.certificate.json").read_text(encoding="utf-8"))
    assert certificate["seeded"] and not certificate["fit_for_release"]

    def edited(name: str, **fields) -> Path:
        shutil.copy(published, tmp_path / f"{name}.csv")
        (tmp_path / f"{name}.certificate.json").write_text(json.dumps({**certificate, **fields}), encoding="utf-8")
        return tmp_path / f"{name}.csv"

    _refused(capsys, edited("fit", fit_for_release=True, unfit_reasons=[]), "it was edited")
    _refused(capsys, edited("unseeded", seeded=False), "it was edited")
    _refused(capsys, edited("delta", delta=certificate["delta"] / 1000), "below d(k, beta, epsilon - epsilon1)")
    assert main(["report", str(edited("weaker", delta=certificate["delta"] * 2))]) == 0


def test_a_classic_report_names_the_columns_it_publishes_as_they_are(tmp_path, published):
    """An officer's sweep (2026-11-30): a lattice release of Adult showed education as * in every
    row under "What was generalized", and nowhere said that education-num, which restates it, was
    published exactly; the report now names every column outside the quasi-identifiers."""
    frame = small_table(600).with_columns(pl.int_range(pl.len()).alias("row_number"),
                                          pl.lit("x").alias("note"))
    api.anonymize(frame, algorithm="lattice", k=5, qi=["age", "sex"], out=tmp_path / "a.csv")
    page = report_path(tmp_path / "a.csv").read_text(encoding="utf-8")
    generalized = page.split('<section id="generalized">')[1].split("</section>")[0]
    generalized = generalized.replace("<bdi>", "").replace("</bdi>", "")  # each name isolated
    others = [c for c in frame.columns if c not in ("age", "sex")]
    assert f"<strong>Published as they are</strong> (not generalized, and outside the classes that k counts): " \
           f"{', '.join(others)}." in generalized
    assert "Published as they are" not in report_path(published).read_text(encoding="utf-8")  # a certified release


def test_help_does_not_import_matplotlib():
    code = "import sys; from crowdsafe.cli import main; main(['--help']); print('matplotlib' in sys.modules)"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                            env={"PYTHONPATH": str(Path(__file__).parents[2] / "src"), "PATH": ""})
    assert result.stdout.strip().endswith("False")


@pytest.fixture(scope="module")
def release_resaved(tmp_path_factory):
    """A release (seeded, no ledger) and the same release re-saved with ';' and CRLF line breaks
    beside a copy of its certificate, as a spreadsheet in many countries saves it."""
    directory = tmp_path_factory.mktemp("resaved")
    publish_small(directory, small_table(600))
    original = directory / "out" / "r.csv"
    copy = directory / "copy"
    copy.mkdir()
    frame = pl.read_csv(original, infer_schema=False)
    frame.write_csv(copy / "r.csv", separator=";", line_terminator="\r\n")
    shutil.copy(original.with_name("r.certificate.json"), copy / "r.certificate.json")
    return original, copy / "r.csv"


def test_a_resaved_release_gets_the_same_report(release_resaved):
    """Its cells are read by the loader's rules (crowdsafe.data.text_csv), not as comma-separated only."""
    original, copy = release_resaved
    assert b";" in copy.read_bytes().split(b"\r\n")[0]
    assert main(["report", str(copy)]) == 0
    assert report_path(copy).read_bytes() == report_path(original).read_bytes()


def test_a_release_resaved_in_windows_1252_is_named_so(release_resaved, tmp_path, capsys):
    """As every other reader of a release says (check, compare, attack); report said Polars'
    "cannot read the release ...: invalid utf-8 sequence"."""
    original, _ = release_resaved
    header = original.read_text(encoding="utf-8").splitlines()[0]
    row = ",".join(["Private"] + ["*"] * (header.count(",")))
    resaved = tmp_path / "r.csv"  # past the first 64 KiB, which are checked when the file is sniffed
    resaved.write_bytes("\r\n".join([header] + [row] * 8000 + [row.replace("Private", "Privé")]).encode("cp1252"))
    shutil.copy(original.with_name("r.certificate.json"), tmp_path / "r.certificate.json")
    assert main(["report", str(resaved)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == f"crowdsafe: error: the release {resaved} is not UTF-8 text; re-save it as UTF-8"
    assert main(["check", str(resaved)]) == 2
    assert f"{resaved} is not UTF-8 text; re-save it as UTF-8" in capsys.readouterr().err
