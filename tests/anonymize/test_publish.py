"""The safe pipeline (issue 7): plan, sample, choose, apply, certify, ledger; bad input; properties."""

from __future__ import annotations

import json
import math
import re
from collections import Counter

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from samples import sample_of
from strategies import tables

import crowdsafe
from crowdsafe.anonymize.publish import PlanRequest, RunOptions, plan_publication, publish_dataset
from crowdsafe.anonymize.release import write_classes_csv
from crowdsafe.datasets import adult
from crowdsafe.errors import HierarchyError, ParameterError, SampleReuseError
from crowdsafe.privacy import Certificate, compose_homogeneous, dps_delta, largest_rate_for_epsilon
from crowdsafe.privacy.ledger import Ledger
from crowdsafe.randomness import Randomness
from crowdsafe.selection.mechanism import fixed_scheme


@pytest.fixture(scope="module")
def adult_data():
    return adult()


# -- the plan ------------------------------------------------------------------------------------


def _least_k(beta: float, epsilon: float, epsilon1: float, delta: float) -> int:
    """The least k with d(k, β, ε − ε1) ≤ δ, by bisection on dps_delta (not the planner)."""
    low, high = 1, 2
    while dps_delta(high, beta, epsilon, epsilon1) > delta:
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if dps_delta(middle, beta, epsilon, epsilon1) <= delta else (middle, high)
    return max(high, 2)


def test_default_plan_without_the_lattice_size_spends_ten_percent_and_picks_beta_by_resolution():
    plan = plan_publication(PlanRequest(1.0, 1e-6))
    assert plan.epsilon1 == pytest.approx(0.1)
    assert plan.beta <= 1 - math.exp(-0.9)
    # k is the smallest with d(k, beta, eps - eps1) <= delta, checked independently of the planner
    assert dps_delta(plan.k, plan.beta, 1.0, 0.1) <= 1e-6 < dps_delta(plan.k - 1, plan.beta, 1.0, 0.1)
    assert plan.releases == 1 and plan.total_epsilon == 1.0
    # beta/k is within 10% of the best over a dense grid of admitted rates (computed by bisection
    # on d, not by the planner), and no rate above it by more than 20% reaches 90% of that best
    # (the planner's grid of rates may stop a little short of the largest qualifying rate)
    rates = np.linspace(0.01, largest_rate_for_epsilon(1.0, 0.1), 300)  # (1 − e^−0.9 is a hair past the floor)
    ratios = np.array([r / _least_k(r, 1.0, 0.1, 1e-6) for r in rates])
    best = ratios.max()
    assert plan.beta / plan.k >= 0.9 * best * 0.98
    assert np.all(ratios[rates > plan.beta * 1.2] < 0.9 * best * 1.02)


def test_at_a_large_epsilon_the_planner_keeps_k_small():
    """At ε = 4 the largest admitted rate keeps 98% of the rows and needs k in the hundreds; the
    planner's rate fills many more classes of k rows."""
    plan = plan_publication(PlanRequest(4.0, 1e-6))
    top = largest_rate_for_epsilon(4.0, 0.4)  # 1 − e^−3.6, rounded down to a rate the floor admits
    assert plan.beta / plan.k > 5 * top / _least_k(top, 4.0, 0.4, 1e-6)
    assert plan.k < 50


def test_the_planner_spends_epsilon1_for_a_one_class_utility_bound():
    """With the lattice's size L known: ε1 = (ln L + ln 20)/k at the largest admitted rate (monotone
    score), within 1%-50% of ε."""
    plan = plan_publication(PlanRequest(1.0, 1e-6, candidates=36864))
    k_top = _least_k(1 - math.exp(-(1.0 - plan.epsilon1)), 1.0, plan.epsilon1, 1e-6)
    assert plan.epsilon1 == pytest.approx((math.log(36864) + math.log(20)) / k_top, rel=2e-3)
    discernibility = plan_publication(PlanRequest(1.0, 1e-6, candidates=36864, objective="discernibility"))
    assert discernibility.epsilon1 > plan.epsilon1  # not monotone: twice the bound's factor
    tiny = plan_publication(PlanRequest(0.2, 1e-6, candidates=4_000_000))
    assert tiny.epsilon1 == pytest.approx(0.1)  # capped at half of epsilon
    assert "planned" in plan.epsilon1_rule and plan.beta_rule.startswith("the largest beta")


