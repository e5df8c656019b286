"""Found by the second app sweep (report-only walk-through): what the pages said wrong, each
fixed with a test here."""

from __future__ import annotations

import re

import pytest


def _custodian_panels(page: str) -> str:
    """The text inside the page's custodian-only panels."""
    return "".join(re.findall(r'<section class="panel custodian" data-boundary="custodian".*?</section>', page,
                              flags=re.S))


@pytest.mark.parametrize("content", [b"patient_id,age,sex\n", b"a;b\n"])
def test_a_header_only_upload_is_refused_at_open_named_as_uploaded_and_custodian_only(app_client, content):
    client, workspace = app_client
    answer = client.post("/open/upload?csrf=test-csrf", files={"file": ("patiënten leer.csv", content, "text/csv")})
    assert answer.status_code == 400 and workspace.opened is None  # stays on the open page, nothing opened
    page = answer.text
    assert "1. Open a table" in page
    panels = _custodian_panels(page)
    assert "patiënten leer.csv has a header but no rows" in panels  # the name as uploaded, in the orange panel
    outside = page.replace(panels, "")
    assert "no rows" not in outside and str(workspace.workdir) not in page and "uploads/" not in page


def test_a_private_copys_path_is_never_shown(app_client):
    """Every error a page shows names an upload as the user named it (the filter every error goes through)."""
    client, workspace = app_client
    from crowdsafe.app.pages import Pages
    from crowdsafe.app.security import Secrets

    pages = Pages(workspace, Secrets())
    private = workspace.workdir / "uploads" / "3" / "kunden (1).csv"
    said = pages.as_named(f"{private} has a bad row; see {workspace.workdir}/schema.toml")
    assert said == "kunden (1).csv has a bad row; see the app's private folder/schema.toml"


def _published(client, workspace, tmp_path):
    from test_app_routes import german_roles, open_german, publish, roles_form

    open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    return workspace.release(1)


def test_the_download_page_of_a_release_whose_files_are_gone_is_a_404(app_client, tmp_path):
    client, workspace = app_client
    record = _published(client, workspace, tmp_path)
    assert client.get("/release/1/download").status_code == 200
    record.table.unlink()  # one file gone: the page does not offer the other two as "the three together"
    answer = client.get("/release/1/download")
    assert answer.status_code == 404 and f"the release file is no longer at {record.table}" in answer.text
    assert "kunden.certificate.json" not in answer.text and 'href="/"' in answer.text
    record.certificate.unlink()
    record.report.unlink()
    answer = client.get("/release/1/download")
    assert answer.status_code == 404 and "the report file is no longer at" in answer.text


def test_the_report_page_of_a_release_whose_report_is_gone_is_a_404_not_a_framed_error(app_client, tmp_path):
    client, workspace = app_client
    record = _published(client, workspace, tmp_path)
    assert client.get("/release/1/report").status_code == 200
    record.report.unlink()
    answer = client.get("/release/1/report")
    assert answer.status_code == 404 and f"the report is no longer at {record.report}" in answer.text
    assert "<iframe" not in answer.text and 'data-boundary="dp-output"' not in answer.text


def test_a_failed_publish_has_no_sub_page_and_no_file(app_client, tmp_path):
    from test_app_routes import german_roles, open_german, publish, roles_form

    client, workspace = app_client
    open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
    publish(client, {"budget_epsilon": "1", "budget_delta": "1e-5"})
    publish(client, {"epsilon": "0.5"}, number=2)  # past the total budget: refused when it runs
    assert workspace.release(2).status == "failed"
    assert client.get("/release/2").status_code == 200  # its page says why
    for sub in ("report", "report.html", "attack", "download", "file/release", "file/certificate", "file/report"):
        answer = client.get(f"/release/2/{sub}")
        assert answer.status_code == 404 and "Release 2 was not published" in answer.text, sub
        assert 'href="/release/2"' in answer.text
    assert client.post("/release/2/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose"}).status_code == 404


