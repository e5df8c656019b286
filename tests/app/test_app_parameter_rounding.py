"""The app states the plan's ε1 never below the one spent and the sampling β on the side a user
may type back, as the report of the same release does (found by the app tour: at ε = 1 on Adult
the plan and release pages read ε1 0.4157 and β 0.2995 for 0.41571 and 0.29946, the report beside
them 0.4158 and 0.2994); the attack page's bound on a guess is a percentage rounded up."""

from __future__ import annotations

import re

from app_helpers import finished_release, form_token

from crowdsafe.app.pages import _percent_up
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.report.build import read_certificate
from crowdsafe.report.content import plan_rows


def _shown(page: str, label: str) -> str:
    found = re.search(rf"<dt>{re.escape(label)}</dt><dd[^>]*>([^<]+)</dd>", page)
    assert found, label
    return found.group(1).strip()


def test_the_plan_release_and_attack_pages_round_on_the_safe_side(app_client):
    client, workspace = app_client
    assert client.post("/open/bundled", data={"csrf": "test-csrf", "name": "adult"}).status_code == 303
    assert client.post("/publish", data={"csrf": "test-csrf", "form": form_token(client), "epsilon": "1",
                                         "delta": "1e-6"}).status_code == 303
    record = finished_release(workspace)
    plan = record.publication.plan
    report = dict(plan_rows(read_certificate(record.table)))  # the report written beside the release
    preview = client.get("/plan/preview?epsilon=1&delta=1e-6").text
    release = client.get("/release/1").text
    for page in (preview, release):
        epsilon1 = _shown(page, "ε1 (choosing the generalization)")
        beta = _shown(page, "β (sampling rate)")
        assert float(epsilon1) >= plan.epsilon1 and float(beta) <= plan.beta, (epsilon1, beta)
        assert epsilon1 == report["ε1 (spent choosing the scheme)"] and beta == report["β (sampling rate)"]
    # the ledger's entry, shown in the plan page's ledger panel, names β the same way (it read 0.2995)
    with Ledger(workspace.ledger_path()) as ledger:
        assert f"(beta = {beta})" in ledger.entries()[-1].description

    assert client.post("/release/1/attack", data={"csrf": "test-csrf", "sensitive": "income"}).status_code == 303
    bound = record.attack["posterior_bound"]
    page = client.get("/release/1/attack").text
    assert bound is not None and f"at most <strong>{_percent_up(bound)}</strong>" in page
    record.attack["posterior_bound"] = 0.89541  # a bound that nearest rounding states below itself (89.5%)
    assert "at most <strong>89.6%</strong>" in client.get("/release/1/attack").text


def test_a_bound_on_a_guess_is_never_shown_below_it():
    for bound in (0.89541, 0.8955057823193706, 0.1234, 0.99999, 0.5):
        assert float(_percent_up(bound).rstrip("%")) >= 100 * bound, bound
    assert _percent_up(0.89541) == "89.6%" and _percent_up(0.5) == "50.0%" and _percent_up(None) == "–"
