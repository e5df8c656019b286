"""The linkage (re-identification) attack: an identified external table against a release.

Sweeney (2002): a "de-identified" table is joined on its quasi-identifiers with an identified
one (a voter list: name plus some quasi-identifiers). For every published row, the attacker
finds the external records consistent with the row's class (its cells cover their values,
:mod:`crowdsafe.attacks.locate`); with m such records, and the row's person among them, the
attacker names the right person with probability 1/m. Counted:

- re-identified uniquely: rows with m = 1;
- re-identified with probability ≥ 1/2: rows with m ≤ 2 (m ≥ 1);
- the expected number of correct links if every row's person is in the external table, Σ 1/m
  over rows with m ≥ 1;
- with a record id in both tables (evaluation only): how many unique links name the right
  person, and the expected number of correct links (Σ 1/m over rows whose person is listed).

One join of distinct external tuples with the release's class table; no loop over rows.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.arguments import names
from crowdsafe.attacks.exact_location import locate_exact
from crowdsafe.attacks.locate import class_table, encode_targets, read_classes
from crowdsafe.attacks.unread import describe_unread, unread_cells
from crowdsafe.data import Hierarchy
from crowdsafe.data.cell_reader import CellReader
from crowdsafe.data.column_names import spare_name
from crowdsafe.errors import InputError, ParameterError


@dataclass(frozen=True)
class LinkageResult:
    """``rows``: one row per published row (its class, m = consistent external records);
    ``summary``: the counts."""

    rows: pl.DataFrame
    summary: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        return {"summary": self.summary}

    def __repr__(self) -> str:
        # concise and labelled, as IntersectionResult's (the field-by-field repr printed every row)
        return (f"LinkageResult({self.rows.height} release rows, reidentified uniquely: "
                f"{self.summary.get('reidentified_uniquely', '?')}; CUSTODIAN ONLY: do not publish)")


def linkage_attack(release: pl.DataFrame, external: pl.DataFrame, qi: Sequence[str], *,
                   hierarchies: Mapping[str, Hierarchy] | None = None,
                   truth_id: str | None = None) -> LinkageResult:
    """Link every row of ``release`` to the records of ``external`` consistent with it on ``qi``."""
    qi = list(names(qi, "qi") or ())  # one name is the list of that name (it was split into characters)
    if not qi:
        raise ParameterError("name the quasi-identifiers the external table shares with the release (qi=[...])",
                             parameter="qi")
    for c in qi:
        if c not in external.columns:
            raise InputError(f"the external table has no column {c!r}; its columns are: {', '.join(external.columns)}")
    if external.height == 0:
        raise InputError("the external table is empty")
    table = class_table(release, qi)
    records = spare_name(external.columns, "records")
    tuples = external.group_by(qi, maintain_order=True).agg(pl.len().alias(records))
    domains, codes = encode_targets(tuples, qi, hierarchies)
    covers, _ = read_classes(table, qi, CellReader([domains[c] for c in qi]))
    pair_tuple, pair_class = locate_exact(table, covers, codes)
    multiplicity = tuples.get_column(records).to_numpy()
    consistent = np.bincount(pair_class, weights=multiplicity[pair_tuple], minlength=table.n_classes).astype(np.int64)
    class_of_row = table.class_of_rows(release)
    m = consistent[class_of_row]
    linked = m >= 1
    rows = pl.DataFrame({"class": class_of_row, "consistent_records": m})
    summary: dict[str, Any] = {
        "release_rows": release.height,
        "external_records": external.height,
        "quasi_identifiers": qi,
        "rows_with_a_candidate": int(linked.sum()),
        "reidentified_uniquely": int((m == 1).sum()),
        "reidentified_with_probability_at_least_half": int((linked & (m <= 2)).sum()),
        "expected_correct_links_if_listed": float((1.0 / m[linked]).sum()),
        "unread_cells": describe_unread(unread_cells(covers, domains)),  # numeric cells it could not read
    }
    if truth_id is not None and truth_id in release.columns and truth_id in external.columns:
        # the one external record of each class with m = 1: its tuple, then its id
        unique_class = consistent == 1
        keep = unique_class[pair_class]
        tuple_of_class = np.full(table.n_classes, -1, dtype=np.int64)
        tuple_of_class[pair_class[keep]] = pair_tuple[keep]
        index = spare_name(tuples.columns, "tuple")
        tuple_index = external.select(pl.struct(qi).alias("__t")).join(
            tuples.with_row_index(index).select(pl.struct(qi).alias("__t"), pl.col(index).cast(pl.Int64)),
            on="__t", how="left", maintain_order="left", nulls_equal=True).get_column(index).to_numpy()
        id_of_tuple = pl.DataFrame({"__tuple": tuple_index, "id": external.get_column(truth_id)}).unique("__tuple")
        linked_tuple = tuple_of_class[class_of_row]
        named = (pl.DataFrame({"__tuple": linked_tuple})
                 .join(id_of_tuple, on="__tuple", how="left", maintain_order="left")
                 .get_column("id"))
        correct = (named == release.get_column(truth_id)).fill_null(False).to_numpy() & (m == 1)
        summary["reidentified_uniquely_correct"] = int(correct.sum())
        listed = release.get_column(truth_id).is_in(external.get_column(truth_id).implode()).to_numpy() & linked
        summary["expected_correct_links"] = float((1.0 / m[listed]).sum())
        rows = rows.with_columns(pl.Series("linked_id", named))
    return LinkageResult(rows, summary)
