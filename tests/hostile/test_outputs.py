"""The output guard (crowdsafe.output_guard) beyond the corpus's refusals: what it lets through
(a file crowdsafe wrote, a replaced file with --force, the README's command run twice), the mark
each kind of output carries, the checked reads of input files, and the quick refusal of a
count beyond its limit. Each rule is also shown to catch a deliberately broken variant."""

from __future__ import annotations

import json
import os
import sqlite3
from pathlib import Path

import pytest
from corpus import OUTPUT_CASES
from special_files import released_after
from test_corpus import _prepare, template_ledger  # noqa: F401 (a fixture)

from crowdsafe import cli, output_guard
from crowdsafe.anonymize import plan as plan_module
from crowdsafe.anonymize.plan import MAX_RELEASES, PlanRequest, plan_publication
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import check_input, read_input_bytes, special_kind
from crowdsafe.output_guard import (
    EXPERIMENT_RECORD,
    JSON_MARK,
    REPORT_MARK,
    Input,
    Output,
    OutputKind,
    check_outputs,
    json_document,
    written_by_crowdsafe,
)
from crowdsafe.privacy.ledger import LEDGER_ENV

PUBLISH = ["--epsilon", "1", "--delta", "1e-6", "--scheme", "coarse", "--seed", "1"]


def _run(capsys, *argv: str) -> tuple[int, str]:
    capsys.readouterr()
    code = cli.main(list(argv))
    return code, capsys.readouterr().err


def _ledger_rows(path: Path) -> object:
    with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
        return [conn.execute(f"SELECT * FROM {t} ORDER BY 1").fetchall() for t in ("entries", "totals", "samples")]


@pytest.mark.slow
def test_force_replaces_an_unrelated_file_and_leaves_the_inputs_and_the_ledger_alone(capsys, tmp_path):
    data = tmp_path / "adult.csv"
    assert cli.main(["datasets", "export", "adult", str(data)]) == 0
    mine = tmp_path / "out" / "r.csv"
    mine.parent.mkdir()
    mine.write_text("my own table\n")
    ledger = tmp_path / "ledger.sqlite3"
    argv = ["publish", str(data), *PUBLISH, "--ledger", str(ledger), "--budget", "10,1e-5", "--out", str(mine)]
    before = data.read_bytes()
    code, err = _run(capsys, *argv)
    assert code == 2 and "exists and crowdsafe did not write it: give --force" in err
    assert mine.read_text() == "my own table\n" and not ledger.exists()  # refused before the ledger is opened
    code, err = _run(capsys, *argv, "--force")
    assert code == 0, err
    assert mine.read_text().startswith("age,") and data.read_bytes() == before
    assert len(_ledger_rows(ledger)[0]) == 1
    # the README's command again: the first run's files are crowdsafe's, replaced without --force
    code, err = _run(capsys, *argv)
    assert code == 0, err
    assert len(_ledger_rows(ledger)[0]) == 2 and data.read_bytes() == before


@pytest.mark.parametrize("what", ["answer", "export"])
def test_json_outputs_carry_the_mark_and_are_replaced_on_a_rerun(capsys, tmp_path, what):
    ledger = tmp_path / "ledger.sqlite3"
    out = tmp_path / f"{what}.json"
    argv = (["query", "adult", "count", "--epsilon", "0.5", "--seed", "1", "--ledger", str(ledger), "--budget", "5,0"]
            if what == "answer" else ["ledger", "show", "--ledger", str(ledger)])
    for _ in range(2):
        code, err = _run(capsys, *argv, "--out", str(out))
        assert code == 0, err
        assert out.read_text().startswith(JSON_MARK + ",\n")
    assert json.loads(out.read_text())["written_by"] == "crowdsafe"


@pytest.mark.slow
def test_an_experiment_reruns_into_its_own_folder_and_refuses_a_foreign_file(capsys, tmp_path):
    argv = ["experiment", "dps-delta-table", "--out", str(tmp_path)]
    assert _run(capsys, *argv)[0] == 0
    folder = tmp_path / "dps-delta-table"
    record = json.loads((folder / EXPERIMENT_RECORD).read_text())
    assert sorted(Path(f).name for f in record["files"]) == sorted(p.name for p in folder.iterdir()
                                                                  if p.name != EXPERIMENT_RECORD)
    assert _run(capsys, *argv)[0] == 0
    (folder / "notes.txt").write_text("mine\n")
    code, err = _run(capsys, *argv)
    assert code == 2 and "holds files crowdsafe did not write" in err and err.count("\n") == 1
    assert _run(capsys, *argv, "--force")[0] == 0 and (folder / "notes.txt").read_text() == "mine\n"


# -- the marks of rule 4 ---------------------------------------------------------------------------


