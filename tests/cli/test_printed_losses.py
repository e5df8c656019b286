"""Every ε and δ the command line and the report state is rounded up, never below the loss proven
(an auditor's sweep, 2026-11-30).

Until then several surfaces printed a proven loss with Python's nearest ``g`` rounding, which can
state it smaller than it is: ``calc compose`` certified KOV's ε = 20.3010006648... as ``20.301``,
``calc dps`` printed d(20, 0.1, 1) = 4.0725e-14 as ``4.07e-14``, ``ledger show`` a charge of δ
2.7116e-7 as ``2.71e-07``, the α-β plan its equivalent ε 1.9429414... as ``1.94294``, ``query``
its guarantee line, ``publish --plan-only`` the δ achieved at k, and the before-distributions of a
report their ε (0.5 over six attributes as ``0.0833333``). The certificate's own summary and the
ledger's totals already rounded up (``crowdsafe.number_text.rounded_up``).

Every expected value here is recomputed from the papers' formulas with SciPy / mpmath, not with
crowdsafe's calculus: the printed text must read back at or above it (at or below it for the
prior bound d of (d, γ)-privacy, where a larger d is the stronger claim).
"""

from __future__ import annotations

import math
import re
import sqlite3

import mpmath as mp
import numpy as np
from scipy.optimize import brentq
from scipy.stats import binom

from cli_helpers import run_command
from report_tables import QI, publish_small, small_table

NUMBER = r"([0-9]+(?:\.[0-9]+)?(?:e[-+]?[0-9]+)?)"


def lqs_delta(k: int, beta: float, epsilon: float) -> float:
    """d(k, β, ε) of Li, Qardaji, Su 2012 (Theorem 5), from its definition: the largest tail
    Pr[Bin(n, β) > γn] over n ≥ ⌈k/γ − 1⌉, at 40 digits, scanned until the Chernoff bound
    exp(−n D(γ‖β)) falls below the best tail found."""
    mp.mp.dps = 40
    b, e = mp.mpf(beta), mp.mpf(epsilon)
    gamma = (mp.e ** e - 1 + b) / mp.e ** e
    n = int(mp.ceil(k / gamma - 1))
    divergence = gamma * mp.log(gamma / b) + (1 - gamma) * mp.log((1 - gamma) / (1 - b))
    best = mp.mpf(0)
    while best == 0 or mp.e ** (-n * divergence) >= best:
        first = int(mp.floor(gamma * n)) + 1
        if first <= n:
            best = max(best, mp.betainc(first, n - first + 1, 0, b, regularized=True))
        n += 1
    return float(best)


def kov_epsilon(epsilon: float, k: int, delta: float) -> float:
    """The least ε' at which k runs of an ε-DP mechanism are (ε', δ)-DP, on the exact privacy
    curve of k-fold randomized response (Kairouz, Oh, Viswanath 2015): the privacy loss is
    ε(k − 2L), L ~ Bin(k, 1/(1 + e^ε)), and δ(ε') = E[(1 − e^(ε' − loss))+]."""
    ls = np.arange(k + 1)
    weights = binom.pmf(ls, k, 1 / (1 + math.exp(epsilon)))
    loss = epsilon * (k - 2 * ls)

    def curve(x: float) -> float:
        return float(np.sum(weights * np.clip(-np.expm1(x - loss), 0, None))) - delta

    return brentq(curve, 0.0, k * epsilon, xtol=1e-13, rtol=1e-15)


def test_calc_compose_certifies_no_less_than_the_kov_and_drv_bounds(capsys):
    code, out, _ = run_command(capsys, "calc", "compose", "--epsilon", "0.5", "--times", "50", "--slack", "1e-6")
    assert code == 0
    certified = re.search(rf"certified: \({NUMBER}, {NUMBER}\)-DP by kov", out)
    assert certified, out
    exact = kov_epsilon(0.5, 50, 1e-6)  # 20.30100066...: printed "20.301" until the fix
    assert float(certified.group(1)) >= exact
    assert float(certified.group(2)) >= 1e-6
    drv = 0.5 * math.sqrt(2 * 50 * math.log(1e6)) + 50 * 0.5 * math.expm1(0.5)  # DRV Theorem III.3: 34.802642...
    row = next(line for line in out.splitlines() if "│ drv" in line)
    assert float(row.split("│")[2]) >= drv  # "34.8026" until the fix
    kov_row = next(line for line in out.splitlines() if "│ kov" in line)
    assert float(kov_row.split("│")[2]) >= exact


