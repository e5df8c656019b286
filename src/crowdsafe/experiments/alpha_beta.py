"""Reproduction of the α-β case study (Rastogi, Suciu, Hong 2007) on UCI Adult.

Adult's training file without rows with a missing value, 9 attributes, (10·N/m, 0.2)-privacy
with α = 1/2: N, m, the β chosen by the planner and the view size; every equality query over
up to three attributes estimated from the view against its true count on the data; and the
view-size ratio |V|/|I| against γ for c = 5. Every number is computed by :mod:`crowdsafe.perturb`.

As a certified release would, the run declares what it takes as public: the domain of each
attribute is the leaf list of Adult's fixed hierarchies (:mod:`crowdsafe.datasets.uci_adult`:
value lists written in the code, not read from the data; age 17..90 and the 8 work classes
include values absent from this file), and N = 30,162, the published number of complete rows of
Adult's training file, bounds n. The paper's d = c·n/m becomes d = c·N/m ≥ c·n/m. The exact n
and the true counts appear only in this evaluation (the summary and the estimates' ``true``
column), never in the view's certificate.
"""

from __future__ import annotations

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from crowdsafe.csv_safety import write_csv
from crowdsafe.datasets import adult
from crowdsafe.experiments.registry import ExperimentContext, experiment
from crowdsafe.files import atomic_path
from crowdsafe.perturb import equality_estimates, plan_for, prepare, run
from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest, plan_alpha_beta

ATTRIBUTES = ("age", "workclass", "education", "marital-status", "occupation", "race", "sex",
              "native-country", "income")
MAX_ROWS = 30_162  # public: the complete rows of adult.data (UCI documentation)
C = 10.0
GAMMA = 0.2
ALPHA = 0.5
MAX_ATTRIBUTES = 3
RATIO_C = 5.0
RATIO_GAMMAS = (0.05, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9)
REFERENCE_BAND = 1000.0  # the published figure's band of roughly ±1000 around y = x
LARGE_COUNT = 1000  # "large" true counts, for the band statistics
SMALL_COUNT = 300  # the close-up panel of small counts


@experiment("alpha-beta",
            "The alpha-beta algorithm on Adult: (10N/m, 0.2)-privacy, estimates of all <=3-attribute equality queries")
def alpha_beta(ctx: ExperimentContext) -> None:
    data = adult("train", drop_missing=True)
    table = prepare(data, list(ATTRIBUTES), max_rows=MAX_ROWS)  # public domains: the hierarchies' leaves
    plan = plan_for(table, AlphaBetaPlanRequest(gamma=GAMMA, c=C, alpha=ALPHA))
    view = run(table, plan, ctx.randomness)
    assert table.index is not None  # Adult's domain has fewer than 2^64 tuples: the table is indexed
    truth = table.domain.codes_of(table.index)  # I's distinct tuples, as codes
    sweep = equality_estimates(view, max_attributes=MAX_ATTRIBUTES, truth=truth)
    frame = sweep.frame
    true, est = frame.get_column("true").to_numpy(), frame.get_column("estimate").to_numpy()
    error = est - true
    large = true >= LARGE_COUNT
    bound = sweep.theorem.error
    facts = {
        "rows": table.rows,  # evaluation only: the exact counts are in no certificate
        "n": table.n,
        "max_rows": plan.n,
        "m": plan.m,
        "guarantee": view.certificate.guarantee,
        "domain_sources": sorted(set(view.certificate.parameters["domain_sources"].values())),
        "d": plan.d,
        "gamma": plan.gamma,
        "alpha": plan.alpha,
        "beta": plan.beta,
        "equivalent_epsilon": plan.epsilon,
        "expected_view_rows_at_most": plan.expected_view,  # at n = N
        "view_rows": view.rows,
        "view_to_data_ratio": view.rows / table.n,
        "queries": int(len(frame)),
        "theorem_error_bound_95": bound,
        "share_within_theorem_bound": float(np.mean(np.abs(error) < bound)) if bound else None,
        "share_within_bernstein_bound": float(np.mean(np.abs(error) < frame.get_column("error").to_numpy())),
        "negative_estimates": int(np.sum(est < 0)),
        "queries_true_count_at_least_1000": int(large.sum()),
        "share_of_those_within_1000": float(np.mean(np.abs(error[large]) <= REFERENCE_BAND)) if large.any() else None,
        "largest_absolute_error": float(np.max(np.abs(error))),
        "seeded": ctx.randomness.seeded,
    }
    ctx.csv("alpha-beta-summary", {"quantity": list(facts), "value": [str(v) if isinstance(v, list) else v
                                                                        for v in facts.values()]})
    estimates_path = ctx.folder / "alpha-beta-estimates.csv"
    with atomic_path(estimates_path) as tmp:
        write_csv(frame, tmp)
    ctx.written.append(estimates_path)
    ctx.png("alpha-beta-scatter", _scatter(frame, bound, plan))
    ctx.summary.update(facts)
    _view_ratio(ctx, table)


