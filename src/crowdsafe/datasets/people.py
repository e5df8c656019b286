"""A synthetic "people" table: a criminal-justice style file with direct identifiers.

For tests and the guide on publishing one's own table: every value is invented, drawn by a
seeded NumPy generator. Names are built from a short hand-written list of syllables (no list
of real names), e-mail addresses use the reserved ``example.*`` domains, telephone numbers the
fictional 555-01xx exchange, ZIP codes a made-up set of five-digit codes sharing prefixes.

Columns: ``id``, ``first_name``, ``last_name``, ``email``, ``phone``, ``date_of_birth``, ``age``
(at arrest, consistent with the two dates), ``sex``, ``zip``, ``case_number``, ``arrest_date``,
``charge``, ``disposition``. The first six and ``case_number`` are direct identifiers; the rest
are the attributes a study would keep.

Benchmark and test data, not a release: NumPy's PCG64 generator, not
:class:`~crowdsafe.randomness.Randomness`.
"""

from __future__ import annotations

import datetime as dt
import os
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data.sources import Source
from crowdsafe.errors import ParameterError
from crowdsafe.files import atomic_path

__all__ = ["DEFAULT_ROWS", "people", "people_source", "write_people_csv"]

DEFAULT_ROWS = 30_000
_ONSETS = ("b", "d", "f", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "st", "th")
_VOWELS = ("a", "e", "i", "o", "u", "ai", "ea")
_FIRST_ENDS = ("", "n", "l", "a", "ie", "o", "ah", "el")
_LAST_ENDS = ("son", "er", "ley", "ton", "ford", "man", "wick", "dale", "ham")
_DOMAINS = ("example.com", "example.org", "example.net")
CHARGES = (  # (charge, weight): the first word is the offence group, the rest its kind
    ("THEFT PETTY", 14), ("THEFT GRAND", 5), ("THEFT VEHICLE", 3),
    ("ASSAULT SIMPLE", 10), ("ASSAULT AGGRAVATED", 4),
    ("DRUG POSSESSION", 12), ("DRUG DISTRIBUTION", 4),
    ("DUI", 9), ("BURGLARY", 5), ("FRAUD", 4), ("TRESPASS", 6), ("VANDALISM", 5),
    ("WEAPON POSSESSION", 3), ("DISORDERLY CONDUCT", 6),
)
DISPOSITIONS = (("Convicted", 40), ("Dismissed", 25), ("Deferred", 15), ("Acquitted", 8), ("Pending", 12))
ARREST_FIRST = dt.date(2015, 1, 1)
ARREST_DAYS = 10 * 365


def _words(rng: np.random.Generator, count: int, endings: tuple[str, ...], syllables: int) -> list[str]:
    """``count`` distinct invented words: ``syllables`` onset+vowel pairs and an ending."""
    words: set[str] = set()
    while len(words) < count:
        parts = [_ONSETS[rng.integers(len(_ONSETS))] + _VOWELS[rng.integers(len(_VOWELS))]
                 for _ in range(syllables)]
        words.add(("".join(parts) + endings[rng.integers(len(endings))]).capitalize())
    return sorted(words)


def _pick(rng: np.random.Generator, pool: list[str], n: int) -> np.ndarray:
    """``n`` draws from ``pool`` with Zipf-like weights (a few common, many rare)."""
    weights = 1.0 / np.arange(1, len(pool) + 1) ** 0.8
    return np.asarray(pool, dtype=object)[rng.choice(len(pool), n, p=weights / weights.sum())]


def _weighted(rng: np.random.Generator, table: tuple[tuple[str, int], ...], n: int) -> np.ndarray:
    labels = np.asarray([label for label, _ in table], dtype=object)
    weights = np.asarray([w for _, w in table], dtype=float)
    return labels[rng.choice(len(labels), n, p=weights / weights.sum())]


def people(n: int = DEFAULT_ROWS, seed: int = 0) -> pl.DataFrame:
    """``n`` invented people, one arrest each, as a Polars frame (same ``seed``, same table).
    A whole-number seed's table is drawn once per process (the app reads ``people`` at each step:
    about 0.12 s a draw) and each call has its own copy."""
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or n < 1:
        raise ParameterError(f"the number of rows must be a whole number >= 1, got {n!r}")
    if isinstance(seed, (int, np.integer)) and not isinstance(seed, bool):
        return _drawn(int(n), int(seed)).clone()
    return _draw(n, seed)


