"""Another tool's mark of a suppressed cell (``--suppressed NA``): read as ``*``.

sdcMicro's local suppression writes ``NA`` in a quasi-identifier cell. Read as a value, it covers
none of the targets' values, so the classes holding it locate nobody and the attack reports
contradictions and false breaches (found by a black-box sweep: 18.7% perfect breaches, a third
of them wrong, where the same release written with ``*`` gives none). Named with
``--suppressed``, those cells are read as ``*`` and the attack gives the ``*`` release's numbers.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.cli import main

ROWS = 300


def _releases(tmp_path, mark: str) -> list[str]:
    """Two releases of overlapping people, every 5th age and every 7th zip suppressed as ``mark``."""
    rng = np.random.default_rng(3)
    paths = []
    for j in range(2):
        age = rng.integers(20, 70, ROWS)
        frame = pl.DataFrame({
            "age": [f"[{a // 10 * 10}, {a // 10 * 10 + 9}]" for a in age],
            "zip": [f"{z}*" for z in rng.choice(["1300", "1301", "1485"], ROWS)],
            "disease": rng.choice(["flu", "cold", "hiv", "cancer", "asthma"], ROWS),
        }).with_row_index("i").with_columns(
            pl.when(pl.col("i") % 5 == j).then(pl.lit(mark)).otherwise(pl.col("age")).alias("age"),
            pl.when(pl.col("i") % 7 == j).then(pl.lit(mark)).otherwise(pl.col("zip")).alias("zip"),
        ).drop("i")
        paths.append(tmp_path / f"{mark or 'empty'}{j}.csv")
        frame.write_csv(paths[-1])
    return [str(p) for p in paths]


@pytest.fixture(scope="module")
def targets(tmp_path_factory) -> str:
    rng = np.random.default_rng(4)
    path = tmp_path_factory.mktemp("targets") / "t.csv"
    pl.DataFrame({"age": rng.integers(20, 70, 200), "zip": rng.choice(["13001", "13012", "14853"], 200),
                  "disease": rng.choice(["flu", "cold", "hiv", "cancer", "asthma"], 200)}).write_csv(path)
    return str(path)


def _summary(releases, targets, **options):
    return api.attack(releases, targets, qi=["age", "zip"], sensitive="disease", **options).summary


@pytest.mark.parametrize("mark", ["NA", "?", ""])
def test_a_suppression_mark_reads_as_a_star(tmp_path, targets, mark):
    star = _summary(_releases(tmp_path, "*"), targets)
    marked = _releases(tmp_path, mark)
    assert _summary(marked, targets, suppressed=[mark]) == star
    unmarked = _summary(marked, targets)  # the broken reading: the mark is a value covering nothing
    assert unmarked["average_prior_anonymity"] < star["average_prior_anonymity"]  # classes left out: fewer values


def test_the_command_line_option_and_its_note(tmp_path, targets, capsys):
    marked = _releases(tmp_path, "NA")
    command = ["attack", "intersection", *marked, "--targets", targets, "--qi", "age,zip", "--sensitive", "disease"]
    assert main([*command, "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["releases"][0]["unread_cells"] == "age: 'NA'"  # named, with the fix in the note's text
    assert main(command) == 0
    assert "--suppressed NA" in " ".join(capsys.readouterr().out.split())
    assert main([*command, "--json", "--suppressed", "NA"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["summary"] == _summary(_releases(tmp_path, "*"), targets)
    assert payload["releases"][0]["unread_cells"] is None
    assert main(["attack", "linkage", marked[0], "--external", targets, "--qi", "age,zip", "--suppressed", "NA",
                 "--json"]) == 0
    linked = json.loads(capsys.readouterr().out)["summary"]
    star = api.attack([_releases(tmp_path, "*")[0]], targets, qi=["age", "zip"], kind="linkage").summary
    assert linked == star
