"""Whole numbers beyond 64 bits in a CSV column (Polars infers Int128, which NumPy has not) are read
as text, exactly as written, by the eager and the lazy reader, with a note; every command reads
such a table, and a schema draft of it is accepted as written (found by a black-box sweep, F8:
check, publish, anonymize and perturb crashed; the draft said type = "integer", then refused)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_for_error
from crowdsafe.data.io import read_file
from crowdsafe.data.streaming import scan_table

BIG = ["9223372036854775808", "18446744073709551616", "000170141183460469231731687303715884105727"]


def _table(path: Path) -> Path:
    rng = np.random.default_rng(2)
    n = 150
    lines = ["acct,score,sex,diag"] + [
        f"{BIG[i % 3]},{i % 7},{rng.choice(['F', 'M'])},{rng.choice(['flu', 'none'])}" for i in range(n)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_whole_numbers_beyond_64_bits_are_read_as_text_by_both_readers(tmp_path, capsys):
    data = _table(tmp_path / "b.csv")
    frame = read_file(data).frame
    assert "read as text" in capsys.readouterr().err
    assert frame.schema["acct"] == pl.String and frame.schema["score"] == pl.Int64  # the others as before
    assert frame.get_column("acct").head(3).to_list() == BIG  # exact, as written
    lazy = scan_table(data).lazy.collect()
    assert lazy.schema["acct"] == pl.String and lazy.get_column("acct").head(3).to_list() == BIG


@pytest.mark.parametrize("argv", [
    ["check", "--k", "3"],
    ["check", "--k", "3", "--qi", "acct,sex", "--sensitive", "diag"],
    ["publish", "--epsilon", "2", "--delta", "1e-5", "--budget", "10,0.1", "--out", "{tmp}/p.csv", "--no-report"],
    ["anonymize", "--k", "3", "--out", "{tmp}/a.csv", "--no-report"],
    ["anonymize", "--k", "3", "--algorithm", "mondrian", "--out", "{tmp}/m.csv", "--no-report"],
    ["perturb", "--no-ledger", "--c", "0.5", "--gamma", "0.6", "--exploratory", "--seed", "1", "--out", "{tmp}/v.csv"],
    ["query", "count where acct = '9223372036854775808'", "--epsilon", "1", "--budget", "10,0"],
])
def test_every_command_reads_such_a_table(capsys, tmp_path, argv):
    data = _table(tmp_path / "b.csv")
    code, err = run_for_error(capsys, argv[0], data, *[a.format(tmp=tmp_path) for a in argv[1:]])
    assert code == 0, err


def test_the_schema_draft_of_such_a_table_is_accepted(capsys, tmp_path):
    data = _table(tmp_path / "b.csv")
    draft = tmp_path / "s.toml"
    assert run_for_error(capsys, "schema", "draft", data, "--out", draft)[0] == 0
    text = draft.read_text(encoding="utf-8")
    acct = text[text.index("[attributes.acct]"):text.index("[attributes.score]")]
    assert 'type = "integer"' not in acct and 'type = "categorical"' in acct
    code, err = run_for_error(capsys, "check", data, "--schema", draft, "--k", "3")
    assert code == 0, err