def test_each_kind_is_crowdsafes_only_with_its_mark(tmp_path):
    table, certificate = tmp_path / "r.csv", tmp_path / "r.certificate.json"
    table.write_text("a\n1\n")
    as_table = Output(table, "the release", OutputKind.TABLE, certificate=certificate)
    assert not written_by_crowdsafe(as_table)  # no certificate beside it
    certificate.write_text('{"format": "not-crowdsafe"}')
    assert not written_by_crowdsafe(as_table) and not written_by_crowdsafe(
        Output(certificate, "c", OutputKind.CERTIFICATE))
    certificate.write_text('{"format": "crowdsafe-certificate", "version": 2}')
    assert written_by_crowdsafe(as_table) and written_by_crowdsafe(Output(certificate, "c", OutputKind.CERTIFICATE))
    report = tmp_path / "r.report.html"
    report.write_text("<!DOCTYPE html><html><head></head></html>")
    assert not written_by_crowdsafe(Output(report, "r", OutputKind.REPORT))
    report.write_text(f"<!DOCTYPE html><html><head>{REPORT_MARK}</head></html>")
    assert written_by_crowdsafe(Output(report, "r", OutputKind.REPORT))
    answer = tmp_path / "a.json"
    answer.write_text(json.dumps({"written_by": "crowdsafe"}))  # the key, but not where crowdsafe puts it
    assert not written_by_crowdsafe(Output(answer, "a", OutputKind.JSON))
    answer.write_text(json_document({"value": 3}))
    assert written_by_crowdsafe(Output(answer, "a", OutputKind.JSON))
    assert not written_by_crowdsafe(Output(answer, "a", OutputKind.PLAIN))  # a plain file never is


def test_json_document_puts_the_mark_first_and_keeps_the_payload():
    for payload, options in (({"b": 1, "a": [1, 2]}, {"sort_keys": True}), ({}, {})):
        text = json_document(payload, **options)
        assert text.startswith(JSON_MARK) and text.endswith("\n")
        loaded = json.loads(text)
        assert loaded.pop("written_by") == "crowdsafe" and loaded == payload
    with pytest.raises(ValueError, match="written_by"):
        json_document({"written_by": "someone"})


# -- rules 1 to 3, and the broken variants they catch ----------------------------------------------


def test_a_hard_link_is_caught_by_its_inode_not_its_name(tmp_path, monkeypatch):
    data = tmp_path / "data.csv"
    data.write_text("a\n1\n")
    os.link(data, tmp_path / "hard.csv")
    outputs = [Output(tmp_path / "hard.csv", "the release", OutputKind.TABLE)]
    with pytest.raises(ParameterError, match="hard.csv would overwrite the data .*data.csv .*a hard link to it"):
        check_outputs(outputs, [Input(data, "the data")], force=True)
    # a guard that compares real paths only lets the hard link through: the inode test is what catches it
    monkeypatch.setattr(output_guard, "_overlap", lambda path, where, place, folder: (
        "the same file" if where[0] == place[0] else None))
    check_outputs(outputs, [Input(data, "the data")], force=True)


def test_a_path_through_a_folder_yet_to_be_made_is_checked_where_it_lands(tmp_path):
    """``sub/../hard.csv`` with no ``sub`` yet: the writer makes ``sub`` and lands on ``hard.csv``,
    so the guard stats that file (a hard link to the data, and an unmarked file), not the path as
    written (which does not exist yet)."""
    data = tmp_path / "data.csv"
    data.write_text("a\n1\n")
    os.link(data, tmp_path / "hard.csv")
    dotted = tmp_path / "sub" / ".." / "hard.csv"
    with pytest.raises(ParameterError, match="a hard link to it"):
        check_outputs([Output(dotted, "the release", OutputKind.TABLE)], [Input(data, "the data")], force=True)
    (tmp_path / "other.csv").write_text("b\n2\n")
    with pytest.raises(ParameterError, match="exists and crowdsafe did not write it"):
        check_outputs([Output(tmp_path / "sub" / ".." / "other.csv", "the release", OutputKind.TABLE)])


def test_special_outputs_are_refused_and_a_regular_file_is_not(tmp_path):
    os.mkfifo(tmp_path / "pipe")
    for target, kind in ((tmp_path / "pipe", "a FIFO"), (Path("/dev/null"), "a character device")):
        with pytest.raises(ParameterError, match=f"it is {kind}"):
            check_outputs([Output(target, "the answer", OutputKind.JSON)], force=True)
    check_outputs([Output(tmp_path / "new.json", "the answer", OutputKind.JSON)])


