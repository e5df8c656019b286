"""Helpers of the app's tests: a workspace in a temporary folder, the guarded app with fixed
secrets, a client that holds the session cookie, and small tables to open."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from starlette.testclient import TestClient

from crowdsafe.app.pages import create_app
from crowdsafe.app.security import Checks, Secrets
from crowdsafe.app.workspace import Workspace
from crowdsafe.datasets.german_customers import write_german_customers

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"


def fixed_keys() -> Secrets:
    return Secrets(token="test-token", session="test-session", csrf="test-csrf")


def make_client(tmp_path: Path, *, checks: Checks | None = None, max_upload: int = 1 << 20, seed: int | None = 11,
                keys: Secrets | None = None, name: str = "ws") -> tuple[TestClient, Workspace]:
    """A client of a fresh app (its own private folder, output folder and ledger), not logged in."""
    root = tmp_path / name
    (root / "work").mkdir(parents=True, mode=0o700)
    workspace = Workspace(root / "work", root / "releases", ledger=root / "ledger.sqlite3", seed=seed,
                          max_upload=max_upload)
    app = create_app(workspace, port=PORT, keys=keys or fixed_keys(), checks=checks)
    return TestClient(app, base_url=BASE, follow_redirects=False), workspace


def log_in(client: TestClient, token: str = "test-token") -> None:
    answer = client.get(f"/?token={token}")
    assert answer.status_code == 303, answer.text


def csrf_of(page: str) -> str:
    found = re.search(r'name="csrf" value="([^"]+)"', page)
    assert found, "no CSRF field on the page"
    return found.group(1)


def form_token(client: TestClient) -> str:
    """The one-time token of a fresh plan form (each GET /plan issues one)."""
    found = re.search(r'name="form" value="([^"]+)"', client.get("/plan").text)
    assert found, "no form token on the plan page"
    return found.group(1)


def german_table(path: Path, rows: int = 400, seed: int = 3, extra: int = 0) -> Path:
    """The German customer table (:func:`crowdsafe.datasets.german_customers.write_german_customers`:
    ';'-separated, decimal commas, direct identifiers, postal codes with leading zeros).
    ``extra``: rows appended that repeat the first rows (a neighbouring table that keeps every
    value set, bound and frequency order the draft reads)."""
    write_german_customers(path, rows=rows, seed=seed, force=True)
    if extra:
        lines = path.read_text(encoding="utf-8").splitlines()
        path.write_text("\n".join(lines + lines[1:1 + extra]) + "\n", encoding="utf-8")
    return path


def finished_release(workspace: Workspace, number: int = 1, seconds: float = 30.0) -> Any:
    """The workspace's release ``number`` once it is no longer running (polled every 50 ms, for
    at most ``seconds``), asserted done."""
    for _ in range(int(seconds / 0.05)):
        if workspace.release(number).status != "running":
            break
        time.sleep(0.05)
    record = workspace.release(number)
    assert record.status == "done", record.error
    return record
