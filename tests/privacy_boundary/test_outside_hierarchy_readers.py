"""A value outside a declared hierarchy: publish publishes it as missing, and the commands that
read the original of a release read it the same way.

A sweep (pb6, item 3) found ``check RELEASE --original DATA``, ``compare`` and the attacks reading
the original (or the targets) with the plain hierarchy: on D they ran, on D plus one row holding
an education its hierarchy does not list (or an age of 120 past a hierarchy ending at 90) they
exited 2 naming the raw value, which was never published. They now read such a value as missing
(``Dataset.outside_as_missing``). The custodian's own runs that still refuse it (``check DATA``,
classic ``anonymize``) say it is a custodian-only fact.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest
from boundary_data import base_table

from crowdsafe import cli

SCHEMA = """[attributes.age]
role = "quasi-identifier"
type = "integer"
hierarchy = "age.csv"
[attributes.education]
role = "quasi-identifier"
type = "categorical"
hierarchy = "education.csv"
[attributes.sex]
role = "quasi-identifier"
type = "categorical"
[attributes.income]
role = "sensitive"
type = "categorical"
"""
KINDERGARTEN = "Kindergarten"
pytestmark = pytest.mark.slow  # half a second or more (the quick loop: README)


def _table() -> pl.DataFrame:
    return base_table().select("age", "education", "sex", "income").head(1500)


def _neighbours() -> dict[str, pl.DataFrame]:
    table = _table()
    row = table.head(1)
    return {
        "D": table,
        "education": pl.concat([table, row.with_columns(pl.lit(KINDERGARTEN).alias("education"))]),
        "age": pl.concat([table, row.with_columns(pl.lit(120, dtype=table.schema["age"]).alias("age"))]),
    }


def _write(folder: Path, frame: pl.DataFrame) -> None:
    folder.mkdir(parents=True)
    frame.write_csv(folder / "data.csv")
    (folder / "schema.toml").write_text(SCHEMA, encoding="utf-8")
    ages = "\n".join(f"{a};[{a // 10 * 10}, {a // 10 * 10 + 10});*" for a in range(0, 91))
    (folder / "age.csv").write_text(ages + "\n", encoding="utf-8")  # ends at 90, as D does
    values = sorted(_table().get_column("education").unique().to_list())  # D's values only
    (folder / "education.csv").write_text("".join(f"{v};*\n" for v in values), encoding="utf-8")


def _run(capsys, argv: list[str]) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli.main([str(a) for a in argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    made = {}
    for side, frame in _neighbours().items():
        folder = tmp_path_factory.mktemp(side)
        _write(folder / "in", frame)
        made[side] = folder / "in"
    return made


def _release(capsys, folder: Path, seed: int) -> Path:
    out = folder / f"r{seed}" / "r.csv"
    if not out.exists():
        code, _, err = _run(capsys, ["publish", folder / "data.csv", "--schema", folder / "schema.toml",
                                     "--epsilon", "1", "--delta", "1e-3", "--scheme", "coarse", "--seed", seed,
                                     "--no-ledger", "--out", out])
        assert code == 0, err
    return out


def _commands(folder: Path, release: Path, second: Path) -> dict[str, list]:
    data, schema = folder / "data.csv", folder / "schema.toml"
    return {
        "check --original": ["check", release, "--original", data, "--schema", schema, "--json"],
        "compare": ["compare", data, release, "--schema", schema, "--json"],
        "attack linkage": ["attack", "linkage", release, "--external", data, "--schema", schema,
                           "--qi", "age,education,sex", "--json"],
        "attack intersection": ["attack", "intersection", release, second, "--targets", data, "--schema", schema,
                                "--qi", "age,education", "--sensitive", "sex", "--json"],
    }


@pytest.mark.parametrize("side", ["education", "age"])
@pytest.mark.parametrize("command", ["check --original", "compare", "attack linkage", "attack intersection"])
def test_the_readers_of_an_original_run_alike_on_neighbours(capsys, folders, side, command):
    codes = {}
    for name in ("D", side):
        folder = folders[name]
        argv = _commands(folder, _release(capsys, folder, 1), _release(capsys, folder, 2))[command]
        code, out, err = _run(capsys, argv)
        assert KINDERGARTEN not in err + out and "120" not in err
        codes[name] = (code, err.replace(str(folder), "FOLDER"))
    assert codes["D"] == codes[side] and codes["D"][0] == 0


@pytest.mark.parametrize("side", ["education", "age"])
def test_the_custodians_own_runs_say_the_refusal_is_theirs(capsys, folders, side):
    folder = folders[side]
    for argv in (["check", folder / "data.csv", "--schema", folder / "schema.toml"],
                 ["anonymize", folder / "data.csv", "--algorithm", "lattice", "--schema", folder / "schema.toml",
                  "--k", "5", "--out", folder / "lattice" / "a.csv"]):
        code, _, err = _run(capsys, argv)
        assert code == 2 and "does not cover the value" in err
        assert "a custodian-only fact about the data" in err
        assert len(err.strip().splitlines()) == 1
    assert not (folder / "lattice").exists()
    code, _, err = _run(capsys, ["anonymize", folders["D"] / "data.csv", "--algorithm", "lattice", "--schema",
                                 folders["D"] / "schema.toml", "--k", "5", "--out", folders["D"] / "lattice" / "a.csv"])
    assert code == 0, err
