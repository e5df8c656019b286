"""A publication beside numbered releases of an earlier run under the same name is refused.

``publish --releases 4 --out r.csv`` writes r-1.csv ... r-4.csv and the composed certificate
r.certificate.json; a later ``--releases 2 --out r.csv`` replaced r-1, r-2 and the certificate and
left r-3 and r-4 beside a certificate of two releases, as if part of it (found by the batch
sweep). Refused before anything is read or charged, naming the files, unless --force asks to
publish beside them; a numbered file without a certificate beside it is no release and is left
alone.
"""

from __future__ import annotations

import shutil

from cli_helpers import run_command, run_for_error


def _publish(capsys, releases: int, *extra: str) -> tuple[int, str]:
    return run_for_error(capsys, "publish", "adult", "--epsilon", "1", "--delta", "1e-6", "--budget", "100,1e-3",
                         "--releases", str(releases), "--out", "r.csv", "--no-report", "--seed", "1", *extra)


def test_fewer_releases_beside_an_earlier_runs_are_refused_before_the_charge(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _publish(capsys, 3)[0] == 0
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    code, err = _publish(capsys, 2)
    assert code == 2 and err.count("\n") == 1
    assert "r-3.csv beside r.csv is a release of an earlier run" in err and "--force" in err
    assert "Traceback" not in err
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before  # nothing written
    code, out, _ = run_command(capsys, "publish", "adult", "--epsilon", "1", "--delta", "1e-6", "--releases", "3",
                               "--out", "r.csv", "--no-report", "--seed", "1")
    assert code == 0 and "entry #2" in out  # the refused run charged nothing
    code, err = _publish(capsys, 2, "--force")  # asked: published beside them, nothing removed
    assert code == 0, err
    assert (tmp_path / "r-3.csv").exists() and (tmp_path / "r-3.certificate.json").exists()


def test_the_same_number_again_and_a_numbered_file_that_is_no_release_are_taken(capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _publish(capsys, 2)[0] == 0
    (tmp_path / "r-7.csv").write_text("mine\n")  # no certificate beside it: not a release
    assert _publish(capsys, 2)[0] == 0
    for suffix in (".csv", ".certificate.json"):  # a release numbered 12, with its certificate
        shutil.copy(tmp_path / f"r-1{suffix}", tmp_path / f"r-12{suffix}")
    code, err = _publish(capsys, 2)
    assert code == 2 and "r-12.csv beside r.csv is a release" in err
