"""Hypothesis strategies: small random tables with hierarchies, as a Dataset."""

from __future__ import annotations

import polars as pl
from hypothesis import strategies as st

from crowdsafe.data import Dataset, Schema, grouping, intervals

COLOURS = ["red", "orange", "yellow", "green", "blue", "violet"]
COLOUR_GROUPS = [
    {"warm": ["red", "orange", "yellow"], "cold": ["green", "blue", "violet"]},
]
SHAPES = ["circle", "square", "star"]
OUTCOMES = ["a", "b", "c", "d"]


def colour_hierarchy():
    return grouping("colour", COLOUR_GROUPS)


@st.composite
def tables(draw, min_rows: int = 1, max_rows: int = 40, with_shape_hierarchy: bool = False):
    """A Dataset: id (insensitive), age (numeric QI), colour (QI, hierarchy), shape (QI, none
    or flat), outcome (sensitive)."""
    n = draw(st.integers(min_rows, max_rows))
    ages = draw(st.lists(st.integers(18, 60), min_size=n, max_size=n))
    colours = draw(st.lists(st.sampled_from(COLOURS), min_size=n, max_size=n))
    shapes = draw(st.lists(st.sampled_from(SHAPES), min_size=n, max_size=n))
    outcomes = draw(st.lists(st.sampled_from(OUTCOMES), min_size=n, max_size=n))
    frame = pl.DataFrame({"id": list(range(n)), "age": ages, "colour": colours, "shape": shapes,
                          "outcome": outcomes})
    schema = Schema.of({"id": "numeric", "age": "numeric", "colour": "categorical", "shape": "categorical",
                        "outcome": "categorical"}, qi=["age", "colour", "shape"], sensitive=["outcome"])
    hierarchies = {"age": intervals("age", range(18, 61), widths=[5, 10, 20]), "colour": colour_hierarchy()}
    if with_shape_hierarchy:
        from crowdsafe.data import flat

        hierarchies["shape"] = flat("shape", SHAPES)
    return Dataset(frame, schema, hierarchies)