def _scatter(frame: pl.DataFrame, bound: float | None, plan) -> Figure:
    """EST against Q(I) (all counts, and the small ones close up), and the error against Q(I)."""
    fig = Figure(figsize=(17, 5.4))
    full, small, errors = fig.subplots(1, 3)
    true = frame.get_column("true").to_numpy()
    est = frame.get_column("estimate").to_numpy()
    arity = frame.get_column("arity").to_numpy()
    colours = {1: "tab:red", 2: "tab:orange", 3: "tab:blue"}
    zoom = true <= SMALL_COUNT
    for k in (3, 2, 1):
        chosen = arity == k
        label = f"{k} attribute{'s' if k > 1 else ''} ({chosen.sum():,} queries)"
        style = dict(s=2, alpha=0.35, color=colours[k], rasterized=True, linewidths=0)
        full.scatter(true[chosen], est[chosen], label=label, **style)
        small.scatter(true[chosen & zoom], est[chosen & zoom], **style)
        errors.scatter(true[chosen], est[chosen] - true[chosen], **style)
    for ax, top in ((full, max(float(true.max()), 1.0)), (small, float(SMALL_COUNT))):
        ax.plot([0, top], [0, top], color="black", linewidth=1, label="y = x")
        ax.plot([0, top], [REFERENCE_BAND, top + REFERENCE_BAND], "k--", linewidth=0.8, label="±1000 (published band)")
        ax.plot([0, top], [-REFERENCE_BAND, top - REFERENCE_BAND], "k--", linewidth=0.8)
        ax.set_xlabel("Q(I): true count (distinct tuples)")
        ax.set_ylabel("EST(Q, V)")
        ax.grid(True, alpha=0.3)
    top = max(float(true.max()), 1.0)
    errors.axhline(REFERENCE_BAND, color="black", linestyle="--", linewidth=0.8)
    errors.axhline(-REFERENCE_BAND, color="black", linestyle="--", linewidth=0.8)
    errors.axhline(0.0, color="black", linewidth=1)
    errors.set_xlabel("Q(I): true count (distinct tuples)")
    errors.set_ylabel("EST(Q, V) − Q(I)")
    errors.grid(True, alpha=0.3)
    full.set_title(f"Adult, (10N/m, 0.2)-privacy, α = {plan.alpha:g}, β = {plan.beta:.3g}")
    full.legend(fontsize=8, markerscale=4, loc="upper left")
    small.set_title(f"Small counts (Q(I) ≤ {SMALL_COUNT}):\nfar off, often negative")
    theorem = (f"per-query theorem bound ±{bound:,.0f} (95%)\nis off this scale" if bound
               else "theorem bound not applicable")
    errors.set_title(f"Error; {theorem}")
    errors.set_xlim(-0.02 * top, 1.02 * top)
    fig.tight_layout()  # (the three titles overlapped at this width)
    return fig


def _view_ratio(ctx: ExperimentContext, table) -> None:
    """|V|/|I| against γ for c = 5: expected (the planned β at the true n) and measured (one run
    per γ). The plan uses the public bound N, as a release does."""
    expected, measured, betas = [], [], []
    n, m = table.n, table.domain.size
    for gamma in RATIO_GAMMAS:
        plan = plan_alpha_beta(table.n_bound, m, AlphaBetaPlanRequest(gamma=gamma, c=RATIO_C, alpha=ALPHA))
        view = run(table, plan, ctx.randomness)
        expected.append((plan.alpha * n + plan.beta * (m - n)) / n)
        measured.append(view.rows / n)
        betas.append(plan.beta)
    ctx.csv("alpha-beta-view-ratio", {
        "c": [RATIO_C] * len(RATIO_GAMMAS), "gamma": list(RATIO_GAMMAS), "alpha": [ALPHA] * len(RATIO_GAMMAS),
        "beta": betas, "expected_ratio": expected, "measured_ratio": measured,
    })
    fig = Figure(figsize=(6.4, 4.4))
    ax = fig.subplots()
    ax.plot(RATIO_GAMMAS, expected, "-", color="tab:blue", label="expected: (αn + β(m − n))/n")
    ax.plot(RATIO_GAMMAS, measured, "o", color="tab:orange", label="measured |V|/|I| (one view per γ)")
    ax.set_yscale("log")
    ax.set_xlabel("γ (largest posterior)")
    ax.set_ylabel("|V| / |I|")
    ax.set_title(f"View size against γ on Adult (d = {RATIO_C:g}·N/m, α = {ALPHA:g})")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ctx.png("alpha-beta-view-ratio", fig)
    ctx.summary["view_ratio"] = [{"gamma": g, "expected": e, "measured": m}
                                 for g, e, m in zip(RATIO_GAMMAS, expected, measured)]
