"""The privacy unit: bound each person's contribution before a DP query.

By default one row is one person. When the schema names a person identifier
(``schema.person_id``), a person may own several rows, and differential privacy must protect the
person, not the row. Every query then keeps at most ``c`` rows per person, chosen uniformly at
random among that person's rows (from the secure :class:`~crowdsafe.randomness.Randomness`), and
scales its sensitivity by c (:mod:`crowdsafe.mechanisms.sensitivity`).

Why this is sound: which of a person's rows are kept depends only on that person's rows and on
fresh randomness, so adding or removing one person changes at most c kept rows. The bound is
applied after the query's row filter, so it keeps the c rows that matter to the query.

The number of dropped rows is reported to the custodian as a diagnostic; it is an exact count
of the data, so it is **not** differentially private and must not be published with the answer.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from crowdsafe.errors import ParameterError
from crowdsafe.mechanisms.sensitivity import check_rows_per_person
from crowdsafe.randomness import Randomness

_RANDOM_KEY = "__crowdsafe_random_key"


@dataclass(frozen=True)
class Bounded:
    """The rows kept and how many were dropped (exact: not DP)."""

    frame: pl.DataFrame
    dropped: int


def bound_contributions(
    frame: pl.DataFrame, person_column: str, max_rows: int, randomness: Randomness
) -> Bounded:
    """Keep at most ``max_rows`` rows per value of ``person_column``, chosen at random.

    Rows with a missing person identifier are each treated as their own person.
    """
    max_rows = check_rows_per_person(max_rows)
    keys = randomness.generator.integers(0, np.iinfo(np.int64).max, size=frame.height, dtype=np.int64)
    ranked = frame.with_columns(pl.Series(_RANDOM_KEY, keys))
    rank = pl.col(_RANDOM_KEY).rank(method="ordinal").over(person_column)
    kept = ranked.filter(pl.col(person_column).is_null() | (rank <= max_rows)).drop(_RANDOM_KEY)
    return Bounded(kept, frame.height - kept.height)


def refuse_person_rows(person_id: str | None, command: str) -> None:
    """Refuse a command whose guarantee is per row (``publish``: Li, Qardaji and Su 2012;
    ``perturb``: Rastogi, Suciu and Hong 2007) on a table whose schema names a person identifier
    (``person_id`` not None): there one person may own several rows, and a guarantee about one
    row added or removed does not cover a person. From the schema alone (public), before anything
    is read or charged."""
    if person_id is None:
        return
    raise ParameterError(
        f"the schema names a person identifier ('{person_id}'), so a person may own several rows, and "
        f"{command}'s guarantee protects one row, not a person with several; give a table with one row per "
        "person and leave person_id out of its schema (crowdsafe query bounds each person's rows with "
        f"--max-rows-per-person; {command} does not)", parameter="schema")
