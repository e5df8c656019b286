"""bench/peers/marginal_tvd.py (the peers' marginal TVD, NumPy only, no crowdsafe) computes what
crowdsafe.metrics.marginal_distances computes (bench/marginals.py), on small Adult tables with
generalized, missing and suppressed cells."""

from __future__ import annotations

import itertools
import sys
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from crowdsafe.datasets.uci_adult import adult_frame, dataset_from_frame
from crowdsafe.metrics import marginal_distances

BENCH = Path(__file__).resolve().parents[2] / "bench"
sys.path.insert(0, str(BENCH / "peers"))

import adult_public  # noqa: E402
import marginal_tvd  # noqa: E402

ROWS = 400
COLUMNS = list(marginal_tvd.COLUMNS)
AGES = range(adult_public.AGE_MIN, adult_public.AGE_MAX + 1)
REGION = ["United-States", "Canada", "Outlying-US(Guam-USVI-etc)"]  # crowdsafe's "North America"


@pytest.fixture(scope="module")
def tiny():
    """The first ROWS rows of adult.data: crowdsafe's Dataset and the peers' public encoding."""
    data = dataset_from_frame(adult_frame("train").head(ROWS).clone(), "tiny", "keep")
    public = adult_public.load(adult_public.DEFAULT_DATA_DIR / "adult.data.gz")
    return data, {c: v[:ROWS] for c, v in public.items()}


def code(column: str, value: str) -> int:
    return adult_public.CATEGORIES[column].index(value)


def generalize(row: int, column: str, value) -> tuple[str | None, list[int]]:
    """One cell of the test release: its text for crowdsafe and the public leaf codes it covers."""
    if column == "age":
        low = value // 10 * 10
        if row % 3 == 0:
            return f"[{low}, {low + 9}]", [a - 17 for a in AGES if low <= a <= low + 9]
        if row % 3 == 1 and value >= 65:
            return ">=65", [a - 17 for a in AGES if a >= 65]
        return str(value), [value - 17]
    if value is None:  # missing: its own value
        return None, [code(column, "?")]
    if column == "workclass" and row % 4 == 1 and value.startswith("Self-emp"):
        return "Self-employed", [code(column, "Self-emp-not-inc"), code(column, "Self-emp-inc")]
    if column == "marital-status" and row % 5 == 0 and value in ("Divorced", "Widowed"):
        return "{Divorced, Widowed}", [code(column, "Divorced"), code(column, "Widowed")]
    if column == "native-country" and row % 2 == 0 and value in REGION:
        return "North America", [code(column, v) for v in REGION]
    if column in ("race", "income") and row % 6 == 0:
        return "*", None  # filled in from marginal_tvd.star_leaves
    return value, [code(column, value)]


def release_of(data, public):
    """Rows 0..ROWS-1 minus every 7th (suppressed), generalized by :func:`generalize`."""
    frame = data.frame.select(COLUMNS)
    kept = [i for i in range(ROWS) if i % 7 != 3]
    texts: dict[str, list] = {c: [] for c in COLUMNS}
    leaves: dict[str, list] = {c: [] for c in COLUMNS}
    for i in kept:
        for c in COLUMNS:
            text, covered = generalize(i, c, frame.get_column(c)[i])
            texts[c].append(text)
            leaves[c].append(covered if covered is not None else marginal_tvd.star_leaves(public, c))
    release = pl.DataFrame({c: pl.Series(c, texts[c], dtype=pl.String) for c in COLUMNS})
    table = {c: marginal_tvd.from_cells(leaves[c], c) for c in COLUMNS}
    return release, table


def crowdsafe_tvds(data, release) -> dict[tuple[str, ...], float]:
    report = marginal_distances(data, release, COLUMNS)
    return {m.attributes: m.total_variation for m in report.one_way + report.two_way}


def peer_tvds(public, table) -> dict[tuple[str, ...], float]:
    truth = marginal_tvd.original(public)
    marginals = [(c,) for c in COLUMNS] + list(itertools.combinations(COLUMNS, 2))
    return {m: marginal_tvd.tvd(marginal_tvd.marginal(truth, m), marginal_tvd.marginal(table, m)) for m in marginals}


def test_public_encoding_is_the_same_rows(tiny):
    data, public = tiny
    assert data.n_rows == len(public["age"]) == ROWS
    assert data.frame.get_column("age").to_list() == public["age"].tolist()
    sex = [adult_public.CATEGORIES["sex"][j] for j in public["sex"]]
    assert data.frame.get_column("sex").to_list() == sex


def test_generalized_release_same_tvd_in_both(tiny):
    data, public = tiny
    release, table = release_of(data, public)
    ours, theirs = crowdsafe_tvds(data, release), peer_tvds(public, table)
    assert ours.keys() == theirs.keys() and len(ours) == 9 + 36
    for marginal, value in ours.items():
        assert theirs[marginal] == pytest.approx(value, abs=1e-12), marginal
    assert max(ours.values()) > 0.05  # the release does differ from the original


def test_all_star_and_binned_age_same_tvd_in_both(tiny):
    data, public = tiny
    stars = pl.DataFrame({c: ["*"] * 50 for c in COLUMNS})
    ours = crowdsafe_tvds(data, stars)
    theirs = peer_tvds(public, marginal_tvd.all_star(public, 50))
    assert ours == pytest.approx(theirs, abs=1e-12)
    # 5-year age bins from 17 (synthetic.py --age-bin 5), the last one 87..90
    bins = (public["age"] - 17) // 5
    texts = [f"[{17 + 5 * b}, {min(17 + 5 * b + 4, 90)}]" for b in bins]
    binned = data.frame.select(COLUMNS).with_columns(pl.Series("age", texts, dtype=pl.String))
    table = marginal_tvd.original(public)
    table["age"] = marginal_tvd.age_bins(bins, 5)
    assert crowdsafe_tvds(data, binned) == pytest.approx(peer_tvds(public, table), abs=1e-12)


def test_identity_is_zero_and_sample_matches(tiny):
    data, public = tiny
    keep = np.random.default_rng(0).random(ROWS) < 0.3
    sample = data.frame.select(COLUMNS).filter(pl.Series(keep))
    theirs = peer_tvds(public, marginal_tvd.original({c: v[keep] for c, v in public.items()}))
    assert crowdsafe_tvds(data, sample) == pytest.approx(theirs, abs=1e-12)
    assert all(v == 0 for v in peer_tvds(public, marginal_tvd.original(public)).values())
