"""Numbers written with a decimal comma (issue 33, point 11): a ';'-separated export's columns of
such numbers are read as numbers with a note; --decimal-comma / decimal_comma=True / the schema's
[csv] table force the reading, --no-decimal-comma turns it off; a declared number written so and
not read so gets a hint; whole and batch-by-batch reads agree; the schema draft types the column
numeric."""

from __future__ import annotations

import json

import polars as pl
import pytest

from crowdsafe import api, cli
from crowdsafe.data import Schema, load
from crowdsafe.data import decimal_comma as comma
from crowdsafe.data.io import read_table
from crowdsafe.data.schema_draft import draft_schema
from crowdsafe.data.streamed_table import load_or_stream, read_streamed
from crowdsafe.errors import SchemaError

# a German spreadsheet export: Umsatz with a decimal comma and thousands points; Menge with
# thousands points only; Anteil a plain decimal point column
GERMAN = ("Kunde;Umsatz;Menge;Ort\n" + "".join(
    f"K{i:03d};{['35309,24', '1.234,5', '-12,5', '7', '+0,75'][i % 5]};{['1.234', '2.000', '7'][i % 3]};"
    f"{['Köln', 'Bonn'][i % 2]}\n" for i in range(60)))
UMSATZ = [35309.24, 1234.5, -12.5, 7.0, 0.75]


@pytest.fixture
def german(tmp_path):
    path = tmp_path / "umsatz.csv"
    path.write_text(GERMAN, encoding="utf-8")
    return path


@pytest.mark.parametrize(("text", "matches"), [
    ("35309,24", True), ("1.234,5", True), ("-12,5", True), ("+0,75", True), ("7", True), ("1.234.567,1", True),
    ("1.234", True), ("1,2,3", False), ("1.23,4", False), ("12.5", False), (",5", False), ("1,", False),
    ("1e3", False), ("", False), ("1 234,5", False),
])
def test_the_pattern(text, matches):
    assert pl.Series([text]).str.contains(comma.PATTERN).item() is matches


def test_a_semicolon_export_reads_its_decimal_commas_as_numbers_with_a_note(german, capsys):
    frame = read_table(german)
    assert frame.schema["Umsatz"] == pl.Float64
    assert frame.get_column("Umsatz").head(5).to_list() == UMSATZ
    # a column without any comma is not guessed: '1.234' stays what Polars reads (1.234)
    assert frame.get_column("Menge").head(3).to_list() == [1.234, 2.0, 7.0]
    assert frame.schema["Ort"] == pl.String and frame.schema["Kunde"] == pl.String
    note = capsys.readouterr().err.strip()
    assert note == (f"crowdsafe: note: {german}: column 'Umsatz' read with a decimal comma (e.g. 1.234,5 as "
                    "1234.5), because the values looked so (a custodian-only fact about the data; a release or "
                    "answer that uses it is not fit for release until the reading is declared); say so with "
                    "--decimal-comma or [csv] decimal_comma = true in the schema, or give --no-decimal-comma "
                    "(decimal_comma=False) to read it as text; 'Menge' was read with a decimal point (1.234 as "
                    "1.234), though in a file written with decimal commas a '.' groups thousands (1.234 is 1234): "
                    "--decimal-comma reads every column so")


def test_a_reading_left_to_the_data_makes_a_release_and_an_answer_unfit(german, tmp_path):
    """An undeclared 'auto' read (a ';' file, no decimal separator declared) marks every column
    the values could turn into numbers, whether or not they did (one row with a comma changes how
    every value of the column is read, and '1.234' is 1.234 or 1234 by the same rule); declaring
    the reading removes the mark."""
    from crowdsafe import api
    from crowdsafe.data.schema import READ_DECIMAL_COMMA

    auto = load(german)
    for column in ("Umsatz", "Menge", "Kunde", "Ort"):  # converted or not: all left to the values
        assert READ_DECIMAL_COMMA in auto.schema[column].from_data
    assert READ_DECIMAL_COMMA not in load(german, decimal_comma=True).schema["Umsatz"].from_data
    assert READ_DECIMAL_COMMA not in load(german, decimal_comma=False).schema["Menge"].from_data
    answer = api.query(german, "sum(Umsatz) clamp 0..100000", epsilon=1.0, ledger=None, randomness=1)
    assert any("decimal separator not declared: 'Umsatz'" in r for r in answer.unreviewed_reasons)
    declared = api.query(german, "sum(Umsatz) clamp 0..100000", epsilon=1.0, ledger=None, randomness=1,
                         decimal_comma=True)
    assert not any("decimal separator" in r for r in declared.unreviewed_reasons)
    publication = api.publish(german, epsilon=1.0, delta=1e-4, ledger=None, seed=1, columns=["Umsatz", "Ort"])
    assert any("decimal separator not declared: 'Ort', 'Umsatz'" in r for r in publication.certificate.unfit_reasons)


