"""The extreme-value demo: classic k-anonymity reveals an outlier's presence; safe publishing does not.

A town of residents with net worths below 10M and one person worth 35M. Mondrian publishes each
class's observed range, so when the rich person is in the data some published range ends at 35M:
anyone who knows that person's worth learns they are in the data, whatever k is. The safe
pipeline (sampling + a scheme not fitted to the data + suppression below k) publishes the rich
person's class only if k rows fall in it, which one person cannot do.

The attacker plays the membership game: a fair coin decides whether the rich person is added to
the town; the attacker sees the release and guesses "in" when some published worth cell covers a
value above 10M. Its advantage, Pr[guess in | in] − Pr[guess in | out], is measured over many runs
for Mondrian, strongly safe publish and ε-safe publish, next to the bound any (ε, δ)-DP release
imposes on every attacker: (e^ε − 1 + 2δ)/(e^ε + 1) (Kairouz, Oh, Viswanath 2015; Wasserman and
Zhou 2010).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np
import polars as pl

from crowdsafe.data import Dataset, Schema, intervals
from crowdsafe.experiments.registry import ExperimentContext, experiment
from crowdsafe.randomness import Randomness

UNIT = 100_000  # net worth in units of 100k: 100 = 10M
RICH = 350  # 35M
CEILING = 100  # everyone else is below 10M
TOWN_SIZE = 300
EPSILON, DELTA = 1.0, 1e-4
RUNS = 300  # per mechanism (half with the rich person)
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")


def town(randomness: Randomness, size: int = TOWN_SIZE, rich: bool = False) -> Dataset:
    """A town: age and net worth (units of 100k) of ``size`` residents below 10M, plus the rich
    person (worth 35M) when ``rich``. The hierarchies are fixed in advance over the public range
    0..40M, so they do not depend on who lives there."""
    generator = randomness.generator
    ages = generator.integers(18, 90, size=size).tolist()
    worth = np.minimum(generator.lognormal(mean=1.5, sigma=1.0, size=size), CEILING - 1).astype(int).tolist()
    if rich:
        ages.append(60)
        worth.append(RICH)
    frame = pl.DataFrame({"age": ages, "worth": worth})
    schema = Schema.of({"age": "integer", "worth": "integer"}, qi=["age", "worth"])
    hierarchies = {
        "age": intervals("age", range(18, 90), widths=[5, 10, 20]),
        "worth": intervals("worth", range(0, 401), widths=[10, 50, 100, 400]),
    }
    return Dataset(frame, schema, hierarchies, name="town")


def reveals_rich(release: pl.DataFrame) -> bool:
    """The attacker's test: does some published worth cell show a value at or above 10M?

    Either the whole cell lies at or above 10M (a value, or a hierarchy node such as
    ``[350, 400)``), or it is a closed range ``[a, b]`` (Mondrian publishes the observed minimum
    and maximum of its class) whose observed maximum b is at or above 10M. A node such as
    ``[0, 400)`` or ``*`` shows nothing: its bounds were fixed in advance.
    """
    for cell in release.get_column("worth").cast(pl.String).unique().to_list() if release.height else []:
        numbers = [float(x) for x in _NUMBER.findall(cell or "")]
        if not numbers or cell.startswith("<"):
            continue
        if min(numbers) >= CEILING or (cell.endswith("]") and max(numbers) >= CEILING):
            return True
    return False


def mondrian_release(data: Dataset, k: int) -> pl.DataFrame:
    from crowdsafe.anonymize import anonymize_dataset

    return anonymize_dataset(data, "mondrian", k).frame


def publish_release(data: Dataset, plan, randomness: Randomness) -> pl.DataFrame:  # noqa: ANN001
    from crowdsafe.anonymize.publish import publish_dataset

    return publish_dataset(data, plan, randomness=randomness).release.frame


def dp_advantage_bound(epsilon: float, delta: float) -> float:
    """The largest membership advantage (TPR − FPR) any attacker has against an (ε, δ)-DP release."""
    return (math.exp(epsilon) - 1 + 2 * delta) / (math.exp(epsilon) + 1)


@dataclass(frozen=True)
class Outcome:
    mechanism: str
    runs: int
    true_positive_rate: float
    false_positive_rate: float

    @property
    def advantage(self) -> float:
        return self.true_positive_rate - self.false_positive_rate


def membership_game(mechanism: str, release, randomness: Randomness, runs: int = RUNS) -> Outcome:  # noqa: ANN001
    """Play the game ``runs`` times: a fresh town each run, the rich person in on even runs."""
    hits = {True: 0, False: 0}
    counts = {True: 0, False: 0}
    for i, stream in enumerate(randomness.spawn(runs)):
        member = i % 2 == 0
        data = town(stream, rich=member)
        counts[member] += 1
        hits[member] += reveals_rich(release(data, stream))
    return Outcome(mechanism, runs, hits[True] / counts[True], hits[False] / counts[False])


@experiment("extreme-value", "An outlier's presence: Mondrian's published range reveals it; safe publishing does not")
def extreme_value(ctx: ExperimentContext) -> None:
    from matplotlib.figure import Figure

    from crowdsafe.anonymize.publish import PlanRequest, plan_publication

    chosen = plan_publication(PlanRequest(EPSILON, DELTA))
    fixed = plan_publication(PlanRequest(EPSILON, DELTA, scheme="age=1,worth=2"))
    k = chosen.k
    streams = ctx.randomness.spawn(4)
    example = town(streams[0], rich=True)
    shown = mondrian_release(example, k)
    top = shown.filter(pl.col("worth").cast(pl.String).str.contains(str(RICH)))
    outcomes = [
        membership_game(f"Mondrian (k = {k}, no sampling)", lambda d, r: mondrian_release(d, k), streams[1]),
        membership_game(f"publish, fixed scheme (k = {fixed.k}, beta = {fixed.beta:.2f})",
                        lambda d, r: publish_release(d, fixed, r), streams[2]),
        membership_game(f"publish, epsilon1-safe (k = {k}, beta = {chosen.beta:.2f})",
                        lambda d, r: publish_release(d, chosen, r), streams[3]),
    ]
    bound = dp_advantage_bound(EPSILON, DELTA)
    ctx.csv("membership_advantage", {
        "mechanism": [o.mechanism for o in outcomes],
        "runs": [o.runs for o in outcomes],
        "true_positive_rate": [o.true_positive_rate for o in outcomes],
        "false_positive_rate": [o.false_positive_rate for o in outcomes],
        "advantage": [o.advantage for o in outcomes],
        "dp_bound": [None, bound, bound],
    })
    figure = Figure(figsize=(8, 4.2))
    ax = figure.add_subplot(1, 1, 1)
    names = ["Mondrian", "publish\nfixed scheme", "publish\nε1-safe"]
    ax.bar(names, [o.advantage for o in outcomes], color=["#c0392b", "#2e86c1", "#28b463"])
    ax.axhline(bound, color="black", linestyle="--", linewidth=1)
    ax.text(2.45, bound, f"any (ε={EPSILON:g}, δ={DELTA:g})-DP release: ≤ {bound:.2f}",
            ha="right", va="bottom", fontsize=8)
    ax.set_ylim(-0.05, 1.05)
    ax.set_ylabel("attacker's membership advantage (TPR − FPR)")
    ax.set_title(f"Is the person worth 35M in a town of {TOWN_SIZE}? ({RUNS} runs each)")
    for i, o in enumerate(outcomes):
        ax.text(i, max(o.advantage, 0) + 0.02, f"{o.advantage:.2f}", ha="center")
    ctx.png("membership_advantage", figure)
    ctx.summary.update(
        k=k,
        mondrian_range_with_rich_person=(
            top.get_column("worth").cast(pl.String).unique().to_list() if top.height else []
        ),
        dp_bound=bound,
        advantages={o.mechanism: round(o.advantage, 4) for o in outcomes},
    )
