"""The privacy boundary of the pages: a publish through the app on a table D and on D plus one row,
with the same test seed, shows the same public pages.

Every page of the path is fetched from both apps; what lies in a DP-output region
(``data-boundary="dp-output"``: the release, its certificate, the report, the chosen scheme) or
in a custodian panel (``data-boundary="custodian"``: read from the data, labelled so) is cut out,
and the rest must be identical, tag for tag and word for word. The cut is shown to matter: with
the custodian panels left in, the pages differ.
"""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from app_helpers import form_token, german_table, log_in, make_client
from test_app_routes import german_roles, publish, roles_form

PAGES = ("/schema", "/plan", "/plan/preview?epsilon=1&delta=1e-6", "/plan/ledger", "/release/1",
         "/release/1/report", "/release/1/attack", "/release/1/download")
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class Public(HTMLParser):
    """The page without its DP-output regions and custodian panels (``keep``: which to keep)."""

    def __init__(self, keep: tuple[str, ...] = ()) -> None:
        super().__init__(convert_charrefs=True)
        self.keep = keep
        self.parts: list[str] = []
        self.depth = 0  # > 0: inside a region cut out

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        boundary = dict(attrs).get("data-boundary")
        if self.depth or (boundary is not None and boundary not in self.keep):
            if tag not in VOID:
                self.depth += 1
            return
        if dict(attrs).get("name") == "form":  # the plan form's one-time token: random, not the data's
            attrs = [(k, "TOKEN" if k == "value" else v) for k, v in attrs]
        self.parts.append(f"<{tag} {sorted(attrs)}>")

    def handle_endtag(self, tag: str) -> None:
        if self.depth:
            self.depth -= 1
            return
        self.parts.append(f"</{tag}>")

    def handle_data(self, data: str) -> None:
        if not self.depth and data.strip():
            self.parts.append(" ".join(data.split()))


def public(page: str, keep: tuple[str, ...] = ()) -> list[str]:
    parser = Public(keep)
    parser.feed(page)
    return parser.parts


def walk(tmp_path, name: str, extra: int) -> tuple[dict[str, str], str]:
    """The pages of one app that publishes ``kunden.csv`` (D, or D with ``extra`` rows more)."""
    folder = tmp_path / f"data-{name}"
    folder.mkdir()
    table = german_table(folder / "kunden.csv", extra=extra)
    client, workspace = make_client(tmp_path, seed=5, name=name)
    log_in(client)
    with client:
        assert client.post("/open/path", data={"csrf": "test-csrf", "path": str(table)}).status_code == 303
        client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
        publish(client, {"budget_epsilon": "4", "budget_delta": "1e-5"})
        assert client.post("/release/1/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose"}).status_code == 303
        pages = {path: client.get(path).text for path in PAGES}
    return pages, workspace.schema_path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_neighbouring_tables_show_the_same_public_pages(tmp_path):
    d, schema_d = walk(tmp_path, "d", extra=0)
    d1, schema_d1 = walk(tmp_path, "d1", extra=1)
    assert schema_d == schema_d1  # the premise: one public schema for both
    for path in PAGES:
        assert public(d[path]) == public(d1[path]), path
    assert "NOT fit for release" in d["/release/1"]  # seeded: marked so on every release page
    differing = [p for p in PAGES if public(d[p], keep=("custodian",)) != public(d1[p], keep=("custodian",))]
    assert "/release/1" in differing  # the custodian panel states the row count: cut out, as it must be


# -- the ledger's view of the table: which entries are this table's is read from the data ----------


def session(tmp_path, name: str, extra: int, file: str, ledger=None):
    """An app that opens ``file`` (D, or D with ``extra`` rows more), publishes it, and, when it
    publishes, attacks release 1: its attack page (or its failed release page). ``ledger``: a
    ledger copied in first (its earlier releases)."""
    import shutil

    folder = tmp_path / f"data-{name}"
    folder.mkdir()
    table = german_table(folder / file, extra=extra)
    client, workspace = make_client(tmp_path, seed=5, name=name)
    if ledger is not None:
        shutil.copy2(ledger, workspace.ledger_path())
    log_in(client)
    with client:
        assert client.post("/open/path", data={"csrf": "test-csrf", "path": str(table)}).status_code == 303
        client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
        publish(client, {"budget_epsilon": "4", "budget_delta": "1e-5"})
        if workspace.release(1).status != "done":
            return client.get("/release/1").text
        assert client.post("/release/1/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose"}).status_code == 303
        return client.get("/release/1/attack").text


