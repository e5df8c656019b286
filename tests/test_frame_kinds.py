"""Pandas in gives pandas out, Polars in gives Polars out (issue 35): the table each public
function returns (``release.table``, ``view.table``) is of the kind the data was given as, with
the same rows as the engine's own ``.frame``. Shown to fail where the API forgot the kind."""

from __future__ import annotations

import pandas as pd
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.datasets import adult

COLUMNS = ["age", "sex", "race", "education"]


def _frame() -> pl.DataFrame:
    return adult(drop_missing=True).frame.select(COLUMNS).head(3000)


def tables(data) -> dict[str, object]:
    """The tables publish, anonymize and perturb return for ``data``, each checked against its
    ``.frame``."""
    publication = api.publish(data, epsilon=1.0, seed=1, ledger=None, report=False)
    release = api.anonymize(data, k=5, report=False)
    view = api.perturb(data[["sex", "race"]] if isinstance(data, pd.DataFrame) else data.select(["sex", "race"]),
                       gamma=0.5, d=0.3, exploratory=True, seed=1, ledger=None).view
    found = {"publish": (publication.release.table, publication.release.frame),
             "anonymize": (release.table, release.frame), "perturb": (view.table, view.frame)}
    for table, frame in found.values():
        same = pl.from_pandas(table) if isinstance(table, pd.DataFrame) else table
        assert same.equals(frame)
    return {name: table for name, (table, _) in found.items()}


def assert_kind(data, kind: type) -> None:
    for name, table in tables(data).items():
        assert isinstance(table, kind), (name, type(table))


@pytest.mark.parametrize("given, kind", [("pandas", pd.DataFrame), ("polars", pl.DataFrame),
                                         ("lazy", pl.DataFrame), ("path", pl.DataFrame)])
def test_the_table_comes_back_as_the_data_came_in(given, kind, tmp_path):
    frame = _frame()
    if given == "path":
        frame.write_parquet(tmp_path / "data.parquet")
    data = {"pandas": frame.to_pandas(), "polars": frame, "lazy": frame.lazy(),
            "path": tmp_path / "data.parquet"}[given]
    if given == "path":  # a path has no .select: read the view's columns from it
        data = str(data)
        for name, table in (("publish", api.publish(data, epsilon=1.0, seed=1, ledger=None).release.table),
                            ("anonymize", api.anonymize(data, k=5, report=False).table)):
            assert isinstance(table, kind), name
        return
    assert_kind(data, kind)


def test_the_broken_variant_is_caught(monkeypatch):
    """Without the API's step that records the kind (as before), pandas in gave Polars out."""
    monkeypatch.setattr(api, "_as_given", lambda data, result: result)
    with pytest.raises(AssertionError):
        assert_kind(_frame().to_pandas(), pd.DataFrame)


def test_attack_takes_the_pandas_table_anonymize_returns():
    """``anonymize(pandas_frame).table`` is a pandas DataFrame, and attack took Polars release frames
    only: it refused the pandas one as 'cannot attack DataFrame: give a Release, a DataFrame or a
    file path'. Read as the same release as its Polars ``.frame``."""
    data = _frame().to_pandas()
    release = api.anonymize(data, k=5, qi=["age", "sex", "race"], report=False)
    assert isinstance(release.table, pd.DataFrame)
    kwargs = {"qi": ["age", "sex", "race"], "sensitive": "education"}
    from_pandas = api.attack([release.table], data, **kwargs)
    from_polars = api.attack([release.frame], data, **kwargs)
    assert from_pandas.as_dict() == from_polars.as_dict()


def test_attack_names_what_it_refuses_in_full():
    from crowdsafe.errors import InputError

    with pytest.raises(InputError, match=r"cannot attack a pandas\.Series: give a crowdsafe Release"):
        api.attack([_frame().to_pandas()["age"]], _frame(), qi=["age"], sensitive="sex")


def test_an_integer_column_with_missing_values_comes_back_as_pandas_nullable_integers():
    """A pandas nullable ``Int64`` column (or an int one whose view holds missing values) came back
    float64 with NaN (Polars' ``to_pandas`` default); it comes back ``Int64``, its values intact."""
    ages = [18 + (7 * i) % 60 if i % 9 else None for i in range(400)]
    data = pd.DataFrame({"age": pd.array(ages, dtype="Int64"), "sex": ["F", "M"] * 200})
    view = api.perturb(data, attributes=["age", "sex"], gamma=0.5, c=0.5, exploratory=True, seed=1, ledger=None).view
    assert str(view.table["age"].dtype) == "Int64"
    assert view.frame["age"].null_count() > 0
    assert pl.from_pandas(view.table).equals(view.frame)
    assert view.table["age"].dropna().tolist() == view.frame["age"].drop_nulls().to_list()


def test_in_kind_keeps_integers_and_booleans_with_missing_values_nullable():
    from crowdsafe.data.io import PANDAS, in_kind

    frame = pl.DataFrame({"n": [1, None, 3], "u": pl.Series([1, None, 2], dtype=pl.UInt8),
                          "b": [True, None, False], "x": [1.5, None, 2.0], "whole": [1, 2, 3]})
    table = in_kind(frame, PANDAS)
    assert [str(t) for t in table.dtypes] == ["Int64", "UInt8", "boolean", "float64", "int64"]
    assert pl.from_pandas(table).equals(frame)
