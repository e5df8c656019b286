"""Releases to set against the classic ones in the composition study: what the same attack
learns from DP contingency tables.

A DP contingency table of (quasi-identifiers × sensitive attribute) publishes, for every cell,
its count plus discrete Laplace noise of scale 1/ε (a histogram has sensitivity 1 when a
person is added or removed, so the table is ε-DP; Dwork et al. 2006; the exact sampler of
:mod:`crowdsafe.mechanisms.exact`, Canonne, Kamath and Steinke 2020). The intersection attack
reads it the way it reads a k-anonymous release: the class of a target is its own
quasi-identifier tuple, and its candidate set is the sensitive values whose published count is
at least 1 (``threshold``). Only the cells the attack reads are drawn: the noise of every cell
is independent of the others, so the values read have exactly the distribution they have in
the full table, whose hundreds of millions of cells are never materialized.

The table is returned as a frame in the release representation (one row per published
(tuple, value) cell with a positive reading), so :func:`~crowdsafe.attacks.intersection_attack`
attacks it unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from fractions import Fraction
from typing import cast

import polars as pl

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.exact import discrete_laplace
from crowdsafe.randomness import Randomness

EPSILON_DENOMINATOR = 10**6


def dp_table_cells(data: pl.DataFrame, targets: pl.DataFrame, qi: Sequence[str], sensitive: str,
                   values: Sequence[str], *, epsilon: float, randomness: Randomness,
                   threshold: int = 1) -> pl.DataFrame:
    """The cells of an ε-DP (qi × sensitive) count table that the attack on ``targets`` reads,
    kept where the noisy count is at least ``threshold``."""
    if not epsilon > 0:
        raise ParameterError(f"epsilon must be > 0, got {epsilon}")
    qi = list(qi)
    tuples = targets.select(qi).unique(maintain_order=True)  # a fixed order: seeded runs repeat
    grid = tuples.join(pl.DataFrame({sensitive: pl.Series(values, dtype=pl.String)}), how="cross")
    counts = (data.select(qi + [pl.col(sensitive).cast(pl.String)]).group_by(qi + [sensitive]).len()
              .with_columns(pl.col("len").cast(pl.Int64)))
    cells = (grid.join(counts, on=qi + [sensitive], how="left", nulls_equal=True)
             .with_columns(pl.col("len").fill_null(0)))
    scale = Fraction(epsilon).limit_denominator(EPSILON_DENOMINATOR)  # Pr[x] ∝ exp(-ε|x|)
    noise = discrete_laplace(randomness.generator, scale.numerator, scale.denominator, cells.height)
    noisy = cells.get_column("len").to_numpy() + noise
    return cells.filter(pl.Series(noisy >= threshold)).select(qi + [sensitive])


def population_guess(population: pl.DataFrame, targets: pl.DataFrame, qi: Sequence[str], sensitive: str) -> float:
    """Share of targets whose sensitive value is the most frequent one among the *other*
    records with the same quasi-identifiers (the overall mode when there are none).

    This is what can be inferred about a person without any release holding their record:
    the level differential privacy allows by design, against which a DP release's breach rate
    is to be read.
    """
    qi = list(qi)
    text = pl.col(sensitive).cast(pl.String)
    counts = population.select(qi + [text]).group_by(qi + [sensitive]).len()
    own = targets.select(qi + [text]).group_by(qi + [sensitive]).len().rename({"len": "own"})
    others = (counts.join(own, on=qi + [sensitive], how="left", nulls_equal=True)
              .with_columns((pl.col("len") - pl.col("own").fill_null(0)).alias("n")).filter(pl.col("n") > 0))
    mode = (others.sort([*qi, "n", sensitive], descending=[False] * len(qi) + [True, False])
            .group_by(qi, maintain_order=True).first().select(qi + [pl.col(sensitive).alias("__guess")]))
    overall = others.group_by(sensitive).agg(pl.col("n").sum()).sort(["n", sensitive], descending=[True, False])
    fallback = overall.get_column(sensitive)[0] if overall.height else None
    guessed = (targets.select(qi + [text]).join(mode, on=qi, how="left", nulls_equal=True, maintain_order="left")
               .with_columns(pl.col("__guess").fill_null(fallback)))
    return float(cast(float, (guessed.get_column("__guess") == guessed.get_column(sensitive)).fill_null(False).mean()))
