"""Helpers of the app's tests: a workspace in a temporary folder, the guarded app with fixed
secrets, a client that holds the session cookie, and small tables to open."""

from __future__ import annotations

import random
import re
from pathlib import Path

from starlette.testclient import TestClient

from crowdsafe.app.pages import create_app
from crowdsafe.app.security import Checks, Secrets
from crowdsafe.app.workspace import Workspace

PORT = 8765
BASE = f"http://127.0.0.1:{PORT}"
GERMAN_COLUMNS = ("Kundennummer;Vorname;Nachname;Geburtsdatum;E-Mail;Telefon;PLZ;Ort;Geschlecht;Alter;Einkommen;"
                  "Diagnose")


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


def german_table(path: Path, rows: int = 400, seed: int = 3, extra: int = 0) -> Path:
    """A German customer table: ';'-separated, decimal commas (Einkommen), direct identifiers.
    ``extra``: rows appended that repeat the first rows (a neighbouring table that keeps every
    value set, bound and frequency order the draft reads)."""
    rng = random.Random(seed)
    first = ["Anna", "Bernd", "Clara", "Dieter", "Eva", "Frank", "Greta", "Hans", "Ilse", "Jürgen", "Karin", "Lutz"]
    last = ["Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Schulz", "Hoffmann"]
    places = [("10115", "Berlin"), ("10117", "Berlin"), ("20095", "Hamburg"), ("20097", "Hamburg"),
              ("80331", "München"), ("80333", "München"), ("50667", "Köln"), ("60311", "Frankfurt am Main")]
    diagnoses = ["Diabetes", "Asthma", "Bluthochdruck", "Migräne", "Rückenschmerzen", "keine"]
    lines = [GERMAN_COLUMNS]
    for i in range(rows):
        plz, place = rng.choice(places)
        age = rng.randint(18, 89)
        born = f"{2024 - age}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d}"
        income = f"{rng.randint(12, 95)}.{rng.randint(0, 999):03d},{rng.randint(0, 99):02d}"
        lines.append(f"{100000 + i};{rng.choice(first)};{rng.choice(last)};{born};kunde{i}@example.de;"
                     f"+49 30 {rng.randint(1000000, 9999999)};{plz};{place};{rng.choice('wm')};{age};{income};"
                     f"{rng.choice(diagnoses)}")
    lines += lines[1:1 + extra]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