SCHEMA_REAL = '[attributes.Kunde]\ntype = "categorical"\nrole = "identifier"\n[attributes.Umsatz]\ntype = "real"\n' \
    'role = "sensitive"\n[attributes.Menge]\ntype = "integer"\n[attributes.Ort]\ntype = "categorical"\n'


def _marks_and_reasons(tmp_path, rows: str, name: str) -> tuple[dict, list]:
    """The unreviewed markers and unfit reasons of a seeded answer on a ';' file with a declared
    schema and no declared decimal separator (read whole, and batch by batch)."""
    from crowdsafe import api

    path = tmp_path / f"{name}.csv"
    path.write_text("Kunde;Umsatz;Menge;Ort\n" + rows, encoding="utf-8")
    schema = Schema.from_toml(_toml(tmp_path, SCHEMA_REAL))
    answer = api.query(path, "mean(Umsatz) clamp 0..100", epsilon=1.0, ledger=None, randomness=1, schema=schema)
    whole, streamed = load(path, schema=schema), read_streamed(path, schema=schema)
    assert streamed is not None
    marks = {a.name: a.from_data for a in whole.schema.attributes}
    assert marks == {a.name: a.from_data for a in streamed.domain.schema.attributes}
    return marks, [answer.unreviewed_schema, answer.unreviewed_reasons]


def test_the_mark_is_the_same_whether_or_not_a_row_holds_a_comma(tmp_path):
    """D: every amount whole; D plus one row written 40,5. A declared 'real' column of a ';'
    file whose decimal separator nobody declared is marked on both tables alike: the mark comes
    from the header and the schema, never from whether some value holds a comma."""
    rows = "".join(f"K{i};{i % 50};{i % 7};{['Köln', 'Bonn'][i % 2]}\n" for i in range(40))
    on_d_minus = _marks_and_reasons(tmp_path, rows, "d_minus")
    on_d = _marks_and_reasons(tmp_path, rows + "K99;40,5;3;Bonn\n", "d")
    assert on_d == on_d_minus
    assert on_d[1][0] == {"Umsatz": ("reading decimal comma",)}


def test_a_mark_set_by_the_values_is_caught(tmp_path, monkeypatch):
    """The broken variant: only the columns the values converted are marked (as before this
    check); the comparison above then sees D marked and D- not."""
    from crowdsafe.data import io, streamed_table

    real = io.tidied_text

    def tidied(frame, declared, reading="off"):
        out, commas = real(frame, declared, reading)
        tidied.commas = commas
        return out, commas

    monkeypatch.setattr(io, "tidied_text", tidied)
    monkeypatch.setattr(streamed_table, "tidied_text", tidied)
    monkeypatch.setattr(comma, "undeclared", lambda names, text, reading: list(tidied.commas) if reading == "auto"
                        else [])
    rows = "".join(f"K{i};{i % 50};{i % 7};{['Köln', 'Bonn'][i % 2]}\n" for i in range(40))
    assert _marks_and_reasons(tmp_path, rows, "d_minus") != _marks_and_reasons(tmp_path, rows + "K99;40,5;3;Bonn\n",
                                                                               "d")


def test_forced_reads_thousands_points_and_prints_no_note(german, capsys):
    frame = read_table(german, decimal_comma=True)
    assert frame.get_column("Umsatz").head(5).to_list() == UMSATZ
    assert frame.get_column("Menge").head(3).to_list() == [1234, 2000, 7]
    assert capsys.readouterr().err == ""


def test_off_keeps_the_text(german):
    frame = read_table(german, decimal_comma=False)
    assert frame.schema["Umsatz"] == pl.String
    assert frame.get_column("Umsatz").head(2).to_list() == ["35309,24", "1.234,5"]