def test_the_plan_page_shows_the_custodian_lines_plan_only_prints(app_client, tmp_path, capsys):
    """At ε = 0.1 a 400-row table fills almost no class of k rows: `--plan-only` warns that not even
    the coarse preset fits; the plan page says the same, in its custodian panel."""
    import html

    from test_app_routes import german_roles, open_german, roles_form

    from cli_helpers import run_command

    client, workspace = app_client
    table = open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
    code, out, err = run_command(capsys, "publish", str(table), "--schema", str(workspace.schema_path), "--epsilon",
                                 "0.1", "--delta", "1e-6", "--plan-only")
    assert code == 0, err
    printed = {line.split(None, 1)[0]: line.split(None, 1)[1] for line in out.splitlines()
               if line.startswith(("  expected", "  resolution"))}
    assert "not even the coarse preset fits" in printed["resolution"]
    for page in (client.get("/plan?epsilon=0.1").text, client.get("/plan/preview?epsilon=0.1&delta=1e-6").text):
        panels = html.unescape(_custodian_panels(page))
        for label, text in printed.items():
            assert f"<dt>{label}</dt><dd>{text}</dd>" in panels, label
        assert "classes of k rows" not in html.unescape(page).replace(panels, "")


def test_a_small_epsilon_is_not_shown_as_odds_times_1(app_client, tmp_path):
    from test_app_routes import german_roles, open_german, publish, roles_form

    from crowdsafe.report.content import guarantee_words

    client, workspace = app_client
    open_german(client, tmp_path)
    client.post("/schema", data={**roles_form(workspace, **german_roles()), "action": "continue"})
    # e^0.001 = 1.0010005, rounded up (a bound never stated below e^ε) at the digits it takes to show it above 1
    assert "×1.002</strong>" in client.get("/plan/preview?epsilon=0.001&delta=1e-6").text
    publish(client, {"epsilon": "0.001", "budget_epsilon": "1", "budget_delta": "1e-5"})
    assert "change by at most ×1.002," in client.get("/release/1").text
    client.post("/release/1/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose"})
    assert "×1.002</strong>" in client.get("/release/1/attack").text
    assert "e^ε = 1.002," in " ".join(guarantee_words({"guarantee": "dps", "epsilon": 0.001, "delta": 1e-6}))


def test_the_app_says_how_to_confirm_a_choice_and_a_single_release_in_the_singular(app_client, tmp_path):
    from test_app_routes import german_roles, open_german, publish

    client, workspace = app_client
    open_german(client, tmp_path)
    form = {"csrf": "test-csrf", "action": "continue"}  # the roles set, no choice read from the data confirmed
    _, review = workspace.require()
    roles = german_roles()
    form.update({f"role-{i}": roles.get(a.name, review.roles[a.name]) for i, a in enumerate(review.draft.attributes)})
    client.post("/schema", data=form)
    publish(client, {"budget_epsilon": "10", "budget_delta": "1e-5"})
    release = client.get("/release/1").text
    why = release.split("Why not fit")[1].split("</ul>")[0]
    assert "read from the data" in why and "on the schema page" in why and "from_data line" not in why
    # a type's box says "I have checked it is the type ...", not "... it is public" (the hint named only that one)
    assert "type integer read from the data" in why and "I have checked it is public" not in why
    assert "tick its box \u201cI have checked \u2026\u201d" in why
    from crowdsafe.report.build import read_certificate

    certificate = read_certificate(workspace.release(1).table)  # the file keeps the command line's words
    assert any("from_data line" in r for r in certificate["unfit_reasons"])
    client.post("/release/1/attack", data={"csrf": "test-csrf", "sensitive": "Diagnose"})
    attack = " ".join(client.get("/release/1/attack").text.split())
    assert "The release attacked is (1, 1e-6)-differentially private (its certificate)" in attack.replace(
        '<span class="num">', "").replace("</span>", "")
    assert "Together the 1" not in attack
