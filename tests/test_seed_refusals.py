"""A seed from another library's habits (found by an API sweep, 2026-11-30): diffprivlib and
scikit-learn take ``random_state`` and NumPy generators. ``seed=np.random.default_rng(0)`` was
refused as "seed must be a whole number, got Generator(PCG64) at 0x7F...", saying neither why a
generator is not taken nor what to give, and ``perturb(..., random_state=0)`` listed the keywords
perturb takes without its ``seed``. Both now say what to give."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError

FRAME = pl.DataFrame({"sex": ["F", "M"] * 10})


@pytest.mark.parametrize("generator", [np.random.default_rng(0), np.random.RandomState(0)],
                         ids=["Generator", "RandomState"])
def test_a_numpy_generator_is_refused_saying_what_to_give(generator):
    with pytest.raises(ParameterError, match=r"never from a NumPy generator") as refused:
        api.query(FRAME, "count", epsilon=1.0, seed=generator, ledger=None)
    assert "an int seed: reproducible and NOT fit for release" in str(refused.value)
    assert "0x" not in str(refused.value)  # no address of the object
    assert refused.value.parameter == "seed"


def test_random_state_names_seed():
    with pytest.raises(ParameterError, match=r"takes no keyword 'random_state': give seed") as refused:
        api.perturb(FRAME, gamma=0.5, d=0.1, exploratory=True, random_state=0)
    assert refused.value.parameter == "random_state"
