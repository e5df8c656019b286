"""Custodian-only files are the custodian's alone: created ``0600`` before a byte is written.

The ledger holding the same facts is created ``0600`` and refused when others can read it; the
custodian reports of ``publish`` and ``perturb`` and the ledger export of ``ledger show --out``
were written ``0644`` under the usual umask 022. The atomic writer now takes the mode
(:data:`crowdsafe.files.PRIVATE`) and creates the file with it on each of its three ways of
writing (an anonymous file linked in, a hidden temporary file renamed, a copy when the link
fails), never opening it wider, even for a moment.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path

import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import files
from crowdsafe.files import PRIVATE, atomic_path, write_text_atomic

WAYS = ["anonymous file", "hidden temporary file", "copy when the link fails"]


@pytest.fixture
def umask_022():
    before = os.umask(0o022)
    yield
    os.umask(before)


def _way(monkeypatch, way: str) -> None:
    if way == "hidden temporary file":
        monkeypatch.setattr(files, "_anonymous_file", lambda folder: None)
    elif way == "copy when the link fails":
        if files._anonymous_file(Path(".")) is None:
            pytest.skip("no O_TMPFILE here: the copy fallback cannot run")

        def cannot_link(fd, name):
            raise OSError(errno.EXDEV, "no link here")

        monkeypatch.setattr(files, "_link", cannot_link)


def _modes_set(monkeypatch) -> list[int]:
    """Every mode the writer gives a file (os.chmod, os.fchmod), in order."""
    seen: list[int] = []
    chmod, fchmod = os.chmod, os.fchmod

    def recording_chmod(path, mode, *args, **kwargs):
        seen.append(mode)
        return chmod(path, mode, *args, **kwargs)

    def recording_fchmod(fd, mode):
        seen.append(mode)
        return fchmod(fd, mode)

    monkeypatch.setattr(os, "chmod", recording_chmod)
    monkeypatch.setattr(os, "fchmod", recording_fchmod)
    return seen


@pytest.mark.parametrize("way", WAYS)
def test_a_private_file_is_0600_from_its_first_byte(way, tmp_path, monkeypatch, umask_022):
    _way(monkeypatch, way)
    seen = _modes_set(monkeypatch)
    target = tmp_path / "facts.json"
    target.write_text("old")  # an existing file readable by others is replaced, not reused
    target.chmod(0o644)
    seen.clear()
    with atomic_path(target, mode=PRIVATE) as tmp:
        assert os.stat(tmp).st_mode & 0o777 == 0o600  # before any byte
        tmp.write_text('{"rows": 264}')
        assert os.stat(tmp).st_mode & 0o777 == 0o600
    assert target.read_text() == '{"rows": 264}'
    assert target.stat().st_mode & 0o777 == 0o600
    assert all(mode == 0o600 for mode in seen), [oct(m) for m in seen]  # never opened wider
    assert [p.name for p in tmp_path.iterdir()] == ["facts.json"]


@pytest.mark.parametrize("way", WAYS)
def test_a_published_file_keeps_the_usual_mode(way, tmp_path, monkeypatch, umask_022):
    _way(monkeypatch, way)
    target = write_text_atomic(tmp_path / "release.csv", "a\n")
    assert target.stat().st_mode & 0o777 == 0o644


# -- every custodian-only file the commands write ---------------------------------------------------


@pytest.fixture
def table(tmp_path) -> Path:
    path = tmp_path / "people.csv"
    pl.DataFrame({"sex": ["F", "M"] * 100, "band": [str(i % 4) for i in range(200)]}).write_csv(path)
    (tmp_path / "schema.toml").write_text('[attributes.sex]\ntype = "categorical"\norder = ["F", "M"]\n'
                                          '[attributes.band]\ntype = "categorical"\norder = ["0", "1", "2", "3"]\n')
    return path


def test_publishs_custodian_report_is_0600(capsys, tmp_path, table, umask_022):
    report = tmp_path / "private" / "facts.json"
    code, _, err = run_command(capsys, "publish", str(table), "--schema", str(tmp_path / "schema.toml"),
                               "--scheme", "coarse", "--ledger", str(tmp_path / "l.sqlite3"), "--budget", "10,1e-5",
                               "--out", str(tmp_path / "release" / "r.csv"), "--custodian-report", str(report))
    assert code == 0, err
    assert json.loads(report.read_text())["input_rows"] == 200
    assert report.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "release" / "r.csv").stat().st_mode & 0o777 == 0o644  # the release stays public


def test_perturbs_custodian_report_is_0600(capsys, tmp_path, table, umask_022):
    report = tmp_path / "private" / "facts.json"
    code, _, err = run_command(capsys, "perturb", "--no-ledger", str(table), "--schema", str(tmp_path / "schema.toml"),
                               "--d", "0.05", "--gamma", "0.3", "--max-rows", "500",
                               "--out", str(tmp_path / "view" / "v.csv"), "--custodian-report", str(report))
    assert code == 0, err
    assert json.loads(report.read_text())["rows"] == 200
    assert report.stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "view" / "v.csv").stat().st_mode & 0o777 == 0o644


def test_the_ledger_export_is_0600(capsys, tmp_path, umask_022):
    ledger = tmp_path / "l.sqlite3"
    code, _, err = run_command(capsys, "ledger", "init", "adult", "--epsilon", "1", "--delta", "0",
                               "--ledger", str(ledger))
    assert code == 0, err
    export = tmp_path / "export.json"
    code, _, err = run_command(capsys, "ledger", "show", "--ledger", str(ledger), "--out", str(export))
    assert code == 0, err
    assert json.loads(export.read_text())["datasets"][0]["name"] == "adult"
    assert export.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_the_attacks_per_target_table_is_0600(capsys, tmp_path, suffix, umask_022):
    """``attack intersection --out``: one row per target, scored against the target's true value
    (``perfect_breach_true``) when the targets are the custodian's table. It was written 0644."""
    release = tmp_path / "release" / "r.csv"
    release.parent.mkdir()
    pl.DataFrame({"sex": ["F", "M"], "band": ["0", "1"]}).write_csv(release)
    pl.DataFrame({"sex": ["F", "M"], "band": ["0", "1"]}).write_csv(tmp_path / "targets.csv")
    out = tmp_path / "private" / f"per-target.{suffix}"
    code, _, err = run_command(capsys, "attack", "intersection", str(release), "--targets",
                               str(tmp_path / "targets.csv"), "--qi", "sex", "--sensitive", "band", "--out", str(out))
    assert code == 0, err
    assert out.stat().st_mode & 0o777 == 0o600
    read = pl.read_csv(out) if suffix == "csv" else pl.read_parquet(out)
    assert read["perfect_breach_true"].to_list() == [True, True]