def test_calc_dps_prints_d_rounded_up(capsys):
    code, out, _ = run_command(capsys, "calc", "dps", "--k", "20", "--beta", "0.1", "--epsilon", "1")
    assert code == 0
    row = next(line for line in out.splitlines() if line.startswith("│  0.1"))
    printed = float(row.split("│")[3])
    exact = lqs_delta(20, 0.1, 1.0)  # 4.0725e-14: "4.07e-14" until the fix
    assert exact <= printed <= exact * 1.01


def test_publish_plan_states_the_delta_at_k_rounded_up(capsys):
    code, out, _ = run_command(capsys, "publish", "adult", "--epsilon", "1", "--scheme", "medium", "--k", "20",
                               "--beta", "0.1", "--plan-only", "--no-ledger")
    assert code == 0, out
    stated = re.search(rf"k given: d\(k, beta, 1\) = {NUMBER} <= 1e-06", out)
    assert stated, out
    exact = lqs_delta(20, 0.1, 1.0)
    assert exact <= float(stated.group(1)) <= exact * 1.01


def test_the_plan_view_states_the_delta_at_k_rounded_up():
    from crowdsafe.api import plan_publish

    plan = plan_publish(1.0, scheme="medium", k=20, beta=0.1)
    cell = re.search(rf"δ achieved at k</t[dh]>\s*<td[^>]*>{NUMBER}<", plan._repr_html_())
    assert cell, plan._repr_html_()
    exact = lqs_delta(20, 0.1, 1.0)
    assert exact <= float(cell.group(1)) <= exact * 1.01


def test_perturb_plan_rounds_epsilon_up_and_the_prior_bound_down(capsys):
    args = ["perturb", "adult", "--c", "5", "--gamma", "0.2", "--max-rows", "50000", "--attributes",
            "age,education,occupation,native-country,sex,income", "--plan-only"]
    code, out, _ = run_command(capsys, *args)
    assert code == 0
    code, as_json, _ = run_command(capsys, *args, "--json")
    alpha, beta = (float(re.search(rf'"{name}": {NUMBER}', as_json).group(1)) for name in ("alpha", "beta"))
    # Rastogi, Suciu, Hong 2007: as unbounded DP, ε = max(ln(α/β), ln((1 − β)/(1 − α)))
    epsilon = max(math.log(alpha / beta), math.log((1 - beta) / (1 - alpha)))
    # Adult's public domains with the missing value (--missing keep): age 17..90, 16 educations,
    # 14 occupations, 41 countries, 2 sexes, 2 incomes, each + 1
    m = 75 * 17 * 15 * 42 * 3 * 3
    d = 5 * 50000 / m
    shown_epsilon = float(re.search(rf"equivalent epsilon \(unbounded DP\)\s*│\s*{NUMBER}", out).group(1))
    shown_d = float(re.search(rf"d \(prior bound\) = 5 N/m\s*│\s*{NUMBER}", out).group(1))
    assert epsilon <= shown_epsilon <= epsilon * (1 + 1e-5)  # 1.9429414...: "1.94294" until the fix
    assert d * (1 - 1e-5) <= shown_d <= d


def test_query_and_ledger_show_state_the_charge_rounded_up(capsys, tmp_path):
    epsilon, delta = 0.1234561, 2.7116e-7  # nearest rounding: 0.123456 and 2.71e-07, both below
    ledger = str(tmp_path / "l.sqlite3")
    code, out, err = run_command(capsys, "query", "adult", "count", "--epsilon", str(epsilon), "--delta", str(delta),
                                 "--mechanism", "gaussian", "--ledger", ledger, "--budget", "1,1e-5")
    assert code == 0, err
    stated = re.search(rf"guarantee\s+\(ε = {NUMBER}, δ = {NUMBER}\)-differential privacy", out)
    assert stated, out
    assert float(stated.group(1)) >= epsilon and float(stated.group(2)) >= delta
    code, out, err = run_command(capsys, "ledger", "show", "--ledger", ledger)
    assert code == 0, err
    row = next(line for line in out.splitlines() if re.match(r"\s*1 │", line))
    cells = [cell.strip() for cell in row.split("│")]
    assert float(cells[3]) >= epsilon and float(cells[4]) >= delta, row


