"""``crowdsafe ledger verify RELEASE``: a release and its certificate checked against the ledger's
record of the run that wrote them (an officer's sweep, 2026-11-30: nothing tied a certificate to
its table or to its ledger entry, so an edited table, an edited certificate or another run's
table beside the certificate read as the release)."""

from __future__ import annotations

import hashlib
import json
import shutil
import sqlite3
from pathlib import Path

import polars as pl

from crowdsafe.cli import main
from report_tables import publish_small, small_table


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def verify(capsys, release: Path, ledger: Path, *extra: str) -> tuple[int, str, str]:
    code = main(["ledger", "verify", str(release), "--ledger", str(ledger), *extra])
    out, err = capsys.readouterr()
    return code, out, err


def refused(capsys, release: Path, ledger: Path, says: str) -> None:
    code, out, err = verify(capsys, release, ledger)
    assert code == 2 and not out, out
    assert len(err.strip().splitlines()) == 1 and says in err, err


def copied(release: Path, to: Path) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    shutil.copy(release, to / release.name)
    shutil.copy(release.with_name(release.stem + ".certificate.json"), to / (release.stem + ".certificate.json"))
    return to / release.name


def test_a_release_verifies_against_its_ledger_entry(tmp_path, capsys):
    ledger = tmp_path / "ledger.sqlite3"
    publish_small(tmp_path, small_table(), ledger=str(ledger), budget=(10.0, 1e-5))
    release = tmp_path / "out" / "r.csv"
    certificate = release.with_name("r.certificate.json")
    code, out, err = verify(capsys, release, ledger)
    assert code == 0, err
    assert "ledger entry #1 of 'data.parquet'" in out and sha256(release) in out
    code, out, err = verify(capsys, release, ledger, "--json")
    found = json.loads(out)
    assert (found["entry"], found["table_sha256"], found["certificate_sha256"]) == (
        1, sha256(release), sha256(certificate))
    assert found["release_id"] == json.loads(certificate.read_text())["sample"]["release_id"]
    # the ledger records the written files' digests, never one of the input
    with sqlite3.connect(ledger) as db:
        outcome = json.loads(db.execute("SELECT outcome FROM entries WHERE id = 1").fetchone()[0])
    recorded = {r["table_sha256"] for r in outcome["files"]} | {r["certificate_sha256"] for r in outcome["files"]}
    assert recorded == {sha256(release), sha256(certificate)}
    assert sha256(tmp_path / "data.parquet") not in json.dumps(outcome)
    # the folder moved elsewhere (as an officer receives it) still verifies: the bytes are checked
    assert verify(capsys, copied(release, tmp_path / "received"), ledger)[0] == 0


def test_edited_files_and_another_runs_table_are_refused(tmp_path, capsys):
    ledger = tmp_path / "ledger.sqlite3"
    publish_small(tmp_path / "a", small_table(), ledger=str(ledger), budget=(10.0, 1e-5))
    publish_small(tmp_path / "b", small_table(), ledger=str(ledger), seed=8)
    first, second = tmp_path / "a" / "out" / "r.csv", tmp_path / "b" / "out" / "r.csv"
    assert verify(capsys, first, ledger)[0] == 0 and verify(capsys, second, ledger)[0] == 0

    edited = copied(first, tmp_path / "edited")
    lines = edited.read_text(encoding="utf-8").splitlines(keepends=True)
    edited.write_text("".join(lines[:1] + lines[2:] + lines[1:2]), encoding="utf-8")  # same rows, reordered
    assert edited.read_bytes() != first.read_bytes()
    refused(capsys, edited, ledger, "SHA-256 differs")

    mixed = copied(first, tmp_path / "mixed")
    shutil.copy(second, mixed)  # the other run's table beside the first run's certificate
    refused(capsys, mixed, ledger, "is not the table ledger entry #1")

    forged = copied(first, tmp_path / "forged")
    certificate = forged.with_name("r.certificate.json")
    certificate.write_text(certificate.read_text().replace('"epsilon": 1.0', '"epsilon": 0.5'), encoding="utf-8")
    refused(capsys, forged, ledger, "not the certificate that run wrote: it was edited")


def test_a_release_without_a_ledger_cannot_be_verified(tmp_path, capsys):
    publish_small(tmp_path, small_table())  # no ledger
    refused(capsys, tmp_path / "out" / "r.csv", tmp_path / "ledger.sqlite3", "no entry of the ledger")


def test_each_of_several_releases_verifies(tmp_path, capsys):
    ledger = tmp_path / "ledger.sqlite3"
    publish_small(tmp_path, small_table(), ledger=str(ledger), budget=(10.0, 1e-5), releases=2, scheme="medium")
    for number in (1, 2):
        code, out, err = verify(capsys, tmp_path / "out" / f"r-{number}.csv", ledger)
        assert code == 0 and "ledger entry #1" in out, err


