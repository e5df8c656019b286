"""A CSV written by R's write.csv (or pandas' to_csv) starts with a nameless column of row
numbers; its rename note says what it most likely is, since row numbers make every row unique."""

from __future__ import annotations

from cli_helpers import run_command
from crowdsafe.data.column_names import stable_names


def test_the_note_of_a_nameless_first_column_and_only_it_names_the_row_index(capsys, tmp_path):
    data = tmp_path / "from_r.csv"
    data.write_text('"","age","sex"\n"1",35,"F"\n"2",35,"F"\n"3",41,"M"\n')
    code, _, err = run_command(capsys, "check", str(data), "--qi", "age,sex")
    assert code == 0
    assert "'' (column 1) -> 'column_1' (empty name)" in err and "write.csv" in err and "role = \"identifier\"" in err
    _, renames = stable_names(["age", "", "sex"])  # a nameless column further right: no row index
    assert [r.new for r in renames] == ["column_2"] and "write.csv" not in renames[0].describe()
