"""Published CSV tables read with every cell as text (crowdsafe.data.text_csv): a release for an
attack or a report, an α-β view. They are read by the loader's rules (the separator from the
header, the file's own line breaks, UTF-8, rows of another width refused) but no cell becomes
missing except an empty one. Before, they were read as comma-separated LF files only: an ARX
release (';' by default) read as one column, and an attack on it said the release had no such
column."""

from __future__ import annotations

import shutil

import numpy as np
import polars as pl
import pytest

from crowdsafe.attacks import intersection_attack
from crowdsafe.attacks.releases import read_release
from crowdsafe.cli import main
from crowdsafe.data.text_csv import read_text_csv, scan_text_csv
from crowdsafe.errors import InputError

COMMA = "age,sex,zip,disease\n20-29,*,130**,flu\n20-29,*,130**,cold\n30-39,M,?,NA\n30-39,M,?,flu\n"


def arx_release(path, other: str, ages: tuple[str, str] = ("[20, 30[", "]30, 40]")):
    """A two-class release as ARX writes it (';', ISO 31-11 intervals, masked ZIP codes); ``other``
    is the second sensitive value of each class."""
    path.write_text(f"age;zip;disease\n{ages[0]};130**;flu\n{ages[0]};130**;{other}\n"
                    f"{ages[1]};148**;cancer\n{ages[1]};148**;{other}\n", encoding="utf-8")
    return path


def resaved(text: str, separator: str, eol: str) -> bytes:
    """``text`` (comma-separated, LF, no quoted commas) as a spreadsheet would save it."""
    return text.replace(",", separator).replace("\n", eol).encode("utf-8")


@pytest.mark.parametrize("separator", [",", ";", "\t", "|"])
@pytest.mark.parametrize("eol", ["\n", "\r\n", "\r"])
def test_every_separator_and_line_break_reads_the_same_cells(tmp_path, separator, eol):
    path = tmp_path / "r.csv"
    path.write_bytes(resaved(COMMA, separator, eol))
    expected = pl.DataFrame({"age": ["20-29"] * 2 + ["30-39"] * 2, "sex": ["*", "*", "M", "M"],
                             "zip": ["130**", "130**", "?", "?"], "disease": ["flu", "cold", "NA", "flu"]})
    assert read_text_csv(path).equals(expected)  # '?' and 'NA' stay as published
    assert scan_text_csv(path).collect().equals(expected)
    assert read_release(path).frame.equals(expected)


def test_an_empty_field_is_the_only_missing_cell(tmp_path):
    path = tmp_path / "r.csv"
    path.write_text("a;b\n;x\n?;\n", encoding="utf-8")
    assert read_text_csv(path).to_dict(as_series=False) == {"a": [None, "?"], "b": ["x", None]}


@pytest.mark.parametrize(("content", "message"), [
    (b"a;b\n1;2;3\n", r"line 2 has 3 fields where the header has 2"),
    (b"a;b;c\n1;2\n", r"line 2 has 2 fields where the header has 3"),
    ("a;b\nZ\u00fcrich;1\n".encode("latin-1"), "not UTF-8"),
    (b"a;b\r1;2\n3;4\n", "mixes line endings"),
])
def test_bad_release_files_are_one_line_refusals(tmp_path, content, message):
    path = tmp_path / "r.csv"
    path.write_bytes(content)
    with pytest.raises(InputError, match=message):
        read_release(path)


def test_an_arx_style_release_is_attacked_as_its_comma_twin(tmp_path):
    """';' separators and ISO 31-11 intervals (an outward bracket opens the end), as ARX and many
    statistics offices write them, locate the targets as the comma file with (a, b] does."""
    arx = tmp_path / "arx.csv"
    arx.write_text("age;sex;disease\n[20, 30[;*;flu\n[20, 30[;*;cold\n]30, 40];M;cancer\n]30, 40];M;flu\n",
                   encoding="utf-8")
    other = tmp_path / "other.csv"
    other.write_text('age,sex,disease\n"[20 ; 30[",*,flu\n"[20 ; 30[",*,hiv\n"]30 ; 40]",M,cancer\n'
                     '"]30 ; 40]",M,hiv\n', encoding="utf-8")
    twins = [tmp_path / "arx_twin.csv", tmp_path / "other_twin.csv"]
    twins[0].write_text("age,sex,disease\n\"[20, 30)\",*,flu\n\"[20, 30)\",*,cold\n\"(30, 40]\",M,cancer\n"
                        "\"(30, 40]\",M,flu\n", encoding="utf-8")
    twins[1].write_text("age,sex,disease\n\"[20, 30)\",*,flu\n\"[20, 30)\",*,hiv\n\"(30, 40]\",M,cancer\n"
                        "\"(30, 40]\",M,hiv\n", encoding="utf-8")
    targets = pl.DataFrame({"age": [25, 30, 35], "sex": ["F", "M", "M"], "disease": ["flu", "flu", "cancer"]})
    run = [intersection_attack([read_release(p) for p in paths], targets, ["age", "sex"], "disease").summary
           for paths in ([arx, other], twins)]
    assert run[0] == run[1]
    assert run[0]["perfect_breach"] == pytest.approx(2 / 3)  # 25 and 35 are breached; 30 lies in no class


