"""What the pages say, as the browser sweep of the app found it wrong: the table a release's pages
name, the releases the attack lists, and the app's words for limits, errors and progress."""

from __future__ import annotations

import re

import pytest
from app_helpers import form_token
from test_app_routes import german_roles, open_german, publish, roles_form


def _ready(client, workspace, tmp_path) -> None:
    open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})


def _table_named(page: str) -> str:
    found = re.search(r'class="table-name">Table: <strong>([^<]+)</strong>', page)
    assert found, "the page names no table"
    return found.group(1)


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_release_names_its_own_table_and_the_other_releases_by_their_order(app_client, tmp_path):
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    publish(client, {"epsilon": "0.5"}, number=2)
    first, second = client.get("/release/1/attack").text, client.get("/release/2/attack").text
    assert "later release kunden.csv (ledger entry #2" in first and "earlier release" not in first
    assert "earlier release kunden.csv (ledger entry #1" in second and "later release" not in second
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "people"}).status_code == 303
    assert _table_named(client.get("/plan").text) == "people"
    for path in ("/release/1", "/release/1/report", "/release/1/attack", "/release/1/download"):
        assert _table_named(client.get(path).text) == "kunden.csv", path


def test_the_upload_limit_is_said_as_the_refusal_says_it(tmp_path):
    """``--max-upload 10K``: the open page says 10 KiB (not "0 MiB"), as the 413 answer does."""
    from app_helpers import log_in, make_client

    client, _ = make_client(tmp_path, max_upload=10 << 10)
    log_in(client)
    with client:
        assert "(up to 10 KiB)" in client.get("/open").text
        refused = client.post("/open/upload?csrf=test-csrf", files={"file": ("big.csv", b"a,b\n" + b"1,2\n" * 5000)})
        assert refused.status_code == 413 and "(10 KiB)" in refused.text
    bigger, _ = make_client(tmp_path, max_upload=4 << 30, name="default")
    log_in(bigger)
    with bigger:
        assert "(up to 4 GiB)" in bigger.get("/open").text


def test_an_upload_that_is_not_a_table_is_named_as_the_user_named_it(app_client):
    client, workspace = app_client
    png = b"\x89PNG\r\n\x1a\n" + bytes(64)
    answer = client.post("/open/upload?csrf=test-csrf", files={"file": ("image.png", png, "image/png")})
    assert answer.status_code == 400
    assert "Could not do that:</strong> image.png is a PNG image" in answer.text
    assert str(workspace.workdir) not in answer.text and "uploads/" not in answer.text


def test_an_empty_upload_is_named_as_empty(app_client):
    """A chosen file of 0 bytes is said to be empty, by its name; it was told to "choose a file to
    upload", as if none had been chosen (found by the app tour)."""
    client, _ = app_client
    answer = client.post("/open/upload?csrf=test-csrf", files={"file": ("leer.csv", b"", "text/csv")})
    assert answer.status_code == 400 and "leer.csv is empty (0 bytes)" in answer.text
    none = client.post("/open/upload?csrf=test-csrf", files={"other": ("x.txt", b"x", "text/plain")})
    assert none.status_code == 400 and "choose a file to upload" in none.text


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_unknown_addresses_and_methods_get_the_apps_own_page(app_client, tmp_path):
    client, workspace = app_client
    nope = client.get("/nope")
    assert nope.status_code == 404 and nope.headers["content-type"].startswith("text/html")
    assert "This app has no page at /nope." in nope.text and 'href="/"' in nope.text
    wrong = client.post("/plan", data={"csrf": "test-csrf"})
    assert wrong.status_code == 405 and "/plan does not take a POST request." in wrong.text
    assert "GET" in wrong.headers["allow"]
    assert client.get("/static/nothing.css").status_code == 404
    no_release = client.get("/release/9/report.html")
    assert no_release.status_code == 404 and "There is no such release in this session." in no_release.text
    # a refused publish leaves /publish in the address bar: reloaded (GET) it is the plan
    address = client.get("/publish")
    assert address.status_code == 303 and address.headers["location"] == "/plan"
    _ready(client, workspace, tmp_path)
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    kind = client.get("/release/1/file/x")
    assert kind.status_code == 404 and "not &#39;x&#39;" in kind.text and 'href="/release/1/download"' in kind.text
    workspace.release(1).report.unlink()
    gone = client.get("/release/1/report.html")
    assert gone.status_code == 404 and "the report is no longer at" in gone.text


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_refused_publish_says_why_once_and_is_not_kept_as_the_forms_value(app_client, tmp_path):
    from app_helpers import form_token

    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    refused = client.post("/publish", data={"csrf": "test-csrf", "form": form_token(client), "epsilon": "abc",
                                            "delta": "1e-6"})
    assert refused.status_code == 400 and refused.text.count("is not a number") == 1
    assert "see the message above the form" in refused.text
    page = client.get("/plan").text
    assert 'id="epsilon" name="epsilon" type="text" inputmode="decimal" value="1"' in page
    assert "abc" not in page and "No plan" not in page
    publish(client, {"epsilon": "0.7", "budget_epsilon": "10", "budget_delta": "1e-5"})
    assert 'name="epsilon" type="text" inputmode="decimal" value="0.7"' in client.get("/plan").text  # accepted: kept


