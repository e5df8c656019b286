"""``frequency_table`` and ``encode`` take the frames every public function takes (found by an API
sweep, 2026-11-30): a pandas DataFrame or a Polars LazyFrame was refused as "not DataFrame" (the
pandas class's bare name, where a Polars DataFrame was taken). And what cannot be loaded at all is
named with what to give instead: a Publication (``check(publish(...))``) its releases, a NumPy
array (which has no column names) a DataFrame."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.data import encode, frequency_table, load
from crowdsafe.errors import InputError, SchemaError

FRAME = pl.DataFrame({"age": [30, 30, 40, 50], "sex": ["F", "F", "M", "F"]})


@pytest.mark.parametrize("given", [FRAME.to_pandas(), FRAME.lazy()], ids=["pandas", "lazy"])
def test_a_pandas_or_lazy_frame_is_counted_and_encoded_as_the_polars_one(given):
    assert frequency_table(given).equals(frequency_table(FRAME))
    assert frequency_table(given, "sex").equals(frequency_table(FRAME, "sex"))
    assert encode(given, ["age"]).columns["age"].dictionary.equals(encode(FRAME, ["age"]).columns["age"].dictionary)


def test_anything_else_is_refused_naming_its_kind():
    with pytest.raises(SchemaError, match=r"^frequency_table\(\) takes .* not a numpy.ndarray"):
        frequency_table(FRAME.to_numpy())
    with pytest.raises(SchemaError, match=r"^encode\(\) takes .* not a str \(read a file"):
        encode("people.csv")


def test_what_cannot_be_loaded_says_what_to_give():
    publication = api.publish(FRAME, epsilon=1.0, k=2, seed=1, ledger=None, report=False)
    with pytest.raises(InputError, match=r"a Publication holds its releases: give one, publication.releases\[0\]"):
        api.check(publication)
    with pytest.raises(InputError, match=r"^cannot load a numpy.ndarray: .*pandas.DataFrame\(array, columns"):
        load(np.zeros((2, 2)))