def test_the_attack_command_reads_a_semicolon_release(tmp_path, capsys):
    release = tmp_path / "r.csv"
    release.write_bytes(resaved(COMMA, ";", "\r\n"))
    targets = tmp_path / "t.csv"
    targets.write_text("age,sex,zip,disease\n25,F,13053,flu\n", encoding="utf-8")
    assert main(["attack", "intersection", str(release), str(release), "--targets", str(targets),
                 "--qi", "age,sex,zip", "--sensitive", "disease"]) == 0
    out = capsys.readouterr().out
    assert "100.0%" in out  # located in both


def test_a_resaved_view_gives_the_same_estimates(tmp_path):
    from crowdsafe.data import load
    from crowdsafe.perturb import estimate, perturb, read_view
    from crowdsafe.perturb.alpha_beta import PerturbRequest
    from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest

    rng = np.random.default_rng(3)
    frame = pl.DataFrame({"age": rng.integers(18, 90, 80), "sex": rng.choice(["F", "M"], 80)})
    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.6, c=0.2), domains={"age": range(18, 90), "sex": ["F", "M"]},
                             max_rows=100)
    view_path, cert_path = perturb(load(frame), request, randomness=4).view.write(tmp_path / "view.csv")
    copy = tmp_path / "copy"
    copy.mkdir()
    pl.read_csv(view_path, infer_schema=False).write_csv(copy / "view.csv", separator=";", line_terminator="\r\n")
    shutil.copy(cert_path, copy / "view.certificate.json")
    for query in ("count", "count where age between 20 and 25 and sex = 'F'"):
        assert estimate(read_view(copy / "view.csv"), query) == estimate(read_view(view_path), query)


def test_an_arx_release_with_masked_zip_codes_is_attacked_without_a_schema(tmp_path, capsys):
    """``130**`` is read as the ZIP codes it may mask; a release whose cells name nothing the
    targets hold (ages written ``20to29``, which is no range syntax) gets notes naming those
    cells and saying it located nobody."""
    paths = [arx_release(tmp_path / "r1.csv", "cold"), arx_release(tmp_path / "r2.csv", "hiv"),
             arx_release(tmp_path / "r3.csv", "hiv", ("20to29", "31to40"))]
    targets = tmp_path / "t.csv"
    targets.write_text("age,zip,disease\n25,13053,flu\n35,14850,cancer\n", encoding="utf-8")
    command = ["attack", "intersection", "--targets", str(targets), "--qi", "age,zip", "--sensitive", "disease"]
    assert main([*command, str(paths[0]), str(paths[1])]) == 0
    out = capsys.readouterr().out
    assert "holds none of the targets" not in out and "perfect breach: 100.0% (true value: 100.0%)" in out
    assert main([*command, str(paths[0]), str(paths[2])]) == 0
    out = capsys.readouterr().out
    assert "note: release r3 holds none of the targets" in out and "note: release r1" not in out
    assert "note: release r3 holds cells the attack cannot read" in " ".join(out.split())
    assert "age: '20to29', '31to40'" in " ".join(out.split())


def test_bands_are_read_and_unread_cells_are_named_by_both_attacks(tmp_path, capsys):
    """``20-29`` and ``90+`` are ranges in a numeric column; ``NA`` (another tool's suppressed
    cell) is read as covering nothing, and both attacks say so instead of under-reporting quietly."""
    release = tmp_path / "r.csv"
    release.write_text("age,sex,disease\n20-29,F,flu\n20-29,F,cold\n90+,M,cancer\n90+,M,flu\nNA,M,flu\n",
                       encoding="utf-8")
    targets = tmp_path / "t.csv"
    targets.write_text("age,sex,disease\n25,F,flu\n92,M,cancer\n", encoding="utf-8")
    assert main(["attack", "intersection", str(release), "--targets", str(targets), "--qi", "age,sex",
                 "--sensitive", "disease", "--json"]) == 0
    import json

    payload = json.loads(capsys.readouterr().out)
    assert payload["releases"][0]["located"] == 1.0 and payload["releases"][0]["unread_cells"] == "age: 'NA'"
    assert main(["attack", "linkage", str(release), "--external", str(targets), "--qi", "age,sex"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "re-identified uniquely: 4" in out and "cannot read, taken to cover no value (age: 'NA')" in out


def test_compare_reads_an_arx_release_against_its_original(tmp_path, capsys):
    """Masked ZIP codes and ISO 31-11 intervals are read as what they cover in the original (they
    were refused before as 'neither a value of the original, a hierarchy node, a range, a set nor *')."""
    original = tmp_path / "original.csv"
    original.write_text("age,zip,disease\n25,13053,flu\n27,13068,cold\n35,14850,cancer\n38,14853,flu\n",
                        encoding="utf-8")
    release = arx_release(tmp_path / "arx.csv", "flu")
    assert main(["compare", str(original), str(release), "--qi", "age,zip"]) == 0
    out = capsys.readouterr().out
    assert "4 / 4 / 0" in out and "equivalence classes" in out
