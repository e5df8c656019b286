"""``crowdsafe check`` and ``crowdsafe datasets`` through the API and the command line,
including every error case of the data layer: one line on stderr, exit 2, no traceback."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter

import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import api
from crowdsafe.data import Schema, intervals, load
from crowdsafe.errors import CrowdsafeError, HierarchyError, InputError, ParameterError, SchemaError


def test_check_adult_json_matches_an_independent_count(capsys):
    code, out, err = run_command(capsys, "check", "adult", "--json")
    assert code == 0, err
    report = json.loads(out)
    frame = load("adult").frame
    qis = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]
    counts = Counter(frame.select(qis).iter_rows())
    assert report["rows"] == 32_561
    assert report["quasi_identifiers"] == qis
    assert report["k"] == min(counts.values())
    assert report["distinct_quasi_identifier_tuples"] == len(counts)
    assert report["sample_uniques"] == sum(1 for c in counts.values() if c == 1)
    assert sum(b["rows"] for b in report["class_sizes"]) == 32_561
    assert report["missing"]["policy"] == "keep"
    assert {a["name"]: a["role"] for a in report["attributes"]}["income"] == "sensitive"


def test_check_with_roles_and_missing_drop(capsys):
    code, out, _ = run_command(capsys, "check", "adult", "--qi", "sex,race", "--sensitive", "income",
                               "--missing", "drop", "--json")
    report = json.loads(out)
    assert code == 0
    assert report["rows"] == 30_162
    assert report["missing"]["rows_dropped"] == 2_399
    assert report["quasi_identifiers"] == ["race", "sex"]  # schema order
    counts = Counter(load("adult", missing="drop").frame.select("race", "sex").iter_rows())
    assert report["k"] == min(counts.values())


def test_check_human_output_states_k_policy_and_inferred_schema(capsys, tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\n1,x\n1,x\n2,y\n2,\n")
    code, out, _ = run_command(capsys, "check", str(path))
    assert code == 0
    assert "k = 1" in out
    assert "missing values: keep" in out
    assert "schema inferred" in out
    report = api.check(path)
    assert report.k == 1 and report.classes["groups"] == 3 and report.sample_uniques == 2


def test_check_with_schema_file(capsys, tmp_path):
    data = tmp_path / "t.csv"
    data.write_text("zip,age,disease\n02139,30,flu\n02139,30,cold\n02138,41,flu\n02138,41,flu\n")
    schema = tmp_path / "s.toml"
    schema.write_text(
        '[attributes.zip]\ntype = "categorical"\nhierarchy = { mask = 2 }\n'
        '[attributes.age]\ntype = "numeric"\n[attributes.disease]\nrole = "sensitive"\ntype = "categorical"\n'
    )
    code, out, err = run_command(capsys, "check", str(data), "--schema", str(schema), "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["k"] == 2 and report["sensitive"] == ["disease"]
    assert {a["name"]: a["hierarchy_levels"] for a in report["attributes"]}["zip"] == 3


def test_datasets_list_and_export(capsys, tmp_path):
    code, out, _ = run_command(capsys, "datasets", "list", "--json")
    assert code == 0 and [d["name"] for d in json.loads(out)] == ["adult", "adult-test", "adult-all", "people",
                                                                 "german-customers"]
    target = tmp_path / "out.csv"
    code, out, _ = run_command(capsys, "datasets", "export", "adult", str(target))
    assert code == 0 and "32,561 rows" in out
    exported = pl.read_csv(target)
    assert exported.height == 32_561 and exported.columns[0] == "age"
    code, _, _ = run_command(capsys, "datasets", "export", "adult-all", str(tmp_path / "a.parquet"), "--missing",
                             "drop")
    assert code == 0 and pl.read_parquet(tmp_path / "a.parquet").height == 45_222
    code, out, _ = run_command(capsys, "datasets", "synthetic", "5000", str(tmp_path / "s.parquet"), "--seed", "3",
                               "--json")
    assert code == 0 and json.loads(out)["rows"] == 5000
    assert load(tmp_path / "s.parquet").n_rows == 5000


def test_every_command_has_help_with_an_example(capsys):
    for argv in (["check"], ["datasets", "list"], ["datasets", "export"], ["datasets", "synthetic"]):
        code, out, _ = run_command(capsys, *argv, "--help")
        assert code == 0 and "Example: crowdsafe" in out and "--json" in out


# -- error cases: the same problem through the API and the CLI ---------------------------

def _files(tmp_path):
    (tmp_path / "empty.csv").write_text("")
    (tmp_path / "header.csv").write_text("age,sex\n")
    (tmp_path / "data.csv").write_text("age,sex\n39,M\n50,F\n")
    (tmp_path / "bad_number.csv").write_text("age,sex\n39,M\nforty,F\n")
    (tmp_path / "latin.csv").write_bytes("name,city\nJosé,Malmö\n".encode("latin-1"))
    (tmp_path / "one.csv").write_text("age,sex\n39,M\n")
    (tmp_path / "numeric.toml").write_text(
        '[attributes.age]\ntype = "numeric"\n[attributes.sex]\ntype = "categorical"\n')
    (tmp_path / "absent.toml").write_text('[attributes.age]\ntype = "numeric"\n[attributes.salary]\ntype = "numeric"\n')
    (tmp_path / "age.csv").write_text("39;[30, 40);*\n")  # misses 50
    (tmp_path / "hier.toml").write_text(
        f'[attributes.age]\ntype = "numeric"\nhierarchy = "{tmp_path / "age.csv"}"\n'
        '[attributes.sex]\ntype = "categorical"\n'
    )


ERROR_CASES = [
    # (files, extra CLI args, error class, message fragment)
    ("nope.csv", [], InputError, "file not found"),
    ("empty.csv", [], InputError, "is empty"),
    ("data.csv", ["--schema", "absent.toml"], SchemaError,
     "column 'salary' is named in the schema but not in the data"),
    ("bad_number.csv", ["--schema", "numeric.toml"], SchemaError, "declared numeric but row 2"),
    ("data.csv", ["--schema", "hier.toml"], HierarchyError, "does not cover the value '50' of column 'age'"),
    ("latin.csv", [], InputError, "not UTF-8"),
    ("data.csv", ["--qi", "salary"], SchemaError, "unknown attribute 'salary'"),
    ("data.csv", ["--missing", "sometimes"], ParameterError, "unknown missing-value policy"),
]


@pytest.mark.parametrize("file_name, extra, error, fragment", ERROR_CASES)
def test_error_cases_api_and_cli(tmp_path, capsys, file_name, extra, error, fragment):
    _files(tmp_path)
    path = tmp_path / file_name
    options = dict(zip(extra[::2], extra[1::2]))
    kwargs = {}
    if "--schema" in options:
        kwargs["schema"] = tmp_path / options["--schema"]
    if "--qi" in options:
        kwargs["qi"] = options["--qi"].split(",")
    if "--missing" in options:
        kwargs["missing"] = options["--missing"]
    with pytest.raises(error, match=fragment.replace("(", "\\(").replace("[", "\\[")):
        api.check(path, **kwargs)
    argv = ["check", str(path)]
    for key, value in options.items():
        argv += [key, str(tmp_path / value) if key == "--schema" else value]
    code, out, err = run_command(capsys, *argv)
    assert code == 2
    assert err.count("\n") == 1 and err.startswith("crowdsafe: error: ")
    assert fragment in err
    assert "Traceback" not in err and out == ""


def test_hierarchy_missing_a_value_through_the_api_with_objects(tmp_path):
    _files(tmp_path)
    with pytest.raises(HierarchyError, match="does not cover the value '50'"):
        api.check(load(tmp_path / "data.csv", hierarchies={"age": intervals("age", range(30, 45), widths=[5])}))


def test_one_row_file_is_reported_not_refused(tmp_path, capsys):
    _files(tmp_path)
    report = api.check(tmp_path / "one.csv")
    assert report.rows == 1 and report.k == 1 and report.sample_uniques == 1
    code, out, _ = run_command(capsys, "check", str(tmp_path / "one.csv"))
    assert code == 0 and "single row" in out


def test_no_quasi_identifiers_is_a_parameter_error(tmp_path, capsys):
    _files(tmp_path)
    schema = Schema.of({"age": "numeric", "sex": "categorical"}).with_roles(qi=[], sensitive="sex")
    with pytest.raises(ParameterError, match="no quasi-identifiers"):
        api.check(tmp_path / "data.csv", schema=schema)


def test_export_to_a_bad_name_writes_nothing(tmp_path, capsys):
    code, _, err = run_command(capsys, "datasets", "export", "adult", str(tmp_path / "out.xlsx"))
    assert code == 2 and "output format" in err
    assert list(tmp_path.iterdir()) == []
    code, _, err = run_command(capsys, "datasets", "export", "nope", str(tmp_path / "out.csv"))
    assert code == 2 and "no bundled dataset named 'nope'" in err


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_console_script_reports_errors_without_traceback(tmp_path):
    done = subprocess.run([sys.executable, "-m", "crowdsafe", "check", str(tmp_path / "missing.csv")],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 2
    assert done.stderr.startswith("crowdsafe: error: file not found")
    assert "Traceback" not in done.stderr and done.stderr.count("\n") == 1


def test_all_error_classes_are_crowdsafe_errors():
    for _, _, error, _ in ERROR_CASES:
        assert issubclass(error, CrowdsafeError)
