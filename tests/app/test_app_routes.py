"""Every route of the app (crowdsafe.app.pages) through Starlette's TestClient, on a small German
table: open (path, upload, bundled), the schema review and its file, the plan and its live
preview, the ledger panel, publish and its progress, the release, the report, the attack and the
downloads; and the files the app writes are the bytes ``crowdsafe publish`` writes."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from app_helpers import form_token, german_table

from crowdsafe.app.security import REPORT_POLICY
from crowdsafe.cli import main
from crowdsafe.data import Schema

QI = ("PLZ", "Geschlecht", "Alter")
IDENTIFIERS = ("Kundennummer", "Vorname", "Nachname", "Geburtsdatum", "E-Mail", "Telefon", "Straße")


def roles_form(workspace, **roles: str) -> dict[str, str]:
    """The schema form: each column's role (``roles`` by name, else as drafted), every marker confirmed."""
    _, review = workspace.require()
    form = {"csrf": "test-csrf"}
    for i, a in enumerate(review.draft.attributes):
        form[f"role-{i}"] = roles.get(a.name, review.roles[a.name])
        form.update({f"confirm-{i}-{j}": "1" for j in range(len(a.from_data))})  # the type's and the hierarchy's
    return form


def german_roles() -> dict[str, str]:
    return {**dict.fromkeys(IDENTIFIERS, "identifier"), **dict.fromkeys(QI, "quasi-identifier"),
            "Ort": "insensitive", "Beruf": "insensitive", "Einkommen": "insensitive", "Diagnose": "sensitive"}


def publish(client, values: dict[str, str] | None = None, number: int = 1) -> None:
    answer = client.post("/publish", data={"csrf": "test-csrf", "form": form_token(client), "epsilon": "1",
                                           "delta": "1e-6", **(values or {})})
    assert answer.status_code == 303 and answer.headers["location"] == f"/release/{number}", answer.text
    for _ in range(300):
        status = client.get(f"/release/{number}/status")
        if "hx-redirect" in status.headers:
            return
        assert 'hx-trigger="load"' in status.text
        time.sleep(0.05)
    raise AssertionError("the publish did not finish")


def open_german(client, tmp_path: Path) -> Path:
    table = german_table(tmp_path / "kunden.csv")
    answer = client.post("/open/path", data={"csrf": "test-csrf", "path": str(table)})
    assert answer.status_code == 303 and answer.headers["location"] == "/schema"
    return table


@pytest.mark.parametrize("path", ["a" * 300 + ".csv", "/tmp/" + "a" * 300 + ".csv", "x/" * 2100 + "y.csv"])
def test_a_path_too_long_for_the_system_is_a_bad_request(app_client, path):
    """Path.exists raised OSError (ENAMETOOLONG) for it: the app answered 500 'internal error'."""
    client, _ = app_client
    answer = client.post("/open/path", data={"csrf": "test-csrf", "path": path})
    assert answer.status_code == 400 and "the name is too long" in answer.text, answer.text[:300]


def test_opening_a_table(app_client, tmp_path):
    client, workspace = app_client
    assert client.get("/").headers["location"] == "/open"
    assert client.get("/schema").headers["location"] == "/open"  # nothing open yet
    page = client.get("/open")
    assert page.status_code == 200 and "Upload a file" in page.text and 'name="csrf"' in page.text
    missing = client.post("/open/path", data={"csrf": "test-csrf", "path": str(tmp_path / "nothing.csv")})
    assert missing.status_code == 400 and "no file at" in missing.text
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "nope"}).status_code == 400
    empty = client.post("/open/upload?csrf=test-csrf", files={"file": ("empty.csv", b"", "text/csv")})
    assert empty.status_code == 400
    table = german_table(tmp_path / "kunden.csv")
    uploaded = client.post("/open/upload?csrf=test-csrf", files={"file": ("../../Kunden 2024.csv",
                                                                          table.read_bytes(), "text/csv")})
    assert uploaded.status_code == 303
    opened = workspace.opened
    assert opened.how == "upload" and opened.label == "Kunden 2024.csv"
    stored = Path(opened.data)
    assert stored.parent.parent == workspace.workdir / "uploads"  # inside the private folder
    assert stored.stat().st_mode & 0o777 == 0o600 and stored.parent.stat().st_mode & 0o777 == 0o700
    assert stored.read_bytes() == table.read_bytes()
    assert client.get("/").headers["location"] == "/schema"
    open_german(client, tmp_path)
    assert workspace.opened.how == "local" and workspace.opened.data == str(table.resolve())


@pytest.mark.slow
def test_opening_a_bundled_table(app_client):
    client, workspace = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "people"}).status_code == 303
    assert workspace.opened.label == "people"
    page = client.get("/schema").text
    assert 'data-column="email"' in page and "an email address" in page


