"""Fixtures of the app's tests (helpers: app_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from app_helpers import log_in, make_client
from starlette.testclient import TestClient

from crowdsafe.app.workspace import Workspace


@pytest.fixture
def app_client(tmp_path) -> Iterator[tuple[TestClient, Workspace]]:
    """A logged-in client of a fresh app, and its workspace."""
    client, workspace = make_client(tmp_path)
    log_in(client)
    with client:
        yield client, workspace