@pytest.mark.slow
def test_the_attack_page_shows_the_ledgers_earlier_releases_to_the_custodian_only(tmp_path):
    """A ledger holds a release of D. An app on D lists it among the releases to attack (and adds
    its ε to the bound); one on D plus a row, under a name of its own, finds none. Which entries
    are this table's is read from the data (its keyed identity, ``Workspace.ledger_view``), so the
    list and the bound it changes sit in custodian panels: the public parts are the same (they were
    not: "earlier release kunden.csv (ledger entry #1, ...)" against "The ledger lists no other
    release of this dataset")."""
    session(tmp_path, "earlier", extra=0, file="kunden.csv")
    ledger = tmp_path / "earlier" / "ledger.sqlite3"
    d = session(tmp_path, "d", extra=0, file="kunden-neu.csv", ledger=ledger)
    d1 = session(tmp_path, "d1", extra=1, file="kunden-neu.csv", ledger=ledger)
    assert "ledger entry #1" in d and "The ledger lists no other release" in d1  # the premise: they differ
    assert public(d) == public(d1)
    assert public(d, keep=("custodian",)) != public(d1, keep=("custodian",))
    # D plus a row under the name D was registered with: refused, as "other data", in a custodian panel
    refused = session(tmp_path, "d1-same-name", extra=1, file="kunden.csv", ledger=ledger)
    assert "already belongs to other data" in refused
    assert not any("belongs to other data" in part for part in public(refused))


def test_an_uploads_refusal_that_names_a_row_is_in_a_custodian_panel(tmp_path):
    """An upload refused for what its rows hold (a ragged row, a row short of fields, no row at
    all) says so only in a custodian panel, so the three refusal pages are the same outside the
    panels. The ragged row's refusal named its line as ordinary text ("line 202 has 4 fields"),
    unlike its siblings, which carry the custodian-only label error_box panels."""
    good = "age,sex,zip\n" + "".join(f"{20 + i % 50},{'FM'[i % 2]},1011{i % 7}\n" for i in range(200))
    pages = {}
    for name, text in {"longer": good + "33,F,10111,x\n", "shorter": good + "33,F\n", "empty": "age,sex,zip\n"}.items():
        client, _ = make_client(tmp_path, seed=5, name=name)
        log_in(client)
        with client:
            upload = {"file": ("people.csv", text.encode(), "text/csv")}
            answer = client.post("/open/upload?csrf=test-csrf", files=upload)
        assert answer.status_code == 400, name
        pages[name] = answer.text
    assert "line 202 has 4 fields" in pages["longer"] and "line 202 has 2 fields" in pages["shorter"]
    assert public(pages["longer"]) == public(pages["shorter"]) == public(pages["empty"])
    assert not any("line 202" in part for part in public(pages["longer"]))


def test_a_budget_registered_by_the_release_is_told_in_a_custodian_panel(app_client):
    """Whether the ledger held a budget for the table is found from its rows (its identity), so the
    release page's line that this release registered its cost as the budget sits in a custodian
    panel (it was in the public Notes card, found by the app tour)."""
    client, _ = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    publish(client)
    page = client.get("/release/1").text
    assert "no budget was set" in page
    assert not any("no budget was set" in part for part in public(page))


def test_a_spent_budget_is_refused_in_a_custodian_panel_with_the_next_step(app_client):
    """The ledger finds a table's budget by its rows, so its refusal of a spent budget (D refused, D
    plus a row not) is told in a custodian panel, with how to raise the budget: the app cannot (it
    was a plain error box, and said nothing of what to do, found by the app tour)."""
    client, workspace = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    publish(client)  # no budget given: its cost is the budget
    answer = client.post("/publish", data={"csrf": "test-csrf", "form": form_token(client), "epsilon": "1",
                                           "delta": "1e-6"})
    assert answer.status_code == 303 and answer.headers["location"] == "/release/2"
    assert workspace.release(2).ended.wait(60) and workspace.release(2).status == "failed"
    page = client.get("/release/2").text
    assert "has spent" in page and f"crowdsafe ledger budget adult --epsilon E --delta D --raise --ledger " \
        f"{workspace.ledger_path()}" in page
    assert not any("has spent" in part or "ledger budget" in part for part in public(page))


def test_a_total_budget_below_the_releases_cost_is_refused_with_the_plan_page_as_next_step(app_client):
    """A total given on the plan page that the release alone exceeds registers nothing: the next
    step is a larger total there, not raising a budget the ledger does not hold."""
    client, workspace = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    answer = client.post("/publish", data={"csrf": "test-csrf", "form": form_token(client), "epsilon": "1",
                                           "delta": "1e-6", "budget_epsilon": "0.5", "budget_delta": "1e-5"})
    assert answer.status_code == 303 and workspace.release(1).ended.wait(60)
    page = client.get("/release/1").text
    assert "has spent" in page and "Total budget of this dataset" in page and "ledger budget" not in page
    assert not any("has spent" in part for part in public(page))