def test_a_bundled_table_starts_from_its_declared_roles(app_client):
    """Adult declares 8 quasi-identifiers and income sensitive; the draft alone would make 14 of
    its 15 columns quasi-identifiers (a lattice the selection takes minutes over)."""
    client, workspace = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    schema = Schema.from_toml(workspace.schema_path)
    assert schema.quasi_identifiers == ["age", "workclass", "education", "marital-status", "occupation", "race",
                                        "sex", "native-country"]
    assert schema.sensitive == ["income"] and schema["fnlwgt"].role.value == "insensitive"


def test_the_schema_review(app_client, tmp_path):
    client, workspace = app_client
    open_german(client, tmp_path)
    page = client.get("/schema")
    assert page.status_code == 200
    assert 'data-boundary="custodian"' in page.text and "custodian only" in page.text
    for column in ("Kundennummer", "PLZ", "Einkommen", "Diagnose"):
        assert f'data-column="{column}"' in page.text
    assert "an email address" in page.text  # an identifier and its reason
    assert "Show the tree" in page.text and "Coverage: every value" in page.text
    assert "not confirmed yet" in page.text and "from the data" in page.text
    saved = client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "save"})
    assert saved.headers["location"] == "/schema?saved=1"
    assert "Every choice read from the data is confirmed" in client.get("/schema?saved=1").text
    schema = Schema.from_toml(workspace.schema_path)
    assert schema.identifiers == list(IDENTIFIERS) and schema.quasi_identifiers == list(QI)
    assert schema.sensitive == ["Diagnose"] and schema["Ort"].role.value == "insensitive"
    assert all(not a.from_data for a in schema)  # every marker confirmed
    assert schema.decimal_comma is True
    download = client.get("/schema.toml")
    assert download.status_code == 200 and "attachment" in download.headers["content-disposition"]
    assert download.text == workspace.schema_path.read_text(encoding="utf-8")
    onward = client.post("/schema", data={**roles_form(workspace, Diagnose="quasi-identifier"), "action": "continue"})
    assert onward.headers["location"] == "/plan"
    assert Schema.from_toml(workspace.schema_path)["Diagnose"].role.value == "quasi-identifier"
    bad = client.post("/schema", data={"csrf": "test-csrf", "role-0": "owner"})
    assert bad.status_code == 400


def test_the_plan_its_preview_and_the_ledger(app_client, tmp_path):
    client, workspace = app_client
    open_german(client, tmp_path)
    page = client.get("/plan")
    assert page.status_code == 200 and 'hx-get="/plan/preview"' in page.text and 'hx-get="/plan/ledger"' in page.text
    one = client.get("/plan/preview", params={"epsilon": "1", "delta": "1e-6"}).text
    two = client.get("/plan/preview", params={"epsilon": "2", "delta": "1e-6"}).text
    assert "×2.72" in one and "×7.39" in two  # e^ε
    assert 'id="plan-k"' in one and one != two
    assert 'id="plan-objective"' in one  # what the generalization is chosen for, and why (the plan's rule)
    assert "default: " in one
    fixed = client.get("/plan/preview", params={"epsilon": "1", "delta": "1e-6", "k": "50"}).text
    assert '<dd id="plan-k">50</dd>' in fixed
    wrong = client.get("/plan/preview", params={"epsilon": "1_0", "delta": "1e-6"}).text
    assert "No plan" in wrong and "is not a number" in wrong
    ledger = client.get("/plan/ledger").text
    assert 'data-boundary="custodian"' in ledger and "No ledger yet" in ledger
    refused = client.post("/publish", data={"csrf": "test-csrf", "epsilon": "-1", "delta": "1e-6"})
    assert refused.status_code == 400 and "Could not do that" in refused.text
    half = client.post("/publish", data={"csrf": "test-csrf", "epsilon": "1", "delta": "1e-6", "budget_epsilon": "5"})
    assert half.status_code == 400 and "both" in half.text


