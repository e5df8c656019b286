"""``--sensitive`` says how many attributes it takes: check and publish take a comma-separated
list (an sdcMicro user measures ℓ-diversity on several sensitive variables at once), anonymize
one."""

from __future__ import annotations

from cli_helpers import run_command


def test_the_help_says_whether_several_are_taken(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    for command, several in [("check", True), ("publish", True), ("anonymize", False)]:
        code, out, _ = run_command(capsys, command, "--help")
        line = next(line for line in out.splitlines() if line.lstrip("│ ").startswith("--sensitive"))
        assert code == 0 and ("Comma-separated sensitive attributes" in line) is several, command
