"""``crowdsafe anonymize``: files written atomically with their certificate, JSON, errors."""

from __future__ import annotations

import json

import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import api
from crowdsafe.errors import InputError, ParameterError, SchemaError
from crowdsafe.privacy import Certificate


@pytest.mark.parametrize("algorithm", ["mondrian", "mdav", "lattice"])
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_anonymize_writes_the_release_and_its_certificate(tmp_path, capsys, algorithm):
    out = tmp_path / "release.csv"
    code, stdout, err = run_command(capsys, "anonymize", "adult", "--algorithm", algorithm, "--k", "10",
                                    "--missing", "drop", "--suppression-limit", "0.02", "--out", str(out), "--json")
    assert code == 0, err
    payload = json.loads(stdout)
    release = pl.read_csv(out, infer_schema=False)
    custodian = payload["custodian_only"]
    assert release.height == payload["rows_published"] == 30_162 - custodian["rows_suppressed"]
    assert custodian["rows_in"] == 30_162 and custodian["notice"].startswith("CUSTODIAN ONLY")
    assert not {"rows_in", "rows_suppressed", "suppression_rate", "utility"} & set(payload)
    certificate = Certificate.read(tmp_path / "release.certificate.json")
    assert certificate.guarantee == "none"
    assert certificate.reason.startswith("data-dependent recoding (")
    assert certificate.parameters["k"] == 10
    text = certificate.to_json()
    assert "fingerprint" not in text and "seconds" not in text and "nodes_scored" not in text
    assert custodian["utility"]["gcp"] > 0
    if algorithm == "lattice":
        assert set(custodian["search"]) >= {"seconds", "nodes_scored", "suppressed_rows"}
    assert payload["written"]["certificate"].endswith("release.certificate.json")


def test_anonymize_with_l_diversity_prints_a_summary(tmp_path, capsys):
    out = tmp_path / "r.parquet"
    code, stdout, err = run_command(capsys, "anonymize", "adult", "--k", "5", "--l", "3", "--sensitive", "occupation",
                                    "--out", str(out))
    assert code == 0, err
    assert "no formal guarantee" in stdout and "GCP" in stdout
    public, _, custodian = stdout.partition("custodian only")
    assert custodian and "GCP" in custodian and "GCP" not in public and "suppressed" not in public
    assert pl.read_parquet(out).height > 0 and (tmp_path / "r.certificate.json").exists()


@pytest.mark.parametrize("argv, message", [
    (["--algorithm", "datafly"], "unknown algorithm"),
    (["--k", "0"], "k must be a whole number"),
    (["--l", "2"], "does not satisfy entropy ℓ-diversity with ℓ = 2 on 'income'"),
    (["--t", "0.1", "--sensitive", "income,race"], "one sensitive attribute"),
    (["--qi", "age,nope"], "unknown attribute 'nope'"),
    (["--algorithm", "lattice", "--loss", "fun"], "minimizes one of"),
    (["--out", "release.txt"], "cannot tell the output format"),
])
def test_bad_input_is_one_line_and_writes_nothing(tmp_path, capsys, monkeypatch, argv, message):
    monkeypatch.chdir(tmp_path)
    code, stdout, err = run_command(capsys, "anonymize", "adult", *argv)
    assert code == 2
    assert message in err and len(err.strip().splitlines()) == 1
    assert list(tmp_path.iterdir()) == []


def test_api_anonymize_writes_when_asked(tmp_path):
    release = api.anonymize("adult", algorithm="mondrian", k=20, qi=["age", "sex", "race"],
                            out=tmp_path / "x.csv")
    assert release.classes > 0 and (tmp_path / "x.certificate.json").exists()
    assert set(pl.read_csv(tmp_path / "x.csv", infer_schema=False).columns) == set(release.frame.columns)


def test_l_without_any_sensitive_attribute_is_refused():
    frame = pl.DataFrame({"age": [1, 2, 3, 4], "job": ["a", "b", "a", "b"]})
    with pytest.raises(ParameterError, match="need a sensitive attribute"):
        api.anonymize(frame, k=2, l=2)


