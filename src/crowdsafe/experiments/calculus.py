"""Reproductions for the privacy calculus (Li, Qardaji, Su 2012; composition bounds).

Every number is computed by :mod:`crowdsafe.privacy`; nothing is typed in.
"""

from __future__ import annotations

import math

import numpy as np
from matplotlib.figure import Figure

from crowdsafe.errors import ParameterError
from crowdsafe.experiments.registry import ExperimentContext, experiment
from crowdsafe.privacy import (
    PrivacyLoss,
    amplify,
    compose_homogeneous,
    dps_delta,
    sampling_floor,
    smallest_epsilon,
    smallest_k,
)

DELTA_TABLE_K = 20
DELTA_TABLE_BETAS = (0.05, 0.1, 0.2)
DELTA_TABLE_EPSILONS = (0.25, 0.5, 0.75, 1.0, 1.5, 2.0)


def delta_table(k: int = DELTA_TABLE_K) -> list[tuple[float, float, float]]:
    """(β, ε, d(k, β, ε)) for the 18 cells β ∈ {0.05, 0.1, 0.2} × ε ∈ {0.25, ..., 2}."""
    return [(b, e, dps_delta(k, b, e)) for b in DELTA_TABLE_BETAS for e in DELTA_TABLE_EPSILONS]


def _label(ax, xlabel: str, ylabel: str, title: str, *, log_x: bool = False, log_y: bool = False,
           legend_size: float | None = None) -> None:
    """Axis labels, title, log scales, grid and legend: the same for every figure here."""
    if log_x:
        ax.set_xscale("log")
    if log_y:
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=legend_size)


@experiment("amplification", "Amplification by sampling of an (ln 11, 1e-5)-DP and a (1, 0)-DP algorithm")
def amplification(ctx: ExperimentContext) -> None:
    algorithms = {"(ln 11, 1e-5)-DP": PrivacyLoss(math.log(11), 1e-5), "(1, 0)-DP": PrivacyLoss(1.0)}
    rates = (1.0, 0.1, 0.01)
    rows = [(name, b, amplify(loss, b)) for name, loss in algorithms.items() for b in rates]
    ctx.csv("amplification", {
        "algorithm": [r[0] for r in rows],
        "beta": [r[1] for r in rows],
        "epsilon": [r[2].epsilon for r in rows],
        "delta": [r[2].delta for r in rows],
    })
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    grid = np.logspace(-3, 0, 200)
    for name, loss in algorithms.items():
        line, = ax.plot(grid, [amplify(loss, float(b)).epsilon for b in grid], label=name)
        ax.plot(rates, [amplify(loss, b).epsilon for b in rates], "o", color=line.get_color())
        for b in rates:
            eps = amplify(loss, b).epsilon
            ax.annotate(f"{eps:.3g}", (b, eps), textcoords="offset points", xytext=(4, 6), fontsize=8)
    _label(ax, "sampling rate β", "ε after sampling: ln(1 + β(e^ε − 1))",
           "Amplification by Bernoulli sampling (δ scales by β)", log_x=True, log_y=True)
    ctx.png("amplification", fig)
    ctx.summary["rows"] = [{"algorithm": n, "beta": b, **loss.as_dict()} for n, b, loss in rows]


@experiment("dps-delta-table", "δ = d(20, β, ε) for β ∈ {0.05, 0.1, 0.2} and ε ∈ {0.25, ..., 2}")
def dps_delta_table(ctx: ExperimentContext) -> None:
    cells = delta_table()
    ctx.csv("dps-delta-table", {
        "k": [DELTA_TABLE_K] * len(cells),
        "beta": [c[0] for c in cells],
        "epsilon": [c[1] for c in cells],
        "delta": [c[2] for c in cells],
    })
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    for beta in DELTA_TABLE_BETAS:
        values = [c[2] for c in cells if c[0] == beta]
        line, = ax.plot(DELTA_TABLE_EPSILONS, values, "o-", label=f"β = {beta:g}")
        for eps, delta in zip(DELTA_TABLE_EPSILONS, values):
            ax.annotate(f"{delta:.2g}", (eps, delta), textcoords="offset points", xytext=(3, 5),
                        fontsize=7, color=line.get_color())
    _label(ax, "ε", "δ = d(20, β, ε)", "Strongly-safe 20-anonymization after sampling: δ",
           log_y=True)
    ctx.png("dps-delta-table", fig)
    ctx.summary["cells"] = [{"beta": b, "epsilon": e, "delta": d} for b, e, d in cells]


def _inverse_delta_panels() -> list[tuple[str, str, list[tuple[int, float]]]]:
    return [
        ("β = 0.2", "k", [(k, 0.2) for k in (5, 10, 20, 30, 50)]),
        ("k = 20", "β", [(20, b) for b in (0.05, 0.1, 0.2, 0.3, 0.4)]),
        ("β = 0.025", "k", [(k, 0.025) for k in (1, 2, 3, 4, 5)]),
    ]


