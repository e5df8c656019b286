"""The synthetic Adult: size, reproducibility, marginals, correlations, consistency."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe.datasets import adult, synthetic
from crowdsafe.errors import ParameterError

N = 200_000


@pytest.fixture(scope="module")
def synth():
    return synthetic(N, seed=7)


def _shares(frame: pl.DataFrame, column: str) -> dict:
    counts = frame.get_column(column).cast(pl.String).value_counts()
    total = frame.height
    return {row[column]: row["count"] / total for row in counts.iter_rows(named=True)}


def test_size_schema_and_reproducibility(synth):
    assert synth.n_rows == N
    assert synth.columns == adult().columns
    assert synth.quasi_identifiers == adult().quasi_identifiers
    again = synthetic(N, seed=7)
    assert again.fingerprint() == synth.fingerprint()
    assert synthetic(1000, seed=8).fingerprint() != synthetic(1000, seed=7).fingerprint()


@pytest.mark.parametrize("column", ["workclass", "education", "marital-status", "occupation", "race", "sex",
                                    "native-country", "income", "hours-per-week"])
def test_one_way_marginals_match_adult(synth, column):
    # Tolerance: each share is a mean of 200k draws from a mixture of Adult's marginal with
    # itself, so its standard error is below 0.0012; 0.006 is five standard errors.
    source = _shares(adult("all").frame, column)
    made = _shares(synth.frame, column)
    for value, share in source.items():
        assert abs(made.get(value, 0.0) - share) < 0.006, (column, value)


def test_age_marginal_is_smoothed_but_close(synth):
    source = adult("all").frame.get_column("age").to_numpy()
    made = synth.frame.get_column("age").to_numpy()
    assert made.min() >= 17 and made.max() <= 90
    assert abs(made.mean() - source.mean()) < 0.2
    assert abs(made.std() - source.std()) < 0.3


def test_correlations_are_roughly_kept(synth):
    def cramers_v(frame, a, b):
        table = frame.select(pl.col(a).cast(pl.String), pl.col(b).cast(pl.String)).drop_nulls()
        cross = table.group_by(a, b).len().pivot(on=b, index=a, values="len").fill_null(0)
        observed = cross.drop(a).to_numpy().astype(float)
        expected = observed.sum(1, keepdims=True) * observed.sum(0, keepdims=True) / observed.sum()
        chi2 = ((observed - expected) ** 2 / expected).sum()
        return np.sqrt(chi2 / observed.sum() / (min(observed.shape) - 1))

    source = adult("all").frame
    # within a block: kept exactly (up to sampling error)
    assert abs(cramers_v(synth.frame, "relationship", "sex") - cramers_v(source, "relationship", "sex")) < 0.02
    # across blocks: kept roughly, shrunk by about (1 - mix)^2 = 0.72, never inverted
    for a, b in [("education", "income"), ("sex", "income"), ("occupation", "sex")]:
        original, made = cramers_v(source, a, b), cramers_v(synth.frame, a, b)
        assert 0.55 * original < made <= original * 1.02, (a, b, original, made)
    def age_income(f):
        high = (f.get_column("income").cast(pl.String) == ">50K").to_numpy()
        return np.corrcoef(f.get_column("age").to_numpy(), high)[0, 1]

    assert 0.6 * age_income(source) < age_income(synth.frame) < age_income(source)


def test_consistent_pairs_inside_blocks(synth):
    pairs = synth.frame.select(pl.col("education").cast(pl.String), "education-num").unique()
    assert pairs.height == 16  # one number per education level, as in Adult
    husbands = synth.frame.filter(pl.col("relationship").cast(pl.String) == "Husband")
    assert (husbands.get_column("sex").cast(pl.String) == "Male").mean() > 0.999


def test_distinct_tuples_grow_with_size():
    small, large = synthetic(20_000, seed=1), synthetic(N, seed=1)
    from crowdsafe.data import frequency_table

    assert frequency_table(large).height > 3 * frequency_table(small).height


def test_bad_parameters():
    with pytest.raises(ParameterError, match="whole number"):
        synthetic(0)
    with pytest.raises(ParameterError, match="mix"):
        synthetic(10, mix=1.5)


def test_written_in_parts_never_whole(tmp_path):
    """The chunked writer: parts of at most part_rows rows, each the one-piece generator's draw
    under its part seed (so every row has synthetic()'s distribution), distinct parts distinct."""
    import polars as pl

    from crowdsafe.datasets.synthetic import part_seed, synthetic, write_synthetic_parts

    paths = write_synthetic_parts(2_500, tmp_path / "t.parquet", seed=7, part_rows=1_000)
    assert [p.name for p in paths] == ["part-00000.parquet", "part-00001.parquet", "part-00002.parquet"]
    parts = [pl.read_parquet(p) for p in paths]
    assert [p.height for p in parts] == [1_000, 1_000, 500]
    assert parts[1].equals(synthetic(1_000, part_seed(7, 1)).frame)
    assert not parts[0].equals(parts[1])
    assert part_seed(7, 0) != part_seed(8, 0)
