"""``crowdsafe calc``: the privacy calculus on the command line (no data involved)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from crowdsafe.cli.options import JsonOpt, emit, number_option, split_list, whole_option
from crowdsafe.errors import ParameterError
from crowdsafe.number_text import parse_number, rounded_down, rounded_up

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from crowdsafe.privacy import PrivacyLoss
else:
    from crowdsafe.cli.lazy import Console, Table

calc_app = typer.Typer(
    name="calc",
    help="The privacy calculus: amplification, d(k, beta, epsilon), planning, composition.",
    no_args_is_help=True,
)


def _floats(value: str | None, name: str) -> list[float] | None:
    items = split_list(value)
    if items is None:
        return None
    return [parse_number(item, f"--{name}") for item in items]


def _fmt(value: float | None, digits: int = 6) -> str:
    return "-" if value is None else f"{value:.{digits}g}"


def _loss(value: float | None, digits: int = 6) -> str:
    """A privacy loss (an ε or a δ) as printed: rounded up, never stated below the one proven."""
    return "-" if value is None else rounded_up(value, digits)


def _table(title: str, columns: list[str], rows: list[list[str]]) -> None:
    table = Table(title=title)
    for column in columns:
        table.add_column(column, justify="right" if column not in ("bound", "theorem") else "left")
    for row in rows:
        table.add_row(*row)
    Console().print(table)




@calc_app.command("amplify")
def amplify_command(
    epsilon: Annotated[float | None, number_option("--epsilon", help="Inner epsilon of the algorithm.")] = None,
    delta: Annotated[float, number_option("--delta", help="Inner delta of the algorithm.")] = 0.0,
    beta: Annotated[str | None, typer.Option("--beta", help="Sampling rate(s), comma-separated.")] = None,
    base_beta: Annotated[float, number_option("--base-beta", help="Rate the inner guarantee holds at (1: plain DP).")] = 1.0,
    target_epsilon: Annotated[float | None, number_option("--target-epsilon", help="Solve for the largest rate (with --epsilon) or the largest inner loss (with --beta).")] = None,
    target_delta: Annotated[float, number_option("--target-delta", help="Target delta when solving.")] = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Amplification by sampling: (eps, delta)-DP on a Bernoulli(beta) sample is (ln(1 + beta(e^eps - 1)), beta*delta)-DP.

    Three uses: --epsilon and --beta give the amplified guarantee; --epsilon and --target-epsilon
    give the largest rate; --beta and --target-epsilon give the weakest inner guarantee allowed.

    Example: crowdsafe calc amplify --epsilon 2.3979 --delta 1e-5 --beta 1,0.1,0.01
    """
    from crowdsafe.privacy import PrivacyLoss, amplify, largest_inner_loss, largest_rate

    rates = _floats(beta, "beta")
    if target_epsilon is not None:
        target = PrivacyLoss(target_epsilon, target_delta)
        if epsilon is not None:
            rate = largest_rate(PrivacyLoss(epsilon, delta), target, base_beta)
            payload: dict[str, Any] = {"inner": PrivacyLoss(epsilon, delta).as_dict(),
                                       "target": target.as_dict(), "largest_rate": rate}
            emit(payload, as_json, lambda: typer.echo(
                f"largest sampling rate: {rounded_down(rate)} (inner {PrivacyLoss(epsilon, delta)}, target {target})"))
            return
        if not rates or len(rates) != 1:
            raise ParameterError("with --target-epsilon give either --epsilon (solve for the rate) or one --beta")
        inner = largest_inner_loss(target, rates[0], base_beta)
        payload = {"beta": rates[0], "target": target.as_dict(), "largest_inner": inner.as_dict()}
        emit(payload, as_json, lambda: typer.echo(
            # the largest inner loss allowed: rounded down (PrivacyLoss's text rounds a loss up), so
            # an algorithm at the printed loss meets the target
            f"an algorithm up to ({rounded_down(inner.epsilon)}, {rounded_down(inner.delta, 3)})-DP run at "
            f"beta = {rates[0]:g} meets {target}"))
        return
    if epsilon is None or not rates:
        raise ParameterError("give --epsilon and --beta (or --target-epsilon to solve); see --help")
    inner = PrivacyLoss(epsilon, delta)
    rows = [{"beta": b, **amplify(inner, b, base_beta).as_dict()} for b in rates]
    emit({"inner": inner.as_dict(), "base_beta": base_beta, "rows": rows}, as_json, lambda: _table(
        f"amplification of {inner} by Bernoulli sampling", ["beta", "epsilon", "delta"],
        [[_fmt(r["beta"]), _loss(r["epsilon"]), _loss(r["delta"], 3)] for r in rows]))


