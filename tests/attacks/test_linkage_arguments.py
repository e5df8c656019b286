"""The linkage attack refuses the intersection attack's parameters instead of ignoring them (found
by an API sweep, 2026-11-30): ``attack(release, voters, qi=..., kind="linkage", sensitive="job",
levels=[0.9], location="nearest")`` ran and returned as if none had been given, where ``crowdsafe
attack linkage`` has no such options and every other function refuses an option it would not read
(``anonymize``'s, ``check``'s ``l`` and ``ground``, ``query``'s ``delta`` and ``calibration``)."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError

TABLE = pl.DataFrame({"age": [30, 31, 32, 40, 41, 42] * 4, "sex": ["F", "M"] * 12, "job": ["a", "b", "c"] * 8})


@pytest.mark.parametrize(("parameter", "value"), [("sensitive", "job"), ("location", "nearest"), ("levels", [0.9])])
def test_an_intersection_parameter_is_refused_by_the_linkage_attack(parameter, value):
    with pytest.raises(ParameterError, match=f"^the {parameter} parameter applies to the intersection attack only"
                       ) as refused:
        api.attack(TABLE, TABLE, qi=["age", "sex"], kind="linkage", **{parameter: value})
    assert refused.value.parameter == parameter


def test_the_linkage_attack_runs_with_its_own_parameters():
    assert api.attack(TABLE, TABLE, qi=["age", "sex"], kind="linkage").summary["release_rows"] == TABLE.height
