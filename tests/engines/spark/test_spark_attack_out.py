"""`crowdsafe attack intersection --engine spark --out X` meets an existing X as the Polars engine
does: refused without --force (one line, "exists"), replaced with it; a path Spark cannot write
(not *.parquet) is refused before the attack runs.

Until 2026-11-30 the Spark engine's per-target table, a folder of part files, could never be
replaced: a rerun, with --force too, was refused with "it is a folder (crowdsafe writes a file
there, and force never replaces a folder)", though crowdsafe had written that folder; and
``--out metrics.csv`` was refused only after the whole attack had run on Spark."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe import api, cli

pytestmark = pytest.mark.spark


def _files(tmp_path):
    people = pl.DataFrame({"age": [20 + i % 30 for i in range(120)], "sex": ["MF"[i % 2] for i in range(120)],
                           "dx": ["abc"[i % 3] for i in range(120)]})
    (tmp_path / "releases").mkdir()
    coarse = people.with_columns(pl.format("[{}, {})", (pl.col("age") // 10) * 10, (pl.col("age") // 10) * 10 + 10)
                                 .alias("age"))
    releases = []
    for i, release in enumerate((coarse, coarse.with_columns(pl.lit("*").alias("sex")))):
        releases.append(str(tmp_path / "releases" / f"r{i}.csv"))
        release.write_csv(releases[-1])
    people.write_csv(tmp_path / "targets.csv")
    return [*releases, "--targets", str(tmp_path / "targets.csv"), "--qi", "age,sex", "--sensitive", "dx"]


def test_an_existing_per_target_table_is_replaced_with_force_as_on_polars(spark, tmp_path, capsys):
    files = _files(tmp_path)
    for engine in ("polars", "spark"):
        out = tmp_path / f"{engine}.parquet"
        run = ["attack", "intersection", *files, "--engine", engine, "--out", str(out)]
        assert cli.main(run) == 0, capsys.readouterr().err
        first = sorted(p.name for p in out.iterdir()) if out.is_dir() else out.read_bytes()
        capsys.readouterr()
        code = cli.main(run)  # a rerun onto the table of the first
        err = capsys.readouterr().err
        assert code == 2 and f"the per-target table {out} exists: give --force to replace it" in err, (engine, err)
        assert len(err.strip().splitlines()) == 1
        assert cli.main([*run, "--force"]) == 0, (engine, capsys.readouterr().err)
        capsys.readouterr()
        again = sorted(p.name for p in out.iterdir()) if out.is_dir() else out.read_bytes()
        if engine == "spark":  # new part files (Spark names each with the write's id)
            assert again != first and any(name.endswith(".parquet") for name in again)
        assert pl.read_parquet(out / "*.parquet" if out.is_dir() else out).height == 120
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no staging folder left


def test_a_per_target_table_spark_cannot_write_is_refused_before_the_attack(spark, tmp_path, capsys, monkeypatch):
    def ran(*args, **kwargs):
        raise AssertionError("the attack ran")

    monkeypatch.setattr(api, "attack", ran)
    code = cli.main(["attack", "intersection", *_files(tmp_path), "--engine", "spark",
                     "--out", str(tmp_path / "metrics.csv")])
    err = capsys.readouterr().err
    assert code == 2 and "written as Parquet: name" in err, err  # (and the attack did not run: api.attack)
    assert not (tmp_path / "metrics.csv").exists()


def test_a_missing_release_is_named_as_on_polars(spark, tmp_path, capsys):
    files = _files(tmp_path)
    files[1] = str(tmp_path / "releases" / "none.csv")
    errors = {}
    for engine in ("polars", "spark"):
        code = cli.main(["attack", "intersection", *files, "--engine", engine])
        errors[engine] = capsys.readouterr().err
        assert code == 2, errors
    assert errors["spark"] == errors["polars"] == f"crowdsafe: error: no such release file: {files[1]}\n"
