import polars as pl
import pytest

from crowdsafe.engines.spark.io import read_frame
from crowdsafe.errors import InputError

pytestmark = pytest.mark.spark


def test_reads_csv_and_parquet_alike(spark, tmp_path):
    table = pl.DataFrame({"age": ["30", "41", None], "sex": ["F", "?", "M"]})
    table.write_csv(tmp_path / "t.csv")
    table.write_parquet(tmp_path / "t.parquet")
    from_csv = read_frame(spark, str(tmp_path / "t.csv")).collect()
    from_parquet = read_frame(spark, str(tmp_path / "t.parquet"), columns=["sex"]).collect()
    assert [r["sex"] for r in from_csv] == ["F", None, "M"]  # "?" is a missing token
    assert [r["age"] for r in from_csv] == ["30", "41", None]
    assert [r["sex"] for r in from_parquet] == ["F", "?", "M"]
    with pytest.raises(InputError, match="no column 'zip'"):
        read_frame(spark, str(tmp_path / "t.parquet"), columns=["zip"])
    with pytest.raises(InputError, match="file not found: .*absent.parquet$"):  # as the Polars engine says it
        read_frame(spark, str(tmp_path / "absent.parquet"))


def test_a_folder_that_is_no_parquet_table_is_one_line_of_input_error_as_on_polars(spark, tmp_path, capsys):
    """A folder (or a *.parquet file) that holds no Parquet was an internal error (exit 1, a
    Py4JJavaError quoted) where the Polars engine refuses the input in one line (exit 2)."""
    from crowdsafe import cli

    folder = tmp_path / "notes"
    folder.mkdir()
    (folder / "x.txt").write_text("hello\n")
    (tmp_path / "fake.parquet").write_text("not parquet\n")
    for path in (folder, tmp_path / "fake.parquet"):
        code = cli.main(["query", str(path), "count", "--epsilon", "0.1", "--engine", "spark", "--no-ledger"])
        err = [line for line in capsys.readouterr().err.splitlines() if line.startswith("crowdsafe")]
        assert code == 2 and len(err) == 1 and err[0].startswith(f"crowdsafe: error: Spark cannot read {path}: "), err
        assert "Py4J" not in err[0] and "internal error" not in err[0]


def test_csv_column_names_are_renamed_as_on_the_polars_engine(spark, tmp_path, capsys):
    """A repeated or empty header gets the stable names of crowdsafe.data.column_names, not
    Spark's own (``charge1``/``charge3``, ``_c2``), so one schema file fits both engines."""
    from crowdsafe.data.io import read_table

    path = tmp_path / "people.csv"
    path.write_text("charge,Age,,charge, sex \nrobbery,30,x,theft,F\nfraud,41,y,,M\n")
    polars_names = read_table(path).columns
    capsys.readouterr()
    frame = read_frame(spark, str(path))
    assert frame.columns == polars_names == ["charge", "Age", "column_3", "charge_2", "sex"]
    assert "column names renamed" in capsys.readouterr().err
    assert [r["charge_2"] for r in frame.collect()] == ["theft", None]
    folder = tmp_path / "parts.csv"  # a folder of part files, each with the header
    folder.mkdir()
    for i in range(2):
        (folder / f"part-{i}.csv").write_text("charge,charge\nrobbery,theft\n")
    assert read_frame(spark, str(folder)).columns == ["charge", "charge_2"]
    assert read_frame(spark, str(folder)).count() == 2


def test_a_drafted_schema_publishes_the_renamed_table_on_spark(spark, tmp_path, capsys, monkeypatch):
    """The schema draft (read by Polars) names ``charge_2``; a Spark publish with that schema
    finds the column and drops every drafted identifier."""
    import polars as pl

    from cli_helpers import run_command
    from crowdsafe.datasets.people import write_people_csv

    # 100 rows draft the same schema as 3000 (every role, type and hierarchy), and each distinct
    # value costs the Spark table pass a literal in its lookup (3000 rows took 14 s, mostly those)
    write_people_csv(tmp_path / "people.csv", n=100, duplicate_header=True)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_command(capsys, "schema", "draft", "people.csv", "--out", "people.toml")
    assert code == 0, err
    assert "[attributes.charge_2]" in (tmp_path / "people.toml").read_text()
    code, _, err = run_command(capsys, "publish", "people.csv", "--schema", "people.toml", "--engine", "spark",
                               "--epsilon", "1", "--delta", "1e-3", "--no-ledger", "--seed", "3",
                               "--no-report", "--out", "release.csv")
    assert code == 0, err
    release = pl.concat([pl.read_csv(p, infer_schema=False) for p in sorted((tmp_path / "release.csv").glob("*.csv"))]
                        ) if (tmp_path / "release.csv").is_dir() else pl.read_csv(tmp_path / "release.csv",
                                                                                 infer_schema=False)
    assert "charge_2" in release.columns
    drafted = {"id", "first_name", "last_name", "email", "phone", "date_of_birth", "case_number"}
    assert not drafted & set(release.columns)


