"""What the app reads once and keeps (crowdsafe.app.tables) is read again once the table's file
changes: the plan's custodian facts, the ledger's panel (the table's identity) and a release's
attack follow the file as it is now. And a release's progress request answers as soon as the
release is ready (it waits for the job, at most ``pages.PROGRESS_WAIT``), or with the progress,
which asks again at once."""

from __future__ import annotations

import threading
from pathlib import Path

import polars as pl
from app_helpers import german_table
from test_app_routes import publish
from test_app_stopping import _held, _publish, _ready

from crowdsafe.app import pages


def _rows(table: Path) -> int:
    return pl.read_csv(table, separator=";", infer_schema=False).height


def _most_common_share(table: Path, column: str) -> float:
    values = pl.read_csv(table, separator=";", infer_schema=False).get_column(column)
    return values.value_counts(sort=True).get_column("count")[0] / values.len()


def test_the_plan_reads_the_table_again_once_its_file_changes(app_client, tmp_path):
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    table = tmp_path / "kunden.csv"
    assert f"sampled rows of {_rows(table):,} per release" in client.get("/plan").text
    german_table(table, extra=60)  # the same columns and values, 60 rows more, in the same file
    assert _rows(table) == 460
    assert f"sampled rows of {_rows(table):,} per release" in client.get("/plan").text
    assert f"sampled rows of {_rows(table):,} per release" in client.get("/plan/preview?epsilon=2").text


def test_the_ledger_panel_follows_the_file(app_client, tmp_path):
    """The ledger's entries of the table are found by its identity, which is the file's content:
    another table at the same path is another dataset, with no budget yet."""
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    assert 'class="budget"' in client.get("/plan/ledger").text
    german_table(tmp_path / "kunden.csv", extra=60)
    panel = client.get("/plan/ledger").text
    assert "has no budget in the ledger" in panel and 'class="budget"' not in panel


def test_a_release_attack_reads_its_table_again_once_the_file_changes(app_client, tmp_path):
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    table = tmp_path / "kunden.csv"
    record = workspace.release(1)
    assert client.get("/release/1/attack").status_code == 200  # (its table read for the page)
    before = workspace.run_attack(record, "Diagnose", [])
    assert before["prior"] == _most_common_share(table, "Diagnose")
    german_table(table, extra=120)
    after = workspace.run_attack(record, "Diagnose", [])
    assert after["prior"] == _most_common_share(table, "Diagnose") != before["prior"]
    assert after["summary"] != before["summary"]  # the targets are the file's rows now


def test_the_progress_answers_as_soon_as_the_release_is_ready(app_client, tmp_path, monkeypatch):
    """Asked while the job runs, the progress request waits for it (up to PROGRESS_WAIT) and, once
    it ends, sends the page to the release at once (it answered with the progress, and the page
    saw the release only at its next tick)."""
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    monkeypatch.setattr(pages, "PROGRESS_WAIT", 120.0)
    entered, let_go = _held(monkeypatch, "choose_recoding")
    record = _publish(workspace)
    assert entered.wait(60)
    threading.Timer(0.5, let_go.set).start()  # while the request below waits
    status = client.get(f"/release/{record.number}/status")
    assert status.headers.get("hx-redirect") == f"/release/{record.number}", status.text
    assert record.status == "done", record.error


def test_a_release_still_running_gets_its_progress_which_asks_again(app_client, tmp_path, monkeypatch):
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    monkeypatch.setattr(pages, "PROGRESS_WAIT", 0.05)
    entered, let_go = _held(monkeypatch, "choose_recoding")
    record = _publish(workspace)
    try:
        assert entered.wait(60)
        status = client.get(f"/release/{record.number}/status")
        assert "hx-redirect" not in status.headers
        assert f'hx-get="/release/{record.number}/status" hx-trigger="load"' in status.text
        assert "Running for" in status.text
    finally:
        let_go.set()
        for worker in workspace._workers:
            worker.join(60)
    assert record.status == "done", record.error


def test_a_schema_file_gone_is_refused_in_the_loaders_words(app_client, tmp_path):
    """(What the read itself says, a one-line input error, not an OSError of the cache's key.)"""
    client, workspace = app_client
    _ready(client, workspace, tmp_path)
    workspace.schema_path.unlink()
    answer = client.get("/plan/preview?epsilon=2")
    assert answer.status_code == 200 and "schema file not found" in answer.text
