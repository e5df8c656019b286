"""An estimate whose condition no value of the public domain meets says so.

``count where sex = 'Femal'`` (a misspelt value) was estimated as 0 ± 5.5 with nothing to say
that no view could ever match it (found by the API sweep). The estimate now carries a note, from
the query and the public domain alone, in the API, the printed text and the JSON; a query that
matches some domain value has none.
"""

from __future__ import annotations

import json

import numpy as np
import polars as pl

from cli_helpers import run_command
from crowdsafe import api

DOMAINS = {"age": list(range(18, 60)), "sex": ["Female", "Male"], "band": list(range(50))}


def _people() -> pl.DataFrame:
    rng = np.random.default_rng(2)
    return pl.DataFrame({"age": rng.integers(18, 60, 150), "sex": rng.choice(["Female", "Male"], 150),
                         "band": rng.integers(0, 50, 150)})


def test_a_condition_no_domain_value_meets_is_noted(tmp_path, capsys):
    perturbed = api.perturb(_people(), domains=DOMAINS, max_rows=300, missing="drop", c=2, gamma=0.3, seed=1,
                            out=tmp_path / "view.csv", report=False, ledger=None)
    misspelt, right = api.estimate(perturbed, ["count where sex = 'Femal'", "count where sex = 'Female'"])
    assert misspelt.estimate == 0.0 and misspelt.n_domain == 0
    assert len(misspelt.notes) == 1 and "public domain of 'sex'" in misspelt.notes[0]
    assert misspelt.as_dict()["notes"] == list(misspelt.notes)
    assert right.notes == () and right.as_dict()["notes"] == []
    code, printed, err = run_command(capsys, "estimate", str(tmp_path / "view.csv"), "count where sex = 'Femal'")
    assert code == 0, err
    assert "note: no value of the public domain of 'sex' meets" in " ".join(printed.split())
    code, printed, err = run_command(capsys, "estimate", str(tmp_path / "view.csv"), "count where age > 200",
                                     "--json")
    assert code == 0, err
    assert "public domain of 'age'" in json.loads(printed)["estimates"][0]["notes"][0]
