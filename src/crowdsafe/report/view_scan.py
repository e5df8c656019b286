"""A view's counts for its report, scanned lazily: the view is never held in memory whole.

The report of an α-β view needs, per attribute, the view's number of rows holding each value of
the attribute's public domain (and the view's row count): the unbiased estimates and their error
bars follow from those counts and the certificate's public α, β, N and domain. So the view file
is scanned by Polars' streaming engine into one small table per attribute (its distinct values
and their rows, at most the domain's size; :func:`scan_view_counts`), and the
sweep of one attribute is computed from its table (:func:`attribute_sweep`) with the estimator's
own functions (:func:`crowdsafe.perturb.estimator.est`,
:func:`crowdsafe.privacy.dgamma.bernstein_error_bound`) on arrays of the same types, so every
number is the one the estimator gives on the view read whole.

**Reference twin**: :func:`crowdsafe.report.view_content.public_view` (the view read whole by
:func:`crowdsafe.perturb.view.view_with_certificate`) and
:func:`crowdsafe.perturb.estimator.equality_estimates`. The report always scans; the twin is
kept for the tests (``tests/fast_paths/test_view_scan.py``: the same page, byte for byte, for
attributes of 39, 40 and 41 domain values, where the report starts grouping values), and the
refusals are the twin's, in its order: a missing file, a column the certificate names but the
view lacks, a row count other than the certificate's, a value outside the domain (named: the view
is public), no bound N.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data.text_csv import scan_text_csv
from crowdsafe.errors import InputError, ParameterError, first_line
from crowdsafe.number_text import quantity

#: The name of the rows' count in the scanned tables (not a column of any view: it starts with "__").
_COUNT = "__count"


@dataclass(frozen=True)
class ViewCounts:
    """What the report reads from a view: its rows, and per attribute the rows per domain code.

    ``domain`` is the certificate's :class:`crowdsafe.perturb.domain.TupleDomain`; ``alpha``,
    ``beta`` and ``n_bound`` (N) are the certificate's; ``counts[a][code]`` is the number of the
    view's rows whose value of ``a`` is the domain's value ``code``."""

    domain: Any
    alpha: float
    beta: float
    n_bound: int
    rows: int
    counts: dict[str, np.ndarray]

    @property
    def attributes(self) -> list[str]:
        return list(self.domain.attributes)


def _scan(path: Path, escaped: bool) -> pl.LazyFrame:
    """The view's cells, scanned lazily, as :func:`crowdsafe.perturb.view._read_text` reads them:
    a CSV's cells as text (an empty field is missing; formula escapes undone when ``escaped``),
    a Parquet file or folder of Parquet parts with its own types."""
    from crowdsafe.csv_safety import unescape_frame

    if path.name.lower().endswith((".parquet", ".pq")):
        from crowdsafe.data.streaming import parquet_parts

        return pl.scan_parquet(parquet_parts(path), glob=False)
    if not path.is_file():
        raise InputError(f"file not found: {path}")
    frame = scan_text_csv(path)
    return unescape_frame(frame) if escaped else frame


def scan_view_counts(path: str | os.PathLike[str], certificate: Any, cert_name: str = "the certificate"
                     ) -> ViewCounts:
    """The counts of the view at ``path`` with its ``certificate`` (a
    :class:`~crowdsafe.privacy.certificate.Certificate` of public fields), by one streaming scan;
    refused as :func:`crowdsafe.perturb.view.view_with_certificate` refuses it."""
    from crowdsafe.csv_safety import escaped_by
    from crowdsafe.perturb.domain import TupleDomain, encode_against
    from crowdsafe.perturb.estimator import DENSE_GRID_LIMIT
    from crowdsafe.perturb.view import is_view_certificate

    path = Path(path)
    if not is_view_certificate(certificate):
        raise InputError(f"{cert_name} is not the certificate of an alpha-beta view")
    params = certificate.parameters
    domain = TupleDomain.from_json(params["domain"], active=params.get("domain_kind", "active") == "active")
    try:
        scan = _scan(path, escaped_by(certificate.format_notes))
        columns = scan.collect_schema().names()
        absent = [a for a in domain.attributes if a not in columns]
        if absent:
            raise InputError(f"the view {path} has no column '{absent[0]}' named by its certificate")
        # one streaming pass per attribute, one after the other (passes run together would each
        # hold their own buffers): its distinct values and their rows, in no particular order (a
        # count per code is all that is kept); a missing value is a group too, so the rows add up
        # to the view's
        found = [scan.select(a).group_by(a).agg(pl.len().alias(_COUNT)).collect(engine="streaming")
                 for a in domain.attributes]
    except (pl.exceptions.PolarsError, OSError) as exc:
        first = first_line(exc)
        raise InputError(f"cannot read the view {path}: {first}") from None
    rows = int(found[0].get_column(_COUNT).sum())
    expected_rows = params.get("view_rows")
    if expected_rows is not None and rows != expected_rows:
        raise InputError(
            f"the view {path} has {quantity(rows, 'row')} but its certificate says {expected_rows:,}: "
            "they do not belong together"
        )
    counts: dict[str, np.ndarray] = {}
    for name, table in zip(domain.attributes, found):
        values = domain.values[name]
        try:
            codes = encode_against(table.get_column(name), values, what="the view")  # every value in the domain
        except InputError:  # name the value the whole-view read names: the first outside, in row order
            encode_against(scan.select(name).collect().get_column(name), values, what="the view")
            raise
        per_code = np.zeros(len(values), dtype=np.int64)
        if len(values) <= DENSE_GRID_LIMIT:  # a larger domain is refused by attribute_sweep, as by the twin
            np.add.at(per_code, codes.astype(np.int64), table.get_column(_COUNT).to_numpy().astype(np.int64))
        counts[name] = per_code
    bound = params.get("max_rows", params.get("n"))  # "n": certificates written before max_rows
    if bound is None:
        raise InputError(f"{cert_name} names no bound on n (max_rows)")
    return ViewCounts(domain, float(params["alpha"]), float(params["beta"]), int(bound), rows, counts)


def attribute_sweep(view: ViewCounts, name: str, confidence: float) -> pl.DataFrame:
    """The one-attribute sweep of ``name`` (columns ``n_view``, ``n_domain``, ``estimate`` and
    ``error``, one row per domain value in domain order), as
    :func:`crowdsafe.perturb.estimator.equality_estimates` computes it with ``max_attributes=1``."""
    from crowdsafe.perturb.estimator import DENSE_GRID_LIMIT, est
    from crowdsafe.privacy.dgamma import bernstein_error_bound, failure_of

    failure = failure_of(confidence)
    size = len(view.domain.values[name])
    if size > DENSE_GRID_LIMIT:  # the estimator lists only the values present: no row per value
        raise ParameterError(f"the attribute {name} has too many domain values ({size:,}) to report")
    m = view.domain.size
    n_domain: Any = np.full(size, m // size, dtype=object if m >= 2**63 else np.int64)
    if m >= 2**63:
        n_domain = n_domain.astype(float)
    n_view = view.counts[name]
    return pl.DataFrame([
        pl.Series("n_view", n_view),
        pl.Series("n_domain", n_domain),
        pl.Series("estimate", est(n_view, n_domain, view.alpha, view.beta)),
        pl.Series("error", bernstein_error_bound(view.alpha, view.beta, view.n_bound, n_domain.astype(float),
                                                 failure)),
    ])


__all__ = ["ViewCounts", "attribute_sweep", "scan_view_counts"]