@lru_cache(maxsize=2)
def _drawn(n: int, seed: int) -> pl.DataFrame:
    """:func:`_draw`, kept (clone it before changing it)."""
    return _draw(n, seed)


def _draw(n: int, seed: Any) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    first = _pick(rng, _words(rng, 300, _FIRST_ENDS, 2), n)
    last = _pick(rng, _words(rng, 900, _LAST_ENDS, 1) + _words(rng, 600, _LAST_ENDS, 2), n)
    ids = rng.permutation(np.arange(100_000, 100_000 + 10 * n))[:n]
    arrest = np.datetime64(ARREST_FIRST) + rng.integers(0, ARREST_DAYS, n).astype("timedelta64[D]")
    age_years = np.clip(np.rint(18 + rng.gamma(2.2, 7.5, n)), 18, 85).astype(np.int64)
    days_into_year = rng.integers(0, 365, n)
    birth = arrest - (age_years * 365.25 + days_into_year).astype("timedelta64[D]")
    arrested = pl.Series("arrest_date", arrest.astype("datetime64[D]")).cast(pl.Date)
    born = pl.Series("date_of_birth", birth.astype("datetime64[D]")).cast(pl.Date)
    # the age at arrest, from the two dates (so the table is consistent)
    age = arrested.dt.year() - born.dt.year() - (arrested.dt.ordinal_day() < born.dt.ordinal_day()).cast(pl.Int32)
    zip_prefix = rng.choice(np.asarray(["640", "641", "650", "651", "652", "660", "661"]), n)
    zip_code = np.char.add(zip_prefix.astype(str), np.char.zfill(rng.integers(0, 40, n).astype(str), 2))
    email_number = rng.integers(1, 100, n).astype(str)
    return pl.DataFrame({
        "id": ids,
        "first_name": first.astype(str),
        "last_name": last.astype(str),
        "email": pl.Series(np.char.lower(first.astype(str))) + "." + pl.Series(np.char.lower(last.astype(str)))
        + pl.Series(email_number) + "@" + pl.Series(rng.choice(np.asarray(_DOMAINS), n)),
        "phone": "(" + pl.Series(rng.integers(200, 990, n)).cast(pl.String) + ") 555-01"
        + pl.Series(rng.integers(0, 100, n)).cast(pl.String).str.zfill(2),
        "date_of_birth": born,
        "age": age.cast(pl.Int64),
        "sex": pl.Series(rng.choice(np.asarray(["F", "M"]), n, p=[0.3, 0.7])),
        "zip": pl.Series(zip_code),
        "case_number": "CR-" + arrested.dt.year().cast(pl.String) + "-"
        + pl.Series(np.arange(1, n + 1)).cast(pl.String).str.zfill(6),
        "arrest_date": arrested,
        "charge": pl.Series(_weighted(rng, CHARGES, n).astype(str)),
        "disposition": pl.Series(_weighted(rng, DISPOSITIONS, n).astype(str)),
    })


def people_source(n: int = DEFAULT_ROWS, seed: int = 0) -> Source:
    """The people table as a named table for the load pipeline (no schema: one is inferred or
    declared, exactly as for a user's own file)."""
    return Source(people(n, seed), "people", "people")


def write_people_csv(path: str | os.PathLike[str], n: int = DEFAULT_ROWS, seed: int = 0, *,
                     duplicate_header: bool = False) -> Path:
    """Write the people table to a CSV file, atomically. ``duplicate_header``: name the last
    column ``charge`` too (a file with a duplicated header, as exported by many systems), which
    loads as ``charge_2`` (:mod:`crowdsafe.data.column_names`)."""
    frame = people(n, seed)
    header = list(frame.columns)
    if duplicate_header:
        header[-1] = "charge"
    path = Path(path)
    with atomic_path(path) as tmp:
        with open(tmp, "w", encoding="utf-8", newline="") as handle:
            handle.write(",".join(header) + "\n")
            handle.write(frame.write_csv(include_header=False))
    return path