def test_paths_are_literal_on_spark(spark, tmp_path):
    """A name with glob characters is that file or folder on Spark too (issue 33, point 4)."""
    for name, decoy in (("data[1].csv", "data1.csv"), ("a*b.csv", "aXb.csv"), ("what?.csv", "whatX.csv")):
        (tmp_path / name).write_text("age,sex\n30,F\n41,M\n52,F\n")
        (tmp_path / decoy).write_text("age,sex\n99,M\n")
        assert [r["age"] for r in read_frame(spark, str(tmp_path / name)).collect()] == ["30", "41", "52"]
    parts = tmp_path / "runs[1]**"
    parts.mkdir()
    pl.DataFrame({"age": [30, 41]}).write_parquet(parts / "part-0.parquet")
    assert sorted(r["age"] for r in read_frame(spark, str(parts)).collect()) == [30, 41]


def test_unusable_columns_and_decimal_commas_on_spark(spark, tmp_path, capsys):
    """A nested column is refused when the run uses it and dropped with a note otherwise, as on the
    Polars engine; a decimal comma asked for is refused (Spark reads decimal points only)."""
    from crowdsafe.data import Schema
    from crowdsafe.engines.spark.table import spark_table
    from crowdsafe.errors import ParameterError, SchemaError

    path = tmp_path / "nested.parquet"
    pl.DataFrame({"age": [30, 41, 30], "sex": ["F", "M", "M"]}).with_columns(
        tags=pl.concat_list("age", "age")).write_parquet(path)
    with pytest.raises(SchemaError, match="column 'tags' of .* is a list \\(nested\\) column"):
        spark_table(spark, str(path))
    table = spark_table(spark, str(path), qi=["age", "sex"])
    assert table.frame.columns == ["age", "sex"]
    assert "column 'tags' of" in capsys.readouterr().err
    (tmp_path / "t.csv").write_text("age,sex\n30,F\n")
    with pytest.raises(ParameterError, match="decimal point only"):
        spark_table(spark, str(tmp_path / "t.csv"), schema=Schema.reading(None, decimal_comma=True))


@pytest.mark.parametrize("first_rows", [2, 1_000])
def test_first_values_of_the_other_columns(spark, monkeypatch, first_rows):
    """Each unpublished column gets one of its values for the domain's types: from the first rows
    when one is there, else (a column null in all of them: the first rows patched down to 2) from a
    pass over the table; a column with no value at all gets the null value. (A name with a dot is
    a column's, not a field of a struct.)"""
    from crowdsafe.engines.spark import table

    monkeypatch.setattr(table, "FIRST_ROWS", first_rows)
    rows = pl.DataFrame({"early": ["x", "y", "z", "w"], "late.x": [None, None, None, 7],
                         "never": pl.Series([None] * 4, dtype=pl.String)})
    frame = spark.createDataFrame(rows.to_arrow()).coalesce(1)  # one partition: the rows in this order
    found = table.first_values(frame, ["early", "late.x", "never"])
    assert {c: s.to_list() for c, s in found.items()} == {"early": ["x"], "late.x": [7], "never": [None]}
    assert [s.name for s in found.values()] == ["early", "late.x", "never"]
    assert table.first_values(frame, []) == {}


