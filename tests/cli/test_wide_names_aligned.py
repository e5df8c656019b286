"""Figures printed after a column name stand in one line of the terminal's columns, whatever the
name's script: a Japanese character takes two cells, a combining accent none."""

from __future__ import annotations

import unicodedata

import polars as pl

from cli_helpers import run_command


def _cells(text: str) -> int:
    return sum(2 if unicodedata.east_asian_width(c) in "WF" else 0 if unicodedata.combining(c) else 1 for c in text)


def test_anonymize_ncp_figures_line_up_after_japanese_and_decomposed_names(tmp_path, capsys):
    data = tmp_path / "jp.csv"
    pl.DataFrame({"年齢": [20 + i % 40 for i in range(200)], "性別": ["男", "女"] * 100,
                  unicodedata.normalize("NFD", "département"): ["Gard", "Aude"] * 100,
                  "sex": ["M", "F"] * 100}).write_csv(data)
    code, stdout, err = run_command(capsys, "anonymize", str(data), "--k", "5", "--out", str(tmp_path / "r.csv"))
    assert code == 0, err
    lines = [line for line in stdout.splitlines() if line.lstrip().startswith("NCP ")]
    assert len(lines) == 4
    assert len({_cells(line[: line.rindex(" ")]) for line in lines}) == 1, lines
