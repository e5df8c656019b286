"""A synthetic Adult of any size, for benchmarks and scale tests.

Rows are drawn by a *block bootstrap*: each synthetic row starts from a random Adult row (the
anchor), and each block of related attributes is, with probability ``mix``, taken from another
random row instead. Within a block the joint distribution is Adult's exactly (so a husband is
male and education-num matches education); every one-way marginal is Adult's in expectation
(a mixture of the marginal with itself); associations *across* blocks are kept with weight
about ``(1 - mix)**2``, i.e. roughly. Age is jittered by up to ±2 years (clipped to 17..90) and
fnlwgt by a log-normal factor, so distinct quasi-identifier tuples keep growing with ``n`` as
in a real population instead of repeating Adult's 48,842 records.

This is benchmark data, not a release: it uses NumPy's PCG64 seeded generator (fast and
reproducible), not :class:`~crowdsafe.randomness.Randomness`.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import polars as pl

from crowdsafe.data import Dataset, MissingPolicy
from crowdsafe.datasets.uci_adult import AGE_DOMAIN, adult_frame, dataset_from_frame
from crowdsafe.errors import ParameterError

# Attributes resampled together, so that their joint distribution stays Adult's.
BLOCKS: tuple[tuple[str, ...], ...] = (
    ("workclass", "occupation"),
    ("education", "education-num"),
    ("marital-status", "relationship", "sex"),
    ("race", "native-country"),
    ("hours-per-week",),
    ("capital-gain", "capital-loss"),
    ("income",),
)
AGE_JITTER = 2
FNLWGT_SIGMA = 0.1


def synthetic(
    n: int,
    seed: int = 0,
    *,
    mix: float = 0.15,
    missing: MissingPolicy | str = MissingPolicy.KEEP,
) -> Dataset:
    """``n`` synthetic Adult-like rows with Adult's schema and default hierarchies.

    Text columns are Categorical (4 bytes a value), so 10M rows take about 0.5 GB.
    ``mix`` is the probability that a block of attributes comes from another row than the
    anchor (0: a plain bootstrap of Adult; 1: independent blocks).
    """
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"the number of rows must be a whole number >= 1, got {n!r}")
    if not 0.0 <= mix <= 1.0:
        raise ParameterError(f"mix must lie in [0, 1], got {mix}")
    source = adult_frame("all")
    size = source.height
    rng = np.random.default_rng(seed)
    anchor = rng.integers(0, size, n, dtype=np.int64)

    columns: dict[str, pl.Series] = {}
    for block in BLOCKS:
        donor = anchor.copy()
        switched = np.flatnonzero(rng.random(n) < mix)
        donor[switched] = rng.integers(0, size, len(switched), dtype=np.int64)
        for name in block:
            columns[name] = _take(source.get_column(name), donor)

    age = source.get_column("age").to_numpy()[anchor] + rng.integers(-AGE_JITTER, AGE_JITTER + 1, n)
    columns["age"] = pl.Series("age", np.clip(age, AGE_DOMAIN.start, AGE_DOMAIN.stop - 1))
    weight = source.get_column("fnlwgt").to_numpy()[anchor] * rng.lognormal(0.0, FNLWGT_SIGMA, n)
    columns["fnlwgt"] = pl.Series("fnlwgt", np.rint(weight).astype(np.int64))

    frame = pl.DataFrame([columns[name] for name in source.columns])
    return dataset_from_frame(frame, f"synthetic-adult-{n}", missing)


PART_ROWS = 5_000_000  # rows generated and written at a time by write_synthetic_parts


def part_seed(seed: int, part: int) -> int:
    """The generator seed of part ``part`` of a table written in parts with ``seed`` (distinct
    parts get independent streams: a NumPy ``SeedSequence`` keyed by (seed, part))."""
    return int(np.random.SeedSequence([int(seed), int(part)]).generate_state(1, np.uint64)[0])


def write_synthetic_parts(
    n: int,
    folder: str | os.PathLike[str],
    seed: int = 0,
    *,
    part_rows: int = PART_ROWS,
    mix: float = 0.15,
) -> list[Path]:
    """Write ``n`` synthetic rows to ``folder`` as Parquet part files (``part-00000.parquet``,
    ...), ``part_rows`` at a time, so the table is never held in memory whole (peak memory
    grows with ``part_rows``, not with ``n``). Every row has :func:`synthetic`'s distribution
    (the parts are independent draws of the same law, part ``i`` seeded by
    :func:`part_seed`); the table is not the one ``synthetic(n, seed)`` returns in one piece.
    Spark reads the folder; Polars reads ``folder/*.parquet``. Returns the part paths."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"the number of rows must be a whole number >= 1, got {n!r}")
    if isinstance(part_rows, bool) or not isinstance(part_rows, (int, np.integer)) or part_rows < 1:
        raise ParameterError(f"part_rows must be a whole number >= 1, got {part_rows!r}")
    target = Path(folder)
    target.mkdir(parents=True, exist_ok=True)
    paths = []
    for part, start in enumerate(range(0, int(n), int(part_rows))):
        rows = min(int(part_rows), int(n) - start)
        path = target / f"part-{part:05d}.parquet"
        synthetic(rows, part_seed(seed, part), mix=mix).frame.write_parquet(path, row_group_size=1 << 20)
        paths.append(path)
    return paths


def _take(column: pl.Series, rows: np.ndarray) -> pl.Series:
    """``column[rows]``; text becomes Categorical via a small dictionary, then one gather."""
    if column.dtype == pl.String:
        codes, dictionary = _dictionary(column)
        return dictionary.gather(codes[rows]).alias(column.name)
    return pl.Series(column.name, column.to_numpy()[rows]) if not column.null_count() else column.gather(rows)


def _dictionary(column: pl.Series) -> tuple[np.ndarray, pl.Series]:
    distinct = column.unique(maintain_order=True)
    lookup = pl.DataFrame({column.name: distinct, "code": np.arange(len(distinct), dtype=np.uint32)})
    codes = column.to_frame().join(lookup, on=column.name, how="left", nulls_equal=True, maintain_order="left")
    return codes.get_column("code").to_numpy(), distinct.cast(pl.Categorical)