def test_a_comma_separated_file_needs_it_said(tmp_path):
    path = tmp_path / "quoted.csv"
    path.write_text('id,amount\n1,"35309,24"\n2,"1.234,5"\n')
    assert read_table(path).schema["amount"] == pl.String
    assert read_table(path, decimal_comma=True).get_column("amount").to_list() == [35309.24, 1234.5]
    schema = Schema.from_toml(_toml(tmp_path, '[csv]\ndecimal_comma = true\n[attributes.amount]\ntype = "numeric"\n'))
    assert schema.decimal_comma is True
    assert load(path, schema=schema).frame.get_column("amount").to_list() == [35309.24, 1234.5]


def test_a_declared_number_written_with_a_comma_gets_a_hint(tmp_path):
    path = tmp_path / "quoted.csv"
    path.write_text('id,amount\n1,"35309,24"\n2,"12"\n')
    declared = Schema.of({"id": "numeric", "amount": "numeric"})
    with pytest.raises(SchemaError) as caught:
        load(path, schema=declared)
    assert str(caught.value) == (
        f"column 'amount' is declared numeric but row 1 of {path} holds the non-numeric value '35309,24': a decimal "
        "comma? give --decimal-comma (decimal_comma=True), or [csv] decimal_comma = true in the schema; a "
        "custodian-only fact about the data: the table cannot be read as its schema declares, nothing was charged")
    # no hint for other text
    with pytest.raises(SchemaError, match="holds the non-numeric value 'n/a'; a custodian-only"):
        path.write_text('id,amount\n1,n/a\n')
        load(path, schema=declared)
    # a cell of spaces is named as blank, not as the value '' (its stripped text)
    with pytest.raises(SchemaError, match=r"row 2 of .* holds a blank cell \(spaces only: an empty cell"):
        path.write_text('id,amount\n1,2\n2,   \n')
        load(path, schema=declared)


def test_streamed_and_whole_reads_agree(german, monkeypatch):
    from crowdsafe.data import streaming

    for option in (None, True, False):
        whole = load(german, decimal_comma=option)
        monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
        streamed = load_or_stream(german, decimal_comma=option)
        monkeypatch.setattr(streaming, "EAGER_BYTES", 1 << 28)
        assert not hasattr(streamed, "frame")
        assert streamed.rows.collect().equals(whole.frame), option
        assert streamed.domain.schema == whole.schema


def test_the_schema_draft_types_it_numeric_and_says_how_to_read(german):
    draft = draft_schema(german)
    kinds = {a.name: (a.role.value, a.type.value) for a in draft.attributes}
    assert kinds["Umsatz"] == ("quasi-identifier", "numeric")
    assert draft.decimal_comma is True
    text = draft.to_toml()
    assert "[csv]\ndecimal_comma = true\n" in text
    path = german.parent / "umsatz.toml"
    path.write_text(text)
    assert Schema.from_toml(path).decimal_comma is True
    assert load(german, schema=path).frame.get_column("Menge").head(3).to_list() == [1234, 2000, 7]


def test_a_draft_of_a_semicolon_file_without_commas_declares_decimal_points(tmp_path):
    """A ';' file whose numbers hold no comma: the draft says `decimal_comma = false` (else every
    column of a release made with the reviewed schema stays marked: its reading left to the
    values), and a comma-separated file's draft says nothing (nothing is left to the values)."""
    path = tmp_path / "points.csv"
    path.write_text("Kunde;Menge;Ort\n" + "".join(f"K{i};{i * 3};{['Köln', 'Bonn'][i % 2]}\n" for i in range(30)))
    draft = draft_schema(path)
    assert draft.decimal_comma is False and "[csv]\ndecimal_comma = false\n" in draft.to_toml()
    schema = tmp_path / "points.toml"
    schema.write_text(draft.to_toml())
    assert load(path, schema=schema).schema.unreviewed(["Kunde", "Menge", "Ort"], ["reading"]) == {}
    commas = tmp_path / "commas.csv"
    commas.write_text("Kunde,Menge\n" + "".join(f"K{i},{i * 3}\n" for i in range(30)))
    assert draft_schema(commas).decimal_comma is None and "[csv]" not in draft_schema(commas).to_toml()


