"""The Bernoulli sample a publication draws, drawn in a test from a seed."""

from __future__ import annotations

import polars as pl

from crowdsafe.randomness import Randomness


def sample_of(dataset, seed, beta):
    """``dataset``'s rows kept by Bernoulli(``beta``) trials from ``Randomness(seed)``."""
    mask = Randomness(seed).bernoulli(dataset.n_rows, beta)
    return dataset.with_frame(dataset.frame.filter(pl.Series(mask)))