@pytest.mark.parametrize("kind", [OutputKind.TABLE, OutputKind.CERTIFICATE, OutputKind.JSON, OutputKind.REPORT])
def test_a_dangling_link_is_refused_like_a_file_crowdsafe_did_not_write(tmp_path, kind):
    """A symbolic link to nothing at --out was replaced by a regular file without --force (a link
    to an existing file was refused): it is refused the same way, and replaced with force."""
    link = tmp_path / "d.csv"
    link.symlink_to("nowhere.csv")
    output = Output(link, "the release", kind, certificate=tmp_path / "d.certificate.json", parameter="out")
    with pytest.raises(ParameterError, match="is a symbolic link to nowhere.csv, which does not exist") as raised:
        check_outputs([output])
    assert "force" in str(raised.value) and "\n" not in str(raised.value)
    assert link.is_symlink() and not (tmp_path / "nowhere.csv").exists()
    check_outputs([output], force=True)


def test_publish_refuses_a_dangling_link_at_out(capsys, tmp_path):
    link = tmp_path / "d.csv"
    link.symlink_to("nowhere.csv")
    argv = ["publish", "adult", "--epsilon", "1", "--delta", "1e-6", "--scheme", "coarse", "--no-ledger",
            "--no-report", "--out", str(link)]
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "dangling link" in err and "--force" in err, err
    assert link.is_symlink() and sorted(p.name for p in tmp_path.iterdir()) == ["d.csv"]


def test_two_outputs_of_one_run_may_not_be_one_file(tmp_path):
    outputs = [Output(tmp_path / "v.csv", "the view", OutputKind.TABLE),
               Output(tmp_path / "sub" / ".." / "v.csv", "the certificate", OutputKind.CERTIFICATE)]
    with pytest.raises(ParameterError, match="are the same file"):
        check_outputs(outputs)


def test_a_remote_path_is_left_to_its_engine(tmp_path):
    check_outputs([Output("s3a://bucket/data.csv", "the release", OutputKind.TABLE)],
                  [Input("s3a://bucket/data.csv", "the data")])


# -- reading inputs ------------------------------------------------------------------------------


def test_special_inputs_are_refused_before_they_are_opened(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    assert special_kind(fifo) == "a FIFO (named pipe)" and special_kind(tmp_path) is None
    assert special_kind(tmp_path / "absent") is None and special_kind("/dev/zero") == "a character device"
    with released_after([fifo], seconds=10) as blocked:
        with pytest.raises(InputError, match="the hierarchy file .*pipe.csv is a FIFO"):
            read_input_bytes(fifo, "hierarchy file")
    assert not blocked
    with pytest.raises(InputError, match="/dev/zero is a character device"):
        read_input_bytes("/dev/zero", "hierarchy file")
    assert check_input(tmp_path) == tmp_path  # a folder of parts is not a special file


def test_input_reads_are_bounded(tmp_path):
    path = tmp_path / "h.csv"
    path.write_bytes(b"x" * 11)
    with pytest.raises(InputError, match="larger than"):
        read_input_bytes(path, "hierarchy file", limit=10)
    assert read_input_bytes(path, "hierarchy file", limit=11) == b"x" * 11


def test_the_fifo_guard_releases_a_blocked_reader(tmp_path):
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    with released_after([fifo], seconds=0.2) as blocked:
        assert fifo.read_bytes() == b""  # would block for ever without the guard
    # released, and nothing else; on a loaded machine the reader may still hold the pipe open at
    # the watcher's next look (50 ms later), which then releases it again
    assert blocked and set(blocked) == {str(fifo)}


# -- quick refusals ------------------------------------------------------------------------------


def test_too_many_releases_are_refused_before_any_planning(monkeypatch):
    composed = []
    real = plan_module.compose_homogeneous
    monkeypatch.setattr(plan_module, "compose_homogeneous", lambda *a, **k: composed.append(a) or real(*a, **k))
    with pytest.raises(ParameterError, match=f"at most {MAX_RELEASES:,}"):
        plan_publication(PlanRequest(1.0, 1e-6, releases=1_000_000))
    assert composed == []  # refused before the composition (which took seconds at this count)
    plan_publication(PlanRequest(1.0, 1e-6, releases=MAX_RELEASES))
    assert len(composed) == 1  # the spy sees a composition when there is one



# -- the ledger, byte for byte ---------------------------------------------------------------------

LEDGER_CASES = [c for c in OUTPUT_CASES if any("{ledger}" in a for a in c.argv)]


@pytest.mark.parametrize("case", LEDGER_CASES, ids=[c.id for c in LEDGER_CASES])
def test_a_refused_output_leaves_the_ledger_byte_for_byte(case, tmp_path, template_ledger, monkeypatch):  # noqa: F811
    """The corpus checks the ledger's entries; here its folder (the database and any -wal, -shm or
    -journal file) is compared byte for byte: the guard refuses before the ledger is opened."""
    places = _prepare(case, tmp_path, template_ledger)
    monkeypatch.setenv(LEDGER_ENV, places["ledger"])
    folder = Path(places["ledger"]).parent
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    with released_after(places["fifos"]):
        assert cli.main([a.format(**places) for a in case.argv]) == 2
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