def test_progress_names_a_step_that_counts_no_rows_alone():
    from pathlib import Path

    from crowdsafe.app.jobs import Pass
    from crowdsafe.app.pages import _environment
    from crowdsafe.app.workspace import ReleaseRecord

    record = ReleaseRecord(1, "big.csv", {}, Path("out"), Path("out/big.csv"))
    passes = [Pass("reading the table", None, 1_500_000, True), Pass("sampling", 200, 50),
              Pass("choosing the generalization", None), Pass("checking", None, 0, True)]
    html = _environment().get_template("progress.html").render(record=record, passes=passes, csrf="x")
    lines = [" ".join(line.split()) for line in html.splitlines() if line.strip().startswith("<p>")]
    assert "<p>reading the table: 1,500,000 rows (done)</p>" in lines
    assert "<p>sampling: 25% of 200 rows</p>" in lines
    assert "<p>choosing the generalization…</p>" in lines
    assert "<p>checking (done)</p>" in lines
    assert ": 0 rows" not in html


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_delta_is_written_as_the_user_writes_it_and_kept_on_one_line(app_client, tmp_path):
    """The app's own numbers (the planner's explanation, a sentence of the library, is its own)."""
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    preview = client.get("/plan/preview", params={"epsilon": "1", "delta": "1e-6"}).text
    assert 'δ = <span class="num">1e-6</span>.' in preview
    assert '(asked: <span class="num">1e-6</span>)' in preview and "asked: 1e-06" not in preview
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    release = client.get("/release/1").text
    assert '(1, <span class="num">1e-6</span>)-differentially private' in release and "1e-06)-diff" not in release
    ledger = client.get("/plan/ledger").text
    assert '<td class="number"><span class="num">1e-5</span></td>' in ledger and "e-06" not in ledger
    assert ".num { white-space: nowrap; }" in client.get("/static/app.css").text


def test_the_forms_that_take_a_while_say_so_while_they_are_sent(app_client, tmp_path):
    """Each form that reads the table is marked (data-busy: static/app.js disables its button and
    says what runs; test_app_narrow.py checks it in a browser); without the script it posts as ever."""
    client, workspace = app_client
    page = client.get("/open").text
    for action, busy in (("/open/upload?csrf=test-csrf", "Uploading and reading…"), ("/open/path", "Reading the file…"),
                         ("/open/bundled", "Reading the table…")):
        assert re.search(rf'action="{re.escape(action)}"[^>]*data-busy="{busy}"', page), action
    _ready(client, workspace, tmp_path)
    assert 'action="/schema" data-busy="Saving…"' in client.get("/schema").text


def test_the_schema_page_says_where_a_choice_that_is_not_public_is_replaced(app_client, tmp_path):
    """Found by a new user's walk-through with a hospital table: the draft's note on a grouping by
    frequency says to "list the public domain instead", and the page offered only a tick that
    it is public; the app cannot edit a grouping or a type, nor read a schema file back. The
    page now says where it is done: the downloaded schema, edited, published from the command
    line."""
    client, _ = app_client
    open_german(client, tmp_path)
    page = client.get("/schema").text
    hint = re.search(r'<p class="hint" id="edit-elsewhere">(.*?)</p>', page, re.DOTALL)
    assert hint, "the schema page says nowhere how to replace a choice that is not public"
    text = " ".join(re.sub(r"<[^>]+>", "", hint.group(1)).split())
    assert "download the schema, edit it" in text
    assert "crowdsafe publish DATA --schema FILE" in text and "does not read a schema file back" in text


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_note_on_columns_not_published_uses_the_apps_word_for_their_role(app_client, tmp_path):
    """The release page's note said "insensitive attributes" of the columns the schema page calls
    "other" (found by a new user's walk-through, 2026-11-30)."""
    from test_app_routes import publish

    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    page = client.get("/release/1").text
    note = re.search(r"<li>not published: ([^<]*)</li>", page)
    assert note, "the release page has no note on the columns it does not publish"
    assert "'other' in the app" in note.group(1).replace("&#39;", "'")


