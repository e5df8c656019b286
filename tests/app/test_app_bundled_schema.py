"""A bundled table's review starts from its declared schema and hierarchies, which the release
then uses (found by the app sweep: the page showed, saved and certified a draft's workclass
groups that the release did not use)."""

from __future__ import annotations

import polars as pl
from app_helpers import finished_release, form_token

from crowdsafe.data import Schema
from crowdsafe.datasets import bundled_source


def test_a_bundled_table_is_reviewed_and_released_with_its_own_hierarchies(app_client):
    client, workspace = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    own = bundled_source("adult").hierarchies
    schema = Schema.from_toml(workspace.schema_path)
    assert all(schema[c].hierarchy is None and not schema[c].from_data for c in own)  # none of the draft's groups
    page = client.get("/schema").text
    assert "group 1" not in page and "declared by the bundled table" in page
    assert "Government" in page  # the tree shown is Adult's own workclass groups
    assert 'id="unfit-schema"' not in client.get("/plan").text  # no unconfirmed choice to warn about

    answer = client.post("/publish", data={"csrf": "test-csrf", "form": form_token(client), "epsilon": "1",
                                           "delta": "1e-6", "scheme": ""})
    assert answer.status_code == 303
    record = finished_release(workspace)
    workclass = set(pl.read_csv(record.table, infer_schema=False).get_column("workclass").drop_nulls().to_list())
    labels = {str(label) for level in own["workclass"].labels for label in level}
    assert workclass <= labels | {"?"}, workclass
    release = client.get("/release/1").text
    assert "seeded randomness" in release and "read from the data" not in release  # only the seed makes it unfit


def test_a_declared_type_is_not_said_to_be_read_from_the_values(app_client):
    """Adult declares education and income ordinal; the draft reads them as text. The review shows
    the declared type without the draft's note that the values chose another ("education ordinal"
    above "categorical: its values were read as text ... (from the data)", found by the app tour),
    nor advice to make income sensitive when it is."""
    client, workspace = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    declared = bundled_source("adult").schema
    assert declared is not None and declared["education"].type.value == "ordinal"  # the premise
    page = client.get("/schema").text
    for column in ("education", "income"):
        card = page[page.index(f'data-column="{column}"'):]
        card = card[:card.index("</article>")]
        assert '<span class="type">ordinal</span>' in card and "from the data" not in card, column
    # income is sensitive already (declared): no advice to make it so
    income = page[page.index('data-column="income"'):]
    income = income[:income.index("</article>")]
    assert '<option value="sensitive" selected>' in income and "Make it sensitive" not in income
