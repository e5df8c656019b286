"""The app's plan page on a table too wide for the exact selection: the planner's refusal (the
number of candidate schemes and the ways out), as ``publish --plan-only`` prints it."""

from __future__ import annotations

import random


def test_the_plan_page_shows_the_refusal_of_too_many_candidate_schemes(app_client, tmp_path):
    client, _ = app_client
    pick = random.Random(30)
    table = tmp_path / "wide.csv"
    table.write_text("\n".join([",".join(f"c{j}" for j in range(30))]
                               + [",".join(pick.choice("ab") for _ in range(30)) for _ in range(50)]) + "\n")
    answer = client.post("/open/path", data={"csrf": "test-csrf", "path": str(table)})
    assert answer.status_code == 303, answer.text
    preview = client.get("/plan/preview", params={"epsilon": "1", "delta": "1e-6"}).text
    assert "No plan" in preview
    assert "among 1,073,741,824 candidate schemes, more than the 4,194,304" in preview, preview