def test_a_schema_without_quasi_identifiers_says_where_to_make_one(app_client):
    """The library's "name them with qi=[...]" is a Python caller's step; the app's user makes a
    column a quasi-identifier on the schema page (the plan and publish said qi=[...], found by the
    app tour)."""
    client, workspace = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    _, review = workspace.require()
    form = {"csrf": "test-csrf", "action": "continue"}
    form.update({f"role-{i}": "insensitive" for i, _ in enumerate(review.draft.attributes)})
    assert client.post("/schema", data=form).status_code == 303
    preview = client.get("/plan/preview?epsilon=1&delta=1e-6").text
    refused = client.post("/publish", data={"csrf": "test-csrf", "form": form_token(client), "epsilon": "1",
                                            "delta": "1e-6"}).text
    for page in (preview, refused):
        assert "make at least one column a quasi-identifier on the schema page" in page and "qi=[" not in page


def test_a_lattice_too_large_says_what_to_do_on_the_schema_page(app_client, tmp_path):
    """Thirty columns of four values, all quasi-identifiers by the draft: too many candidate schemes.
    The refusal names the schema page, not the columns and scheme parameters a Python caller gives."""
    table = tmp_path / "wide.csv"
    rows = ["\t".join(f"c{j}" for j in range(30))] + ["\t".join("abcd"[(i + j) % 4] for j in range(30))
                                                     for i in range(40)]
    table.write_text("\n".join(rows).replace("\t", ",") + "\n")
    client, _ = app_client
    assert client.post("/open/path", data={"csrf": "test-csrf", "path": str(table)}).status_code == 303
    preview = client.get("/plan/preview?epsilon=1&delta=1e-6").text
    assert "candidate schemes" in preview and "make fewer columns quasi-identifiers on the schema page" in preview
    assert "parameter" not in preview


def test_a_ledger_the_app_cannot_use_says_how_to_start_it_with_another(app_client):
    """A ledger file that is not a database: the plan page's ledger panel and a publish say to start
    the app with --ledger, not "ledger=PATH", a Python caller's argument (found by the app tour)."""
    client, workspace = app_client
    workspace.ledger_path().write_bytes(b"not a database " * 100)
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    panel = client.get("/plan/ledger").text
    refused = client.post("/publish", data={"csrf": "test-csrf", "form": form_token(client), "epsilon": "1",
                                            "delta": "1e-6"}).text
    for page in (panel, refused):
        assert "not a usable crowdsafe ledger" in page and "start it again with --ledger PATH" in page
        assert "ledger=PATH" not in page


def test_plan_form_refusals_name_what_the_form_offers(app_client):
    """ε1 = 0 is refused with the form's own way out (leave ε1 empty), not "a fixed scheme with the
    scheme parameter", which the app does not offer; a total δ of 0 is refused on the plan page,
    before the ledger refuses the release with advice to raise a budget it never registered
    (found by the app tour)."""
    client, workspace = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    for extra, said in (({"epsilon1": "0"}, "leave \u03b51 empty"), ({"budget_epsilon": "10", "budget_delta": "0"},
                                                                 "a total \u03b4 of 0 admits no release")):
        query = "&".join(f"{k}={v}" for k, v in {"epsilon": "1", "delta": "1e-6", **extra}.items())
        preview = client.get(f"/plan/preview?{query}").text
        refused = client.post("/publish", data={"csrf": "test-csrf", "form": form_token(client), "epsilon": "1",
                                                "delta": "1e-6", **extra})
        assert refused.status_code == 400 and said in refused.text and said in preview
        assert "parameter" not in refused.text and "change_budget" not in refused.text
    assert workspace.releases == {}

