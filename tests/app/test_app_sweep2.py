"""Found by the second app sweep (report-only walk-through): what the pages said wrong, each
fixed with a test here."""

from __future__ import annotations

import re

import pytest


def _custodian_panels(page: str) -> str:
    """The text inside the page's custodian-only panels."""
    return "".join(re.findall(r'<section class="panel custodian" data-boundary="custodian".*?</section>', page,
                              flags=re.S))


@pytest.mark.parametrize("content", [b"patient_id,age,sex\n", b"a;b\n"])
def test_a_header_only_upload_is_refused_at_open_named_as_uploaded_and_custodian_only(app_client, content):
    client, workspace = app_client
    answer = client.post("/open/upload?csrf=test-csrf", files={"file": ("patiënten leer.csv", content, "text/csv")})
    assert answer.status_code == 400 and workspace.opened is None  # stays on the open page, nothing opened
    page = answer.text
    assert "1. Open a table" in page
    panels = _custodian_panels(page)
    assert "patiënten leer.csv has a header but no rows" in panels  # the name as uploaded, in the orange panel
    outside = page.replace(panels, "")
    assert "no rows" not in outside and str(workspace.workdir) not in page and "uploads/" not in page


def test_a_private_copys_path_is_never_shown(app_client):
    """Every error a page shows names an upload as the user named it (the filter every error goes through)."""
    client, workspace = app_client
    from crowdsafe.app.pages import Pages
    from crowdsafe.app.security import Secrets

    pages = Pages(workspace, Secrets())
    private = workspace.workdir / "uploads" / "3" / "kunden (1).csv"
    said = pages.as_named(f"{private} has a bad row; see {workspace.workdir}/schema.toml")
    assert said == "kunden (1).csv has a bad row; see the app's private folder/schema.toml"
