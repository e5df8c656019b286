"""What `crowdsafe publish` prints about its plan and its releases says what ran: how k was set,
the totals of several releases (never rounded down), and each release's scheme and rows."""

from __future__ import annotations

import pytest

from cli_helpers import run_command
from crowdsafe.anonymize.publish import PlanRequest, plan_publication
from crowdsafe.cli.publish import render_plan
from crowdsafe.privacy import dps_delta


def _plan_text(request: PlanRequest) -> str:
    lines: list[str] = []
    render_plan(plan_publication(request).as_dict(), lines.append)
    return "\n".join(lines)


@pytest.mark.parametrize(("beta", "k"), [(0.3, 30), (None, 100)])
def test_a_given_k_is_not_called_the_smallest(beta, k):
    text = _plan_text(PlanRequest(1.0, 1e-6, beta=beta, k=k, scheme="coarse"))
    assert f"  k             {k} (k given: d(k, beta, 1) = " in text
    assert "smallest k" not in text


def test_a_planned_k_is_the_smallest_and_is_said_so():
    plan = plan_publication(PlanRequest(1.0, 1e-6, beta=0.3, scheme="coarse"))
    assert plan.k_rule == "smallest" and plan.as_dict()["k_rule"] == "smallest"
    assert dps_delta(plan.k - 1, 0.3, 1.0) > 1e-6 >= dps_delta(plan.k, 0.3, 1.0)  # it is the smallest
    assert f"  k             {plan.k} (smallest k with d(k, beta, 1) = " in _plan_text(
        PlanRequest(1.0, 1e-6, beta=0.3, scheme="coarse"))


def test_plan_only_with_a_given_k_says_it_was_given(capsys):
    code, out, err = run_command(capsys, "publish", "adult", "--epsilon", "1", "--beta", "0.3", "--k", "30",
                                 "--plan-only")
    assert code == 0, err
    assert "  k             30 (k given: d(k, beta, " in out and "smallest k" not in out


def test_several_releases_print_each_ones_scheme_and_rows_labelled(capsys, tmp_path):
    """Seed 11 at epsilon = 4: release 2 chooses marital-status=1, releases 1 and 3 marital-status=2."""
    import json

    import polars as pl

    code, out, err = run_command(capsys, "publish", "adult", "--epsilon", "4", "--releases", "3", "--no-ledger",
                                 "--seed", "11", "--objective", "retained", "--no-report",
                                 "--out", str(tmp_path / "a.csv"))
    assert code == 0, err
    lines = [line for line in out.splitlines() if line.startswith("  release ")]
    assert len(lines) == 3
    schemes = set()
    for i, line in enumerate(lines, 1):
        levels = json.loads((tmp_path / f"a-{i}.certificate.json").read_text(encoding="utf-8"))["parameters"]["scheme"]
        rows = pl.read_csv(tmp_path / f"a-{i}.csv", infer_schema=False).height
        assert line.startswith(f"  release {i}     scheme ")
        assert all(f"{column}={level}" in line for column, level in levels.items())
        assert f"; published {rows:,} rows in " in line
        schemes.add(tuple(sorted(levels.items())))
    assert len(schemes) > 1  # the releases differ, so a single scheme line would misstate some
    assert "\n  scheme        " not in out and "\n  published     " not in out


def test_the_total_of_several_releases_is_never_printed_rounded_down(capsys, tmp_path):
    """50 x (0.25, 1e-8) by KOV: about 12.00061 in total (checked independently on the exact
    privacy curve: 12.0006105712939 <= the stated total); the plan and the ledger said 12."""
    ledger = tmp_path / "ledger.sqlite3"
    code, out, err = run_command(capsys, "publish", "adult", "--epsilon", "0.25", "--delta", "1e-8", "--releases",
                                 "50", "--scheme", "coarse", "--budget", "20,1e-5", "--ledger", str(ledger),
                                 "--no-report", "--out", str(tmp_path / "a.csv"))
    assert code == 0, err
    assert "(epsilon = 12.0007, delta = " in out and "(epsilon = 12, " not in out
    assert "spent epsilon 12.0007 of 20" in out
    from crowdsafe.privacy.ledger import Ledger

    spent = Ledger(ledger).entries()[-1].loss.epsilon
    assert 12.0006 < spent <= 12.0007


def test_the_reports_plan_rows_state_the_total_rounded_up():
    from crowdsafe.report.views import plan_rows

    plan = plan_publication(PlanRequest(0.25, 1e-8, scheme="coarse", releases=50))
    assert 12.0006 < plan.total_epsilon < 12.0007
    (row,) = [text for label, text in plan_rows(plan.as_dict()) if label == "releases"]
    assert row.startswith("50 on fresh samples: ε = 12.0007, δ = ")
    assert "(epsilon = 12.0007, delta = " in _plan_text(PlanRequest(0.25, 1e-8, scheme="coarse", releases=50))