def test_a_fixed_scheme_is_strongly_safe_and_spends_no_epsilon1():
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="medium"))
    assert plan.epsilon1 == 0.0 and plan.strongly_safe
    assert plan.beta <= 1 - math.exp(-1.0)
    assert dps_delta(plan.k, plan.beta, 1.0, 0.0) <= 1e-6 < dps_delta(plan.k - 1, plan.beta, 1.0, 0.0)
    with pytest.raises(ParameterError, match="spends no epsilon1"):
        plan_publication(PlanRequest(1.0, 1e-6, scheme="medium", epsilon1=0.1))


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"epsilon": 0.3, "delta": 1e-6, "beta": 0.5}, "epsilon"),  # below -ln(1-0.5) + 0.03
        ({"epsilon": 1.0, "delta": 0.2, "beta": 0.1}, "beta > delta"),
        ({"epsilon": 1.0, "delta": 1e-6, "k": 1}, "k must be a whole number >= 2"),
        ({"epsilon": 1.0, "delta": 1e-6, "releases": 0}, "releases"),
        ({"epsilon": -1.0, "delta": 1e-6}, "epsilon"),
    ],
)
def test_parameters_the_theorem_does_not_allow_are_refused(kwargs, message):
    with pytest.raises(ParameterError, match=message):
        plan_publication(PlanRequest(**kwargs))


def test_the_fifty_release_example_as_the_calculus_gives_it():
    """Issue example: 50 releases at beta = 0.2 'each (0.2, 0.02, 0)-DPS, (1, 0)-DP in total'.

    The calculus does not allow it: at beta = 0.2 no epsilon below -ln(0.8) = 0.223 has a guarantee,
    and delta is never 0. What it does give is computed here and stated in docs/publish.md.
    """
    floor = -math.log(1 - 0.2)
    with pytest.raises(ParameterError):
        plan_publication(PlanRequest(0.02, 1e-8, beta=0.2, scheme="medium"))
    plan = plan_publication(PlanRequest(floor * 1.05, 1e-8, beta=0.2, scheme="medium", releases=50))
    assert plan.epsilon == pytest.approx(floor * 1.05)
    assert plan.total_delta == pytest.approx(50 * plan.delta)
    summed = compose_homogeneous(plan.epsilon, plan.delta, 50, 0.0)
    assert plan.total_epsilon == pytest.approx(summed.epsilon)
    assert plan.total_epsilon <= 50 * plan.epsilon + 1e-12
    assert plan.total_epsilon > 1.0  # far from the (1, 0) of the example
    # and every row is in at least one of the 50 samples with probability 1 - 0.8^50
    assert 1 - 0.8**50 > 0.9999


# -- the pipeline --------------------------------------------------------------------------------


def _published_multiset_matches(dataset, release_frame, sample, levels, k, columns):
    """Independent check of Apply: recode the sample with the data layer, keep tuples held >= k times."""
    recoded = sample.recode(levels).select(columns)
    as_text = [tuple(str(v) for v in row) for row in recoded.iter_rows()]
    counts = Counter(as_text)
    expected = Counter({t: c for t, c in counts.items() if c >= k})
    published = Counter(tuple(str(v) for v in row) for row in release_frame.select(columns).iter_rows())
    return published == expected


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=tables(min_rows=5, max_rows=60, with_shape_hierarchy=True), seed=st.integers(0, 2**31),
       chosen=st.booleans(), k=st.integers(2, 4))
@pytest.mark.slow
def test_published_rows_are_a_k_anonymous_image_of_sampled_rows(data, seed, chosen, k):
    from crowdsafe.anonymize.publish import prepare_dataset

    plan = plan_publication(PlanRequest(2.0, 0.3, k=k, beta=0.5, scheme=None if chosen else "fine"))
    pub = publish_dataset(data, plan, RunOptions(), randomness=Randomness(seed))
    release = pub.release
    prepared, columns, _ = prepare_dataset(data)
    sample = sample_of(prepared, seed, plan.beta)
    levels = dict(release.recoding.levels)
    assert list(release.frame.columns) == columns  # every published column is recoded
    sizes = Counter(release.frame.iter_rows())
    assert all(size >= k for size in sizes.values())
    assert _published_multiset_matches(prepared, release.frame, sample, levels, k, columns)


