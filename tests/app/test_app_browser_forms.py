"""The forms in a real browser (as test_app_browser.py runs the app): a form that takes a while
is sent once, its button disabled and saying what runs (static/app.js), so a double click on
"Publish the release" posts once (the server refuses a repeat anyway: test_app_publish_once.py);
and each bundled table's radio button sits on its label's line."""

from __future__ import annotations

import pytest
from test_app_browser import Server, Walk

FIRST_LINE = """v => [document.getElementById('bundled-' + v).getBoundingClientRect().toJSON(),
                 document.querySelector('label[for="bundled-' + v + '"]').getClientRects()[0].toJSON()]"""


def _double_click(page, form: str) -> tuple[list[bool], str]:
    """Click ``form``'s button twice, 300 ms apart, with the page kept (a listener on the window,
    after the app's on the document, stops the navigation): which submits went through (not
    stopped by the app's script), and the button's state and words then."""
    page.evaluate("""sel => { window.sent = []; window.addEventListener('submit', e => {
        window.sent.push(!e.defaultPrevented); e.preventDefault(); });
        const b = document.querySelector(sel + ' button'); b.click();
        setTimeout(() => { b.click(); window.clickedTwice = true; }, 300); }""", form)
    # a click's submit event runs within the click: once the second has returned, both are counted
    page.wait_for_function("() => window.clickedTwice === true")
    return page.evaluate("() => window.sent"), page.evaluate(
        "sel => { const b = document.querySelector(sel + ' button'); return (b.disabled ? 'disabled: ' : '') + "
        "b.textContent; }", form)


@pytest.mark.slow
def test_a_busy_form_is_sent_once_and_says_what_runs(browser, tmp_path):
    server = Server(tmp_path)
    walk = Walk(browser, tmp_path, "forms")
    page = walk.page
    try:
        page.goto(server.url)
        # each radio button on its label's first line (not on a line of its own above it)
        for value in ("people", "adult"):
            radio, line = page.evaluate(FIRST_LINE, value)  # the label's first line box
            middle = radio["top"] + radio["height"] / 2
            assert radio["right"] <= line["left"] + 1 and line["top"] <= middle <= line["bottom"], (value, radio, line)
        sent, button = _double_click(page, 'form[action="/open/bundled"]')
        assert sent == [True] and button == "disabled: Reading the table…"
        page.reload()  # the form as served: it posts (nothing on the page needs the script to)
        page.get_by_role("button", name="Open this table").click()
        page.wait_for_url("**/schema", timeout=60_000)
        walk.confirm_all()
        page.get_by_role("button", name="Save the schema and plan the release").click()
        page.wait_for_url("**/plan")
        walk.plan("2", budget=("10", "1e-5"))
        sent, button = _double_click(page, "form.plan-form")
        assert sent == [True] and button == "disabled: Publishing…"
        page.reload()
        walk.plan("2.5")
        page.get_by_role("button", name="Publish the release").click()
        page.wait_for_selector(".verdict", timeout=60_000)
        assert page.url.endswith("/release/1")
        page.go_back()  # the plan page again (not kept by the browser, or kept and its form re-enabled)
        page.wait_for_url("**/plan")
        page.wait_for_load_state("networkidle")
        assert page.locator("form.plan-form button.primary").is_enabled()
        assert walk.errors == []
    finally:
        walk.context.close()
        server.stop()
