"""An exploratory α-β run's refusals that quote a figure computed from N or m read from the data
say it is custodian-only (sweep pb7, item 3).

With ``--c`` the prior bound is d = c·N/m, and without ``--max-rows`` or a public domain N and m
are read from the data; one row (a new age and zip) moves them. So "d = ... must be below gamma"
and "the view would hold about ... rows" told something about the rows, unlabelled, where the
plan labels N and m custodian-only. On D and D plus one row (same seed) each outcome is a run or
a refusal ending with the custodian-only label.
"""

from __future__ import annotations

import pytest

from crowdsafe.cli import main

SCHEMA = """[attributes.age]
type = "integer"
[attributes.sex]
type = "categorical"
order = ["F", "M"]
[attributes.zip]
type = "categorical"
[attributes.edu]
role = "sensitive"
type = "categorical"
order = ["HS", "BSc", "MSc"]
"""
LABEL = ("(a custodian-only fact about the data: computed from N or m read from the data (exploratory); "
         "keep this message to the custodian)")
D = "age,sex,zip,edu\n" + "".join(
    f"{20 + (7 * i) % 45},{'FM'[i % 2]},{10115 + 2 * (i % 3)},{('HS', 'BSc', 'MSc')[i % 3]}\n" for i in range(60))
CASES = {
    "d from c": ["--gamma", "0.5", "--c", "15", "--plan-only"],
    "view size": ["--gamma", "0.5", "--d", "0.2", "--max-view-rows", "10"],
}


@pytest.mark.parametrize("case", CASES)
def test_refusals_from_sizes_read_from_the_data_are_labelled(tmp_path, capsys, case):
    (tmp_path / "schema.toml").write_text(SCHEMA, encoding="utf-8")
    outcomes = {}
    for side, text in {"D": D, "D1": D + "99,F,99999,HS\n"}.items():
        (tmp_path / f"{side}.csv").write_text(text, encoding="utf-8")
        capsys.readouterr()
        code = main(["perturb", "--no-ledger", str(tmp_path / f"{side}.csv"), "--schema", str(tmp_path / "schema.toml"),
                     "--attributes", "sex,edu,zip,age", "--exploratory", "--seed", "3",
                     "--out", str(tmp_path / side / "v.csv"), *CASES[case]])
        outcomes[side] = code, capsys.readouterr().err.strip()
    assert outcomes["D"] != outcomes["D1"]  # the sizes differ: the outcome does too
    refused = [err for code, err in outcomes.values() if code]
    assert refused, outcomes
    for err in refused:
        assert len(err.splitlines()) == 1 and err.endswith(LABEL), err
