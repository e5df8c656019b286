"""models/classes: the equivalence classes from the frequency table of distinct tuples (tables of
FREQUENCY_TABLE_ROWS rows or more) or row by row (the reference twin): the same classes in the
same order, the same (class, value, count) triples, the same assessment."""

from __future__ import annotations

import json

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe import models
from crowdsafe.data import Dataset, Hierarchy, Schema
from crowdsafe.datasets import adult
from crowdsafe.models import classes as classes_module

COLOURS = ["red", "pink", "blue", "navy", "green"]
COLOUR = Hierarchy.from_columns("colour", COLOURS, [["warm", "warm", "cool", "cool", "green"], ["*"] * 5])
ROWS = st.lists(
    st.tuples(st.sampled_from(["x", "y", None]), st.sampled_from([0, 1, 2, None]), st.sampled_from(COLOURS),
              st.sampled_from([1.5, -0.0, 0.0, 4.0, None]), st.integers(1, 4)),
    min_size=1, max_size=40,
)


def table(rows, integer: bool = True) -> Dataset:
    """A table of ``rows``: ``a`` Categorical, ``b`` and ``score`` integers, ``colour`` text with a
    hierarchy, ``f`` Int16 (halves doubled) or, with ``integer`` False, Float64 (no packed key)."""
    frame = pl.DataFrame(rows, schema={"a": pl.String, "b": pl.Int64, "colour": pl.String, "f": pl.Float64,
                                       "score": pl.Int64}, orient="row")
    frame = frame.with_columns(pl.col("a").cast(pl.Categorical), pl.col("colour").cast(pl.Categorical))
    if integer:
        frame = frame.with_columns((pl.col("f") * 2).cast(pl.Int16) - 3)
    schema = Schema.of({"a": "categorical", "b": "numeric", "colour": "categorical", "f": "numeric",
                        "score": "numeric"}, qi=["a", "b", "f"], sensitive=["colour", "score"])
    return Dataset(frame, schema, {"colour": COLOUR})


def _twins(monkeypatch, make):
    """(fast path, reference twin) of ``make()``, the switch forced each way."""
    monkeypatch.setattr(classes_module, "FREQUENCY_TABLE_ROWS", 0)
    fast = make()
    monkeypatch.setattr(classes_module, "FREQUENCY_TABLE_ROWS", 1 << 62)
    return fast, make()


def _same_classes(fast, twin, attributes, packed=True):
    assert fast._by_tuples == packed and not twin._by_tuples
    assert fast.sizes.tolist() == twin.sizes.tolist()
    assert fast.published().equals(twin.published())
    for attribute in attributes:
        a, b = fast.sensitive(attribute), twin.sensitive(attribute)
        for name in ("cls", "code", "count", "class_sizes", "overall"):
            assert getattr(a, name).tolist() == getattr(b, name).tolist(), name
            assert getattr(a, name).dtype == getattr(b, name).dtype, name
        assert a.values.equals(b.values)


@pytest.mark.slow
@settings(max_examples=60, deadline=None)
@given(ROWS, st.booleans())
def test_frequency_table_and_rows_agree(rows, integer):
    with pytest.MonkeyPatch.context() as monkeypatch:
        data = table(rows, integer)
        for sensitive in ([], ["colour"], ["colour", "score"]):
            fast, twin = _twins(monkeypatch, lambda s=sensitive: models.EquivalenceClasses(data, sensitive=s))
            _same_classes(fast, twin, ["colour", "score"], packed=integer)  # an attribute not counted at first
            report = lambda s=sensitive: json.dumps(models.assess(data, sensitive=s or None, target_k=2,  # noqa: E731
                                                                  population_size=100).to_dict())
            assert report() == report()
            first, second = _twins(monkeypatch, report)
            assert first == second


def test_release_cells_covering_the_same_values(monkeypatch):
    original = adult()
    release = pl.DataFrame({
        "age": ["[25, 30)", "[25, 29]", "[25,29]", "*", "*"],
        "marital-status": ["Married", "{Married-AF-spouse, Married-civ-spouse}",
                           "{Married-civ-spouse, Married-AF-spouse}", "*", "*"],
        "occupation": ["Sales", "Sales", "Tech-support", "Sales", None],
    })
    dataset = Dataset(release, Schema.of({"age": "categorical", "marital-status": "categorical",
                                          "occupation": "categorical"}, qi=["age", "marital-status"]))
    for original_table in (original, None):
        fast, twin = _twins(monkeypatch, lambda o=original_table: models.EquivalenceClasses(
            dataset, original=o, sensitive=["occupation"]))
        _same_classes(fast, twin, ["occupation"])  # text: dictionary ids in the key
        categorical = dataset.with_frame(release.with_columns(pl.all().cast(pl.Categorical)))
        fast, twin = _twins(monkeypatch, lambda o=original_table, c=categorical: models.EquivalenceClasses(
            c, original=o, sensitive=["occupation"]))
        _same_classes(fast, twin, ["occupation"])


@pytest.mark.parametrize("shift", [-1, 0, 1])
def test_switch_at_the_threshold(monkeypatch, shift):
    whole = adult().with_roles(qi=["age", "sex", "race", "education"], sensitive=["occupation"])
    data = whole.with_frame(whole.frame.head(200))
    monkeypatch.setattr(classes_module, "FREQUENCY_TABLE_ROWS", 200 + shift)
    classes = models.EquivalenceClasses(data, sensitive=["occupation"])
    assert classes._by_tuples == (shift <= 0)
    monkeypatch.setattr(classes_module, "FREQUENCY_TABLE_ROWS", 1 << 62)
    twin = models.EquivalenceClasses(data, sensitive=["occupation"])
    _same_classes(classes, twin, ["occupation"]) if shift <= 0 else None
    assert classes.sizes.tolist() == twin.sizes.tolist()