@pytest.mark.parametrize("separator", [";", "\t", "|", ","])
def test_the_separator_is_found_as_on_the_polars_engine(spark, tmp_path, separator):
    """A ';'-separated file (a spreadsheet's CSV in much of Europe, ARX's releases) read as one
    column 'age;sex' on Spark before; now its separator is found from the header, as the Polars
    engine finds it, for a file, a gzip file and a folder of parts."""
    import gzip

    from crowdsafe.data.io import read_table

    text = f"age{separator}sex\n30{separator}F\n41{separator}M\n"
    path = tmp_path / "t.csv"
    path.write_text(text, encoding="utf-8")
    packed = tmp_path / "t.csv.gz"
    packed.write_bytes(gzip.compress(text.encode()))
    folder = tmp_path / "parts.csv"
    folder.mkdir()
    (folder / "part-0.csv").write_text(text, encoding="utf-8")
    assert read_table(path).columns == ["age", "sex"]
    for where in (path, packed, folder):
        frame = read_frame(spark, str(where))
        assert frame.columns == ["age", "sex"]
        assert sorted((r["age"], r["sex"]) for r in frame.collect()) == [("30", "F"), ("41", "M")]


def _attacks_on_both_engines(tmp_path, rows: str, engines=("polars", "spark"), **options):
    """The intersection attack of two ';'-separated releases (``rows``: their lines after the
    header, ``{other}`` the second sensitive value of each) on each of ``engines``."""
    from crowdsafe import api

    paths = []
    for name, other in (("r1.csv", "cold"), ("r2.csv", "hiv")):
        paths.append(tmp_path / name)
        paths[-1].write_text("age;zip;disease\n" + rows.format(other=other), encoding="utf-8")
    targets = tmp_path / "t.csv"
    targets.write_text("age,zip,disease\n25,13053,flu\n35,14850,cancer\n", encoding="utf-8")
    return [api.attack([str(p) for p in paths], str(targets), qi=["age", "zip"], sensitive="disease", engine=engine,
                       **options) for engine in engines]


def test_an_arx_release_is_attacked_alike_on_both_engines(spark, tmp_path):
    runs = _attacks_on_both_engines(
        tmp_path, "[20, 30[;130**;flu\n[20, 30[;130**;{other}\n]30, 40];148**;cancer\n]30, 40];148**;{other}\n")
    assert runs[0].summary == runs[1].summary
    assert runs[0].summary["perfect_breach"] == 1.0


@pytest.mark.parametrize(("late", "polars_type"), [("n/a", pl.String), ("40.5", pl.Float64), ("41", pl.Int64)])
def test_a_late_value_widens_an_inferred_type_as_on_the_polars_engine(spark, tmp_path, late, polars_type):
    """Found by a neighbouring-table audit: a value past the first 10,000 rows that the type
    inferred from them could not hold was a refusal on Spark quoting the value (the Polars engine
    infers from every row then and answers): one row decided whether the run answered. Now the
    column is widened as Polars widens it; a declared type still refuses, labelled custodian-only."""
    from crowdsafe.data import load
    from crowdsafe.engines.spark.typed_table import HEAD_ROWS, load_table
    from crowdsafe.errors import SchemaError

    rows = HEAD_ROWS + 200
    ages = [str(20 + i % 50) for i in range(rows)]
    ages[HEAD_ROWS + 100] = late
    path = tmp_path / "t.csv"
    pl.DataFrame({"age": ages, "sex": ["F", "M"] * (rows // 2)}).write_csv(path)
    table = load_table(spark, str(path))
    assert table.dataset.frame.schema["age"] == load(path).frame.schema["age"] == polars_type
    assert table.frame.count() == rows
    if polars_type is pl.Int64:
        return
    schema = tmp_path / "s.toml"
    schema.write_text('[attributes.age]\ntype = "integer"\n[attributes.sex]\ntype = "categorical"\n', encoding="utf-8")
    with pytest.raises(SchemaError, match=rf"column 'age' is declared .* holds '{late}'; a custodian-only fact"):
        load_table(spark, str(path), schema=str(schema))


def test_suppression_marks_read_alike_on_both_engines(spark, tmp_path):
    rows = "[20, 29];130**;flu\n[20, 29];NA;{other}\nNA;148**;cancer\n[30, 39];148**;{other}\n"
    marked = _attacks_on_both_engines(tmp_path, rows, suppressed=["NA"])
    assert marked[0].summary == marked[1].summary
    unmarked = _attacks_on_both_engines(tmp_path, rows, engines=("polars",))[0]  # NA: a value covering nothing
    assert unmarked.summary != marked[0].summary
