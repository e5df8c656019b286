"""The `--ledger` help of every command says where the default ledger really is.

It said `~/.local/share/crowdsafe/ledger.sqlite3`, but the ledger is under `$XDG_DATA_HOME` when
that is set: a cron job (no XDG_DATA_HOME) and the custodian's desktop shell (with one) then
charged two ledgers, two budgets for one table, while the help named one file.
"""

from __future__ import annotations

import typer

from crowdsafe import cli
from crowdsafe.privacy.ledger_storage import ledger_path

DEFAULT_IS = "$XDG_DATA_HOME/crowdsafe/ledger.sqlite3, ~/.local/share/crowdsafe/ledger.sqlite3 without it"


def _ledger_helps() -> dict[str, str]:
    found: dict[str, str] = {}

    def walk(command, path):
        for param in getattr(command, "params", []):
            if "--ledger" in getattr(param, "opts", []):
                found[path] = param.help or ""
        for name, sub in getattr(command, "commands", {}).items():
            walk(sub, f"{path} {name}".strip())

    walk(typer.main.get_command(cli.app), "")
    return found


def test_every_default_ledger_help_names_xdg_data_home(tmp_path, monkeypatch):
    monkeypatch.delenv("CROWDSAFE_LEDGER", raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert ledger_path("default") == tmp_path / "xdg" / "crowdsafe" / "ledger.sqlite3"  # what the help must say
    helps = _ledger_helps()
    assert {"publish", "query", "ledger show", "report", "app"} <= set(helps), helps
    for command, text in helps.items():
        if "default: $CROWDSAFE_LEDGER" in text:
            assert DEFAULT_IS in text, (command, text)
