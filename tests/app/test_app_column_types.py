"""A Parquet column of an extension type (an Arrow json_) opened in the app (sweep ds5, item 3):
the upload and the path both reach the schema review, which sets the column aside as an
identifier (crowdsafe.data.column_types); the app answered 500 before."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.parquet as pq


def test_an_extension_column_opens_without_an_internal_error(app_client, tmp_path):
    client, workspace = app_client
    path = tmp_path / "j.parquet"
    pq.write_table(pa.table({"x": pa.array(['{"a":1}', '{"b":2}'] * 20, pa.json_()), "sex": ["M", "F"] * 20}), path)
    upload = client.post("/open/upload?csrf=test-csrf",
                         files={"file": ("j.parquet", path.read_bytes(), "application/octet-stream")})
    local = client.post("/open/path", data={"csrf": "test-csrf", "path": str(path)})
    for answer in (upload, local):
        assert answer.status_code == 303 and answer.headers["location"] == "/schema", answer.text[:300]
    page = client.get("/schema")
    assert page.status_code == 200 and "arrow.json" in page.text
    _, review = workspace.require()
    assert review.roles["x"] == "identifier"
