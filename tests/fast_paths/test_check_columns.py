"""models/classes: each column's distinct and missing counts in the ``check`` report, read from the
classes' frequency table of distinct tuples (EquivalenceClasses.column_counts, fast path, the
switch of the classes: FREQUENCY_TABLE_ROWS rows or more and a packed key) or counted over every
row (column_counts, the reference twin): the same counts, and the same check report, at the
threshold − 1, at it and + 1."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_check_classes import ROWS, table

from crowdsafe import api
from crowdsafe.models import EquivalenceClasses
from crowdsafe.models import classes as classes_module


def _counted(dataset, monkeypatch, threshold: int) -> tuple[dict, dict, bool]:
    monkeypatch.setattr(classes_module, "FREQUENCY_TABLE_ROWS", threshold)
    held = [*dataset.quasi_identifiers, *dataset.sensitive]
    found = EquivalenceClasses(dataset, sensitive=dataset.sensitive)
    return found.column_counts(), classes_module.column_counts(dataset.frame, held), found._by_tuples


@pytest.mark.slow  # half a second or more (the quick loop: README)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(rows=ROWS, integer=st.booleans())
def test_frequency_table_counts_are_the_rows(monkeypatch, rows, integer):
    dataset = table(rows, integer)
    fast, twin, by_tuples = _counted(dataset, monkeypatch, 0)
    assert by_tuples == integer  # a Float64 column: no packed key, counted row by row
    assert fast == (twin if integer else {})


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_check_report_at_the_threshold(monkeypatch, shift):
    rows = [("x", 1, "red", 1.5, 2), ("y", None, "blue", None, 3), (None, 2, "navy", 4.0, 1)] * 67  # 201 rows
    dataset = table(rows)
    fast, twin, by_tuples = _counted(dataset, monkeypatch, dataset.n_rows + shift)
    assert by_tuples == (shift <= 0)
    assert fast == (twin if by_tuples else {})
    monkeypatch.setattr(classes_module, "FREQUENCY_TABLE_ROWS", dataset.n_rows + shift)
    report = api.check_dataset(dataset, target_k=2)
    monkeypatch.setattr(classes_module, "FREQUENCY_TABLE_ROWS", 1 << 62)
    again = api.check_dataset(dataset, target_k=2)
    assert json.dumps(report.to_dict(), sort_keys=True, default=str) == json.dumps(again.to_dict(), sort_keys=True,
                                                                                   default=str)
    expected = {c: (n, m) for c, n, m in zip(dataset.frame.columns, dataset.frame.select(pl.all().n_unique()).row(0),
                                               dataset.frame.null_count().row(0))}
    assert {a["name"]: (a["distinct"], a["missing"]) for a in report.attributes} == expected
