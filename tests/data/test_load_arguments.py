"""The arguments of ``crowdsafe.data.load`` (``api.load``) and ``read_table``, found by an API sweep:

- ``load(frame, qi=5)``, ``qi=[5]``, ``sensitive=5`` raised "'int' object is not iterable" from
  inside the reader, where every public function (:mod:`crowdsafe.arguments`) names the parameter;
- ``load(frame, hierarchies=["age"])`` raised "'list' object is not a mapping" from inside;
- ``load(path, missing_tokens="NA")`` (and ``read_table``) read the string as its characters: every
  cell ``N`` or ``A`` became missing and ``NA`` stayed a value, silently. One string is one token,
  as one string is one column name for ``qi``.
"""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe.data import load, read_table
from crowdsafe.errors import ParameterError

FRAME = pl.DataFrame({"age": [30, 40, 50], "sex": ["F", "M", "F"]})


@pytest.mark.parametrize(("keyword", "value"), [
    ("qi", 5), ("qi", [5]), ("sensitive", 5), ("sensitive", [5]), ("hierarchies", ["age"]),
    ("missing_tokens", 5), ("missing_tokens", [None]),
])
def test_a_wrong_argument_is_refused_naming_it(keyword, value):
    with pytest.raises(ParameterError, match=f"^{keyword} ") as refused:
        load(FRAME, **{keyword: value})
    assert refused.value.parameter == keyword


def test_one_missing_token_is_that_token_not_its_characters(tmp_path):
    path = tmp_path / "t.csv"
    path.write_text("a,b\nN,1\nA,2\nNA,3\nx,4\n", encoding="utf-8")
    expected = ["N", "A", None, "x"]  # NA alone is missing
    assert load(path, missing_tokens="NA").frame.get_column("a").to_list() == expected
    assert load(path, missing_tokens=["NA"]).frame.get_column("a").to_list() == expected
    assert read_table(path, missing_tokens="NA").get_column("a").to_list() == expected
