"""An experiment that fails or is interrupted leaves no file in its results folder.

Found by a sweep: `experiment composition` interrupted after its first CSV left it in the
folder without the record, and the rerun was then refused ("files crowdsafe did not write").
A run now writes into a hidden folder beside the results and moves its files in when it ends.
"""

from __future__ import annotations

import pytest

from crowdsafe import cli
from crowdsafe.experiments import registry


def _failing(ctx: registry.ExperimentContext) -> None:
    ctx.csv("first", {"x": [1, 2]})
    raise KeyboardInterrupt


def _working(ctx: registry.ExperimentContext) -> None:
    ctx.csv("first", {"x": [1, 2]})
    ctx.summary["rows"] = 2


@pytest.fixture
def toy(monkeypatch):
    registry._load()
    monkeypatch.setitem(registry._REGISTRY, "toy", registry.Experiment("toy", "a toy", _failing))
    return monkeypatch


def test_an_interrupted_experiment_leaves_no_file_and_the_rerun_works(toy, tmp_path, capsys):
    assert cli.main(["experiment", "toy", "--out", str(tmp_path)]) == 130
    assert "interrupted; no output was written" in capsys.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # no results, no staging folder
    toy.setitem(registry._REGISTRY, "toy", registry.Experiment("toy", "a toy", _working))
    assert cli.main(["experiment", "toy", "--out", str(tmp_path)]) == 0
    assert sorted(p.name for p in (tmp_path / "toy").iterdir()) == ["experiment.json", "first.csv"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy"]


def test_a_killed_runs_staging_folder_is_removed(toy, tmp_path):
    toy.setitem(registry._REGISTRY, "toy", registry.Experiment("toy", "a toy", _working))
    stale = tmp_path / ".toy.partial-999999999-abc"  # no such process
    stale.mkdir()
    registry.run("toy", tmp_path)
    assert not stale.exists()


def test_the_staging_rule_can_fail(toy, tmp_path):
    """Broken variant: written in the results folder itself, as before: the file is left."""
    toy.setattr(registry, "_staging_folder", lambda folder: (folder.mkdir(parents=True, exist_ok=True), folder)[1])
    toy.setattr(registry.shutil, "rmtree", lambda *args, **kwargs: None)
    with pytest.raises(KeyboardInterrupt):
        registry.run("toy", tmp_path)
    assert (tmp_path / "toy" / "first.csv").exists()


def test_an_experiment_refuses_options_it_does_not_read(tmp_path, capsys):
    """Found by a sweep: `-O bogus=1` was ignored by every experiment but utility, and utility's
    `seeds=1e12` ran until the machine killed it."""
    code = cli.main(["experiment", "dps-delta-table", "--out", str(tmp_path), "-O", "bogus=1"])
    err = capsys.readouterr().err
    assert code == 2 and "unknown option 'bogus' for the experiment 'dps-delta-table': it takes no options" in err
    code = cli.main(["experiment", "utility", "--out", str(tmp_path), "-O", "seeds=1e12"])
    err = capsys.readouterr().err
    assert code == 2 and "option seeds is a whole number from 1 to 1,000" in err, err
    assert list(tmp_path.iterdir()) == []


def _two_files(ctx: registry.ExperimentContext) -> None:
    ctx.csv("first", {"x": [1, 2]})
    ctx.csv("second", {"y": [3, 4]})


def test_a_rerun_that_cannot_place_a_file_replaces_nothing(toy, tmp_path, capsys):
    """ds6 #6: a folder at one of the names made the moves fail part-way; new files were left
    under the old record, and the error spoke of a privacy budget."""
    toy.setitem(registry._REGISTRY, "toy", registry.Experiment("toy", "a toy", _two_files))
    assert cli.main(["experiment", "toy", "--out", str(tmp_path)]) == 0
    results = tmp_path / "toy"
    (results / "first.csv").write_text("old,content\n")
    (results / "second.csv").unlink()
    (results / "second.csv").mkdir()
    before = {p.name: p.read_bytes() for p in results.iterdir() if p.is_file()}
    capsys.readouterr()
    assert cli.main(["experiment", "toy", "--out", str(tmp_path), "--force"]) == 2
    err = capsys.readouterr().err
    assert "second.csv" in err and "nothing was replaced" in err and "budget" not in err, err
    assert len(err.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in results.iterdir() if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy"]  # no staging or aside folder left


def test_a_move_that_fails_midway_puts_the_old_files_back(toy, tmp_path, monkeypatch):
    toy.setitem(registry._REGISTRY, "toy", registry.Experiment("toy", "a toy", _two_files))
    registry.run("toy", tmp_path)
    results = tmp_path / "toy"
    before = {p.name: p.read_bytes() for p in results.iterdir()}
    (results / "first.csv").write_text("old,content\n")
    before["first.csv"] = b"old,content\n"
    real = registry.os.replace
    calls = []

    def failing(source, target):
        calls.append(target)
        if str(target).endswith("second.csv") and ".partial-" in str(source):
            raise OSError(28, "No space left on device", str(target))
        return real(source, target)

    monkeypatch.setattr(registry.os, "replace", failing)
    with pytest.raises(registry.InputError, match="as it was before the run"):
        registry.run("toy", tmp_path, force=True)
    assert {p.name: p.read_bytes() for p in results.iterdir()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["toy"]