def _before_report(tmp_path, capsys, epsilon: str) -> tuple[str, str]:
    """A small release's report with before-distributions at ``epsilon`` (δ 1e-7): what the
    command printed, and the page."""
    ledger = tmp_path / "ledger.sqlite3"
    publish_small(tmp_path, small_table(), ledger=str(ledger), budget=(10.0, 1e-5))
    release = tmp_path / "out" / "r.csv"
    code, out, err = run_command(capsys, "report", str(release), "--before", str(tmp_path / "data.parquet"),
                                 "--schema", str(tmp_path / "schema.toml"), "--ledger", str(ledger), "--seed", "1",
                                 "--before-epsilon", epsilon, "--before-delta", "1e-7",
                                 "--out", str(tmp_path / "b.html"))
    assert code == 0, err
    return out, (tmp_path / "b.html").read_text(encoding="utf-8")


def test_before_distributions_state_their_epsilon_rounded_up(tmp_path, capsys):
    out, page = _before_report(tmp_path, capsys, "0.5")
    each = 0.5 / len(QI)  # sequential composition over the published attributes: 0.08333...
    printed = [float(x) for x in re.findall(rf"DP histogram, epsilon = {NUMBER}", out)]
    assert len(printed) == len(QI) and min(printed) >= each, out  # "0.0833333" until the fix
    for pattern in (rf"original, noisy \(ε = {NUMBER}\)", rf"a noisy DP histogram \(ε = {NUMBER}, δ = {NUMBER}\)"):
        shown = re.findall(pattern, page)
        assert len(shown) == len(QI), pattern
        assert all(float(x if isinstance(x, str) else x[0]) >= each for x in shown)


def test_a_before_report_states_the_total_of_its_before_distributions(tmp_path, capsys):
    """The page with before-distributions reveals more than the release: it says what they cost
    together (sequential composition, Dwork and Roth 2014, Theorem 3.16), not only each one's ε."""
    _, page = _before_report(tmp_path, capsys, "0.7")
    page = re.sub(r"<[^>]+>", " ", page)
    total = re.search(rf"together \(ε = {NUMBER}, δ = {NUMBER}\) by sequential composition", page)
    assert total, "the page does not state the before-distributions' total"
    # what the ledger charged for them, read from its file: len(QI) histograms of (0.7 / len(QI), 1e-7)
    with sqlite3.connect(tmp_path / "ledger.sqlite3") as book:
        charged = book.execute("SELECT epsilon, delta FROM entries WHERE kind = 'query'").fetchall()
    assert len(charged) == len(QI)
    epsilon, delta = math.fsum(e for e, _ in charged), math.fsum(d for _, d in charged)
    assert math.isclose(epsilon, 0.7) and math.isclose(delta, len(QI) * 1e-7)
    assert epsilon <= float(total.group(1)) <= epsilon * (1 + 1e-5)
    assert delta <= float(total.group(2)) <= delta * (1 + 1e-5)
    assert "this page as a whole reveals what the release and these answers reveal together" in page


def test_a_before_report_says_which_ledger_it_charged(tmp_path, capsys):
    """As publish, query and perturb print the ledger and entry they charged (report --before said only
    "(charged)", so a script could not tell which ledger moved); the page holds none of it."""
    out, page = _before_report(tmp_path, capsys, "0.7")
    ledger = tmp_path / "ledger.sqlite3"
    with sqlite3.connect(ledger) as book:
        entries = [row[0] for row in book.execute("SELECT id FROM entries WHERE kind = 'query' ORDER BY id")]
        spent = math.fsum(row[0] for row in book.execute("SELECT epsilon FROM entries"))
    said = " ".join(out.split())
    line = re.search(rf"ledger: charged to 'data.parquet' \(entries #(\d+) to #(\d+)\); spent epsilon {NUMBER} of "
                     rf"10, delta {NUMBER} of 1e-05 \((.+?)\)$", said)
    assert line, out
    assert [int(line.group(1)), int(line.group(2))] == [entries[0], entries[-1]]
    assert spent <= float(line.group(3)) <= spent * (1 + 1e-5)  # rounded up, never below what was spent
    assert line.group(5) == str(ledger)
    assert str(ledger) not in page and "entries #" not in page