def _view(capsys, folder: Path, *extra: str) -> Path:
    """An alpha-beta view of a small table, charged to the ledger $CROWDSAFE_LEDGER names."""
    folder.mkdir(parents=True, exist_ok=True)
    pl.DataFrame({"sex": ["F", "M", "F"] * 100, "race": ["a", "b", "c", "d"] * 75}).write_csv(folder / "data.csv")
    (folder / "domains.json").write_text(json.dumps({"sex": ["F", "M"], "race": ["a", "b", "c", "d"]}))
    view = folder / "view" / "v.csv"
    code = main(["perturb", str(folder / "data.csv"), "--attributes", "sex,race", "--domains",
                 str(folder / "domains.json"), "--max-rows", "500", "--d", "0.1", "--gamma", "0.9", "--no-report",
                 "--out", str(view), *extra])
    assert code == 0, capsys.readouterr().err
    capsys.readouterr()
    return view


def test_an_alpha_beta_view_verifies_and_an_edited_one_is_refused(tmp_path, capsys, private_ledger):
    """A perturb view's entry records the view's and its certificate's SHA-256, as a publication's
    does (it recorded none: `ledger verify` could not check a view)."""
    view = _view(capsys, tmp_path, "--budget", "10,0")
    certificate = view.with_name("v.certificate.json")
    code, out, err = verify(capsys, view, private_ledger, "--json")
    assert code == 0, err
    found = json.loads(out)
    assert (found["entry"], found["table_sha256"], found["certificate_sha256"]) == (
        1, sha256(view), sha256(certificate))
    assert found["epsilon"] == json.loads(certificate.read_text())["epsilon"] and found["kind"] == "release"
    assert verify(capsys, copied(view, tmp_path / "received"), private_ledger)[0] == 0

    edited = copied(view, tmp_path / "edited")
    lines = edited.read_text(encoding="utf-8").splitlines(keepends=True)
    edited.write_text("".join(lines[:-1]), encoding="utf-8")  # a row taken out
    refused(capsys, edited, private_ledger, "SHA-256 differs")
    forged = copied(view, tmp_path / "forged")
    certificate = forged.with_name("v.certificate.json")
    certificate.write_text(certificate.read_text().replace('"gamma": 0.9', '"gamma": 0.5'), encoding="utf-8")
    refused(capsys, forged, private_ledger, "no entry of the ledger")
    # a view made without the ledger has no entry to be checked against
    refused(capsys, _view(capsys, tmp_path / "free", "--no-ledger"), private_ledger, "no entry of the ledger")


def test_a_folder_digest_is_of_its_files_by_path(tmp_path):
    """A Spark release is a folder of part files: its digest is that of each file's SHA-256 in
    the order of its path, the same wherever the folder is copied, and any edit, rename,
    addition or removal of a part changes it."""
    from crowdsafe.drivers.verify import file_digest, folder_digest, folder_parts

    folder = tmp_path / "r.parquet"
    (folder / "sub").mkdir(parents=True)
    for name, text in (("part-1.csv", "a\n1\n"), ("part-0.csv", "a\n2\n"), ("_SUCCESS", ""), ("sub/x", "z")):
        (folder / name).write_text(text)
    digest = folder_digest(folder)
    assert file_digest(folder) == digest
    assert [name for name, _ in folder_parts(folder)] == ["_SUCCESS", "part-0.csv", "part-1.csv", "sub/x"]
    listed = "".join(f"{name}\t{sha256(folder / name)}\n" for name in ("_SUCCESS", "part-0.csv", "part-1.csv",
                                                                       "sub/x"))
    assert digest == hashlib.sha256(listed.encode()).hexdigest()
    assert folder_digest(shutil.copytree(folder, tmp_path / "copy" / "r.parquet")) == digest
    (folder / "part-1.csv").rename(folder / "part-2.csv")
    assert folder_digest(folder) != digest
    (folder / "part-2.csv").rename(folder / "part-1.csv")
    assert folder_digest(folder) == digest
    (folder / "part-0.csv").write_text("a\n3\n")
    assert folder_digest(folder) != digest


def test_a_view_whose_certificate_was_written_elsewhere_verifies_with_certificate(tmp_path, capsys, private_ledger):
    """perturb --certificate writes the certificate away from the view: verify takes it with --certificate
    (it looked beside the view only, so such a view could not be checked at all)."""
    elsewhere = tmp_path / "certs" / "view.certificate.json"
    view = _view(capsys, tmp_path, "--budget", "10,0", "--certificate", str(elsewhere))
    refused(capsys, view, private_ledger, "--certificate FILE")
    code, out, err = verify(capsys, view, private_ledger, "--certificate", str(elsewhere), "--json")
    assert code == 0, err
    assert json.loads(out)["certificate_sha256"] == sha256(elsewhere)
    code, _, err = verify(capsys, view, private_ledger, "--certificate", str(tmp_path / "none.json"))
    assert code == 2 and "no certificate at" in err, err
