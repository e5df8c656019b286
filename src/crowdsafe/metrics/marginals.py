"""Distance between the one- and two-way marginals of an original table and of a release.

A release's marginal over original values is estimated by spreading each row uniformly over
the values its cell covers (a row published as ``[20, 29]`` adds 1/10 to each age 20..29; a
two-way cell adds 1/(|g₁|·|g₂|) to each covered pair). Both marginals are normalized to
probability distributions, so suppression changes them only through the rows it removes.

- **Total variation**: ½ Σ |p − q|, in [0, 1].
- **Kullback–Leibler** KL(p ‖ q) = Σ p ln(p / q) (nats), from the original p to the release's
  q; it is defined only when q > 0 wherever p > 0, and reported as None otherwise (a value
  of the original that no released cell covers).
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.arguments import names as listed
from crowdsafe.data import Dataset
from crowdsafe.data.column_names import spare_name
from crowdsafe.data.generalized import CellTable
from crowdsafe.errors import ParameterError

MASS = "mass"


def mass_name(columns: Sequence[str]) -> str:
    """The name of the mass column of :func:`spread_marginal` over ``columns``: ``mass``, or when
    one of them is named so, a name none of them has."""
    return MASS if MASS not in columns else spare_name(columns, MASS)


def spread_marginal(table: CellTable, columns: Sequence[str]) -> pl.DataFrame:
    """The marginal of ``columns`` over original codes (one column of codes each, plus the mass
    column :func:`mass_name`, summing to 1), spreading every cell uniformly over what it covers."""
    mass, code, share_of = mass_name(columns), spare_name(columns, "code"), spare_name(columns, "share")
    frame = pl.DataFrame({**{c: table.cells[c] for c in columns}, mass: table.counts.astype(np.float64)})
    frame = frame.group_by(list(columns)).agg(pl.col(mass).sum())
    for column in columns:
        cover = table.covers[column]
        cells, codes = cover.membership
        share = 1.0 / cover.size[cells]
        spread = pl.DataFrame({column: cells, code: codes, share_of: share})
        frame = (
            frame.join(spread, on=column)
            .with_columns((pl.col(mass) * pl.col(share_of)).alias(mass))
            .drop(column, share_of).rename({code: column})
        )
    frame = frame.group_by(list(columns)).agg(pl.col(mass).sum())
    total = frame.get_column(mass).sum()
    return frame.with_columns(pl.col(mass) / total)


@dataclass(frozen=True)
class MarginalDistance:
    attributes: tuple[str, ...]
    total_variation: float
    kl: float | None  # None: undefined (the release gives 0 to a value the original holds)


def distance(original: pl.DataFrame, release: pl.DataFrame, columns: Sequence[str]) -> MarginalDistance:
    """TV and KL between two marginals over the same code columns."""
    mass = mass_name(columns)
    joined = original.join(release, on=list(columns), how="full", coalesce=True, suffix="\x00release")
    p = joined.get_column(mass).fill_null(0.0).to_numpy()
    q = joined.get_column(f"{mass}\x00release").fill_null(0.0).to_numpy()
    tv = 0.5 * float(np.abs(p - q).sum())
    held = p > 0
    kl = float((p[held] * np.log(p[held] / q[held])).sum()) if (q[held] > 0).all() else None
    return MarginalDistance(tuple(columns), min(tv, 1.0), kl)


@dataclass(frozen=True)
class MarginalReport:
    """Per marginal distances and, per order (1 or 2), the mean and max total variation and the
    mean KL over marginals where it is defined."""

    one_way: list[MarginalDistance]
    two_way: list[MarginalDistance]

    @staticmethod
    def _summary(items: list[MarginalDistance]) -> dict[str, Any]:
        if not items:
            return {"marginals": 0}
        tv = [m.total_variation for m in items]
        kl = [m.kl for m in items if m.kl is not None]
        return {
            "marginals": len(items),
            "mean_total_variation": float(np.mean(tv)),
            "max_total_variation": float(np.max(tv)),
            "worst": list(items[int(np.argmax(tv))].attributes),
            "mean_kl": float(np.mean(kl)) if kl else None,
            "kl_undefined": len(items) - len(kl),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "one_way": self._summary(self.one_way),
            "two_way": self._summary(self.two_way),
            "marginals": [asdict(m) for m in self.one_way + self.two_way],
        }


def marginal_distances(
    original: Dataset,
    release: pl.DataFrame,
    columns: Sequence[str] | None = None,
    *,
    two_way: bool = True,
) -> MarginalReport:
    """TV and KL of every one-way marginal and (``two_way``) every pair of ``columns``
    (default: the columns the release shares with the original)."""
    names = list(listed(columns, "columns") or ()) if columns is not None else \
        [c for c in release.columns if c in original.schema]
    if not names:
        raise ParameterError("the release shares no column with the original")
    truth = CellTable.of_original(original, names)
    published = CellTable.of_release(release, original, names)
    if published.rows == 0:
        raise ParameterError("the release has no rows: its marginals are undefined")
    ones = [distance(spread_marginal(truth, [c]), spread_marginal(published, [c]), [c]) for c in names]
    pairs = []
    if two_way:
        for a, b in itertools.combinations(names, 2):
            pairs.append(distance(spread_marginal(truth, [a, b]), spread_marginal(published, [a, b]), [a, b]))
    return MarginalReport(ones, pairs)

