"""The app's pages in a real browser at a phone's width (390 px) and a desktop's (1280 px): no
page is wider than the screen (``document.documentElement.scrollWidth``), so no table, path or
fact runs out of its panel: wide tables scroll inside their own wrapper. Started and driven as
in test_app_browser.py (Debian's Chromium through Playwright)."""

from __future__ import annotations

from typing import Any

import pytest
from test_app_browser import Server, Walk

LONG_PATH = "/tmp/Patientendaten_Universitätsklinikum_München_Export_2024_final_v2_bereinigt_und_geprüft.csv"
PAGES = ("/open", "/schema", "/plan", "/release/1", "/release/1/report", "/release/1/report.html",
         "/release/1/attack", "/release/1/download", "/nope", "/release/1/file/nothing", "/release/9", "/publish")


#: how far (px) the schema page's column cards reach past the right edge of their grid (0: none)
CARDS_PAST_GRID = """Math.max(0, ...[...document.querySelectorAll('.columns')].flatMap(grid =>
    [...grid.children].map(card => card.getBoundingClientRect().right - grid.getBoundingClientRect().right)))"""


def _published_twice(walk: Walk, server: Server) -> None:
    """people opened, two releases (the ledger lists entries), an attack run on the first."""
    page = walk.page
    page.goto(server.url)
    page.get_by_role("button", name="Open this table").click()
    page.wait_for_url("**/schema")
    walk.confirm_all()
    page.get_by_role("button", name="Save the schema and plan the release").click()
    page.wait_for_url("**/plan")
    walk.plan("2", budget=("10", "1e-5"))
    walk.publish()
    page.goto(f"{server.base}/plan")
    walk.plan("1")
    walk.publish()
    page.goto(f"{server.base}/release/1/attack")
    page.get_by_role("button", name="Run the attack").click()
    page.wait_for_selector("#bound-title")


def _widths(browser: Any, state: Any, base: str, width: int) -> dict[str, int]:
    context = browser.new_context(viewport={"width": width, "height": 844}, storage_state=state,
                                  is_mobile=width < 500, has_touch=width < 500)
    page = context.new_page()
    found = {}
    try:
        for path in PAGES:
            page.goto(base + path)  # (its load event: the pages load no content later)
            found[path] = page.evaluate("document.documentElement.scrollWidth")
            if path == "/schema":  # the column cards stay inside their grid (found at 390 px by a sweep)
                found["cards past their grid"] = page.evaluate(CARDS_PAST_GRID)
        page.goto(f"{base}/open")  # a long error message (a path that is not there)
        page.fill("#path", LONG_PATH)
        page.get_by_role("button", name="Read this file").click()
        page.wait_for_selector(".error")
        page.wait_for_load_state("load")  # its stylesheet applied, as for the pages above (a CI run measured before)
        found["a long error"] = page.evaluate("document.documentElement.scrollWidth")
    finally:
        context.close()
    return found


@pytest.mark.slow
def test_no_page_is_wider_than_a_phone(browser, tmp_path):
    server = Server(tmp_path)
    walk = Walk(browser, tmp_path, "narrow")
    try:
        _published_twice(walk, server)
        state = walk.context.storage_state()
        assert walk.errors == []
    finally:
        walk.context.close()
    try:
        for width in (390, 1280):
            widths = _widths(browser, state, server.base, width)
            past = widths.pop("cards past their grid")
            assert past <= 0.5, f"at {width} px the schema's column cards run {past} px past their grid"
            wider = {path: w for path, w in widths.items() if w > width}
            assert not wider, f"pages wider than {width} px: {wider}"
            assert set(widths) == {*PAGES, "a long error"}
    finally:
        server.stop()
