"""Views and their certificates on disk: CSV and Parquet round trips, atomic pair writes, a view
with a tuple outside its domain, missing or foreign certificates, domain JSON of every type."""

from __future__ import annotations

import datetime as dt
import json

import numpy as np
import polars as pl
import pytest

from crowdsafe.data import load
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.perturb import TupleDomain, certificate_path, estimate, perturb, read_view
from crowdsafe.perturb.alpha_beta import PerturbRequest
from crowdsafe.privacy.dgamma import AlphaBetaPlanRequest


@pytest.fixture(scope="module")
def result():
    rng = np.random.default_rng(5)
    frame = pl.DataFrame({
        "age": rng.integers(18, 40, 200),
        "sex": rng.choice(["F", "M"], 200),
        "score": rng.choice([0.5, 1.25, 3.0], 200),
        "day": pl.Series([dt.date(2020, 1, 1), dt.date(2021, 6, 30)]).gather(rng.integers(0, 2, 200)),
        "city": pl.Series(rng.choice(["Oslo", "Rome", None], 200)).cast(pl.Categorical),
    })
    domains = {"age": range(18, 40), "sex": ["F", "M"], "score": [0.5, 1.25, 3.0],
               "day": [dt.date(2020, 1, 1), dt.date(2021, 6, 30)], "city": ["Oslo", "Rome", None]}
    request = PerturbRequest(AlphaBetaPlanRequest(gamma=0.4, c=1), domains=domains, max_rows=250)
    return perturb(load(frame), request, randomness=8)


@pytest.mark.parametrize("name", ["view.csv", "view.parquet"])
def test_round_trip_keeps_every_estimate(tmp_path, result, name):
    view_path, cert_path = result.view.write(tmp_path / name)
    assert cert_path == tmp_path / "view.certificate.json" == certificate_path(view_path)
    again = read_view(view_path)
    assert (again.alpha, again.beta, again.n_bound) == (result.view.alpha, result.view.beta, result.view.n_bound)
    assert again.n_bound == 250
    assert again.domain.size == result.view.domain.size and again.rows == result.view.rows
    for query in ("count", "count where age between 20 and 30 and sex = 'F'",
                  "count where score >= 1.25 and city is null", "count where day = '2021-06-30'"):
        assert estimate(again, query) == estimate(result.view, query)
    assert json.loads(cert_path.read_text())["guarantee"] == "d-gamma"


def test_a_view_row_outside_the_domain_is_refused(tmp_path, result):
    view_path, _ = result.view.write(tmp_path / "view.csv")
    frame = pl.read_csv(view_path)
    frame = frame.with_columns(pl.when(pl.int_range(pl.len()) == 3).then(99).otherwise(pl.col("age")).alias("age"))
    frame.write_csv(view_path)
    with pytest.raises(InputError, match="99.*outside the published domain"):
        read_view(view_path)


def test_a_view_and_a_certificate_that_do_not_belong_together(tmp_path, result):
    view_path, _ = result.view.write(tmp_path / "view.csv")
    pl.read_csv(view_path).head(10).write_csv(view_path)
    with pytest.raises(InputError, match="do not belong together"):
        read_view(view_path)


def test_missing_or_foreign_certificates(tmp_path, result):
    view_path, cert_path = result.view.write(tmp_path / "view.csv")
    cert_path.rename(tmp_path / "elsewhere.json")
    with pytest.raises(InputError, match="no certificate"):
        read_view(view_path)
    assert read_view(view_path, tmp_path / "elsewhere.json").rows == result.view.rows
    (tmp_path / "foreign.json").write_text(json.dumps({"format": "crowdsafe-certificate", "version": 1}))
    with pytest.raises(InputError, match="missing the field"):
        read_view(view_path, tmp_path / "foreign.json")


def test_bad_output_names_write_nothing(tmp_path, result):
    with pytest.raises(ParameterError, match="output format"):
        result.view.write(tmp_path / "view.txt")
    with pytest.raises(InputError, match="same file"):
        result.view.write(tmp_path / "v.csv", tmp_path / "v.csv")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_view_write_leaves_no_certificate(tmp_path, result, monkeypatch):
    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(pl.DataFrame, "write_csv", broken)
    with pytest.raises(OSError):
        result.view.write(tmp_path / "view.csv")
    assert list(tmp_path.iterdir()) == []


def test_domain_json_round_trip_for_every_type(result):
    domain = result.view.domain
    again = TupleDomain.from_json(json.loads(json.dumps(domain.to_json())))
    assert again.sizes == domain.sizes
    for name in domain.attributes:
        assert again.values[name].cast(pl.String).to_list() == domain.values[name].cast(pl.String).to_list()
    with pytest.raises(InputError, match="cannot be read"):
        TupleDomain.from_json({"a": {"type": "Int64"}})
    with pytest.raises(InputError, match="missing or empty"):
        TupleDomain.from_json({})
