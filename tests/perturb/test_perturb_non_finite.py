"""±inf and NaN in a perturbed numeric column: the certificate writes them as texts (standard JSON
has none) and the domain reads them back, so estimate and report read the view (found by a
black-box sweep, F11: the domain of 'income' could not be read, and the report's failure printed
a multi-line Polars message)."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_for_error
from crowdsafe.errors import InputError
from crowdsafe.perturb.domain import TupleDomain
from crowdsafe.privacy.certificate import _finite


def test_a_domain_with_non_finite_floats_survives_the_certificate():
    domain = TupleDomain({"x": pl.Series("x", [-math.inf, -1e308, 0.0, 5e-324, math.inf, math.nan]),
                          "s": pl.Series("s", ["F", "M"])})
    written = json.dumps(_finite(domain.to_json()), allow_nan=False)
    again = TupleDomain.from_json(json.loads(written))
    assert again.values["x"].to_list()[:5] == [-math.inf, -1e308, 0.0, 5e-324, math.inf]
    assert math.isnan(again.values["x"].to_list()[5]) and again.values["s"].to_list() == ["F", "M"]


def test_another_text_in_a_float_domain_is_refused():
    with pytest.raises(InputError, match="'x' cannot be read"):
        TupleDomain.from_json({"x": {"type": "Float64", "values": [1.0, "Infinity"]}})


def test_perturb_then_estimate_and_report_a_view_with_infinities(capsys, tmp_path):
    rng = np.random.default_rng(4)
    n = 200
    income = rng.choice(["inf", "-inf", "1e308", "0", "12.5", "NaN"], n)
    lines = ["income,sex"] + [f"{v},{s}" for v, s in zip(income, rng.choice(["F", "M"], n))]
    data = tmp_path / "v.csv"
    data.write_text("\n".join(lines) + "\n", encoding="utf-8")
    view = tmp_path / "v" / "r.csv"
    code, err = run_for_error(capsys, "perturb", "--no-ledger", data, "--c", "0.5", "--gamma", "0.6", "--exploratory",
                              "--seed", "1", "--out", view)
    assert code == 0 and "warning" not in err, err
    code, err = run_for_error(capsys, "estimate", view, "count where sex = 'M'")
    assert code == 0, err
    code, err = run_for_error(capsys, "report", view)
    assert code == 0, err
