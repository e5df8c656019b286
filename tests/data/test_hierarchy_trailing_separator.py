"""A hierarchy file whose every line ends with the separator (``13053;1305*;*;``, as spreadsheet
exports write it) reads as the file without it: the empty column it adds holds no level. An empty
column elsewhere, or a last column empty in some rows only, is still refused."""

from __future__ import annotations

import pytest

from crowdsafe.data import Hierarchy
from crowdsafe.errors import HierarchyError

LINES = ["13053;1305*;130**;*", "13068;1306*;130**;*", "13067;1306*;130**;*", "14850;1485*;148**;*"]


@pytest.mark.parametrize("ending", [";", ";;", "; "])
def test_a_separator_ending_every_line_adds_no_level(tmp_path, ending):
    plain, trailing = tmp_path / "zip.csv", tmp_path / "zip-trailing.csv"
    plain.write_text("\n".join(LINES) + "\n")
    trailing.write_text("\n".join(line + ending for line in LINES) + "\n")
    expected, read = Hierarchy.from_csv(plain, name="zip"), Hierarchy.from_csv(trailing, name="zip")
    assert read.height == expected.height == 3
    assert read.leaves.to_list() == expected.leaves.to_list()
    assert all(read.labels[i] == expected.labels[i] for i in range(expected.height + 1))


def test_an_empty_column_that_is_not_the_last_is_refused(tmp_path):
    path = tmp_path / "zip.csv"  # a level left empty in every row: not a trailing separator
    path.write_text("\n".join(line.replace(";", ";;", 1) for line in LINES) + "\n")
    with pytest.raises(HierarchyError, match="'' at level 1"):
        Hierarchy.from_csv(path, name="zip")


def test_a_last_column_empty_in_some_rows_only_is_refused(tmp_path):
    path = tmp_path / "zip.csv"
    path.write_text("\n".join([LINES[0] + ";", *(line + ";all" for line in LINES[1:])]) + "\n")
    with pytest.raises(HierarchyError, match="'' and 'all'"):
        Hierarchy.from_csv(path, name="zip")
