"""``crowdsafe attack intersection``: output, JSON, per-target file, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
from attack_fixtures import tiny

from cli_helpers import run_command


def write_tiny(tmp_path):
    """The releases in ``tmp_path/releases``, the targets in ``tmp_path``."""
    releases, targets = tiny()
    paths = []
    (tmp_path / "releases").mkdir(exist_ok=True)
    for release in releases:
        path = tmp_path / "releases" / f"{release.name}.csv"
        release.frame.write_csv(path)
        paths.append(str(path))
    targets.write_csv(tmp_path / "targets.csv")
    return paths, str(tmp_path / "targets.csv")


def test_json_summary_and_per_target_file(tmp_path, capsys):
    paths, targets = write_tiny(tmp_path)
    out = tmp_path / "custodian" / "per-target.csv"  # not beside the releases: custodian-only
    code, stdout, err = run_command(capsys, "attack", "intersection", *paths, "--targets", targets, "--qi", "age,zip",
                                    "--sensitive", "dis", "--out", str(out), "--json")
    assert code == 0, err
    payload = json.loads(stdout)
    assert payload["summary"]["perfect_breach"] == 0.5
    assert payload["summary"]["perfect_breach_true"] == 0.25
    assert [r["release"] for r in payload["releases"]] == ["a", "b"]
    assert pl.read_csv(out)["posterior_anonymity"].to_list() == [2, 2, 1, 1]
    assert payload["written"] == str(out) and payload["written_notice"].startswith("custodian only: one row per target")


def test_the_per_target_table_is_refused_in_a_releases_folder(tmp_path, capsys):
    """The per-target table is scored against each target's true value (``perfect_breach_true``):
    custodian-only, so like ``publish --custodian-report`` it may not lie in a release's folder,
    nor below it, even with --force (it was written there, 0644, unlabelled). Refused before
    anything is read, in one line, and nothing is written."""
    paths, targets = write_tiny(tmp_path)
    for out in (tmp_path / "releases" / "per-target.csv", tmp_path / "releases" / "sub" / "t.parquet"):
        for force in ([], ["--force"]):
            code, stdout, err = run_command(capsys, "attack", "intersection", *paths, "--targets", targets, "--qi",
                                            "age,zip", "--sensitive", "dis", "--out", str(out), *force)
            assert code == 2 and stdout == "", err
            assert err.count("\n") == 1, err
            assert f"the per-target table {out} would lie in the release's folder {tmp_path / 'releases'}" in err, err
            assert not out.exists() and not (tmp_path / "releases" / "sub").exists()
    assert sorted(p.name for p in (tmp_path / "releases").iterdir()) == ["a.csv", "b.csv"]
    # a release in another folder: its folder counts too
    (tmp_path / "other").mkdir()
    moved = tmp_path / "other" / "b.csv"
    Path(paths[1]).rename(moved)
    code, _, err = run_command(capsys, "attack", "intersection", paths[0], str(moved), "--targets", targets, "--qi",
                               "age,zip", "--sensitive", "dis", "--out", str(tmp_path / "other" / "t.csv"))
    assert code == 2 and f"would lie in the release's folder {tmp_path / 'other'}" in err, err


def test_the_text_output_labels_the_per_target_table(tmp_path, capsys):
    paths, targets = write_tiny(tmp_path)
    out = tmp_path / "mine" / "per-target.csv"
    code, stdout, err = run_command(capsys, "attack", "intersection", *paths, "--targets", targets, "--qi", "age,zip",
                                    "--sensitive", "dis", "--out", str(out))
    assert code == 0, err
    assert "custodian only: one row per target" in " ".join(stdout.split())


def test_human_output(tmp_path, capsys):
    paths, targets = write_tiny(tmp_path)
    code, stdout, _ = run_command(capsys, "attack", "intersection", *paths, "--targets", targets, "--qi", "age,zip",
                                  "--sensitive", "dis")
    assert code == 0
    assert "perfect breach: 50.0% (true value: 25.0%)" in stdout


def test_errors_are_one_line(tmp_path, capsys):
    paths, targets = write_tiny(tmp_path)
    cases = [
        ([paths[0], str(tmp_path / "nope.csv")], ["--qi", "age,zip", "--sensitive", "dis"], "no such release file"),
        (paths, ["--qi", "age,town", "--sensitive", "dis"], "no column 'town'"),
        (paths, ["--qi", "age,zip", "--sensitive", "illness"], "no sensitive column 'illness'"),
        (paths, ["--sensitive", "dis"], "--qi"),
        (paths, ["--qi", "age,zip", "--sensitive", "dis", "--levels", "0.5,x"], "--levels"),
    ]
    for releases, options, message in cases:
        code, stdout, err = run_command(capsys, "attack", "intersection", *releases, "--targets", targets, *options)
        assert code == 2, (options, err)
        assert err.count("\n") == 1 and message in err, err
        assert stdout == ""


def test_linkage_command(tmp_path, capsys):
    release = pl.DataFrame({"age": ["[20, 29]", "[20, 29]", "31"], "zip": ["*", "*", "12"]})
    external = pl.DataFrame({"name": ["ann", "bob", "cid"], "age": [25, 31, 40], "zip": ["10", "12", "12"]})
    release.write_csv(tmp_path / "r.csv")
    external.write_csv(tmp_path / "voters.csv")
    code, stdout, err = run_command(capsys, "attack", "linkage", str(tmp_path / "r.csv"), "--external",
                                    str(tmp_path / "voters.csv"), "--qi", "age,zip", "--json")
    assert code == 0, err
    summary = json.loads(stdout)["summary"]
    # every row has exactly one consistent voter: ann for the two [20, 29] rows, bob for 31
    assert summary["reidentified_uniquely"] == 3
    code, _, err = run_command(capsys, "attack", "linkage", str(tmp_path / "r.csv"), "--external",
                               str(tmp_path / "voters.csv"), "--qi", "age,town")
    assert code == 2 and "no column 'town'" in err and err.count("\n") == 1


def test_releases_of_one_name_in_two_folders_are_told_apart(tmp_path, capsys):
    """Found by a new user's walk-through: ``draft/r.csv`` and ``final/r.csv`` were both called
    ``r`` in the table and the notes, and the per-target table held one ``prior_r`` column for
    the two (the second overwrote the first). They are now named by their paths as given."""
    paths, targets = write_tiny(tmp_path)
    given = []
    for folder, path in zip(("draft", "final"), paths):
        (tmp_path / folder).mkdir()
        moved = tmp_path / folder / "r.csv"
        Path(path).rename(moved)
        given.append(str(moved))
    out = tmp_path / "custodian" / "per-target.csv"
    code, stdout, err = run_command(capsys, "attack", "intersection", *given, "--targets", targets, "--qi", "age,zip",
                                    "--sensitive", "dis", "--out", str(out), "--json")
    assert code == 0, err
    payload = json.loads(stdout)
    assert [r["release"] for r in payload["releases"]] == given
    columns = pl.read_csv(out).columns
    assert [c for c in columns if c.startswith(("prior_", "partition_")) and c != "prior_anonymity"] == [
        f"{kind}_{p}" for p in given for kind in ("prior", "partition")]
    assert payload["summary"]["perfect_breach"] == 0.5  # the same attack as on a.csv and b.csv


def test_unread_date_labels_are_told_to_come_with_the_schema(tmp_path, capsys):
    """Found by a new user's walk-through: a release crowdsafe published with its dates by decade
    (``2020s``), attacked without its schema, got a note saying to "rewrite them as ranges such as
    [20, 29]"; the labels are read once the schema with the column's hierarchy is given, and the
    note says so."""
    targets = pl.DataFrame({"d": ["2024-01-05", "2025-03-01", "2024-07-09", "2023-12-30"],
                            "s": ["x", "y", "x", "z"]})
    targets.write_csv(tmp_path / "targets.csv")
    (tmp_path / "rel").mkdir()
    pl.DataFrame({"d": ["2020s"] * 4, "s": ["x", "y", "x", "z"]}).write_csv(tmp_path / "rel" / "r.csv")
    (tmp_path / "schema.toml").write_text('[attributes.d]\nrole = "quasi-identifier"\ntype = "date"\n'
                                          'hierarchy = { dates = ["month", "year", "decade"] }\n'
                                          '[attributes.s]\nrole = "sensitive"\ntype = "categorical"\n',
                                          encoding="utf-8")
    args = ["attack", "intersection", str(tmp_path / "rel" / "r.csv"), "--targets", str(tmp_path / "targets.csv"),
            "--qi", "d", "--sensitive", "s"]
    code, stdout, err = run_command(capsys, *args)
    assert code == 0, err
    note = " ".join(stdout.split())
    assert "holds cells the attack cannot read, taken to cover no value (d: '2020s')" in note
    assert "give --schema with the column's hierarchy where they are its labels" in note
    code, stdout, err = run_command(capsys, *args, "--schema", str(tmp_path / "schema.toml"), "--json")
    assert code == 0, err
    release = json.loads(stdout)["releases"][0]
    assert release["located"] == 1.0 and not release.get("unread_cells")


def test_a_schema_that_declares_the_roles_stands_for_qi_and_sensitive(tmp_path, capsys):
    """Found by a new user's walk-through: ``--schema`` with every role declared was refused for
    want of ``--qi`` ("name the quasi-identifiers the attacker knows"). The schema's quasi-
    identifiers and its one sensitive attribute now stand for the options not given; the options
    given still win, and without either the refusal says both ways."""
    paths, targets = write_tiny(tmp_path)
    schema = tmp_path / "schema.toml"
    schema.write_text('[attributes.age]\nrole = "quasi-identifier"\ntype = "integer"\n'
                      '[attributes.zip]\nrole = "quasi-identifier"\ntype = "categorical"\n'
                      '[attributes.dis]\nrole = "sensitive"\ntype = "categorical"\n', encoding="utf-8")
    given = ["attack", "intersection", *paths, "--targets", targets, "--json"]
    code, stdout, err = run_command(capsys, *given, "--qi", "age,zip", "--sensitive", "dis", "--schema", str(schema))
    assert code == 0, err
    explicit = json.loads(stdout)["summary"]
    code, stdout, err = run_command(capsys, *given, "--schema", str(schema))
    assert code == 0, err
    assert json.loads(stdout)["summary"] == explicit and explicit["quasi_identifiers"] == ["age", "zip"]
    code, stdout, err = run_command(capsys, *given, "--schema", str(schema), "--qi", "age")
    assert code == 0, err
    assert json.loads(stdout)["summary"]["quasi_identifiers"] == ["age"]
    code, _, err = run_command(capsys, *given)
    assert code == 2 and "--qi a,b,c (or give a --schema that declares them)" in err
