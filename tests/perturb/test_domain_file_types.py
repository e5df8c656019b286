"""A declared α-β domain is read as written, never converted or half-read (sweep ds5, item 1).

Before: a domain file giving ``"sex"`` twice kept the last list without a word (every real row fell
outside the domain and a view of pure noise was certified fit for release), the number 1067 for a
text column became the text "1067" (every 01067 row left out), and ``[true, false, 1]`` for an
integer column became {1, 0}. Each is now refused in one line naming the key or the column and
the value, before anything is charged."""

from __future__ import annotations

import datetime as dt
import json

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.cli import main
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.privacy.ledger import Ledger

ROWS = 60
FRAME = pl.DataFrame({
    "zip": ["01067", "10115"] * (ROWS // 2),
    "age": [20 + i % 10 for i in range(ROWS)],
    "real": [0.5 * (i % 4) for i in range(ROWS)],
    "flag": [True, False] * (ROWS // 2),
    "day": [dt.date(2024, 1, 1 + i % 5) for i in range(ROWS)],
})
GOOD = {"zip": ["01067", "10115"], "age": list(range(20, 30)), "real": [0.0, 0.5, 1.0, 1.5, "inf"],
        "flag": [True, False], "day": [f"2024-01-0{d}" for d in range(1, 6)]}


def _perturb(domains, ledger=None, **more):
    return api.perturb(FRAME, domains=domains, max_rows=1000, gamma=0.5, c=0.2, seed=1, ledger=ledger, **more)


def test_values_of_the_columns_types_are_taken():
    view = _perturb(GOOD, missing="drop")
    domain = view.view.certificate.to_dict()["parameters"]["domain"]
    assert domain["zip"]["values"] == ["01067", "10115"]
    assert domain["age"]["values"] == list(range(20, 30))
    assert domain["real"]["values"] == [0.0, 0.5, 1.0, 1.5, float("inf")]
    assert domain["flag"]["values"] == [True, False]
    assert domain["day"]["values"][:2] == ["2024-01-01", "2024-01-02"]


@pytest.mark.parametrize(("column", "value", "says"), [
    ("zip", 1067, 'is a number, but the column is text (String): write it as a string in quotes, keeping any '
                  'leading zeros the data has ("01067", not 1067)'),
    ("zip", True, "is a boolean, but the column is text"),
    ("zip", 1.5, "is a number, but the column is text"),
    ("age", True, "is a boolean, but the column holds numbers (Int64)"),
    ("age", False, "is a boolean, but the column holds numbers (Int64)"),
    ("age", "25", "is text, but the column holds numbers (Int64): write the number itself, without quotes"),
    ("real", "1.5", "is text, but the column holds numbers (Float64)"),
    ("real", True, "is a boolean, but the column holds numbers (Float64)"),
    ("flag", 1, "is not true or false, but the column is Boolean"),
    ("flag", "true", "is not true or false"),
    ("day", 19723, "is not an ISO date (YYYY-MM-DD): write every value of a Date column as ISO text"),
])
def test_a_value_of_another_type_is_refused_naming_the_column_and_the_value(tmp_path, column, value, says):
    domains = {**GOOD, column: [*GOOD[column][:1], value]}
    with Ledger(tmp_path / "ledger.sqlite3") as book:
        with pytest.raises(ParameterError) as raised:
            _perturb(domains, ledger=book, budget=(100.0, 0.0), name="people")
        assert book.entries() == []  # refused before anything was charged
    message = str(raised.value)
    assert message.startswith(f"the declared domain of '{column}': {value!r} ") and says in message
    assert "\n" not in message


def test_a_domain_file_that_gives_a_key_twice_is_refused_naming_it(tmp_path, capsys):
    data = tmp_path / "data.csv"
    FRAME.select("zip", "age").write_csv(data)
    listed = json.dumps(GOOD["age"])
    domains = tmp_path / "dom.json"
    domains.write_text(f'{{"age": {listed}, "zip": ["01067", "10115"], "zip": ["X"]}}')
    out = tmp_path / "v" / "view.csv"
    code = main(["perturb", "--no-ledger", str(data), "--domains", str(domains), "--max-rows", "1000", "--c", "0.2",
                 "--gamma", "0.5",
                 "--seed", "1", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.parent.exists()
    assert err == (f"crowdsafe: error: the domain file {domains} gives 'zip' twice (a JSON reader would keep the "
                   "last one without a word); give each attribute once")


def test_a_domain_file_with_a_number_for_a_text_column_is_refused(tmp_path, capsys):
    data = tmp_path / "data.csv"
    FRAME.select("zip", "age").write_csv(data)
    schema = tmp_path / "s.toml"
    schema.write_text('[attributes.zip]\ntype = "categorical"\n[attributes.age]\ntype = "integer"\n')
    domains = tmp_path / "dom.json"
    domains.write_text(json.dumps({"age": GOOD["age"], "zip": [1067, 10115]}))
    out = tmp_path / "v" / "view.csv"
    code = main(["perturb",
                 "--no-ledger", str(data), "--schema", str(schema), "--domains", str(domains), "--max-rows", "1000",
                 "--c", "0.2", "--gamma", "0.5", "--seed", "1", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.parent.exists() and len(err.splitlines()) == 1
    assert err.startswith("crowdsafe: error: the declared domain of 'zip': 1067 is a number, but the column is text")


def test_repeated_keys_are_refused_inside_lists_too():
    from crowdsafe.perturb.declared_values import refusing_repeated_keys

    with pytest.raises(InputError, match="gives 'a' twice"):
        json.loads('{"x": [{"a": 1, "a": 2}]}', object_pairs_hook=refusing_repeated_keys("f.json"))
    read = json.loads('{"x": [1], "y": [2]}', object_pairs_hook=refusing_repeated_keys("f.json"))
    assert read == {"x": [1], "y": [2]}


def test_a_date_domain_of_numbers_only_is_refused():
    # before: read as days since 1970 without a word
    with pytest.raises(ParameterError, match=r"'day': 19723 is not an ISO date"):
        _perturb({**GOOD, "day": [19723, 19724]})


def test_a_domain_file_with_a_byte_order_mark_is_read(tmp_path, capsys):
    """Windows Notepad saves UTF-8 with a byte-order mark; data, schema and hierarchy files with one
    are read, and so is a domain file (intlsweep #6: "Unexpected UTF-8 BOM")."""
    data = tmp_path / "data.csv"
    FRAME.select("zip", "age").write_csv(data)
    schema = tmp_path / "s.toml"
    schema.write_text('[attributes.zip]\ntype = "categorical"\n[attributes.age]\ntype = "integer"\n')
    domains = tmp_path / "dom.json"
    domains.write_bytes(b"\xef\xbb\xbf" + json.dumps({"age": GOOD["age"], "zip": GOOD["zip"]}).encode())
    out = tmp_path / "v" / "view.csv"
    code = main(["perturb", str(data), "--schema", str(schema), "--domains", str(domains), "--max-rows", "1000",
                 "--c", "0.2", "--gamma", "0.5", "--seed", "1", "--out", str(out), "--ledger", str(tmp_path / "l"),
                 "--budget", "5,1e-4"])
    err = capsys.readouterr().err
    assert code == 0, err
    assert out.exists()
