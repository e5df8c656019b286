"""Fixtures of the app's tests (helpers: app_helpers.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

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


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium through Playwright (as tests/report/test_report_browser.py launches it)."""
    from playwright.sync_api import sync_playwright

    from report.test_report_browser import chromium_path

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium_path(), headless=True,
                                              args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            yield launched
        finally:
            launched.close()