@experiment("dps-inverse-delta", "1/δ against ε for several k and β")
def dps_inverse_delta(ctx: ExperimentContext) -> None:
    columns: dict[str, list] = {"panel": [], "k": [], "beta": [], "epsilon": [], "delta": [],
                                "inverse_delta": []}
    panels = _inverse_delta_panels()
    fig = Figure(figsize=(15, 4.4))
    axes = fig.subplots(1, len(panels))
    eps_max = 3.0
    for ax, (title, varied, curves) in zip(axes, panels):
        for k, beta in curves:
            grid = np.linspace(sampling_floor(beta), eps_max, 121)
            deltas = np.array([dps_delta(k, beta, float(e)) for e in grid])
            for e, d in zip(grid, deltas):
                columns["panel"].append(title)
                columns["k"].append(k)
                columns["beta"].append(beta)
                columns["epsilon"].append(float(e))
                columns["delta"].append(float(d))
                columns["inverse_delta"].append(1.0 / float(d))
            label = f"k = {k}" if varied == "k" else f"β = {beta:g}"
            ax.plot(grid, 1.0 / deltas, label=label)
        _label(ax, "ε (each curve starts at its floor −ln(1 − β))", "1/δ",
               f"1/δ against ε, {title}", log_y=True, legend_size=8)
    ctx.csv("dps-inverse-delta", columns)
    ctx.png("dps-inverse-delta", fig)


@experiment("dps-doubling-beta", "The k that keeps δ when β doubles from (k = 15, β = 0.05)")
def dps_doubling_beta(ctx: ExperimentContext) -> None:
    base_k, base_beta, rates = 15, 0.05, (0.1, 0.2, 0.4)
    epsilons = [round(float(e), 2) for e in np.arange(0.6, 3.01, 0.2)]
    columns: dict[str, list] = {"epsilon": [], "delta": [], "beta": [], "k": []}
    for eps in epsilons:
        target = dps_delta(base_k, base_beta, eps)
        for beta in (base_beta, *rates):
            k = base_k if beta == base_beta else smallest_k(eps, target, beta).k
            columns["epsilon"].append(eps)
            columns["delta"].append(target)
            columns["beta"].append(beta)
            columns["k"].append(k)
    ctx.csv("dps-doubling-beta", columns)
    fig = Figure(figsize=(6.4, 4.2))
    ax = fig.subplots()
    for beta in (base_beta, *rates):
        ks = [k for b, k in zip(columns["beta"], columns["k"]) if b == beta]
        ax.plot(epsilons, ks, "o-", label=f"β = {beta:g}")
    _label(ax, "ε", "smallest k with d(k, β, ε) ≤ d(15, 0.05, ε)",
           "k needed to keep δ as β doubles from 0.05")
    ctx.png("dps-doubling-beta", fig)
    ctx.summary["k_at_epsilon_1"] = {
        f"{b:g}": k for e, b, k in zip(columns["epsilon"], columns["beta"], columns["k"]) if e == 1.0
    }


@experiment("dps-smallest-epsilon", "The smallest ε for k = 5..100 with δ ≤ 1e-6, several β")
def dps_smallest_epsilon(ctx: ExperimentContext) -> None:
    delta, rates, ks = 1e-6, (0.01, 0.05, 0.1, 0.2, 0.4), list(range(5, 101))
    columns: dict[str, list] = {"beta": [], "k": [], "epsilon": [], "delta": [], "floor_binds": []}
    fig = Figure(figsize=(6.8, 4.4))
    ax = fig.subplots()
    unreachable: dict[str, list[int]] = {}
    for beta in rates:
        epsilons = []
        for k in ks:
            try:
                p = smallest_epsilon(k, beta, delta)
            except ParameterError:  # δ at or below β^k (d's limit as ε grows): no ε reaches it at this k
                unreachable.setdefault(f"{beta:g}", []).append(k)
                epsilons.append(math.nan)
                continue
            epsilons.append(p.epsilon)
            columns["beta"].append(beta)
            columns["k"].append(k)
            columns["epsilon"].append(p.epsilon)
            columns["delta"].append(p.delta)
            columns["floor_binds"].append(p.floor_binds)
        line, = ax.plot(ks, epsilons, label=f"β = {beta:g}")
        ax.axhline(sampling_floor(beta), color=line.get_color(), linestyle=":", linewidth=1)
    _label(ax, "k", "smallest ε with d(k, β, ε) ≤ 1e-6",
           "Smallest ε for δ ≤ 1e-6 (dotted: the floor −ln(1 − β))", log_y=True)
    ctx.csv("dps-smallest-epsilon", columns)
    ctx.png("dps-smallest-epsilon", fig)
    ctx.summary["unreachable_k"] = unreachable


@experiment("composition-bounds", "k-fold composition: summation, Dwork–Rothblum–Vadhan, Kairouz–Oh–Viswanath")
def composition_bounds(ctx: ExperimentContext) -> None:
    slack, per_step, ks = 1e-6, (0.1, 0.5), list(range(1, 101))
    columns: dict[str, list] = {"epsilon": [], "k": [], "bound": [], "total_epsilon": [],
                                "total_delta": []}
    fig = Figure(figsize=(11, 4.2))
    axes = fig.subplots(1, len(per_step))
    for ax, eps in zip(axes, per_step):
        curves: dict[str, list[float | None]] = {"summation": [], "drv": [], "kov": []}
        for k in ks:
            result = compose_homogeneous(eps, 0.0, k, slack)
            for c in result.candidates:
                curves[c.bound].append(c.epsilon)
                columns["epsilon"].append(eps)
                columns["k"].append(k)
                columns["bound"].append(c.bound)
                columns["total_epsilon"].append(c.epsilon)
                columns["total_delta"].append(c.delta)
        for bound, values in curves.items():
            ax.plot(ks, values, label=bound)
        _label(ax, "k (number of runs)", "total ε", f"ε = {eps:g} per run, δ' = {slack:g}")
    ctx.csv("composition-bounds", columns)
    ctx.png("composition-bounds", fig)
    example = compose_homogeneous(0.5, 0.0, 50, slack)
    ctx.summary["epsilon_0.5_k_50"] = {c.bound: c.epsilon for c in example.candidates}