@pytest.mark.slow
def test_publish_report_attack_and_download(app_client, tmp_path, monkeypatch):
    client, workspace = app_client
    open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    record = workspace.release(1)
    release = client.get("/release/1").text
    assert "NOT fit for release" in release and "seeded randomness" in release
    assert 'data-boundary="dp-output"' in release and 'data-boundary="custodian"' in release
    assert "Rows in the table" in release and "400" in release
    assert client.get("/release/9").status_code == 404
    ledger = client.get("/plan/ledger").text
    assert "Total budget" in ledger and "publish kunden.csv" in ledger and str(record.table) in ledger

    report = client.get("/release/1/report")
    assert report.status_code == 200 and '<iframe class="report" src="/release/1/report.html"' in report.text
    framed = client.get("/release/1/report.html")
    assert framed.headers["content-security-policy"] == REPORT_POLICY
    assert framed.content == record.report.read_bytes()

    attack = client.get("/release/1/attack")
    assert attack.status_code == 200 and '<option value="Diagnose" selected>' in attack.text
    assert client.post("/release/1/attack", data={"csrf": "test-csrf", "sensitive": "Ort"}).status_code == 400
    ran = client.post("/release/1/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose"})
    assert ran.status_code == 303
    shown = client.get("/release/1/attack").text
    assert "×2.72" in shown and "Measured on 400 people" in shown and "this release (kunden.csv)" in shown

    publish(client, {"epsilon": "0.5"}, number=2)  # the second sees the first in the ledger
    second = client.get("/release/2/attack").text
    assert f'value="{record.table}"' in second
    client.post("/release/2/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose", "earlier": str(record.table)})
    both = workspace.release(2).attack
    assert both["releases"] == ["this release (kunden.csv)", "ledger entry #1 (kunden.csv)"]
    assert both["epsilon"] == pytest.approx(1.5)

    # an attacked release whose certificate has no (ε, δ) (no formal guarantee): no bound is shown
    from crowdsafe.report import build

    real = build.read_certificate

    def without_guarantee(path):
        certificate = dict(real(path))
        if Path(path) == Path(record.table):
            certificate["epsilon"] = certificate["delta"] = None
        return certificate

    monkeypatch.setattr(build, "read_certificate", without_guarantee)
    client.post("/release/2/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose", "earlier": str(record.table)})
    assert workspace.release(2).attack["epsilon"] is None and workspace.release(2).attack["posterior_bound"] is None
    unbounded = client.get("/release/2/attack").text
    assert "No bound" in unbounded and "×" not in unbounded.split("No bound")[0].split("The bound")[-1]
    monkeypatch.undo()

    page = client.get("/release/1/download")
    assert page.status_code == 200 and "kunden.certificate.json" in page.text
    for kind, path in (("release", record.table), ("certificate", record.certificate), ("report", record.report)):
        answer = client.get(f"/release/1/file/{kind}")
        assert answer.status_code == 200
        assert answer.headers["content-disposition"].startswith("attachment")
        assert answer.content == path.read_bytes(), kind
    assert client.get("/release/1/file/schema").status_code == 404


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_files_are_what_crowdsafe_publish_writes(app_client, tmp_path, monkeypatch):
    """The same table, schema, parameters and seed through the command line give the same bytes."""
    client, workspace = app_client
    table = open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
    publish(client, {"budget_epsilon": "3", "budget_delta": "1e-5"})
    record = workspace.release(1)
    schema = tmp_path / "schema.toml"
    schema.write_bytes(workspace.schema_path.read_bytes())
    out = tmp_path / "cli" / record.table.name
    monkeypatch.setenv("CROWDSAFE_LEDGER", str(tmp_path / "cli-ledger.sqlite3"))
    code = main(["publish", str(table), "--epsilon", "1", "--delta", "1e-6", "--schema", str(schema),
                 "--seed", "11", "--budget", "3,1e-5", "--name", "kunden.csv", "--out", str(out)])
    assert code == 0
    for mine, theirs in ((record.table, out), (record.certificate, out.with_name("kunden.certificate.json")),
                         (record.report, out.with_name("kunden.report.html"))):
        assert mine.read_bytes() == theirs.read_bytes(), mine.name


def test_static_files_and_the_favicon(app_client):
    client, _ = app_client
    htmx = client.get("/static/htmx.min.js")
    assert htmx.status_code == 200 and "javascript" in htmx.headers["content-type"]
    assert client.get("/static/app.css").headers["content-type"].startswith("text/css")
    assert client.get("/favicon.ico").headers["location"] == "/static/favicon.svg"


@pytest.mark.slow  # about a second: two tables opened, a publication, an attack
def test_an_attack_reads_the_table_its_release_was_published_from(app_client, tmp_path):
    """Found by a sweep: the attack step read whatever table was open now, so after opening
    another table it attacked release 1 with the other table's people and prior."""
    client, workspace = app_client
    open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    other = german_table(tmp_path / "andere.csv", rows=250, seed=9)  # then another table is opened
    assert client.post("/open/path", data={"csrf": "test-csrf", "path": str(other)}).status_code == 303
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
    assert client.get("/release/1/attack").status_code == 200
    ran = client.post("/release/1/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose"})
    assert ran.status_code == 303
    attack = workspace.release(1).attack
    assert attack["summary"]["targets"] == 400  # kunden.csv's people, not andere.csv's 250
    assert "Measured on 400 people" in client.get("/release/1/attack").text


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_release_whose_files_are_gone_gets_a_page_not_a_500(app_client, tmp_path):
    """Found by a sweep: once the table or the release files were moved, the attack page and the
    downloads were internal errors (500)."""
    client, workspace = app_client
    table = open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    record = workspace.release(1)
    moved = Path(str(table) + ".moved")
    Path(table).rename(moved)  # the table the attack reads its targets from
    for answer in (client.get("/release/1/attack"),
                   client.post("/release/1/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose"})):
        assert answer.status_code == 404 and "not where it was published" in answer.text
    moved.rename(table)
    assert client.get("/release/1/attack").status_code == 200
    record.certificate.unlink()
    for kind in ("certificate", "release"):
        if kind == "release":
            record.table.unlink()
        answer = client.get(f"/release/1/file/{kind}")
        assert answer.status_code == 404 and "no longer at" in answer.text
    assert client.get("/release/1/attack").status_code == 404
