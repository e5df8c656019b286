"""The files of one release stay together (review ds3, F3 and F4): a rerun leaves no report of
the release it replaced; a table and its certificate are complete and on disk before either is
renamed into place, and no certificate ever stands beside a table it does not describe; two
tables of one stem may not share a certificate, nor a report replace another release's report,
without --force."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from crowdsafe import cli, files
from crowdsafe.data import write
from crowdsafe.datasets.synthetic import synthetic
from crowdsafe.output_guard import REPORT_MARK

PUBLISH = ["--scheme", "coarse", "--seed", "1", "--no-ledger"]


@pytest.fixture
def data(tmp_path) -> Path:
    path = tmp_path / "data.csv"
    write(synthetic(3000, seed=1), path)
    return path


def _publish(capsys, data: Path, out: Path, *extra: str, epsilon: str = "1") -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(["publish", str(data), "--epsilon", epsilon, "--delta", "1e-6", *PUBLISH, "--out", str(out),
                     *extra])
    return code, capsys.readouterr().err


def _epsilon(certificate: Path) -> float:
    return float(json.loads(certificate.read_text())["epsilon"])


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_rerun_without_a_report_removes_the_report_of_the_release_it_replaces(capsys, data, tmp_path):
    out = tmp_path / "rr" / "a.csv"
    assert _publish(capsys, data, out)[0] == 0
    report = out.with_name("a.report.html")
    assert REPORT_MARK in report.read_text()
    code, err = _publish(capsys, data, out, "--no-report", epsilon="2")
    assert code == 0, err
    assert _epsilon(out.with_name("a.certificate.json")) == 2
    assert not report.exists()  # it described the release replaced (epsilon 1)
    assert sorted(p.name for p in out.parent.iterdir()) == ["a.certificate.json", "a.csv"]


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_report_crowdsafe_did_not_write_is_left_alone_by_a_run_without_a_report(capsys, data, tmp_path):
    out = tmp_path / "rr" / "a.csv"
    assert _publish(capsys, data, out, "--no-report")[0] == 0
    mine = out.with_name("a.report.html")
    mine.write_text("<p>my notes</p>")
    assert _publish(capsys, data, out, "--no-report", epsilon="2")[0] == 0
    assert mine.read_text() == "<p>my notes</p>"


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_release_is_fsynced_whole_before_any_file_is_renamed(capsys, data, tmp_path, monkeypatch):
    """Every fsync (the slow part: tens of MB for a large table) comes before the first rename or
    link, and the old certificate is removed before the new table is put in place."""
    out = tmp_path / "rel" / "a.csv"
    assert _publish(capsys, data, out, "--no-report")[0] == 0
    events: list[str] = []
    fsync, link, unlink, replace = files.os.fsync, files._link_into_place, files.os.unlink, files.os.replace
    monkeypatch.setattr(files.os, "fsync", lambda fd: (events.append("fsync"), fsync(fd))[1])
    monkeypatch.setattr(files, "_link_into_place",
                        lambda fd, target, *rest: (events.append(f"place {Path(target).name}"),
                                                   link(fd, target, *rest))[1])
    monkeypatch.setattr(files.os, "unlink", lambda p, *a, **k: (events.append(f"remove {Path(p).name}"),
                                                                unlink(p, *a, **k))[1])
    monkeypatch.setattr(files.os, "replace", lambda s, d, *a, **k: (events.append(f"place {Path(d).name}"),
                                                                    replace(s, d, *a, **k))[1])
    assert _publish(capsys, data, out, "--no-report", epsilon="2")[0] == 0
    names = ("a.csv", "a.certificate.json", "a.report.html")
    kept = [e for e in events if e == "fsync" or e.endswith(names)]
    # (a link under a hidden name renamed onto the target is one placing)
    written = [e for i, e in enumerate(kept) if e == "fsync" or i == 0 or kept[i - 1] != e]
    first_place = next(i for i, e in enumerate(written) if e.startswith(("place", "remove")))
    assert written[:first_place] == ["fsync", "fsync"] and "fsync" not in written[first_place:], written
    assert written[first_place:first_place + 3] == ["remove a.certificate.json", "place a.csv",
                                                    "place a.certificate.json"], written
    assert _epsilon(out.with_name("a.certificate.json")) == 2


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_two_tables_of_one_stem_may_not_share_a_certificate(capsys, data, tmp_path):
    """rel.csv and rel.parquet would share rel.certificate.json: the second is refused before
    anything is charged, naming the other table; --force writes it."""
    first = tmp_path / "pair" / "rel.csv"
    assert _publish(capsys, data, first, "--no-report")[0] == 0
    certificate = first.with_name("rel.certificate.json")
    before = certificate.read_bytes()
    ledger = tmp_path / "ledger.sqlite3"
    capsys.readouterr()
    code = cli.main(["publish", str(data), "--epsilon", "1", "--delta", "1e-6", "--scheme", "coarse",
                     "--ledger", str(ledger), "--budget", "10,1e-5", "--no-report", "--out",
                     str(first.with_suffix(".parquet"))])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1, err
    assert "rel.certificate.json" in err and "rel.csv" in err and "--force" in err
    assert certificate.read_bytes() == before and not first.with_suffix(".parquet").exists()
    assert not ledger.exists()  # refused before the ledger was opened or charged
    code, err = _publish(capsys, data, first.with_suffix(".parquet"), "--no-report", "--force")
    assert code == 0, err


@pytest.mark.parametrize(("first", "second"), [("R.CSV", "R.Parquet"), ("R.csv", "R.PQ"), ("R.Parquet", "R.Csv")])
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_suffixes_of_any_case_share_a_certificate(capsys, data, tmp_path, first, second):
    """R.CSV and R.Parquet share R.certificate.json as rel.csv and rel.parquet do: the second
    is refused (before, only lowercase suffixes were looked for, and R.CSV's certificate was
    replaced by one describing R.Parquet)."""
    table = tmp_path / "ext" / first
    assert _publish(capsys, data, table, "--no-report")[0] == 0
    certificate = table.with_name("R.certificate.json")
    before = certificate.read_bytes()
    code, err = _publish(capsys, data, table.with_name(second), "--no-report", epsilon="2")
    assert code == 2 and err.count("\n") == 1 and first in err and "R.certificate.json" in err, err
    assert certificate.read_bytes() == before and not table.with_name(second).exists()
    assert _publish(capsys, data, table, "--no-report", epsilon="2")[0] == 0  # a rerun onto itself


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_report_of_a_release_with_an_uppercase_suffix_is_anothers(capsys, data, tmp_path):
    a, b = tmp_path / "A" / "a.csv", tmp_path / "B" / "b.CSV"
    assert _publish(capsys, data, a)[0] == 0
    assert _publish(capsys, data, b, epsilon="2")[0] == 0
    (b.with_name("b.certificate.json")).unlink()  # the report is known by its table alone
    theirs = b.with_name("b.report.html")
    capsys.readouterr()
    code = cli.main(["report", str(a), "--out", str(theirs)])
    err = capsys.readouterr().err
    assert code == 2 and "another release" in err and str(b) in err, err


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_release_beside_a_table_of_another_format_needs_force(capsys, data, tmp_path):
    """data.csv (the input) beside the release data.parquet: data.certificate.json would sit beside
    data.csv, which readers (and the guard's rule 4) would then take for a crowdsafe release. It
    is refused without --force, even before any certificate exists; with --force, reruns pass."""
    out = tmp_path / "data.parquet"
    code, err = _publish(capsys, data, out, "--no-report")
    assert code == 2 and "data.csv" in err and "--force" in err and len(err.strip().splitlines()) == 1, err
    assert not out.exists() and not (tmp_path / "data.certificate.json").exists()
    assert _publish(capsys, data, out, "--no-report", "--force")[0] == 0
    code, err = _publish(capsys, data, out, "--no-report", "--force", epsilon="2")
    assert code == 0, err


def test_a_view_may_not_take_the_certificate_of_a_table_of_its_stem(capsys, data, tmp_path):
    table = tmp_path / "v.csv"
    assert _publish(capsys, data, table, "--no-report")[0] == 0
    capsys.readouterr()
    code = cli.main(["perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.5", "--attributes", "sex,race",
                     "--exploratory",
                     "--seed", "1", "--out", str(tmp_path / "v.parquet")])
    err = capsys.readouterr().err
    assert code == 2 and "v.csv" in err and "certificate" in err, err


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_report_may_not_replace_the_report_of_another_release(capsys, data, tmp_path):
    a, b = tmp_path / "A" / "a.csv", tmp_path / "B" / "b.csv"
    assert _publish(capsys, data, a)[0] == 0
    assert _publish(capsys, data, b, epsilon="2")[0] == 0
    theirs = b.with_name("b.report.html")
    before = theirs.read_bytes()
    capsys.readouterr()
    code = cli.main(["report", str(a), "--out", str(theirs)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "another release" in err and str(b) in err, err
    assert theirs.read_bytes() == before
    assert cli.main(["report", str(a), "--out", str(a.with_name("a.report.html"))]) == 0  # its own place
    assert cli.main(["report", str(a), "--out", str(tmp_path / "elsewhere.report.html")]) == 0
    assert cli.main(["report", str(a), "--out", str(tmp_path / "elsewhere.report.html")]) == 0  # and again
    assert cli.main(["report", str(a), "--out", str(theirs), "--force"]) == 0


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_view_rerun_without_a_report_removes_the_report_of_the_view_it_replaces(capsys, data, tmp_path):
    out = tmp_path / "views" / "v.csv"
    argv = ["perturb", "--no-ledger", str(data), "--c", "0.5", "--gamma", "0.9", "--attributes", "sex,race",
            "--exploratory",
            "--out", str(out)]
    assert cli.main(argv) == 0
    assert REPORT_MARK in out.with_name("v.report.html").read_text()
    assert cli.main([*argv, "--no-report"]) == 0
    assert sorted(p.name for p in out.parent.iterdir()) == ["v.certificate.json", "v.csv"]


def _perturb(capsys, data: Path, out: Path, *extra: str) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(["perturb", "--no-ledger", str(data), "--c", "2", "--gamma", "0.95", "--attributes", "age,sex,race",
                     "--exploratory", "--seed", "1", "--out", str(out), *extra])
    return code, capsys.readouterr().err


def test_a_view_certificate_may_not_be_planted_beside_another_table(capsys, data, tmp_path):
    """ds6 #1a: --certificate mydata.certificate.json beside the custodian's own mydata.csv would
    make mydata.csv look like crowdsafe's release, to be overwritten later without --force."""
    mine = tmp_path / "mydata.csv"
    mine.write_bytes(data.read_bytes())
    planted = str(tmp_path / "mydata.certificate.json")
    code, err = _perturb(capsys, data, tmp_path / "view.csv", "--certificate", planted)
    assert code == 2 and "mydata.csv" in err and "--force" in err and len(err.strip().splitlines()) == 1, err
    assert not (tmp_path / "mydata.certificate.json").exists() and not (tmp_path / "view.csv").exists()
    assert _publish(capsys, data, mine, "--no-report")[0] == 2  # still not crowdsafe's: refused without --force


def test_a_view_certificate_may_not_replace_a_release_certificate_in_another_folder(capsys, data, tmp_path):
    """ds6 #1b: the certificate of rel/r.csv, named by --certificate from another folder."""
    release = tmp_path / "rel" / "r.csv"
    assert _publish(capsys, data, release, "--no-report")[0] == 0
    certificate = tmp_path / "rel" / "r.certificate.json"
    before = certificate.read_bytes()
    code, err = _perturb(capsys, data, tmp_path / "v.csv", "--certificate", str(certificate))
    assert code == 2 and "r.csv" in err and "another table" in err and len(err.strip().splitlines()) == 1, err
    assert certificate.read_bytes() == before and not (tmp_path / "v.csv").exists()
    code, err = _perturb(capsys, data, tmp_path / "v.csv", "--certificate", str(certificate), "--force")
    assert code == 0, err


def test_the_composed_certificate_and_a_single_release_do_not_replace_each_other(capsys, data, tmp_path):
    """ds6 #2: `--releases 2 --out r.csv` wrote its composed certificate over r.csv's, silently,
    and the reverse; `report r.csv` then certified the old table as (2, 2e-6)-DP."""
    single, certificate = tmp_path / "r.csv", tmp_path / "r.certificate.json"
    assert _publish(capsys, data, single, "--no-report")[0] == 0
    before = certificate.read_bytes()
    code, err = _publish(capsys, data, single, "--no-report", "--releases", "2")
    assert code == 2 and "r.csv" in err and "--force" in err and len(err.strip().splitlines()) == 1, err
    assert certificate.read_bytes() == before and not (tmp_path / "r-1.csv").exists()
    code, err = _publish(capsys, data, single, "--no-report", "--releases", "2", "--force")
    assert code == 0, err
    assert json.loads(certificate.read_text())["components"]  # the composed one, now
    capsys.readouterr()
    assert cli.main(["report", str(single)]) == 2  # the composed certificate is no single table's
    err = capsys.readouterr().err
    assert "composed certificate" in err and len(err.strip().splitlines()) == 1, err
    # the reverse: a single release over the composed certificate
    composed = certificate.read_bytes()
    code, err = _publish(capsys, data, single, "--no-report")
    assert code == 2 and "composed certificate of 2 releases" in err and "r-1.csv" in err, err
    assert certificate.read_bytes() == composed
    code, err = _publish(capsys, data, single, "--no-report", "--force")
    assert code == 0, err
    assert json.loads(certificate.read_text())["components"] == []


def test_force_over_a_release_by_a_plain_writer_removes_its_certificate_and_report(capsys, data, tmp_path):
    """ds6 #7: `datasets export adult r.csv --force` over a release left its certificate and its
    report ("fit for release") beside the raw table."""
    release = tmp_path / "r.csv"
    assert _publish(capsys, data, release)[0] == 0
    assert (tmp_path / "r.certificate.json").exists() and (tmp_path / "r.report.html").exists()
    capsys.readouterr()
    assert cli.main(["datasets", "export", "people", str(release), "--force"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == ["data.csv", "r.csv"]


def test_a_plain_writer_keeps_a_certificate_another_table_of_the_stem_may_own(capsys, data, tmp_path):
    release = tmp_path / "r.parquet"
    assert _publish(capsys, data, release, "--no-report")[0] == 0
    (tmp_path / "r.csv").write_text("a\n1\n")
    capsys.readouterr()
    assert cli.main(["datasets", "export", "people", str(tmp_path / "r.csv"), "--force"]) == 0
    assert (tmp_path / "r.certificate.json").exists()  # r.parquet's, still beside it


def test_a_view_rerun_with_its_certificate_elsewhere_removes_the_old_one(capsys, data, tmp_path):
    view = tmp_path / "v.csv"
    assert _perturb(capsys, data, view, "--no-report")[0] == 0
    assert (tmp_path / "v.certificate.json").exists()
    elsewhere = tmp_path / "certs" / "other.certificate.json"
    code, err = _perturb(capsys, data, view, "--no-report", "--certificate", str(elsewhere), "--force")
    assert code == 0, err
    assert elsewhere.exists() and not (tmp_path / "v.certificate.json").exists()
