"""A parameter mistake is refused before the data is read, alike on neighbouring tables (sweep
pb7, item 4).

A run used to read and check the table before its own parameters: a bad ε, a query that does not
parse, reversed clamp bounds, a histogram without a public domain, a scheme level the hierarchy
lacks, γ = 2 gave the parameter's error on D and a refusal of the data on D plus one row (a
missing value under ``missing='error'``, a value the declared type cannot hold, more rows than
``max_rows``): a mistyped parameter told one fact about the rows. Now every check that reads only
the parameters, the query text and the declared schema comes first, so D and D+1 give the same
error, on the command line and through the API.
"""

from __future__ import annotations

import pytest

from crowdsafe import api
from crowdsafe.cli import main
from crowdsafe.errors import CrowdsafeError
from small_schemas import AGE_SEX, EDU, ZIP

SCHEMA = AGE_SEX + ZIP + EDU + """[attributes.income]
role = "insensitive"
type = "integer"
"""
ROWS = 12
D = "age,sex,zip,edu,income\n" + "".join(
    f"{20 + 3 * i},{'FM'[i % 2]},{10115 + 2 * (i % 3)},{('HS', 'BSc')[i % 2]},{1000 + 7 * i}\n" for i in range(ROWS))
#: D+1 for the API (missing='error', and more rows than max_rows) and for the command line (a value the
#: declared integer type cannot hold)
NEIGHBOURS = {"api": D + "33,F,,HS,1200\n", "cli": D + "forty,F,10117,HS,1200\n"}

API_CASES = {
    "query epsilon": ("query", "count", {"epsilon": -1}),
    "query syntax": ("query", "cnt", {}),
    "query clamp": ("query", "sum(income) clamp 10..1", {}),
    "query histogram without a domain": ("query", "histogram zip", {"delta": 0}),
    "publish scheme level": ("publish", None, {"scheme": {"age": 9}}),
    "publish scheme preset": ("publish", None, {"scheme": "finest"}),
    "perturb gamma": ("perturb", None, {"gamma": 2}),
    "perturb d above gamma": ("perturb", None, {"gamma": 0.2, "d": 0.3}),
    "perturb max_rows": ("perturb", None, {"max_rows": 0}),
    "perturb max_view_rows": ("perturb", None, {"max_view_rows": 0}),  # (checked after the read until 2026-11-30)
}
CLI_CASES = {
    "query epsilon": ["query", "DATA", "count", "--epsilon", "-1", "--no-ledger"],
    "query syntax": ["query", "DATA", "cnt", "--epsilon", "1", "--no-ledger"],
    "query clamp": ["query", "DATA", "sum(income) clamp 10..1", "--epsilon", "1", "--no-ledger"],
    "query histogram without a domain": ["query", "DATA", "histogram zip", "--epsilon", "1", "--no-ledger"],
    "publish scheme level": ["publish", "DATA", "--epsilon", "1", "--scheme", "age=9", "--budget", "5,0.001",
                             "--out", "OUT/r.csv"],
    "perturb gamma": ["perturb", "DATA", "--attributes", "sex,edu", "--gamma", "2", "--d", "0.1",
                      "--max-rows", str(ROWS), "--out", "OUT/v.csv"],
    "perturb max view rows": ["perturb", "DATA", "--attributes", "sex,edu", "--gamma", "0.5", "--d", "0.1",
                              "--max-rows", str(ROWS), "--max-view-rows", "0", "--out", "OUT/v.csv"],
}


def _api(kind: str, path: str, schema: str, folder, text: str | None, options: dict) -> None:
    if kind == "query":
        api.query(path, text, **{"epsilon": 1, **options}, randomness=3, ledger=None, schema=schema,
                  missing="error")
    elif kind == "publish":
        api.publish(path, epsilon=1, seed=3, schema=schema, out=str(folder / "r.csv"),
                    ledger=str(folder / "l.sqlite3"), budget=(5, 1e-3), missing="error", **options)
    else:
        api.perturb(path, attributes=["sex", "edu"], seed=3, schema=schema, missing="error", ledger=None,
                    **{"gamma": 0.5, "d": 0.1, "max_rows": ROWS, **options})


def _write(tmp_path, side: str, text: str):
    folder = tmp_path / side
    folder.mkdir()
    (folder / "data.csv").write_text(text, encoding="utf-8")
    (folder / "schema.toml").write_text(SCHEMA, encoding="utf-8")
    return folder


@pytest.mark.parametrize("case", API_CASES)
def test_api_parameter_errors_do_not_depend_on_the_table(tmp_path, case):
    kind, text, options = API_CASES[case]
    errors = {}
    for side, rows in {"D": D, "D1": NEIGHBOURS["api"]}.items():
        folder = _write(tmp_path, side, rows)
        with pytest.raises(CrowdsafeError) as caught:
            _api(kind, str(folder / "data.csv"), str(folder / "schema.toml"), folder / "out", text, options)
        errors[side] = type(caught.value).__name__, str(caught.value)
    assert errors["D"] == errors["D1"]
    assert "custodian-only" not in errors["D"][1]  # the parameter's error, not a refusal of the data
    assert not (tmp_path / "D1" / "out").exists()


def test_the_neighbour_is_refused_for_its_data_with_good_parameters(tmp_path):
    """(the tests above can fail: with good parameters D+1 is refused for its rows, D is not)"""
    for side, rows in {"D": D, "D1": NEIGHBOURS["api"]}.items():
        folder = _write(tmp_path, side, rows)
        for kind, text in (("query", "count"), ("publish", None), ("perturb", None)):
            options = {"scheme": "medium"} if kind == "publish" else {}
            out = folder / f"out-{kind}"
            if side == "D":
                _api(kind, str(folder / "data.csv"), str(folder / "schema.toml"), out, text, options)
                continue
            with pytest.raises(CrowdsafeError, match="custodian-only"):
                _api(kind, str(folder / "data.csv"), str(folder / "schema.toml"), out, text, options)


@pytest.mark.parametrize("case", CLI_CASES)
def test_cli_parameter_errors_do_not_depend_on_the_table(tmp_path, capsys, monkeypatch, case):
    monkeypatch.setenv("CROWDSAFE_LEDGER", str(tmp_path / "ledger.sqlite3"))
    outcomes = {}
    for side, rows in {"D": D, "D1": NEIGHBOURS["cli"]}.items():
        folder = _write(tmp_path, side, rows)
        args = [str(folder / "data.csv") if a == "DATA" else a.replace("OUT", str(folder / "out"))
                for a in CLI_CASES[case]]
        capsys.readouterr()
        code = main([*args, "--schema", str(folder / "schema.toml"), "--seed", "3"])
        outcomes[side] = code, capsys.readouterr().err.replace(str(folder), "FOLDER")
    assert outcomes["D"] == outcomes["D1"]
    assert outcomes["D"][0] == 2 and "custodian-only" not in outcomes["D"][1]
