"""The t-closeness ground distance under both its names, in Python as on the command line (found by
an API sweep, 2026-11-30): ``crowdsafe check`` and ``crowdsafe anonymize`` take ``--ground`` and
``--distance`` alike, but ``check(distance=...)`` raised "unexpected keyword argument 'distance'"
and ``anonymize(ground=...)`` "unknown keyword 'ground'". Each takes the other's name with the
same meaning; both at once are refused in one line."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError

FRAME = pl.DataFrame({
    "age": [30, 31, 32, 40, 41, 42, 50, 51] * 3,
    "zip": ["a", "b"] * 12,
    "salary": [10, 20, 30, 40, 50, 60] * 4,
})


def test_check_takes_distance_as_ground():
    by_distance = api.check(FRAME, qi=["age", "zip"], sensitive="salary", distance="equal").as_dict()
    assert by_distance == api.check(FRAME, qi=["age", "zip"], sensitive="salary", ground="equal").as_dict()
    assert by_distance != api.check(FRAME, qi=["age", "zip"], sensitive="salary", ground="ordered").as_dict()
    with pytest.raises(ParameterError, match="two spellings of one parameter"):
        api.check(FRAME, sensitive="salary", ground="equal", distance="equal")


def test_anonymize_takes_ground_as_distance():
    options = dict(qi=["age", "zip"], sensitive="salary", t=0.3, k=2, report=False)
    by_ground = api.anonymize(FRAME, ground="equal", **options)
    assert by_ground.frame.equals(api.anonymize(FRAME, distance="equal", **options).frame)
    with pytest.raises(ParameterError, match="two spellings of one parameter"):
        api.anonymize(FRAME, ground="equal", distance="equal", **options)
