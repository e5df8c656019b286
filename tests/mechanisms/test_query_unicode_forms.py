"""A query's text literals match the data's text in either Unicode normalisation form
(intlsweep #3): on an NFD table, a filter or a histogram's public cells typed in NFC count the
rows they name, as on the NFC table (the ledger's identity takes the two for one dataset)."""

from __future__ import annotations

import unicodedata

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.mechanisms.query_language import compile_filter, parse

NFC = ["Île-de-France", "Bretagne", "Provence-Alpes-Côte d'Azur", "Île-de-France", None, "Rhône-Alpes"]
NFD = [None if v is None else unicodedata.normalize("NFD", v) for v in NFC]
assert NFD[0] != NFC[0]


def _count(values: list[str | None], dtype: pl.DataType, text: str) -> int:
    frame = pl.DataFrame({"r": pl.Series(values, dtype=pl.String)}).with_columns(pl.col("r").cast(dtype))
    where = parse(f"count where {text}").where
    return frame.filter(compile_filter(where, frame.schema)).height


@pytest.mark.parametrize("dtype", [pl.String, pl.Categorical])
@pytest.mark.parametrize(("text", "expected"), [
    # in NFC, Î (U+00CE) sorts after P and S
    ("r = 'Île-de-France'", 2), ("r != 'Île-de-France'", 3), ("r in ('Île-de-France', 'Rhône-Alpes')", 3),
    ("r not in ('Île-de-France', 'Rhône-Alpes')", 2), ("r >= 'Provence'", 4), ("r between 'Provence' and 'S'", 2),
])
@pytest.mark.parametrize("form", ["NFC", "NFD"])
def test_a_literal_in_either_form_counts_the_same_rows(dtype, text, expected, form):
    literal = unicodedata.normalize(form, text)
    assert _count(NFD, dtype, literal) == expected
    assert _count(NFC, dtype, literal) == expected


def test_an_enum_column_matches_in_either_form():
    enum = pl.Enum(sorted({v for v in NFD if v is not None}))
    assert _count(NFD, enum, "r = 'Île-de-France'") == 2
    assert _count(NFD, enum, "r in ('Île-de-France', 'Bretagne')") == 3


def test_a_histogram_of_public_cells_in_nfc_counts_an_nfd_table(tmp_path):
    rows = 400
    table = pl.DataFrame({"r": [NFD[i % 4] for i in range(rows)], "n": list(range(rows))})
    answer = api.query(table, "histogram r in ('Île-de-France', 'Bretagne')", epsilon=1e4,
                       ledger=tmp_path / "l.sqlite3", budget=(1e5, 0.0), randomness=1)
    counts = dict(zip(answer.value["r"].to_list(), answer.value["count"].to_list()))
    assert counts == {"Île-de-France": 200, "Bretagne": 100}
    assert answer.custodian_only["rows_outside_the_domain"] == 100
