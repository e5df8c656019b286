"""The schema review page confirms a type the draft read from the values (``type integer``...)
as it confirms a hierarchy's choice: ticked, the marker leaves the saved schema; unticked, it
stays, and a release or answer using the column is not fit for release. An identifier shows no
type marker (no release publishes it) until it is kept."""

from __future__ import annotations

from test_app_routes import open_german

from crowdsafe.data import Schema

ALTER, GESCHLECHT, VORNAME = 10, 9, 1  # the German table's columns, as drafted


def _form(workspace, confirm: tuple[str, ...], **roles: str) -> dict[str, str]:
    """The schema form: roles as drafted (or ``roles``), the markers ``confirm`` (``COLUMN-MARKER``) ticked."""
    _, review = workspace.require()
    form = {"csrf": "test-csrf", "action": "save"}
    for i, a in enumerate(review.draft.attributes):
        form[f"role-{i}"] = roles.get(a.name, review.roles[a.name])
    form.update({f"confirm-{c}": "1" for c in confirm})
    return form


def test_a_type_read_from_the_values_is_confirmed_on_the_review_page(app_client, tmp_path):
    client, workspace = app_client
    open_german(client, tmp_path)
    page = client.get("/schema").text
    assert 'name="confirm-10-0"' in page and "type integer: I have checked it is the type the column may hold" in page
    assert f'name="confirm-{VORNAME}-0"' not in page  # an identifier: dropped, its type shown unmarked
    before = Schema.from_toml(workspace.schema_path)
    assert before["Alter"].from_data == ("type integer",)
    assert before["Geschlecht"].from_data == ("type categorical", "hierarchy groups")
    assert before["Vorname"].from_data == ()  # (the app drops an identifier's markers with its hierarchy)

    # Alter's type ticked; of Geschlecht, the type (0) and not the hierarchy's groups (1)
    saved = client.post("/schema", data=_form(workspace, (f"{ALTER}-0", f"{GESCHLECHT}-0")))
    assert saved.headers["location"] == "/schema?saved=1"
    after = Schema.from_toml(workspace.schema_path)
    assert after["Alter"].from_data == () and after["Geschlecht"].from_data == ("hierarchy groups",)
    assert after.unreviewed(["Alter"]) == {} and after.unreviewed(["Geschlecht"]) == {
        "Geschlecht": ("hierarchy groups",)}
    page = client.get("/schema?saved=1").text
    assert 'name="confirm-10-0" value="1" checked' in page and 'name="confirm-9-1" value="1">' in page

    # unticked again, the marker is back; kept as a quasi-identifier, an identifier's type is marked
    client.post("/schema", data=_form(workspace, (), Vorname="quasi-identifier"))
    again = Schema.from_toml(workspace.schema_path)
    assert again["Alter"].from_data == ("type integer",)
    assert again["Vorname"].from_data[0] == "type categorical"
    assert f'name="confirm-{VORNAME}-0"' in client.get("/schema").text


def test_a_role_read_from_the_values_is_confirmed_on_the_review_page(app_client, tmp_path):
    """A near-unique column drafted an identifier from its values shows its role marker; ticked,
    the marker leaves the saved schema; set to another role, it has no marker to confirm."""
    import numpy as np
    import polars as pl

    rng = np.random.default_rng(5)
    rows = 2000
    path = tmp_path / "people.csv"
    pl.DataFrame({"age": rng.integers(18, 80, rows), "sex": rng.choice(["F", "M"], rows),
                  "ref": [f"R{i:05d}" for i in range(rows)]}).write_csv(path)
    client, workspace = app_client
    assert client.post("/open/path", data={"csrf": "test-csrf", "path": str(path)}).status_code == 303
    _, review = workspace.require()
    ref = [a.name for a in review.draft.attributes].index("ref")
    page = client.get("/schema").text
    assert f'name="confirm-{ref}-0"' in page and "role identifier: I have checked this column" in page
    assert Schema.from_toml(workspace.schema_path)["ref"].from_data == ("role identifier",)  # (an identifier's type
    # is not marked: nothing publishes it)
    assert "ref" in Schema.from_toml(workspace.schema_path).unreviewed(["age"])  # a role counts for every release
    client.post("/schema", data=_form(workspace, (f"{ref}-0",)))
    assert Schema.from_toml(workspace.schema_path)["ref"].from_data == ()
    client.post("/schema", data=_form(workspace, (), ref="quasi-identifier"))
    assert "role identifier" not in Schema.from_toml(workspace.schema_path)["ref"].from_data


def test_the_plan_page_says_a_release_would_not_be_fit_while_markers_are_unconfirmed(app_client, tmp_path):
    """Found by an audit: the plan page said it read no data and showed no warning while the schema
    held unconfirmed choices read from the data (publish --plan-only warns)."""
    client, workspace = app_client
    open_german(client, tmp_path)
    page = client.get("/plan").text
    assert 'id="unfit-schema"' in page and "<li>&#39;Alter&#39;: type integer</li>" in page
    _, review = workspace.require()
    every = tuple(f"{i}-{j}" for i, a in enumerate(review.draft.attributes) for j in range(len(a.from_data)))
    client.post("/schema", data=_form(workspace, every))
    assert 'id="unfit-schema"' not in client.get("/plan").text
