"""Hierarchy files with quoted labels (intlsweep #2): a label holding a line break or the
separator is read as written, and the separator is sniffed outside quoted labels."""

from __future__ import annotations

import csv
import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.data.hierarchy_file import sniff_separator

LEAVES = ["Ärztin", "Lehrer; Schule", "Müller", "Bäcker\nMeister", "Angestellte, Büro"]


def _write(path, rows, separator, eol="\r\n", quoting=csv.QUOTE_MINIMAL):
    buffer = io.StringIO(newline="")
    csv.writer(buffer, delimiter=separator, lineterminator=eol, quoting=quoting).writerows(rows)
    path.write_text(buffer.getvalue(), encoding="utf-8", newline="")
    return path


@pytest.mark.parametrize("separator", [";", ",", "\t"])
@pytest.mark.parametrize("eol", ["\r\n", "\n"])
def test_quoted_labels_keep_their_separators_and_line_breaks(tmp_path, separator, eol):
    rows = [[leaf, f"group {i % 2}", "*"] for i, leaf in enumerate(LEAVES)]
    made = Hierarchy.from_csv(_write(tmp_path / "beruf.csv", rows, separator, eol))
    assert made.leaves.to_list() == LEAVES
    assert made.height == 2


def test_the_reports_files(tmp_path):
    semi = tmp_path / "beruf_semi.csv"
    semi.write_bytes('Ärztin;Gesundheit;*\r\n"Lehrer; Schule";Bildung;*\r\nMüller;Handwerk;*\r\n'
                     '"Bäcker\nMeister";Handwerk;*\r\nAngestellte;Büro;*\r\n'.encode())
    assert Hierarchy.from_csv(semi).leaves.to_list() == ["Ärztin", "Lehrer; Schule", "Müller", "Bäcker\nMeister",
                                                        "Angestellte"]
    comma = tmp_path / "beruf_comma.csv"
    comma.write_bytes('"Lehrer; Schule",Bildung,*\r\nÄrztin,Gesundheit,*\r\n'.encode())
    made = Hierarchy.from_csv(comma)
    assert made.leaves.to_list() == ["Lehrer; Schule", "Ärztin"] and made.height == 2


def test_blank_rows_are_skipped(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("\na;x;*\n\n  \nb;x;*\n", encoding="utf-8")
    assert Hierarchy.from_csv(path).leaves.to_list() == ["a", "b"]


@pytest.mark.parametrize(("text", "separator"), [
    ('"a;b",x,*\n', ","), ('"a,b";x;*\n', ";"), ('"a;b,c"\tx\t*\n', "\t"), ("a;x,y;*\n", ";"), ("\n\na,b\n", ","),
    ("Lehrer; Schule,Bildung,*\nArzt,Gesundheit,*\n", ","), ("a;b,*\nc,*\n", ","),
])
def test_the_separator_is_sniffed_outside_quotes(text, separator):
    assert sniff_separator(text) == separator


LABEL = st.text(alphabet=st.sampled_from(list("aßé;,\t\n\r\" xZ")), min_size=1, max_size=8).filter(
    lambda s: s.strip() == s and s.strip() != "" and s != "*")


@settings(max_examples=100, deadline=None)
@given(leaves=st.lists(LABEL, min_size=1, max_size=6, unique=True), separator=st.sampled_from([";", ",", "\t"]))
def test_any_quoted_labels_read_back(tmp_path_factory, leaves, separator):
    """Every label quoted (one row 'Z;,*' is either 'Z;' or 'Z' then ',*': only quotes tell)."""
    path = tmp_path_factory.mktemp("h") / "h.csv"
    made = Hierarchy.from_csv(_write(path, [[leaf, "*"] for leaf in leaves], separator, quoting=csv.QUOTE_ALL))
    assert made.leaves.to_list() == leaves
