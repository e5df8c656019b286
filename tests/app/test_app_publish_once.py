"""A plan form publishes once (crowdsafe.app.forms): the form carries a one-time token that the
first publish spends as it starts; the same form sent again (a double click, two identical
posts) starts nothing, charges nothing, and is told which release it started."""

from __future__ import annotations

import threading

import pytest
from app_helpers import form_token
from test_app_routes import german_roles, open_german, publish, roles_form

from crowdsafe.app.forms import AlreadyStarted
from crowdsafe.privacy.ledger import Ledger


def _ready(client, workspace, tmp_path) -> None:
    open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})


def _charges(workspace) -> list[int]:
    with Ledger(workspace.ledger) as book:
        return [e.id for e in book.entries()]


def _releases(workspace) -> list:
    return [p for p in workspace.out_dir.iterdir() if p.is_dir()] if workspace.out_dir.exists() else []


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_two_identical_posts_publish_and_charge_once(app_client, tmp_path):
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    form = {"csrf": "test-csrf", "form": form_token(client), "epsilon": "1", "delta": "1e-6",
            "budget_epsilon": "10", "budget_delta": "1e-5"}
    first = client.post("/publish", data=form)
    second = client.post("/publish", data=form)
    assert first.status_code == 303 and first.headers["location"] == "/release/1"
    assert second.status_code == 409
    assert "already started release 1" in second.text and 'href="/release/1"' in second.text
    assert "charges nothing" in second.text
    for worker in workspace._workers:  # the publish finishes
        worker.join(60)
    assert workspace.release(1).status == "done"
    assert list(workspace.releases) == [1]
    assert len(_charges(workspace)) == 1 and len(_releases(workspace)) == 1
    # a fresh form publishes again
    publish(client, {"epsilon": "0.5"}, number=2)
    assert len(_charges(workspace)) == 2


def test_a_publish_without_a_form_token_is_refused(app_client, tmp_path):
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    answer = client.post("/publish", data={"csrf": "test-csrf", "epsilon": "1", "delta": "1e-6"})
    assert answer.status_code == 400 and "no form token" in answer.text
    stale = client.post("/publish", data={"csrf": "test-csrf", "form": "not-issued", "epsilon": "1", "delta": "1e-6"})
    assert stale.status_code == 400 and "out of date" in stale.text
    assert workspace.releases == {} and not workspace.ledger.exists()


def test_two_racing_starts_of_one_form_start_one_release(app_client, tmp_path):
    """The token is spent atomically with the release's start: threads racing with one form start one."""
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    token = workspace.issue_form()
    gate = threading.Barrier(4)
    started, repeated = [], []

    def go() -> None:
        gate.wait()
        try:
            started.append(workspace.start_publish({"epsilon": 1.0, "delta": 1e-6, "budget": (10.0, 1e-5)}, token))
        except AlreadyStarted as exc:
            repeated.append(exc.number)

    threads = [threading.Thread(target=go) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(started) == 1 and repeated == [started[0].number] * 3
    workspace.stop_publishes(60)
    assert len(workspace.releases) == 1


def test_the_plan_form_is_sent_once_by_the_page(app_client, tmp_path):
    """The page's part (checked in a browser by test_app_narrow.py): the form is marked to be sent
    once and the script that does it is served; without it the form still posts (no JS needed)."""
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    page = client.get("/plan").text
    assert 'action="/publish" data-busy="Publishing…"' in page and '<script src="/static/app.js" defer>' in page
    script = client.get("/static/app.js")
    assert script.status_code == 200 and "data-busy" in script.text
    assert form_token(client) != form_token(client)  # every plan page its own form