@calc_app.command("dps")
def dps_command(
    k: Annotated[int, whole_option("--k", help="Suppression threshold k.")],
    beta: Annotated[str, typer.Option("--beta", help="Sampling rate(s), comma-separated.")],
    epsilon: Annotated[str, typer.Option("--epsilon", help="Total epsilon(s), comma-separated.")],
    epsilon1: Annotated[float, number_option("--epsilon1", help="Selection budget of an epsilon1-safe recoding (0: strongly safe).")] = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """delta = d(k, beta, epsilon - epsilon1) of safe k-anonymization after sampling (Li, Qardaji, Su 2012).

    Example: crowdsafe calc dps --k 20 --beta 0.05,0.1,0.2 --epsilon 0.25,0.5,0.75,1,1.5,2
    """
    from crowdsafe.privacy import delta_bound

    rates, epsilons = _floats(beta, "beta"), _floats(epsilon, "epsilon")
    assert rates is not None and epsilons is not None
    rows: list[dict[str, Any]] = [delta_bound(k, b, e, epsilon1).as_dict() for b in rates for e in epsilons]
    for row in rows:
        row["epsilon1"] = epsilon1
    emit({"rows": rows}, as_json, lambda: _table(
        f"delta = d(k={k}, beta, epsilon{' - ' + format(epsilon1, 'g') if epsilon1 else ''})",
        ["beta", "epsilon", "delta", "max at n", "n_m"],
        [[_fmt(r["beta"]), _fmt(r["epsilon"]), _loss(r["delta"], 3), str(r["n_at_max"]), str(r["n_min"])]
         for r in rows]))


@calc_app.command("solve")
def solve_command(
    epsilon: Annotated[float | None, number_option("--epsilon", help="Total epsilon.")] = None,
    delta: Annotated[float | None, number_option("--delta", help="Target delta.")] = None,
    beta: Annotated[float | None, number_option("--beta", help="Sampling rate.")] = None,
    k: Annotated[int | None, whole_option("--k", help="Suppression threshold k.")] = None,
    epsilon1: Annotated[float, number_option("--epsilon1", help="Selection budget of an epsilon1-safe recoding.")] = 0.0,
    as_json: JsonOpt = False,
) -> None:
    """Plan a safe k-anonymization: leave out the one parameter to solve for.

    No --k: the smallest k. No --beta: the largest rate. No --epsilon: the smallest epsilon.
    Neither --k nor --beta: beta = 1 - e^-(epsilon - epsilon1), then the smallest k. All given:
    check. The sampling floor epsilon >= -ln(1 - beta) + epsilon1 is reported when it binds.

    Example: crowdsafe calc solve --epsilon 1 --delta 1e-6 --beta 0.2
    """
    from crowdsafe.privacy import plan, smallest_epsilon

    if delta is None:
        raise ParameterError("--delta is required: the delta the release must reach")
    if epsilon is None:
        if k is None or beta is None:
            raise ParameterError("to solve for epsilon give --k, --beta and --delta")
        result = smallest_epsilon(k, beta, delta, epsilon1)
    else:
        result = plan(epsilon, delta, beta=beta, k=k, epsilon1=epsilon1)
    data = result.as_dict()

    def render() -> None:
        typer.echo(f"k = {result.k}, beta = {rounded_down(result.beta)}, epsilon = {rounded_up(result.epsilon)}"
                   + (f" (epsilon1 = {result.epsilon1:g})" if result.epsilon1 else "")
                   + f", delta = {rounded_up(result.delta, 3)} <= {result.delta_target:g}")
        typer.echo(result.explanation)

    emit(data, as_json, render)


@calc_app.command("compose")
def compose_command(
    losses: Annotated[list[str] | None, typer.Argument(help="Losses as EPS or EPS:DELTA (sequential and parallel composition).")] = None,
    epsilon: Annotated[float | None, number_option("--epsilon", help="Per-run epsilon (k-fold composition).")] = None,
    delta: Annotated[float, number_option("--delta", help="Per-run delta (k-fold composition).")] = 0.0,
    times: Annotated[int | None, whole_option("--times", help="k: how many runs (k-fold composition).")] = None,
    slack: Annotated[float, number_option("--slack", help="delta' the advanced bounds may add.")] = 0.0,
    certificate: Annotated[list[Path] | None, typer.Option("--certificate", help="Certificate JSON files of releases to compose (repeatable).")] = None,
    as_json: JsonOpt = False,
) -> None:
    """Compose privacy losses: k-fold (summation, DRV, KOV: the smallest certifies), sequential and parallel, or certificates.

    Certificates of DP-under-sampling releases are refused when they share a sample.

    Example: crowdsafe calc compose --epsilon 0.5 --times 50 --slack 1e-6
    """
    from crowdsafe.privacy import Certificate, compose_certificates, compose_homogeneous, parallel, sequential

    modes = sum(x is not None and x != [] for x in (losses, times, certificate))
    if modes != 1:
        raise ParameterError("give exactly one of: LOSSES, --times (with --epsilon), or --certificate files")
    if certificate:
        total = compose_certificates([Certificate.read(p) for p in certificate], delta_slack=slack)
        emit(total.to_dict(), as_json, lambda: typer.echo(total.summary()))
        return
    if times is not None:
        if epsilon is None:
            raise ParameterError("--times needs --epsilon (and optionally --delta, --slack)")
        result = compose_homogeneous(epsilon, delta, times, slack)

        def show() -> None:
            _table(f"{times}-fold composition of ({epsilon:g}, {delta:g})-DP, slack {slack:g}",
                   ["bound", "epsilon", "delta", "theorem"],
                   [[c.bound + (" *" if c.bound == result.bound else ""), _loss(c.epsilon),
                     _loss(c.delta, 3), c.theorem if c.epsilon is not None else c.note]
                    for c in result.candidates])
            typer.echo(f"certified: ({rounded_up(result.epsilon)}, {rounded_up(result.delta, 3)})-DP by {result.bound}")

        emit(result.as_dict(), as_json, show)
        return
    parsed = [_parse_loss(text) for text in losses or []]
    seq, par = sequential(parsed), parallel(parsed)
    emit({"losses": [p.as_dict() for p in parsed], "sequential": seq.as_dict(), "parallel": par.as_dict()},
         as_json, lambda: typer.echo(f"sequential: {seq}\nparallel (disjoint parts): {par}"))


def _parse_loss(text: str) -> PrivacyLoss:
    from crowdsafe.privacy import PrivacyLoss

    eps, _, delta = text.partition(":")
    name = f"the loss {text!r} (EPS or EPS:DELTA)"
    return PrivacyLoss(parse_number(eps, name), parse_number(delta, name) if delta else 0.0)


def register(app: typer.Typer) -> None:
    app.add_typer(calc_app, name="calc")
