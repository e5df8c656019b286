"""Loading and writing: CSV, Parquet, pandas and Polars frames; missing values; fingerprints."""

from __future__ import annotations

import gzip
import subprocess
import sys

import numpy as np
import pandas as pd
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data import Dataset, MissingPolicy, Schema, intervals, load, write
from crowdsafe.data.text_csv import read_text_csv
from crowdsafe.errors import HierarchyError, InputError, ParameterError, SchemaError

CSV = "age,sex,zip,income\n39,Male,02139,<=50K\n50,Female,02138,>50K\n38,Male,02139,<=50K\n"


@pytest.fixture
def csv_path(tmp_path):
    path = tmp_path / "people.csv"
    path.write_text(CSV)
    return path


def test_csv_load_infers_schema_and_keeps_text(csv_path):
    data = load(csv_path)
    assert isinstance(data, Dataset)
    assert data.n_rows == 3 and data.columns == ["age", "sex", "zip", "income"]
    assert data.quasi_identifiers == ["age", "sex", "zip", "income"]
    assert data.schema.source == "inferred"
    assert data.frame.get_column("age").dtype.is_integer()
    assert data.missing.policy is MissingPolicy.KEEP


def test_declared_categorical_keeps_leading_zeros(tmp_path, csv_path):
    schema = Schema.of({"age": "numeric", "sex": "categorical", "zip": "categorical", "income": "categorical"},
                       sensitive="income")
    data = load(csv_path, schema=schema)
    assert data.frame.get_column("zip").to_list() == ["02139", "02138", "02139"]
    assert data.sensitive == ["income"]


def test_roles_from_arguments(csv_path):
    data = load(csv_path, qi=["age", "sex"], sensitive="income")
    assert data.quasi_identifiers == ["age", "sex"]
    assert data.sensitive == ["income"]
    assert data.schema["zip"].role.value == "insensitive"


def test_semicolon_and_comma_space_separated_files(tmp_path):
    semi = tmp_path / "s.csv"
    semi.write_text("a;b\n1;x\n2;y\n")
    assert load(semi).frame.rows() == [(1, "x"), (2, "y")]
    spaced = tmp_path / "adultlike.csv"
    spaced.write_text("age, sex\n39, Male\n50, Female\n")
    frame = load(spaced).frame
    assert frame.get_column("age").dtype.is_integer()
    assert frame.get_column("sex").to_list() == ["Male", "Female"]


def test_parquet_pandas_and_polars_round_trips(tmp_path, csv_path):
    data = load(csv_path)
    parquet = write(data, tmp_path / "out.parquet")
    again = load(parquet)
    assert again.frame.equals(data.frame)
    assert again.fingerprint() == data.fingerprint()
    csv_out = write(data.frame, tmp_path / "out.csv")
    assert load(csv_out).fingerprint() == data.fingerprint()
    from_pandas = load(data.frame.to_pandas())
    assert from_pandas.frame.equals(data.frame)
    assert load(data.frame.lazy()).n_rows == 3
    with pytest.raises(ParameterError, match="output format"):
        write(data, tmp_path / "out.xlsx")


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_fingerprint_is_content_based_and_stable_across_processes(csv_path):
    data = load(csv_path)
    changed = load(data.frame.with_columns(pl.when(pl.col("age") == 50).then(51).otherwise(pl.col("age")).alias("age")))
    assert changed.fingerprint() != data.fingerprint()
    assert data.with_roles(qi=["age"]).fingerprint() == data.fingerprint()
    code = (
        "import sys; from crowdsafe.data import load; "
        f"print(load({str(csv_path)!r}).fingerprint())"
    )
    other = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert other.stdout.strip() == data.fingerprint()
    assert len(data.fingerprint()) == 64


def test_missing_policies(tmp_path):
    path = tmp_path / "m.csv"
    path.write_text("a,b\n1,x\n?,y\n3,\n4,NA\n5,z\n")
    kept = load(path)
    assert kept.n_rows == 5
    assert kept.missing.rows_with_missing == 3
    assert kept.missing.missing_per_column == {"a": 1, "b": 2}
    assert "keep" in kept.missing.describe()
    dropped = load(path, missing="drop")
    assert dropped.n_rows == 2 and dropped.missing.rows_dropped == 3
    assert "3 rows" in dropped.missing.describe()
    with pytest.raises(InputError, match="3 rows with missing values"):
        load(path, missing="error")
    with pytest.raises(ParameterError, match="unknown missing-value policy"):
        load(path, missing="guess")
    assert load(kept, missing="drop").n_rows == 2
    nan_frame = pl.DataFrame({"x": [1.0, float("nan"), None]})
    assert load(nan_frame).missing.missing_per_column == {"x": 2}


