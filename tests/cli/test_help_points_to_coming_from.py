"""``crowdsafe --help`` points a user of ARX, sdcMicro or OpenDP at the page that maps their tasks,
and that page exists."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_command

ROOT = Path(__file__).resolve().parents[2]


def test_the_top_level_help_names_the_page(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    code, out, _ = run_command(capsys, "--help")
    assert code == 0 and "docs/coming-from.md" in out
    page = (ROOT / "docs" / "coming-from.md").read_text(encoding="utf-8")
    assert all(f"## {tool}" in page for tool in ("ARX", "sdcMicro", "OpenDP"))
