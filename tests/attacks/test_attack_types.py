"""``crowdsafe.api.attack`` is typed with what it returns (it was ``Any``): per kind, the result
class the attack gives is the one its overload names, so a type checker knows a linkage result
from an intersection result."""

from __future__ import annotations

import inspect
import typing

import polars as pl
import pytest

from crowdsafe import api

RELEASE = pl.DataFrame({"age": ["[20, 29]"] * 3 + ["[30, 39]"] * 3, "disease": ["flu", "cold", "flu"] * 2})
TARGETS = pl.DataFrame({"age": [25, 33], "disease": ["flu", "cold"]})


def _returned(kind: str) -> str:
    """The return annotation of the overload of ``api.attack`` whose ``kind`` is ``kind``."""
    for overload in typing.get_overloads(api.attack):
        annotation = str(inspect.signature(overload).parameters["kind"].annotation)
        if annotation in (f'Literal["{kind}"]', f"Literal['{kind}']"):
            return str(inspect.signature(overload).return_annotation)
    raise AssertionError(f"no overload of api.attack for kind={kind!r}")


@pytest.mark.parametrize("kind", ["intersection", "linkage"])
def test_each_kind_returns_the_class_its_overload_names(kind):
    sensitive = {"sensitive": "disease"} if kind == "intersection" else {}  # linkage refuses it
    result = api.attack([RELEASE], TARGETS, qi=["age"], kind=kind, **sensitive)
    assert type(result).__name__ in _returned(kind).replace(" ", "").split("|")
    assert type(result).__name__ in str(inspect.signature(api.attack).return_annotation)
    assert inspect.signature(api.attack).return_annotation not in ("Any", typing.Any)
