"""crowdsafe's models against the peer implementation pycanon (1.3.6, a test-only dependency
installed without its pinned dependencies: ``pip install --no-deps pycanon==1.3.6``).

They agree on raw Adult and on generalized Adult releases, except where pycanon departs from
the published definitions; each such case is pinned below with a small table whose correct
value is computed independently in the test:

1. rows with a missing quasi-identifier value are dropped (pandas group-by), overstating k;
2. entropy ℓ is truncated to an integer;
3. equivalence classes are found by index *label* and then read by *position* (``iloc``), so a
   filtered or re-ordered frame gives wrong classes;
4. recursive (c, ℓ): the counts are sorted ascending, so the *least* frequent value is taken as
   r_1, and c is rounded;
5. δ-disclosure skips values absent from a class (their |ln(q/p)| is infinite by definition);
   crowdsafe reports that as δ = ∞ and the pycanon-style figure as ``delta_present``;
6. enhanced β-likeness returns min(β, max −ln p) instead of checking β against −ln p per value.

pycanon is slow (pandas per class and value), so the comparisons use modest tables.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import polars as pl
import pytest

from crowdsafe import models
from crowdsafe.data.release_roles import release_dataset
from crowdsafe.datasets import adult
from crowdsafe.models import disclosure

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from pycanon import anonymity as pycanon

QI = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
SENSITIVE = "occupation"
LEVELS = [
    {"age": 3, "workclass": 1, "education": 2, "marital-status": 2, "race": 1, "sex": 0, "native-country": 3},
    {"age": 2, "workclass": 1, "education": 1, "marital-status": 1, "race": 1, "sex": 0, "native-country": 2},
    {"age": 1, "workclass": 0, "education": 2, "marital-status": 2, "race": 0, "sex": 1, "native-country": 3},
]


def _pandas(frame: pl.DataFrame) -> pd.DataFrame:
    return frame.with_columns(pl.col(pl.Categorical).cast(pl.String)).to_pandas()


def _quiet(function, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return function(*args)


@pytest.mark.slow
def test_k_and_distinct_l_on_raw_adult():
    data = adult(drop_missing=True)
    frame = _pandas(data.frame)
    assert models.k_anonymity(data, QI) == _quiet(pycanon.k_anonymity, frame, QI)
    assert models.l_diversity(data, SENSITIVE, QI) == _quiet(pycanon.l_diversity, frame, QI, [SENSITIVE])


def _assert_agree(classes: models.EquivalenceClasses, frame: pd.DataFrame) -> None:
    """Every model pycanon computes, on the same table, where it follows the definitions."""
    counts = classes.sensitive(SENSITIVE)
    assert classes.k == _quiet(pycanon.k_anonymity, frame, QI)
    assert models.l_diversity(classes, SENSITIVE) == _quiet(pycanon.l_diversity, frame, QI, [SENSITIVE])
    entropy_l = _quiet(pycanon.entropy_l_diversity, frame, QI, [SENSITIVE])
    assert int(models.entropy_l_diversity(classes, SENSITIVE)) == entropy_l
    assert models.t_closeness(classes, SENSITIVE, ground="equal") == pytest.approx(
        _quiet(pycanon.t_closeness, frame, QI, [SENSITIVE]), abs=1e-12)
    # numeric sensitive attribute: pycanon uses the ordered distance
    assert models.t_closeness(classes, "education-num", ground="ordered") == pytest.approx(
        _quiet(pycanon.t_closeness, frame, QI, ["education-num"]), abs=1e-12)
    assert disclosure.delta_present_values(counts).max() == pytest.approx(
        _quiet(pycanon.delta_disclosure, frame, QI, [SENSITIVE]), rel=1e-12)
    assert models.beta_likeness(classes, SENSITIVE) == pytest.approx(
        _quiet(pycanon.basic_beta_likeness, frame, QI, [SENSITIVE]), rel=1e-12)


@pytest.mark.slow
def test_all_models_on_a_raw_adult_sample():
    data = adult(drop_missing=True)
    sample = data.with_frame(data.frame.head(80))
    _assert_agree(models.EquivalenceClasses(sample, QI), _pandas(sample.frame))


@pytest.mark.slow
@pytest.mark.parametrize("levels", LEVELS)
def test_all_models_on_generalized_adult_releases(levels):
    data = adult(drop_missing=True)
    data = data.with_frame(data.frame.head(700))
    release = data.recode(levels).filter(pl.len().over(QI) >= 3)
    classes = models.EquivalenceClasses(release_dataset(release, data), QI, original=data)
    _assert_agree(classes, _pandas(release))


# -- pycanon's departures from the definitions, each pinned with the correct value -------------


def test_pycanon_drops_rows_with_a_missing_quasi_identifier():
    frame = pl.DataFrame({"zip": ["1", "1", "2", "2", None], "disease": ["a", "b", "a", "b", "a"]})
    # the row with the missing zip is alone in its class: k is 1
    assert Counter(frame.get_column("zip").to_list())[None] == 1
    assert models.k_anonymity(frame, ["zip"]) == 1
    assert _quiet(pycanon.k_anonymity, frame.to_pandas(), ["zip"]) == 2  # overstated


def test_pycanon_truncates_entropy_l():
    frame = pl.DataFrame({"zip": ["1"] * 4 + ["2"] * 4, "disease": list("aaab") + list("abcd")})
    smallest = math.exp(-(0.75 * math.log(0.75) + 0.25 * math.log(0.25)))  # class '1': about 1.755
    assert models.entropy_l_diversity(frame, "disease", ["zip"]) == pytest.approx(smallest)
    assert _quiet(pycanon.entropy_l_diversity, frame.to_pandas(), ["zip"], ["disease"]) == 1


def test_pycanon_confuses_index_labels_with_positions():
    full = pd.DataFrame({"zip": ["9", "9", "1", "1", "2", "2"], "disease": ["x", "x", "a", "b", "a", "b"]})
    # every class of zips 1 and 2 holds two diseases: distinct l = 2
    filtered = full[full["zip"] != "9"]  # index labels 2..5 on positions 0..3
    assert models.l_diversity(pl.from_pandas(filtered), "disease", ["zip"]) == 2
    with pytest.raises(IndexError):  # pycanon reads label 5 as a position
        _quiet(pycanon.l_diversity, filtered, ["zip"], ["disease"])
    reordered = filtered.reset_index(drop=True).iloc[[0, 2, 1, 3]]  # labels 0, 2, 1, 3
    assert models.l_diversity(pl.from_pandas(reordered), "disease", ["zip"]) == 2
    # pycanon takes rows at positions 0, 1 for zip '1' (labels 0, 1): diseases a, a
    assert _quiet(pycanon.l_diversity, reordered, ["zip"], ["disease"]) == 1


def test_pycanon_recursive_cl_takes_the_least_frequent_value():
    # one class: counts a=6, b=3, c=1. Recursive (c, 2): r1 = 6, r2 + r3 = 4, so c must exceed 1.5.
    frame = pl.DataFrame({"zip": ["1"] * 10 + ["2"] * 3, "disease": list("aaaaaabbbc") + list("abc")})
    assert models.recursive_cl_diversity(frame, "disease", 2, ["zip"]) == pytest.approx(6 / 4)
    c, l = _quiet(pycanon.recursive_c_l_diversity, frame.to_pandas(), ["zip"], ["disease"])
    assert l == 3
    # with l = 3 the true bound is r1 / r3 = 6 / 1 (class '1'): (c, 3) holds only for c > 6
    assert models.recursive_cl_diversity(frame, "disease", 3, ["zip"]) == pytest.approx(6.0)
    # pycanon sorts ascending: class '1' gives floor(1 / 6 + 1) = 1, class '2' floor(1 / 1 + 1) = 2
    assert c == 2


def test_pycanon_delta_disclosure_skips_absent_values():
    frame = pl.DataFrame({"zip": ["1", "1", "2", "2"], "disease": ["a", "a", "a", "b"]})
    # class '1' has no 'b' although the table does: |ln(0 / p)| is infinite, no delta holds
    assert models.delta_disclosure(frame, "disease", ["zip"]) == math.inf
    present = max(abs(math.log(1 / 0.75)), abs(math.log(0.5 / 0.75)), abs(math.log(0.5 / 0.25)))
    classes = models.EquivalenceClasses(models.classes.as_dataset(frame), ["zip"])
    assert disclosure.delta_present_values(classes.sensitive("disease")).max() == pytest.approx(present)
    assert _quiet(pycanon.delta_disclosure, frame.to_pandas(), ["zip"], ["disease"]) == pytest.approx(present)


def test_pycanon_enhanced_beta_is_not_a_per_value_check():
    # p(a) = 0.6, p(b) = 0.4. Class '2' has b with q = 1: gain (1 - 0.4)/0.4 = 1.5 > -ln 0.4 = 0.916,
    # so no beta makes the table enhanced beta-like.
    frame = pl.DataFrame({"zip": ["1", "1", "1", "2", "2"], "disease": ["a", "a", "a", "b", "b"]})
    assert models.beta_likeness(frame, "disease", ["zip"]) == pytest.approx(1.5)
    assert models.beta_likeness(frame, "disease", ["zip"], enhanced=True) == math.inf
    reported = _quiet(pycanon.enhanced_beta_likeness, frame.to_pandas(), ["zip"], ["disease"])
    assert reported == pytest.approx(min(1.5, max(-math.log(0.6), -math.log(0.4))))
    assert np.isfinite(reported)