def _visible(page: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", re.sub(r"<style>.*?</style>", " ", page, flags=re.DOTALL)))


def test_the_release_report_states_the_guarantee_rounded_up(tmp_path):
    """The report's own statement of the guarantee (headline, and the risk table's row) used 4 and
    3 digits to nearest: ε = 1.00004 read "1", d = 4.07e-14 for 4.0725e-14."""
    from crowdsafe.api import publish

    epsilon = 1.00004
    publish("adult", epsilon=epsilon, scheme="medium", k=20, beta=0.1, ledger=None, seed=3,
            out=str(tmp_path / "r.csv"))
    page = _visible((tmp_path / "r.report.html").read_text(encoding="utf-8"))
    exact = lqs_delta(20, 0.1, epsilon)  # Theorem 5 (strongly safe), from its definition
    headline = re.search(rf"This table satisfies \({NUMBER}, {NUMBER}\)-differential privacy", page)
    risk = re.search(rf"differential privacy ε = {NUMBER}, δ = {NUMBER}", page)
    plain = re.search(rf"except with probability at most δ = {NUMBER}", page)
    assert headline and risk and plain, page[:2000]
    for shown_epsilon, shown_delta in (headline.groups(), risk.groups()):
        assert epsilon <= float(shown_epsilon) <= epsilon * 1.001
        assert exact <= float(shown_delta) <= exact * 1.01
    assert exact <= float(plain.group(1)) <= exact * 1.01


def test_the_view_report_states_d_down_and_epsilon_up(tmp_path):
    """An α-β view's report: d and d/γ (larger is the stronger claim) rounded down, ε and e^ε up."""
    from crowdsafe.api import perturb

    result = perturb("adult", c=5, gamma=0.2, max_rows=50315, seed=1, out=str(tmp_path / "v.csv"),
                     attributes=["age", "education", "occupation", "native-country", "sex", "income"], ledger=None)
    page = _visible((tmp_path / "v.report.html").read_text(encoding="utf-8"))
    m = 75 * 17 * 15 * 42 * 3 * 3  # Adult's public domains with the missing value, as above
    d = 5 * 50315 / m  # 0.0347996: "0.0348" to nearest
    alpha, beta = result.plan.alpha, result.plan.beta  # the parameters that ran
    epsilon = max(math.log(alpha / beta), math.log((1 - beta) / (1 - alpha)))  # Rastogi, Suciu, Hong 2007
    shown_d = re.search(rf"\(d, γ\)-private with d = {NUMBER}", page)
    shown_ratio = re.search(rf"never falls below d/γ = {NUMBER} times", page)
    shown_epsilon = re.search(rf"ln\(\(1−β\)/\(1−α\)\)\) = {NUMBER}", page)
    shown_factor = re.search(rf"at most a factor e\^ε = {NUMBER}", page)
    assert shown_d and shown_ratio and shown_epsilon and shown_factor, page[:3000]
    assert d * 0.999 <= float(shown_d.group(1)) <= d
    assert d / 0.2 * 0.999 <= float(shown_ratio.group(1)) <= d / 0.2
    assert epsilon <= float(shown_epsilon.group(1)) <= epsilon * 1.001
    assert math.exp(epsilon) <= float(shown_factor.group(1)) <= math.exp(epsilon) * 1.01


def test_each_of_several_releases_says_what_they_reveal_together(tmp_path, capsys):
    """``publish --releases 3``: each release's certificate and report stated its own (ε, δ) only,
    with nothing saying it is one of three from the same data; now both carry the total, which
    must be the sequential composition of the three, recomputed here: (3ε, 3·d(k, β, ε))."""
    import json

    code, _, err = run_command(capsys, "publish", "adult", "--epsilon", "1", "--scheme", "medium", "--k", "20",
                               "--beta", "0.1", "--releases", "3", "--no-ledger", "--seed", "2",
                               "--out", str(tmp_path / "r.csv"))
    assert code == 0, err
    d = lqs_delta(20, 0.1, 1.0)
    for i in (1, 2, 3):
        certificate = json.loads((tmp_path / f"r-{i}.certificate.json").read_text(encoding="utf-8"))
        together = certificate["parameters"]["published_together"]
        assert together["releases"] == 3
        assert math.isclose(together["epsilon"], 3.0) and math.isclose(together["delta"], 3 * d, rel_tol=1e-6)
        page = _visible((tmp_path / f"r-{i}.report.html").read_text(encoding="utf-8"))
        stated = re.search(rf"one of 3 releases published together from the same data, each from a fresh sample: "
                           rf"together they are \({NUMBER}, {NUMBER}\)-differential privacy", page)
        assert stated, page[:2500]
        assert 3.0 <= float(stated.group(1)) and 3 * d <= float(stated.group(2)) <= 3 * d * 1.01
    composed = json.loads((tmp_path / "r.certificate.json").read_text(encoding="utf-8"))
    assert math.isclose(composed["epsilon"], 3.0) and math.isclose(composed["delta"], 3 * d, rel_tol=1e-6)
    code, _, err = run_command(capsys, "publish", "adult", "--epsilon", "1", "--scheme", "medium", "--k", "20",
                               "--beta", "0.1", "--no-ledger", "--seed", "2", "--out", str(tmp_path / "one.csv"))
    assert code == 0, err
    single = json.loads((tmp_path / "one.certificate.json").read_text(encoding="utf-8"))
    assert "published_together" not in single["parameters"]
    assert "releases published together" not in (tmp_path / "one.report.html").read_text(encoding="utf-8")


def test_python_texts_state_losses_rounded_up():
    """The Python objects' texts: a plan's explanation and repr, a PrivacyLoss, a query answer's repr."""
    from crowdsafe.api import plan_publish, query
    from crowdsafe.privacy import PrivacyLoss

    exact = lqs_delta(20, 0.1, 1.0)  # 4.0725e-14: "4.07e-14" to nearest
    plan = plan_publish(1.0, scheme="medium", k=20, beta=0.1)
    explained = re.search(rf"= {NUMBER} <= 1e-06", plan.explanation)
    shown = re.search(rf"PublishPlan\(epsilon=1, delta={NUMBER},", repr(plan))
    assert explained and shown, (plan.explanation, repr(plan))
    assert exact <= float(explained.group(1)) <= exact * 1.01 and exact <= float(shown.group(1)) <= exact * 1.01
    kov = kov_epsilon(0.5, 50, 1e-6)
    text = str(PrivacyLoss(kov, 4.0725e-14))
    loss = re.fullmatch(rf"\({NUMBER}, {NUMBER}\)-DP", text)
    assert loss and float(loss.group(1)) >= kov and float(loss.group(2)) >= 4.0725e-14, text
    answer = query("adult", "count", epsilon=0.1234561, delta=2.7116e-7, mechanism="gaussian", ledger=None)
    stated = re.search(rf"epsilon={NUMBER}, delta={NUMBER},", repr(answer))
    assert stated and float(stated.group(1)) >= 0.1234561 and float(stated.group(2)) >= 2.7116e-7, repr(answer)


def test_a_refusal_states_what_was_spent_rounded_up(capsys, tmp_path):
    """The ledger's refusal names the cost and what was spent: rounded up too (2.7116e-7 read 2.71e-07)."""
    ledger = str(tmp_path / "l.sqlite3")
    epsilon, delta = 0.1234561, 2.7116e-7
    code, _, err = run_command(capsys, "query", "adult", "count", "--epsilon", str(epsilon), "--delta", str(delta),
                               "--mechanism", "gaussian", "--ledger", ledger, "--budget", "0.2,1e-6")
    assert code == 0, err
    code, _, err = run_command(capsys, "query", "adult", "count", "--epsilon", str(epsilon), "--delta", str(delta),
                               "--mechanism", "gaussian", "--ledger", ledger)
    refused = re.search(rf"costs \(ε={NUMBER}, δ={NUMBER}\) but dataset 'adult' has spent \(ε={NUMBER}, δ={NUMBER}\)",
                        err)
    assert code != 0 and refused, err
    assert all(float(refused.group(i)) >= value for i, value in ((1, epsilon), (2, delta), (3, epsilon), (4, delta)))


def test_calc_solve_states_the_least_epsilon_rounded_up(capsys):
    """The least ε with d(20, 0.1, ε) ≤ 1e-6 is about 0.2919413: both the result line and the
    explanation must read at or above it (the explanation read 0.291941), and d there at or below δ."""
    code, out, _ = run_command(capsys, "calc", "solve", "--k", "20", "--beta", "0.1", "--delta", "1e-6")
    assert code == 0
    line = re.search(rf"epsilon = {NUMBER}, delta = {NUMBER} <= 1e-06", out)
    explained = re.search(rf"epsilon = {NUMBER} is the least epsilon with d\(k, beta, epsilon - epsilon1\) = {NUMBER}",
                          out)
    assert line and explained, out
    for epsilon_text, delta_text in (line.groups(), explained.groups()):
        shown = float(epsilon_text)
        assert lqs_delta(20, 0.1, shown) <= 1e-6 <= lqs_delta(20, 0.1, shown - 2e-6)  # the least, to 6 digits
        assert lqs_delta(20, 0.1, shown) <= float(delta_text) <= 1e-6


def test_publish_plan_states_epsilon1_and_the_anonymization_epsilon_rounded_up(capsys):
    """The default plan on Adult spends ε1 = 0.41571455... on the choice: the plan printed
    ``epsilon1 = 0.4157`` (below it) while the report stated 0.4158 (an officer's sweep, 2026-11-30)."""
    args = ["publish", "adult", "--epsilon", "1", "--delta", "1e-6", "--plan-only", "--no-ledger"]
    code, out, err = run_command(capsys, *args)
    assert code == 0, err
    code, as_json, err = run_command(capsys, *args, "--json")
    assert code == 0, err
    epsilon1 = float(re.search(rf'"epsilon1": {NUMBER}', as_json).group(1))
    assert 0 < epsilon1 < 1
    shown_epsilon1 = float(re.search(rf"epsilon1 = {NUMBER} for the", out).group(1))
    shown_anon = float(re.search(rf"d\(k, beta, {NUMBER}\)", out).group(1))
    assert epsilon1 <= shown_epsilon1 <= epsilon1 * (1 + 1e-3)
    assert 1 - epsilon1 <= shown_anon <= (1 - epsilon1) * (1 + 1e-3)


def test_the_plan_view_states_epsilon1_rounded_up():
    from crowdsafe.api import plan_publish

    epsilon1 = 0.41571455438798627  # the default plan's on Adult: nearest rounding reads 0.4157, below it
    plan = plan_publish(1.0, delta=1e-6, epsilon1=epsilon1)
    page = plan._repr_html_()
    cell = re.search(rf"ε1 \(choosing the scheme\)</t[dh]>\s*<td[^>]*>{NUMBER}:", page)
    anon = re.search(rf"ε − ε1 \(the anonymization\)</t[dh]>\s*<td[^>]*>{NUMBER}<", page)
    assert cell and anon, page
    assert epsilon1 <= float(cell.group(1)) <= epsilon1 * (1 + 1e-3)
    assert 1 - epsilon1 <= float(anon.group(1)) <= (1 - epsilon1) * (1 + 1e-3)


def test_the_ledger_states_the_sampling_rate_rounded_down(tmp_path):
    """The rate a ledger entry names is the rate the command line prints (0.2994609... reads
    0.2994, as the run's plan line; the entry said 0.2995, above the rate that ran)."""
    ledger = tmp_path / "l.sqlite3"
    publication = publish_small(tmp_path, small_table(), ledger=str(ledger), budget=(10.0, 1e-5))
    beta = publication.plan.beta
    with sqlite3.connect(ledger) as db:
        description, = db.execute("SELECT description FROM entries").fetchone()
    shown = float(re.search(rf"beta = {NUMBER}\)", description).group(1))
    assert beta * (1 - 1e-3) <= shown <= beta, description


def test_the_ledger_states_a_views_prior_bound_down_and_its_posterior_bound_up(tmp_path):
    """A view's ledger entry named its (d, γ) rounded to nearest: d = 0.12351 read 0.124, a
    stronger claim than the one proven (a larger prior bound); d is now rounded down, γ up."""
    from crowdsafe import api

    ledger = tmp_path / "l.sqlite3"
    d, gamma = 0.12351, 0.50049
    api.perturb("adult", attributes=["education", "sex"], max_rows=50_000, d=d, gamma=gamma, seed=1,
                ledger=str(ledger), budget=(10.0, 0.0))
    with sqlite3.connect(ledger) as db:
        description, = db.execute("SELECT description FROM entries").fetchone()
    stated = re.search(rf"alpha-beta view \({NUMBER}, {NUMBER}\)-private", description)
    assert stated, description
    assert d * (1 - 1e-2) <= float(stated.group(1)) <= d and gamma <= float(stated.group(2)) <= gamma * (1 + 1e-2)
