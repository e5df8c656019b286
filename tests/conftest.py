"""Fixtures shared by the whole suite."""

from __future__ import annotations

import pytest

from crowdsafe.privacy.ledger import LEDGER_ENV


@pytest.fixture(autouse=True)
def private_ledger(tmp_path, monkeypatch):
    """Every test gets its own ledger file, so no test reads or charges the user's ledger."""
    path = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv(LEDGER_ENV, str(path))
    return path
