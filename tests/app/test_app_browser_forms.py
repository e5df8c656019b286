"""The forms in a real browser (as test_app_browser.py runs the app): a form that takes a while
is sent once, its button disabled and saying what runs (static/app.js), so a double click on
"Publish the release" posts once (the server refuses a repeat anyway: test_app_publish_once.py);
each bundled table's radio button sits on its label's line; and a publish that runs longer than
one progress request waits (pages.PROGRESS_WAIT) is followed, request after request, to its release."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from app_helpers import fixed_keys, german_table
from test_app_browser import LEDGER_SHOWN, Server, Walk
from test_app_routes import german_roles
from test_app_stopping import _held

from crowdsafe.app import pages
from crowdsafe.app.server import bind
from crowdsafe.app.workspace import Workspace

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


@contextmanager
def _served(workspace: Workspace) -> Iterator[str]:
    """The app over ``workspace`` served by uvicorn in a thread of this process (so a test can
    hold its publish), on a free port: its address."""
    import uvicorn

    sock = bind(0)
    port = sock.getsockname()[1]
    config = uvicorn.Config(pages.create_app(workspace, port=port, keys=fixed_keys()), interface="asgi3",
                            lifespan="off", log_level="warning", access_log=False)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(30)
        sock.close()


@pytest.mark.slow
def test_a_long_publish_is_followed_to_its_release(browser, tmp_path, monkeypatch):
    """The progress panel asks again each time it is swapped in (hx-trigger="load"): a publish
    held through several progress requests is shown once it ends, without a reload."""
    root = tmp_path / "ws"
    (root / "work").mkdir(parents=True, mode=0o700)
    workspace = Workspace(root / "work", root / "releases", ledger=root / "ledger.sqlite3", seed=11)
    workspace.open_local(str(german_table(tmp_path / "kunden.csv")))
    _, review = workspace.require()
    workspace.update_review(german_roles(), {(a.name, m) for a in review.draft.attributes for m in a.from_data})
    monkeypatch.setattr(pages, "PROGRESS_WAIT", 0.2)
    entered, let_go = _held(monkeypatch, "choose_recoding")
    walk = Walk(browser, tmp_path, "progress")
    page = walk.page
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if r.url.endswith("/release/1/status") else None)
    try:
        with _served(workspace) as base:
            page.goto(f"{base}/?token=test-token")
            page.goto(f"{base}/plan")
            page.get_by_role("button", name="Publish the release").click()
            page.wait_for_url("**/release/1")
            assert entered.wait(60)
            for _ in range(3):  # three progress requests answered while it is held, each asking again
                with page.expect_response(lambda r: r.url.endswith("/release/1/status"), timeout=30_000):
                    pass
            assert "Running for" in page.locator("#progress").inner_text()
            let_go.set()
            page.wait_for_selector(".verdict", timeout=60_000)
            assert page.url.endswith("/release/1") and len(asked) >= 3
            assert walk.errors == []
    finally:
        let_go.set()
        walk.context.close()
        workspace.stop_publishes(timeout=60)


@pytest.mark.slow
def test_the_plan_follows_an_emptied_field(browser, tmp_path):
    """Emptying δ, then typing a wrong ε, shows why there is no plan for what the form now holds. The
    form's required fields stopped htmx's request while one was empty, so the plan of the numbers
    before stayed on show beside them (an "ε: '1,5' is not a number" beside ε = abc, found by the
    app tour)."""
    server = Server(tmp_path)
    walk = Walk(browser, tmp_path, "preview")
    page = walk.page
    try:
        page.goto(server.url)
        page.get_by_role("button", name="Open this table").click()
        page.wait_for_url("**/schema", timeout=60_000)
        page.get_by_role("button", name="Save the schema and plan the release").click()
        page.wait_for_url("**/plan")
        page.wait_for_selector("#plan-k")
        page.wait_for_selector(LEDGER_SHOWN)  # htmx has processed the form (Walk.plan)
        page.fill("#delta", "")
        page.wait_for_function("() => !document.querySelector('#plan-k')", timeout=30_000)
        assert "δ: '' is not a number" in page.locator("#preview").inner_text()
        page.fill("#epsilon", "abc")
        page.wait_for_function("() => document.querySelector('#preview').innerText.includes(\"'abc'\")",
                               timeout=30_000)
        page.fill("#delta", "1e-6")
        page.fill("#epsilon", "2")
        page.wait_for_selector("#plan-k", timeout=30_000)
        assert walk.errors == []
    finally:
        walk.context.close()
        server.stop()