@pytest.mark.parametrize("algorithm", ["mondrian", "mdav"])
def test_a_set_holding_the_missing_value_is_read_back(tmp_path, capsys, algorithm):
    """A CSV with empty categorical cells, kept (the default): the release shows the missing value
    as '?' inside a set (``{?, c}``), and every reader takes it back as the missing value: the
    command's own utility figures, compare and check. (It failed after the files were written.)"""
    data = tmp_path / "m.csv"
    data.write_text("age,city\n" + "".join(f"{i},{'abc'[i % 3] if i % 4 else ''}\n" for i in range(20, 60)))
    out = tmp_path / "r" / "o.csv"
    code, stdout, err = run_command(capsys, "anonymize", str(data), "--algorithm", algorithm, "--k", "4",
                                    "--out", str(out), "--json")
    assert code == 0, err
    cells = pl.read_csv(out, infer_schema=False).get_column("city")
    if algorithm == "mondrian":  # (MDAV publishes each group's mode: no set)
        assert cells.str.contains("{?, ", literal=True).any()  # the missing value is published, in a set
    assert json.loads(stdout)["custodian_only"]["utility"]
    if algorithm == "mondrian":  # (compare and check read generalizations; a centroid is no value of the original)
        code, _, err = run_command(capsys, "compare", str(data), str(out))
        assert code == 0, err
        code, _, err = run_command(capsys, "check", str(out), "--original", str(data))
        assert code == 0, err


def test_a_literal_question_mark_value_is_still_a_value(tmp_path):
    """Where the original holds the text '?' (as raw UCI Adult does), '?' is that value, not the
    missing one."""
    from crowdsafe.data.generalized import AttributeDomain, CellKind

    domain = AttributeDomain.from_values(pl.Series("c", ["?", "a", None]))
    kind, codes = domain._resolve("{?, a}")
    assert kind is CellKind.SET and domain.values.gather(codes.astype("int64")).to_list() == ["?", "a"]
    kind, codes = AttributeDomain.from_values(pl.Series("c", ["b", "a", None]))._resolve("{?, a}")
    assert kind is CellKind.SET and len(codes) == 2


def _ages_with(tmp_path, extra: str):
    data = tmp_path / "ages.csv"
    data.write_text("age,sex\n" + "".join(f"{a},{'MF'[a % 2]}\n" for a in range(20, 80)) + extra)
    return data


@pytest.mark.parametrize("algorithm", ["mondrian", "mdav", "lattice"])
def test_an_infinite_number_is_refused_in_one_line_before_anything_is_written(tmp_path, capsys, algorithm):
    """±inf in a numeric quasi-identifier has no place in a range or a centroid: one line, exit 2,
    no NumPy warning, and no table, certificate or report left (they were written, then the
    release failed to parse back)."""
    import warnings

    data = _ages_with(tmp_path, "-inf,M\ninf,F\n")
    out = tmp_path / "out" / "a.csv"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        code, _, err = run_command(capsys, "anonymize", str(data), "--k", "5", "--algorithm", algorithm,
                                   "--out", str(out))
    assert code == 2 and err.count("\n") == 1, err
    assert "column 'age' holds a value that is not a finite number (-inf, inf)" in err
    assert not [w for w in caught if issubclass(w.category, RuntimeWarning)]
    assert not out.parent.exists() or list(out.parent.iterdir()) == []


def test_a_nan_in_a_dataset_made_in_python_is_refused_too():
    """Reading turns NaN into the missing value; a Dataset built directly keeps it, and is refused."""
    from crowdsafe.classic import anonymize_dataset
    from crowdsafe.data import Dataset, load

    frame = pl.DataFrame({"age": [float(a) for a in range(20, 40)], "sex": ["F", "M"] * 10})
    dataset = Dataset(frame.with_columns(pl.col("age").replace(39.0, float("nan"))), load(frame).schema)
    with pytest.raises(SchemaError, match=r"column 'age' holds a value that is not a finite number \(NaN\)"):
        anonymize_dataset(dataset, "mondrian", 5)


def test_a_failure_after_writing_leaves_no_file(tmp_path, capsys, monkeypatch):
    """The utility figures are measured after the files are written; if that fails, the table,
    certificate and report are removed (a failed run leaves no output)."""
    from crowdsafe.anonymize.release import Release

    def broken(self):
        raise InputError("the release cannot be read back")

    monkeypatch.setattr(Release, "utility", broken)
    data = _ages_with(tmp_path, "")
    out = tmp_path / "out" / "a.csv"
    code, _, err = run_command(capsys, "anonymize", str(data), "--k", "5", "--out", str(out))
    assert code == 2 and "cannot be read back" in err
    assert list(out.parent.iterdir()) == []


def test_a_report_that_fails_takes_the_table_and_certificate_with_it(tmp_path, monkeypatch):
    import crowdsafe.report

    def broken(table_path, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(crowdsafe.report, "write_report", broken)
    out = tmp_path / "out" / "a.csv"
    with pytest.raises(OSError, match="disk full"):
        api.anonymize(_ages_with(tmp_path, ""), k=5, out=out)
    assert list(out.parent.iterdir()) == []
