"""The report's plan and mechanism tables state a privacy loss never below the one spent and a
rate on the side a user may type back (as the command line prints them): the sampling β and
α-β's α rounded down, α-β's β up; a view's γ and largest posterior up, its d and smallest
posterior ratio down. Until 2026-11-30 they were rounded to nearest (ε1 = 0.41571455 read 0.4157)."""

from __future__ import annotations

from crowdsafe.report.content import _mechanism_rows, plan_rows
from crowdsafe.report.view_content import view_plan_rows

EPSILON1 = 0.41571455438798627  # the Adult plan's ε1 at ε = 1: nearest rounding states 0.4157
ANON = 1.0 - EPSILON1 + 3.3e-5  # an ε − ε1 whose fourth digit rounds down to nearest
BETA = 0.29946095820835  # nearest rounding states 0.2995, above the rate that ran


def _value(rows, label_start: str) -> float:
    (text,) = [row[1] for row in rows if row[0].startswith(label_start)]
    return float(text)


def _within(shown: float, true: float) -> bool:
    return abs(shown - true) <= 1e-3 * true  # 4 significant digits, not a coarser figure


def test_publish_plan_states_losses_up_and_the_sampling_rate_down():
    certificate = {"guarantee": "dps", "parameters": {"k": 34, "beta": BETA, "epsilon1": EPSILON1,
                                                      "epsilon_anon": ANON, "delta_target": 1.23456789e-6}}
    rows = plan_rows(certificate)
    for label, true in (("ε1", EPSILON1), ("ε − ε1", ANON), ("δ target", 1.23456789e-6)):
        shown = _value(rows, label)
        assert shown >= true and _within(shown, true), (label, shown)
    shown = _value(rows, "β")
    assert shown <= BETA and _within(shown, BETA)
    assert _value(rows, "k") == 34


def test_mechanism_table_states_the_recoding_loss_up_and_the_rate_down():
    certificate = {"parameters": {"beta": BETA},
                   "mechanisms": [{"step": "sample", "name": "Bernoulli sampling", "parameters": {"beta": BETA}},
                                  {"step": "recode", "name": "exponential mechanism",
                                   "parameters": {"epsilon1": EPSILON1}}]}
    shown = {row[0]: row[2] for row in _mechanism_rows(certificate)}
    beta = float(shown["sample"].removeprefix("beta = "))
    epsilon1 = float(shown["recode"].removeprefix("epsilon1 = "))
    assert beta <= BETA and _within(beta, BETA)
    assert epsilon1 >= EPSILON1 and _within(epsilon1, EPSILON1)


def test_alpha_beta_view_plan_rounds_each_bound_toward_what_holds():
    d, gamma, alpha, beta = 0.012345678, 0.54321098765, 0.33366650001, 0.0123456789
    present, absent = 0.43210987654, 0.76543219876
    certificate = {"parameters": {"d": d, "gamma": gamma, "alpha": alpha, "beta": beta,
                                  "posterior_present_max": present, "posterior_absent_ratio_min": absent}}
    rows = view_plan_rows(certificate)
    assert _value(rows, "d (") <= d and _value(rows, "α") <= alpha
    assert _value(rows, "γ") >= gamma and _value(rows, "β") >= beta
    assert _value(rows, "largest posterior") >= present
    assert _value(rows, "smallest posterior") <= absent
    ran = {"alpha": alpha, "beta": beta}
    alpha_beta = {"parameters": ran, "mechanisms": [{"step": "perturb", "name": "alpha-beta", "parameters": ran}]}
    (row,) = _mechanism_rows(alpha_beta)
    shown = dict(part.split(" = ") for part in row[2].split(", "))
    assert float(shown["alpha"]) <= alpha and float(shown["beta"]) >= beta