# -- the error cases of the issue: one clear message each ---------------------------------

def test_missing_file(tmp_path):
    with pytest.raises(InputError, match="file not found: .*nope.csv .*bundled: adult"):
        load(tmp_path / "nope.csv")


def test_empty_file(tmp_path):
    path = tmp_path / "empty.csv"
    path.write_text("")
    with pytest.raises(InputError, match="is empty"):
        load(path)


def test_header_only_file(tmp_path):
    path = tmp_path / "header.csv"
    path.write_text("age,sex\n")
    with pytest.raises(InputError, match="has a header but no rows"):
        load(path)


def test_schema_column_absent_from_data(csv_path):
    schema = Schema.of({"age": "numeric", "salary": "numeric"})
    with pytest.raises(SchemaError, match="column 'salary' is named in the schema but not in the data"):
        load(csv_path, schema=schema)


def test_non_numeric_value_in_numeric_column(tmp_path):
    path = tmp_path / "bad.csv"
    path.write_text("age,sex\n39,M\nforty,F\n41,M\n")
    with pytest.raises(SchemaError, match="'age' is declared numeric but row 2 .* 'forty'"):
        load(path, schema=Schema.of({"age": "numeric", "sex": "categorical"}))


def test_hierarchy_missing_a_value(csv_path):
    data = load(csv_path, hierarchies={"age": intervals("age", range(30, 45), widths=[5])})  # checked when encoded
    with pytest.raises(HierarchyError, match="does not cover the value '50' of column 'age'"):
        data.validate_domains()
    with pytest.raises(HierarchyError, match="does not cover the value '50' of column 'age'"):
        data.encoded("age")