def test_release_on_adult_certificate_and_files(adult_data, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    plan = plan_publication(PlanRequest(1.0, 1e-6))
    pub = publish_dataset(adult_data, plan, RunOptions(out=tmp_path / "r.csv"), randomness=Randomness(5), ledger=ledger)
    cert = Certificate.read(tmp_path / "r.certificate.json")
    assert cert.guarantee == "dps" and "Theorem 6" in cert.theorem
    assert cert.epsilon == pytest.approx(1.0) and cert.delta <= 1e-6
    assert cert.parameters["k"] == plan.k and cert.parameters["epsilon1"] == pytest.approx(0.1)
    assert not cert.fit_for_release and cert.accounting == {"ledger": True}  # seeded, recorded
    assert "input_fingerprint" not in json.loads(cert.to_json())
    table = pl.read_csv(tmp_path / "r.csv", infer_schema=False)
    assert "frame" not in vars(pub.release)  # the CSV came from the classes: no row was built
    assert table.height == pub.release.rows_published > 0
    # written from one line per class, byte for byte the release's table as Polars writes it
    assert (tmp_path / "r.csv").read_bytes() == pub.release.frame.write_csv().encode()
    assert set(table.columns) == set(adult_data.quasi_identifiers) | {"income"}
    # the ledger records the sample by its digest keyed with the ledger's secret, as consumed;
    # the certificate names the release by random bits, not by anything computed from the data
    sample = sample_of(adult_data, 5, plan.beta)
    identity = sample.fingerprint(key=ledger.identity_key)
    entry = ledger.entries()[-1]
    assert entry.kind == "dps-release" and list(entry.samples) == [identity]
    assert entry.fingerprint == adult_data.fingerprint(key=ledger.identity_key)
    assert set(cert.sample) == {"release_id", "rate"} and len(cert.sample["release_id"]) == 32
    assert cert.sample["release_id"] not in (sample.fingerprint(), identity, adult_data.fingerprint())
    assert ledger.consumed_by(identity) == entry.id
    assert pub.custodian_report()["ledger"]["dataset_identity"] == entry.fingerprint


def test_a_consumed_sample_is_refused_with_nothing_written_or_charged(adult_data, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    publish_dataset(adult_data, plan, RunOptions(budget=(5.0, 1e-5)), randomness=Randomness(9), ledger=ledger)
    sample = sample_of(adult_data, 9, plan.beta)
    before = len(ledger.entries())
    with pytest.raises(SampleReuseError, match="only once.*a custodian-only fact about the data"):
        publish_dataset(sample, plan, RunOptions(out=tmp_path / "again.csv"), randomness=Randomness(1), ledger=ledger)
    assert len(ledger.entries()) == before and not (tmp_path / "again.csv").exists()


def test_unknown_scheme_level_is_refused_before_anything(adult_data, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="age=9"))
    with pytest.raises(HierarchyError, match="age"):
        publish_dataset(adult_data, plan, RunOptions(out=tmp_path / "x.csv"), randomness=Randomness(1), ledger=ledger)
    with pytest.raises(ParameterError, match="preset"):
        fixed_scheme(adult_data, adult_data.quasi_identifiers, "finest")
    with pytest.raises(ParameterError, match="not a quasi-identifier"):
        fixed_scheme(adult_data, adult_data.quasi_identifiers, "nosuch=1")
    assert ledger.entries() == [] and ledger.budget(adult_data.fingerprint(key=ledger.identity_key)) is None
    assert not any(p.name.startswith("x") for p in tmp_path.iterdir())


def test_over_budget_is_refused_before_sampling(adult_data, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    ledger.set_budget(adult_data.fingerprint(key=ledger.identity_key), "adult", 0.5, 1e-5)
    with pytest.raises(crowdsafe.errors.BudgetExceeded):
        publish_dataset(adult_data, plan_publication(PlanRequest(1.0, 1e-6)), RunOptions(out=tmp_path / "x.csv"),
                        randomness=Randomness(1), ledger=ledger)
    assert ledger.entries() == [] and not (tmp_path / "x.csv").exists()


def test_without_a_budget_the_first_release_takes_exactly_its_cost(adult_data, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    pub = publish_dataset(adult_data, plan, randomness=Randomness(2), ledger=ledger)
    (note,) = [w for w in pub.custodian_report()["warnings"] if "registered this publication's cost" in w]
    budget = ledger.budget(adult_data.fingerprint(key=ledger.identity_key))
    # the cost is a privacy loss: stated never below it (delta 9.7149e-07 read 9.71e-07 until 2026-11-30)
    stated = re.search(r"\(epsilon = ([^,]+), delta = ([^)]+)\)", note)
    assert stated is not None and float(stated.group(1)) >= budget.budget.epsilon
    assert float(stated.group(2)) >= budget.budget.delta
    assert budget.budget.epsilon == pytest.approx(1.0) and budget.remaining.epsilon == pytest.approx(0.0, abs=1e-9)
    with pytest.raises(crowdsafe.errors.BudgetExceeded):
        publish_dataset(adult_data, plan, randomness=Randomness(3), ledger=ledger)


def _public_files(folder):
    """Every file a run wrote beside its release: name -> bytes."""
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def test_heavy_suppression_is_written_and_warned_to_the_custodian_only(tmp_path):
    # 200 distinct values, k = 20, no generalization: every sampled row is suppressed
    data = crowdsafe.data.load(pl.DataFrame({"x": [str(i) for i in range(200)]}))
    plan = plan_publication(PlanRequest(1.0, 1e-3, k=20, beta=0.5, scheme="none"))
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    report = tmp_path / "custodian" / "report.json"
    # (a budget given: registering the run's cost as the budget would add a custodian warning of its own)
    pub = publish_dataset(data, plan, RunOptions(out=tmp_path / "out" / "r.csv", custodian_report=report,
                                                 budget=(10.0, 1e-2)),
                          randomness=Randomness(1), ledger=ledger)
    # the release is written and returned, the run completed
    assert pub.release.rows_published == 0 and pub.written["tables"] == [str(tmp_path / "out" / "r.csv")]
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.certificate.json", "r.csv", "r.report.html"]
    entry = ledger.entries()[-1]
    assert entry.status == "completed"
    # the warning, with the exact rate and the knobs, in every custodian-only place
    custodian = pub.custodian_report()
    sample_rows = custodian["releases"][0]["sample_rows"]
    assert custodian["releases"][0]["suppression_rate"] == 1.0 and sample_rows > 0
    (warning,) = custodian["warnings"]
    assert warning.startswith(f"the release suppressed 100.0% of its sample ({sample_rows:,} of {sample_rows:,} rows)")
    assert all(knob in warning for knob in ("coarser scheme", "larger epsilon or delta", "larger beta",
                                            "fewer quasi-identifiers"))
    assert json.loads(report.read_text())["warnings"] == [warning]
    assert entry.outcome["custodian_report"]["warnings"] == [warning]
    # and nowhere public: not in the notes, the summary, the certificate or the files beside it
    public = json.dumps(pub.summary()) + json.dumps(pub.certificate.to_dict()) + "".join(pub.notes)
    public += "".join(b.decode() for b in _public_files(tmp_path / "out").values())
    assert warning not in public and "of its sample (" not in public and "coarser scheme" not in public


def test_the_public_output_is_the_same_with_and_without_the_warning(tmp_path):
    """Two runs with the same seed, one above the warning threshold and one not (the threshold
    moved, the data the same): exactly the same public output and files; only the custodian
    report differs, by its warning."""
    data = crowdsafe.data.load(pl.DataFrame({"x": ["a"] * 60 + [str(i) for i in range(140)]}))
    plan = plan_publication(PlanRequest(1.0, 1e-3, k=20, beta=0.5, scheme="none"))
    runs = {}
    for threshold in (0.5, 1.0):
        runs[threshold] = publish_dataset(data, plan, RunOptions(out=tmp_path / str(threshold) / "r.csv",
                                                                 max_suppression=threshold),
                                          randomness=Randomness(2))
    warned, quiet = runs[0.5], runs[1.0]
    rate = warned.custodian_report()["releases"][0]["suppression_rate"]
    assert 0.5 < rate < 1.0 and len(warned.custodian_report()["warnings"]) == 1
    assert quiet.custodian_report()["warnings"] == []
    assert warned.notes == quiet.notes and warned.certificate == quiet.certificate
    summaries = [json.dumps(p.summary()).replace(f"/{t}/", "/") for t, p in runs.items()]
    assert summaries[0] == summaries[1]
    assert _public_files(tmp_path / "0.5") == _public_files(tmp_path / "1.0")
    assert {k: v for k, v in warned.custodian_report().items() if k != "warnings"} == \
        {k: v for k, v in quiet.custodian_report().items() if k != "warnings"}


@pytest.mark.parametrize("threshold", [-0.1, 1.5, float("nan")])
def test_a_warning_threshold_outside_0_1_is_refused(threshold):
    with pytest.raises(ParameterError, match="max_suppression is a share of the sample"):
        RunOptions(max_suppression=threshold)


def test_force_replaces_a_file_crowdsafe_did_not_write_and_nothing_else_changes(tmp_path):
    frame = pl.DataFrame({"x": [str(i) for i in range(200)]})
    options = dict(epsilon=1.0, delta=1e-3, k=20, beta=0.5, scheme="none", qi=["x"], ledger=None, seed=3)
    plain = crowdsafe.publish(frame, out=tmp_path / "plain" / "r.csv", **options)
    (tmp_path / "forced").mkdir()
    mine = tmp_path / "forced" / "r.csv"
    mine.write_text("my own table\n")
    with pytest.raises(ParameterError, match=r"r\.csv exists and crowdsafe did not write it: give force=True"):
        crowdsafe.publish(frame, out=mine, **options)
    assert mine.read_text() == "my own table\n" and sorted(p.name for p in mine.parent.iterdir()) == ["r.csv"]
    forced = crowdsafe.publish(frame, out=mine, force=True, **options)
    assert json.dumps(forced.summary()).replace("forced", "plain") == json.dumps(plain.summary())
    assert forced.custodian_report() == plain.custodian_report()
    assert _public_files(tmp_path / "forced") == _public_files(tmp_path / "plain")
    again = crowdsafe.publish(frame, out=mine, **options)  # crowdsafe's own release: replaced without force
    assert again.summary() == forced.summary()


def test_several_releases_use_fresh_samples_and_compose(adult_data, tmp_path):
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse", releases=3))
    pub = publish_dataset(adult_data, plan, RunOptions(budget=(10.0, 1e-4), out=tmp_path / "r.parquet"),
                          randomness=Randomness(4), ledger=ledger)
    assert len(pub.releases) == 3
    for i in (1, 2, 3):
        assert (tmp_path / f"r-{i}.parquet").exists() and (tmp_path / f"r-{i}.certificate.json").exists()
    combined = Certificate.read(tmp_path / "r.certificate.json")
    assert combined.guarantee == "dp" and combined.epsilon == pytest.approx(plan.total_epsilon)
    assert combined.delta == pytest.approx(3 * plan.delta)
    ids = {r.certificate.sample["release_id"] for r in pub.releases}
    assert len(ids) == 3
    assert len(set(ledger.entries()[-1].samples)) == 3
    assert not ids & set(ledger.entries()[-1].samples)  # the certificate's ids are not the ledger's


def test_an_empty_sample_publishes_an_empty_table(tmp_path):
    data = crowdsafe.data.load(pl.DataFrame({"x": ["a", "b"]}))
    plan = plan_publication(PlanRequest(1.0, 0.1, beta=0.3, k=2))
    sizes = set()
    for seed in range(6):
        pub = publish_dataset(data, plan, RunOptions(out=tmp_path / f"{seed}.csv"),
                              randomness=Randomness(seed))
        sizes.add(pub.custodian_report()["releases"][0]["sample_rows"])
        assert pub.release.rows_published == 0 and (tmp_path / f"{seed}.csv").exists()
    assert 0 in sizes


@pytest.mark.parametrize("block", [None, 1, 16, 40])
@pytest.mark.parametrize("values", [["a", "b,c", 'q"uote', None], ["line\nbreak", "x"], []])
def test_classes_written_as_csv_are_the_repeated_table_byte_for_byte(tmp_path, values, block, monkeypatch):
    """Also with a large class written in blocks of its lines (``WRITE_BLOCK``)."""
    from crowdsafe.anonymize import release

    if block is not None:
        monkeypatch.setattr(release, "WRITE_BLOCK", block)
    classes = pl.DataFrame({"v": values, "n": list(range(len(values)))}, schema={"v": pl.String, "n": pl.Int64})
    sizes = np.arange(1, len(values) + 1) * 3
    write_classes_csv(classes, sizes, tmp_path / "classes.csv")
    classes.gather(np.repeat(np.arange(len(values)), sizes)).write_csv(tmp_path / "rows.csv")
    assert (tmp_path / "classes.csv").read_bytes() == (tmp_path / "rows.csv").read_bytes()


# -- the privacy boundary (issue 16): what leaves a publication ----------------------------------


def _public(pub) -> dict:
    """Everything public a publication gives: its summary, and each certificate as JSON."""
    return {
        "summary": pub.summary(),
        "certificate": json.loads(pub.certificate.to_json()),
        "releases": [json.loads(r.certificate.to_json()) for r in pub.releases],
        "release_summaries": [r.summary() for r in pub.releases],
    }


def _without_dp_outputs(certificate: dict) -> dict:
    """A certificate's JSON without the DP output (the chosen scheme: the mechanism's output, its
    level names and the levels in words)."""
    data = json.loads(json.dumps(certificate))
    parameters = data["parameters"]
    for key in ("scheme", "scheme_level_names", "scheme_level_descriptions"):
        parameters.pop(key)
    parameters["selection"].pop("levels")
    return data


def _keys(value, prefix=""):
    if isinstance(value, dict):
        for key, inner in value.items():
            yield f"{prefix}{key}"
            yield from _keys(inner, f"{prefix}{key}.")
    elif isinstance(value, list):
        for inner in value:
            yield from _keys(inner, prefix)


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_neighbouring_tables_give_certificates_that_differ_only_in_dp_outputs(adult_data, tmp_path):
    """Adult and Adult minus its first row, published with the same seed: the certificates are
    identical up to the chosen scheme (the DP output), whatever the samples held; no field is a
    fingerprint, hash or count of the data."""
    plan = plan_publication(PlanRequest(1.0, 1e-6))
    neighbour = adult_data.with_frame(adult_data.frame.slice(1))
    runs = [publish_dataset(data, plan, randomness=Randomness(11), ledger=Ledger(tmp_path / f"{i}.sqlite3"))
            for i, data in enumerate((adult_data, neighbour))]
    full, minus = (json.loads(r.certificate.to_json()) for r in runs)
    assert _without_dp_outputs(full) == _without_dp_outputs(minus)
    assert full["sample"]["release_id"] == minus["sample"]["release_id"]
    for cert in (full, minus):
        names = " ".join(_keys(cert)).lower()
        assert not re.search(r"fingerprint|hash|digest|nodes_scored|sample_rows|rows_in|suppress", names), names
        text = json.dumps(cert)
        assert adult_data.fingerprint() not in text and neighbour.fingerprint() not in text
    # the public summaries differ only in the DP outputs too (the scheme, and rows and classes
    # counted on the release itself)
    summaries = [r.summary() for r in runs]
    for summary in summaries:
        for release in summary["releases"]:
            release.pop("dp_output")
            release["chooser"].pop("levels")
            release.pop("certificate")  # its text names the run's guarantee, equal by the test above
    assert summaries[0] == summaries[1]
    # ... while the custodian-only facts do see the missing row
    assert runs[0].custodian_report()["input_rows"] == runs[1].custodian_report()["input_rows"] + 1


def _public_summary(run) -> dict:
    """A publication's summary without the DP outputs that differ between neighbours (rows, classes)."""
    summary = run.summary()
    for release in summary["releases"]:
        release["dp_output"].pop("rows_published")
        release["dp_output"].pop("classes")
    return summary


def test_a_fixed_scheme_release_is_identical_on_neighbouring_tables_but_for_its_rows(adult_data, tmp_path):
    """Strongly safe: no DP choice, so every public field but the rows and class counts agrees."""
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    neighbour = adult_data.with_frame(adult_data.frame.slice(1))
    runs = [publish_dataset(data, plan, randomness=Randomness(3), ledger=Ledger(tmp_path / f"{i}.sqlite3"))
            for i, data in enumerate((adult_data, neighbour))]
    assert runs[0].certificate.to_json() == runs[1].certificate.to_json()
    assert _public_summary(runs[0]) == _public_summary(runs[1])


def test_whether_the_ledger_held_the_tables_budget_is_told_to_the_custodian_only(adult_data, tmp_path):
    """A ledger holds a budget for Adult; Adult and Adult minus a row are published into copies
    of it with the same seed and no budget given. Only the second registers its cost as its budget,
    and only the custodian facts say so: the public summaries agree (its note "no budget was set
    ... registered this publication's cost" was among the public notes, found by the app tour)."""
    import shutil

    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    neighbour = adult_data.with_frame(adult_data.frame.slice(1))
    held = Ledger(tmp_path / "held.sqlite3")
    held.set_budget(adult_data.fingerprint(key=held.identity_key), "adult 2025", 10.0, 1e-5)
    held.close()
    runs = []
    for i, data in enumerate((adult_data, neighbour)):
        shutil.copy2(tmp_path / "held.sqlite3", tmp_path / f"{i}.sqlite3")
        runs.append(publish_dataset(data, plan, randomness=Randomness(3), ledger=Ledger(tmp_path / f"{i}.sqlite3")))
    assert _public_summary(runs[0]) == _public_summary(runs[1])
    registered = [[w for w in r.custodian_report()["warnings"] if "no budget was set" in w] for r in runs]
    assert registered[0] == [] and len(registered[1]) == 1  # the premise: the ledger told them apart


def test_publish_without_a_ledger_is_not_fit_for_release(adult_data):
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    pub = publish_dataset(adult_data, plan, randomness=Randomness())  # secure randomness, no ledger
    cert = pub.certificate
    assert not cert.seeded and cert.randomness["fit_for_release"] is True
    assert not cert.fit_for_release and cert.accounting["ledger"] is False
    assert cert.unfit_reasons == ("no ledger: nothing records the sample's use or limits further releases",)
    assert json.loads(cert.to_json())["fit_for_release"] is False
    summary = pub.summary()
    assert summary["fit_for_release"] is False and summary["accounting"] == {"ledger": False}
    assert "NOT fit for release" in summary["guarantee"]
    assert pub.custodian_report()["ledger"] is None


def test_publish_with_a_ledger_and_secure_randomness_is_fit_for_release(adult_data, tmp_path):
    pub = publish_dataset(adult_data, plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse")),
                          randomness=Randomness(),
                          ledger=Ledger(tmp_path / "ledger.sqlite3"))
    assert pub.certificate.fit_for_release and pub.summary()["unfit_reasons"] == []


def test_no_public_field_of_a_publication_exposes_the_sample(adult_data, tmp_path):
    """The Publication's fields and its releases' fields hold no Dataset and no frame but the
    published rows; a release keeps only its published classes; the input facts are refused."""
    from dataclasses import fields

    from crowdsafe.data import Dataset

    plan = plan_publication(PlanRequest(1.0, 1e-6))
    pub = publish_dataset(adult_data, plan, randomness=Randomness(8), ledger=Ledger(tmp_path / "l.sqlite3"))
    facts = pub.custodian_report()["releases"][0]
    assert facts["suppressed_rows"] > 0  # something was suppressed, so the sample had rows the release lacks

    def public_values(obj):
        for f in fields(obj):
            if not f.name.startswith("_"):
                yield f.name, getattr(obj, f.name)

    for name, value in public_values(pub):
        assert not isinstance(value, (Dataset, pl.DataFrame)), name
    release = pub.release
    for name, value in public_values(release):
        assert not isinstance(value, Dataset), name
    assert release.source is None
    applied = release.applied
    assert applied.class_kept.all() and applied.rows_published == release.rows_published == release.frame.height
    assert applied.rows_published == facts["sample_rows"] - facts["suppressed_rows"]
    for attribute in ("rows_in", "rows_suppressed"):
        with pytest.raises(ParameterError, match="custodian-only"):
            getattr(release, attribute)
    # nor does ``release.applied`` (a notebook's tab completion offers it) say them: it read the
    # published rows as the rows in, so 0 suppressed, where the sample lost rows
    for attribute in ("rows_in", "rows_suppressed", "suppression_rate"):
        with pytest.raises(ParameterError, match="custodian-only"):
            getattr(applied, attribute)
    with pytest.raises(ParameterError, match="custodian-only"):
        release.utility()
    assert pub.choices[0].scored is None and "nodes_scored" not in pub.choices[0].describe()
    assert facts["nodes_scored"] > 0
    # nothing in the public summary is a count on the sample
    names = set(_keys(pub.summary()))
    assert not names & {"sample_rows", "suppressed_rows", "suppression_rate", "rows", "expected_sample_rows",
                        "ledger", "input_rows", "nodes_scored"}


def test_the_custodian_report_is_apart_and_never_beside_the_release(adult_data, tmp_path):
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    for path in (tmp_path / "out" / "custodian.json", tmp_path / "out" / "r.csv" / "x.json",
                 tmp_path / "out" / "sub" / "custodian.json"):
        with pytest.raises(ParameterError, match="in the release's folder"):
            publish_dataset(adult_data, plan, RunOptions(out=tmp_path / "out" / "r.csv", custodian_report=path),
                            randomness=Randomness(1), ledger=ledger)
    assert ledger.entries() == []  # refused before the charge
    report = tmp_path / "private" / "custodian.json"
    pub = publish_dataset(adult_data, plan, RunOptions(out=tmp_path / "out" / "r.csv", custodian_report=report),
                          randomness=Randomness(1), ledger=ledger)
    assert report.read_text().startswith('{\n  "written_by": "crowdsafe",\n')  # the mark: replaced on a rerun
    written = json.loads(report.read_text())
    assert written.pop("written_by") == "crowdsafe"
    assert written == json.loads(json.dumps(pub.custodian_report(), default=str))
    assert written["notice"].startswith("CUSTODIAN ONLY") and written["input_rows"] == adult_data.n_rows
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["r.certificate.json", "r.csv", "r.report.html"]
    entry = ledger.entries()[-1]
    assert entry.outcome["custodian_report"]["releases"] == written["releases"]
    sample_rows = written["releases"][0]["sample_rows"]
    assert sample_rows == written["releases"][0]["suppressed_rows"] + pub.release.rows_published


def test_identical_fresh_samples_are_no_reason_to_stop(tmp_path):
    """Two fresh samples of a one-row table are often equal (both empty, or both the row): the
    run goes on, the charge is made, and the ledger records the repeated identity once."""
    data = crowdsafe.data.load(pl.DataFrame({"x": ["a"]}))
    plan = plan_publication(PlanRequest(1.0, 0.1, beta=0.3, k=2, releases=3, scheme="none"))
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    pub = publish_dataset(data, plan, RunOptions(budget=(10.0, 0.9)),
                          randomness=Randomness(0), ledger=ledger)
    sizes = [r["sample_rows"] for r in pub.custodian_report()["releases"]]
    assert len(set(sizes)) < len(sizes)  # two samples came out identical
    samples = ledger.entries()[-1].samples
    assert len(samples) == len(set(samples)) == len(set(sizes))  # each identity recorded once


def test_a_lattice_whose_keys_pass_64_bits_is_scored_not_refused(tmp_path):
    """Key widths come from the hierarchies' leaf counts, which for a column without a declared
    hierarchy are the data's number of values: a refusal on them would depend on the data, so wide
    keys are scored exactly (Python integers) and the run goes through like any other."""
    columns = {f"c{i}": [str(j) for j in range(300)] for i in range(8)}  # 8 x 9 bits > 62
    data = crowdsafe.data.load(pl.DataFrame(columns))
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    publication = publish_dataset(data, plan_publication(PlanRequest(1.0, 1e-3)), RunOptions(max_suppression=1.0),
                                  randomness=Randomness(1), ledger=ledger)
    assert len(ledger.entries()) == 1
    assert set(publication.release.recoding.levels) == set(columns)


def test_reordered_rows_or_another_file_name_give_no_fresh_budget(adult_data, tmp_path):
    """The ledger names a table by a keyed digest of its rows as a multiset: the same rows in
    another order, saved under another name, are the same dataset with the same spent budget."""
    ledger = Ledger(tmp_path / "ledger.sqlite3")
    plan = plan_publication(PlanRequest(1.0, 1e-6, scheme="coarse"))
    publish_dataset(adult_data, plan, RunOptions(budget=(1.5, 1e-5)), randomness=Randomness(4), ledger=ledger)
    shuffled = adult_data.frame.sample(fraction=1.0, shuffle=True, seed=11)
    shuffled.write_parquet(tmp_path / "renamed.parquet")
    again = crowdsafe.data.load(tmp_path / "renamed.parquet", schema=adult_data.schema)
    again = again.with_hierarchies(adult_data.hierarchies)
    with pytest.raises(crowdsafe.errors.BudgetExceeded):
        publish_dataset(again, plan, RunOptions(name="renamed"), randomness=Randomness(5), ledger=ledger)
    assert len(ledger.entries()) == 1


@pytest.mark.parametrize("seed", [5, None])
def test_the_combined_certificate_of_several_releases_says_whether_they_were_seeded(tmp_path, seed):
    frame = pl.DataFrame({"x": [str(i % 10) for i in range(1000)]})
    ledger = tmp_path / "ledger.sqlite3"
    pub = crowdsafe.publish(frame, epsilon=1.0, delta=1e-3, k=20, beta=0.5, scheme="none", qi=["x"], releases=2,
                            seed=seed, ledger=ledger, budget=(5.0, 1e-2), out=tmp_path / "r.csv", report=False)
    seeded = seed is not None
    assert [c.seeded for c in pub.certificate.components] == [seeded, seeded]
    assert pub.certificate.seeded is seeded
    written = json.loads((tmp_path / "r.certificate.json").read_text(encoding="utf-8"))
    assert written["seeded"] is seeded and written["randomness"]["seeded"] is seeded
    assert any(r.startswith("seeded randomness") for r in written["unfit_reasons"]) is seeded
    if seeded:
        assert written["fit_for_release"] is False
    assert Ledger(ledger).entries()[-1].seeded is seeded