def test_a_draft_of_a_comma_file_says_to_give_the_flag(tmp_path):
    path = tmp_path / "quoted.csv"
    path.write_text("id,amount\n" + "".join(f'{i},"{i * 1000 + 17},{i % 10}5"\n' for i in range(40)))
    amount = next(a for a in draft_schema(path).attributes if a.name == "amount")
    assert amount.role.value != "identifier"  # near-unique text, but numbers: not drafted an identifier
    assert any("--decimal-comma" in note for note in amount.notes)
    forced = next(a for a in draft_schema(path, decimal_comma=True).attributes if a.name == "amount")
    assert forced.type.value == "numeric"


def test_the_command_line_and_the_api(german, capsys):
    assert cli.main(["check", str(german), "--k", "2", "--json"]) == 0
    captured = capsys.readouterr()
    types = {a["name"]: a["type"] for a in json.loads(captured.out)["attributes"]}
    assert types["Umsatz"] == "numeric" and "read with a decimal comma" in captured.err
    assert cli.main(["check", str(german), "--k", "2", "--json", "--no-decimal-comma"]) == 0
    types = {a["name"]: a["type"] for a in json.loads(capsys.readouterr().out)["attributes"]}
    assert types["Umsatz"] == "categorical"
    assert {a["name"]: a["type"] for a in api.check(german, decimal_comma=True).to_dict()["attributes"]}[
        "Menge"] == "numeric"


def _toml(folder, text):
    path = folder / "s.toml"
    path.write_text(text)
    return path


def test_points_beside_decimal_commas_are_named_in_the_note_read_whole_or_streamed(tmp_path, capsys, monkeypatch):
    """A population written 250.523 in a file whose areas are written 607,69 was read as 250.523
    without a word; only a column with at most three decimals, one with some, is named."""
    from crowdsafe.data import streaming

    path = tmp_path / "gemeinden.csv"
    path.write_text("Gemeinde;Einwohner;Fläche;Anteil;Jahr;Quote\n" + "".join(
        f"G{i};{['250.523', '1.200', '37.004'][i % 3]};{['607,69', '12,5'][i % 2]};{['0.12345', '0.5'][i % 2]};2024;"
        f"{['0.25', '1.5'][i % 2]}\n" for i in range(60)), encoding="utf-8")
    for eager in (1 << 28, 0):
        monkeypatch.setattr(streaming, "EAGER_BYTES", eager)
        load_or_stream(path)
        err = capsys.readouterr().err
        assert "'Einwohner' was read with a decimal point" in err
        assert "'Anteil'" not in err and "'Jahr'" not in err and "'Quote'" not in err
    monkeypatch.setattr(streaming, "EAGER_BYTES", 1 << 28)
    assert load(path, decimal_comma=True).frame.get_column("Einwohner").head(3).to_list() == [250523, 1200, 37004]
    assert "decimal point" not in capsys.readouterr().err


def test_a_comma_separated_file_of_quoted_decimal_commas_gets_a_note(tmp_path, capsys, monkeypatch):
    """A French export separated by commas quotes its "72,5": such a column was read as text,
    categories, without a word; it still is (the file's separator decides, not its values), with
    a note, read whole or batch by batch, and no note once the reading is said."""
    from crowdsafe.data import streaming

    path = tmp_path / "poids.csv"
    path.write_text("age,poids,ville\n" + "".join(f'{20 + i},"{60 + i % 9},5",Lyon\n' for i in range(40)))
    for eager in (1 << 28, 0):
        monkeypatch.setattr(streaming, "EAGER_BYTES", eager)
        load_or_stream(path)
        assert "column 'poids' read as text, though every value looks like a number" in capsys.readouterr().err
    monkeypatch.setattr(streaming, "EAGER_BYTES", 1 << 28)
    assert load(path).frame.schema["poids"] == pl.String
    capsys.readouterr()
    for option in (True, False):
        load(path, decimal_comma=option)
        assert "read as text" not in capsys.readouterr().err
    path.write_text("age;poids\n" + "".join(f"{20 + i};{60 + i % 9},5\n" for i in range(40)))
    load(path)
    assert "read as text" not in capsys.readouterr().err
    # an English export's quoted thousands commas ("1,234") are no decimal commas: nothing said
    path.write_text("age,amount\n" + "".join(f'{20 + i},"{1 + i % 9},{200 + i:03d}"\n' for i in range(40)))
    load(path)
    assert "read as text" not in capsys.readouterr().err