def test_non_utf8_file(tmp_path):
    path = tmp_path / "latin.csv"
    path.write_bytes("name,city\nJosé,Malmö\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        load(path)


@pytest.mark.parametrize("compress", [False, True])
def test_a_windows_1252_header_over_ascii_values_is_not_utf8(tmp_path, compress):
    # Polars checks the values only: the header was read lossily, a column 'Gr\ufffd\ufffde', without a word
    content = "Gr\u00f6\u00dfe;Alter\n" + "".join(f"{170 + i % 30};{20 + i % 50}\n" for i in range(300))
    path = tmp_path / ("kunden.csv.gz" if compress else "kunden.csv")
    path.write_bytes(gzip.compress(content.encode("cp1252")) if compress else content.encode("cp1252"))
    with pytest.raises(InputError, match="not UTF-8 text; re-save it as UTF-8"):
        load(path)
    with pytest.raises(InputError, match="not UTF-8 text; re-save it as UTF-8"):
        read_text_csv(path)
    path.write_bytes(gzip.compress(content.encode("utf-8")) if compress else content.encode("utf-8"))
    assert load(path).frame.columns == ["Gr\u00f6\u00dfe", "Alter"]


def test_one_row_file_loads(tmp_path):
    path = tmp_path / "one.csv"
    path.write_text("age,sex\n39,M\n")
    data = load(path)
    assert data.n_rows == 1
    assert data.frame.rows() == [(39, "M")]


def test_unknown_format_and_folder(tmp_path):
    with pytest.raises(InputError, match="cannot tell the format"):
        (tmp_path / "x.xlsx").write_text("a")
        load(tmp_path / "x.xlsx")
    with pytest.raises(InputError, match="is a folder"):
        load(tmp_path)


def test_unsupported_object():
    with pytest.raises(InputError, match="cannot load the int 3"):
        load(3)


def test_write_is_atomic_on_failure(tmp_path, monkeypatch):
    target = tmp_path / "out.csv"
    target.write_text("old\n")

    def boom(self, *args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pl.DataFrame, "write_csv", boom)
    with pytest.raises(OSError):
        write(pl.DataFrame({"a": [1]}), target)
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["out.csv"]


def test_pandas_frame_with_object_columns():
    frame = pd.DataFrame({"a": [1, 2], "b": ["x", None]})
    data = load(frame, missing="drop")
    assert data.n_rows == 1
    assert np.array_equal(data.frame.get_column("a").to_numpy(), [1])


def test_row_and_column_parts_keep_roles_and_hierarchies_without_revalidating(csv_path):
    data = load(csv_path).with_hierarchies({"age": intervals("age", range(30, 60), widths=[10])})
    data.encoded("age")
    mask = np.array([True, False, True])
    rows = data.filter_rows(mask)
    assert rows.frame.equals(data.frame.filter(pl.Series(mask)))
    assert rows.schema == data.schema and rows.hierarchies == data.hierarchies
    assert rows.fingerprint() == load(data.frame.filter(pl.Series(mask))).fingerprint() != data.fingerprint()
    assert rows.encoded("age").codes.tolist() == data.encoded("age").codes[mask].tolist()
    with pytest.raises(SchemaError, match="row mask of length 2"):
        data.filter_rows(np.array([True, False]))
    part = data.select(["sex", "age"])
    assert part.columns == ["sex", "age"] and part.frame.equals(data.frame.select("sex", "age"))
    assert list(part.hierarchies) == ["age"] and part.quasi_identifiers == ["sex", "age"]
    assert part.encoded("age") is data.encoded("age")  # cached encodings carried over
    assert part.fingerprint() == load(data.frame.select("sex", "age")).fingerprint()


def test_new_hierarchies_are_validated_and_unchanged_ones_are_not_checked_again(csv_path):
    data = load(csv_path).with_hierarchies({"age": intervals("age", range(30, 60), widths=[10])})
    narrow = data.with_hierarchies({"age": intervals("age", range(40, 60), widths=[10])})
    with pytest.raises(HierarchyError, match="does not cover the value"):
        narrow.validate_domains(["age"])
    roles = data.with_roles(qi=["age"], sensitive=["income"])
    assert roles.quasi_identifiers == ["age"] and roles.sensitive == ["income"]
    assert roles.hierarchies == data.hierarchies and roles.frame.equals(data.frame)
    assert roles.fingerprint() == data.fingerprint()


@settings(max_examples=50, deadline=None)
@given(values=st.lists(st.one_of(st.none(), st.sampled_from(["b", "a", "ç", "", "long value"])),
                       min_size=1, max_size=30))
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_text_fingerprints_alike_as_string_categorical_and_enum(values):
    """The fingerprint reads a Categorical or Enum column through its physical codes; it must
    digest exactly what the same values as plain text give (missing values, unused Enum
    categories and a column of only missing values included)."""
    as_text = load(pl.DataFrame({"t": pl.Series(values, dtype=pl.String)}))
    as_categorical = load(pl.DataFrame({"t": pl.Series(values, dtype=pl.String).cast(pl.Categorical)}))
    as_enum = load(pl.DataFrame({"t": pl.Series(values, dtype=pl.Enum(["unused", "long value", "", "ç", "a", "b"]))}))
    assert as_text.fingerprint() == as_categorical.fingerprint() == as_enum.fingerprint()


def test_fingerprint_is_a_multiset_digest_of_rows():
    """Row order, file name and format do not change a table's identity (the ledger must not give
    a reordered copy fresh budget); moving one value to another row, or dropping a row, does."""
    frame = pl.DataFrame({"age": [30, 41, 30, None], "sex": ["F", "M", "M", "F"], "w": [1.5, -0.0, 2.0, 1.5]})
    data = load(frame)
    assert load(frame.reverse()).fingerprint() == data.fingerprint()
    assert load(frame.sample(fraction=1.0, shuffle=True, seed=3)).fingerprint() == data.fingerprint()
    moved = frame.with_columns(pl.Series("sex", ["M", "F", "M", "F"]))  # same column multisets, other rows
    assert load(moved).fingerprint() != data.fingerprint()
    assert load(frame.slice(1)).fingerprint() != data.fingerprint()
    assert load(pl.concat([frame, frame.head(1)])).fingerprint() != data.fingerprint()
    swapped_columns = frame.rename({"age": "w", "w": "age"}).select("w", "sex", "age")
    assert load(swapped_columns).fingerprint() != data.fingerprint()


def test_keyed_fingerprint_needs_the_key():
    data = load(pl.DataFrame({"age": [30, 41], "sex": ["F", "M"]}))
    one, other = data.fingerprint(key=b"k" * 32), data.fingerprint(key=b"j" * 32)
    assert one != other and data.fingerprint() not in (one, other) and len(one) == 64
    assert load(data.frame.reverse()).fingerprint(key=b"k" * 32) == one


@pytest.mark.parametrize("separator", [";;", "", "\n", '"', "§"])
def test_a_separator_is_one_ascii_character(tmp_path, separator):
    """Checked where the separator is resolved (crowdsafe.data.io.resolve_separator), for every
    reader: a ParameterError naming the parameter, not csv's or Polars' TypeError."""
    path = tmp_path / "t.csv"
    path.write_text("a;b\n1;2\n")
    with pytest.raises(ParameterError, match="the separator parameter must be one ASCII character") as caught:
        load(path, separator=separator)
    assert caught.value.parameter == "separator"
    assert load(path, separator=";").columns == ["a", "b"]


def test_a_header_longer_than_the_head_is_refused_not_cut(tmp_path):
    """Found by a sweep: a 128 KB header (20,000 columns) was read cut at 64 KiB, which renamed a
    column as a duplicate and then failed on the column count."""
    from crowdsafe.data import load
    from crowdsafe.errors import InputError

    path = tmp_path / "wide.csv"
    path.write_text(",".join(f"c{i}" for i in range(20_000)) + "\n" + ",".join("1" for _ in range(20_000)) + "\n")
    with pytest.raises(InputError, match="header of .* is longer than 64 KiB"):
        load(path)
    narrow = tmp_path / "narrow.csv"
    narrow.write_text(",".join(f"c{i}" for i in range(2_000)) + "\n" + ",".join("1" for _ in range(2_000)) + "\n")
    assert load(narrow).frame.width == 2_000


def test_a_column_of_numbers_with_sas_missing_dots_is_said(tmp_path, capsys, monkeypatch):
    """SAS and SPSS write '.' for a missing number: such a column stays text (as before), now
    with a note, read whole or batch by batch; none for a column without '.', a declared one,
    or one of words."""
    from crowdsafe.data import streaming
    from crowdsafe.data.streamed_table import load_or_stream

    path = tmp_path / "sas.csv"
    path.write_text("idade;renda;nome;ponto\n" + "".join(
        f"{'.' if i % 7 == 0 else 20 + i};{'.' if i % 5 == 0 else f'{100 + i},5'};{'.' if i % 3 == 0 else 'Ana'};"
        f"{i}.5\n" for i in range(40)))
    for eager in (1 << 28, 0):
        monkeypatch.setattr(streaming, "EAGER_BYTES", eager)
        load_or_stream(path)
        err = capsys.readouterr().err
        assert "columns 'idade', 'renda' read as text: besides numbers, they hold cells '.'" in err, err
        assert "'nome'" not in err and "'ponto'" not in err
    monkeypatch.setattr(streaming, "EAGER_BYTES", 1 << 28)
    assert load(path).frame.schema["idade"] == pl.String
    capsys.readouterr()
    load(path, missing_tokens=["", "."])
    assert "SAS" not in capsys.readouterr().err
    schema = Schema.from_toml(_schema_file(tmp_path))
    load(path, schema=schema)
    assert "'idade'" not in capsys.readouterr().err


def test_the_draft_says_why_a_column_of_numbers_with_sas_dots_is_categorical(tmp_path):
    from crowdsafe.data.schema_draft import draft_schema

    path = tmp_path / "sas.csv"
    path.write_text("idade;nome\n" + "".join(f"{'.' if i % 7 == 0 else 20 + i};{'.' if i % 3 else 'Ana'}\n"
                                            for i in range(40)))
    idade, nome = draft_schema(path).attributes
    assert idade.type.value == "categorical" and any("SAS and SPSS" in note for note in idade.notes)
    assert not any("SAS" in note for note in nome.notes)


def _schema_file(tmp_path):
    path = tmp_path / "s.toml"
    path.write_text('[attributes.idade]\ntype = "categorical"\n[attributes.renda]\ntype = "categorical"\n'
                    '[attributes.nome]\ntype = "categorical"\n[attributes.ponto]\ntype = "real"\n')
    return path
