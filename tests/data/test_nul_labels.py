"""NUL characters (byte 0) in hierarchy labels are refused in one line (ds6 #3): a label holding one
was published after the charge, into a release crowdsafe's own readers refuse as a binary file."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe.data.builders import grouping
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.errors import CrowdsafeError


def test_a_hierarchy_file_with_a_nul_is_refused_naming_its_line(tmp_path):
    path = tmp_path / "edu.csv"
    path.write_bytes(b"HS;School;*\nBA;Un\x00i;*\n")
    with pytest.raises(CrowdsafeError, match=r"edu\.csv: line 2 holds a NUL character") as caught:
        Hierarchy.from_csv(path)
    assert "\n" not in str(caught.value)


def test_a_declared_group_label_with_a_nul_is_refused():
    with pytest.raises(CrowdsafeError, match="holds a NUL character") as caught:
        grouping("edu", [{"Un\x00i": ["HS", "BA"]}]).check_labels("the schema")
    assert "\n" not in str(caught.value)


def test_labels_without_a_nul_are_read():
    made = Hierarchy.from_columns("edu", pl.Series("edu", ["HS", "BA"]), [["School", "Uni"], ["*", "*"]])
    assert made.check_labels("here").height == 2
