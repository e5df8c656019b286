"""Certificates: derived from profiles, stable versioned JSON, the DPS composition caveat."""

from __future__ import annotations

import json
import math
import re

import pytest

from crowdsafe import Randomness, __version__
from crowdsafe.errors import InputError, ParameterError, SampleReuseError
from crowdsafe.privacy import (
    Certificate,
    MechanismProfile,
    PrivacyLoss,
    RecodingProfile,
    SamplingProfile,
    SuppressionProfile,
    amplify,
    certify_chain,
    certify_k_anonymization,
    certify_mechanism,
    compose_certificates,
    dps_delta,
    no_guarantee,
)

SAFE = RecodingProfile.strongly_safe()
SECURE = Randomness()


def dps(sample_id: str, randomness=SECURE, **kw) -> Certificate:
    return certify_k_anonymization(
        sampling=SamplingProfile(0.2, sample_id), recoding=SAFE, k=20, epsilon=1.0,
        randomness=randomness, **kw,
    )


def laplace(eps: float = 0.1) -> MechanismProfile:
    return MechanismProfile("Laplace count", PrivacyLoss(eps), "Laplace mechanism (Dwork et al. 2006)",
                            {"sensitivity": 1})


def test_strongly_safe_certificate_states_everything():
    cert = dps("s1")
    assert cert.guarantee == "dps"
    assert cert.epsilon == 1.0 and cert.delta == dps_delta(20, 0.2, 1.0)
    assert "Theorem 5" in cert.theorem
    assert cert.parameters["k"] == 20 and cert.parameters["beta"] == 0.2
    assert cert.sample == {"release_id": "s1", "rate": 0.2}
    assert any("no other release" in a for a in cert.assumptions)
    assert [m["step"] for m in cert.mechanisms] == ["sample", "recode", "suppress"]
    assert cert.fit_for_release and not cert.seeded
    assert cert.crowdsafe_version == __version__
    assert "input_fingerprint" not in cert.to_dict()


def test_epsilon_safe_certificate_uses_theorem_6():
    cert = certify_k_anonymization(
        sampling=0.2, recoding=RecodingProfile.epsilon_safe(0.1), k=20, epsilon=1.1,
        randomness=SECURE,
    )
    assert "Theorem 6" in cert.theorem
    assert cert.delta == dps_delta(20, 0.2, 1.0)
    assert cert.parameters["epsilon1"] == 0.1 and cert.sample["release_id"].startswith("sample-")


def test_certify_at_a_delta_finds_the_least_epsilon():
    cert = certify_k_anonymization(sampling=0.2, recoding=SAFE, k=20, delta=1e-6, randomness=SECURE)
    assert cert.delta <= 1e-6
    with pytest.raises(ParameterError, match="exceeds the requested"):
        certify_k_anonymization(sampling=0.2, recoding=SAFE, k=20, epsilon=0.5, delta=1e-9,
                                randomness=SECURE)


def test_seeded_run_is_not_fit_for_release():
    cert = dps("s1", randomness=Randomness(seed=7))
    assert cert.seeded and not cert.fit_for_release
    data = json.loads(cert.to_json())
    assert data["fit_for_release"] is False and data["randomness"]["seeded"] is True
    assert "NOT fit for release" in cert.summary()
    assert data["unfit_reasons"] and data["unfit_reasons"][0].startswith("seeded randomness")


def test_a_run_no_ledger_recorded_is_not_fit_for_release():
    recorded = dps("s1", accounting={"ledger": True})
    unrecorded = dps("s1", accounting={"ledger": False})
    assert recorded.fit_for_release and recorded.unfit_reasons == ()
    assert not unrecorded.fit_for_release
    assert unrecorded.unfit_reasons == ("no ledger: nothing records the sample's use or limits further releases",)
    data = json.loads(unrecorded.to_json())
    assert data["fit_for_release"] is False and data["accounting"] == {"ledger": False}
    assert "no ledger: NOT fit for release" in unrecorded.summary()
    assert Certificate.from_json(unrecorded.to_json()) == unrecorded
    both = dps("s2", randomness=Randomness(seed=3), accounting={"ledger": False})
    assert len(both.unfit_reasons) == 2
    assert not compose_certificates([recorded, dps("s3", accounting={"ledger": False})]).fit_for_release
    with pytest.raises(ParameterError, match="accounting"):
        dps("s4", accounting={"ledger": "yes"})


def test_unsafe_recoding_has_no_guarantee_with_reason():
    cert = certify_k_anonymization(sampling=0.2, recoding=RecodingProfile.unsafe("Mondrian"), k=20,
                                   epsilon=1.0)
    assert cert.guarantee == "none" and cert.epsilon is None
    assert cert.reason == "data-dependent recoding (Mondrian)"
    assert cert.summary() == "no formal guarantee: data-dependent recoding (Mondrian)"
    assert not cert.fit_for_release and cert.to_dict()["fit_for_release"] is False
    assert any(r.startswith("no formal guarantee") for r in cert.unfit_reasons)


def test_no_sampling_has_no_guarantee():
    cert = certify_k_anonymization(sampling=None, recoding=SAFE, k=20, epsilon=1.0)
    assert cert.guarantee == "none" and "beta = 1" in cert.reason


def test_delta_not_below_beta_has_no_guarantee():
    cert = certify_k_anonymization(sampling=0.5, recoding=SAFE, k=1, epsilon=1.0, randomness=SECURE)
    assert cert.guarantee == "none" and "beta > delta" in cert.reason


def test_sampled_release_needs_its_randomness():
    with pytest.raises(ParameterError, match="Randomness"):
        certify_k_anonymization(sampling=0.2, recoding=SAFE, k=20, epsilon=1.0)


def test_change_neighbours_use_group_privacy():
    add_remove = dps("s1")
    change = dps("s2", neighbours="change")
    assert change.epsilon == pytest.approx(2 * add_remove.epsilon)
    assert change.delta == pytest.approx((1 + math.e) * add_remove.delta)
    assert "group privacy" in change.theorem


def test_json_is_stable_sorted_and_round_trips(tmp_path):
    cert = dps("s1")
    text = cert.to_json()
    assert text == cert.to_json()
    data = json.loads(text)
    assert list(data) == sorted(data)
    assert data["format"] == "crowdsafe-certificate" and data["version"] == 2
    assert Certificate.from_json(text) == cert
    path = cert.write(tmp_path / "out" / "release.certificate.json")
    assert Certificate.read(path) == cert
    assert not [p for p in path.parent.iterdir() if p.name.endswith(".tmp")]


def test_write_goes_through_the_output_guard(tmp_path, private_ledger):
    """Certificate.write overwrote any file, the input table included; it is checked as
    Release.write and View.write check theirs (crowdsafe.output_guard)."""
    from crowdsafe.privacy.ledger import Ledger

    cert = dps("s1")
    data = tmp_path / "people.csv"
    data.write_text("age,sex\n30,F\n", encoding="utf-8")
    with pytest.raises(ParameterError, match="force=True"):
        cert.write(data)
    assert data.read_text(encoding="utf-8") == "age,sex\n30,F\n"
    assert Certificate.read(cert.write(data, force=True)) == cert  # the caller's choice
    with Ledger(private_ledger):  # the configured ledger: never, even with force
        pass
    for forced in (False, True):
        with pytest.raises(ParameterError, match="ledger"):
            cert.write(private_ledger, force=forced)
    assert private_ledger.read_bytes().startswith(b"SQLite format 3")
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(ParameterError, match="folder"):
        cert.write(folder, force=True)
    # its own certificate is replaced without force, as a rerun replaces it
    path = cert.write(tmp_path / "release.certificate.json")
    assert Certificate.read(cert.write(path)) == cert


def test_reader_reads_version_1_and_ignores_its_input_fingerprint():
    cert = dps("s1")
    data = json.loads(cert.to_json())
    data.update(version=1, input_fingerprint="ab" * 32, sample={"id": "sample-1f", "rate": 0.2})
    del data["accounting"]
    old = Certificate.from_dict(data)
    assert old.release_id == "sample-1f" and old.accounting is None
    assert old.epsilon == cert.epsilon and old.delta == cert.delta
    assert "input_fingerprint" not in old.to_dict() and old.to_dict()["version"] == 2


def test_format_notes_round_trip_and_older_version_2_files_are_read():
    from crowdsafe.csv_safety import ESCAPED_CSV_NOTE, RAW_CSV_NOTE, format_note

    cert = dps("s1")
    assert cert.format_notes == () and cert.to_dict()["format_notes"] == []
    noted = cert.with_format_notes(format_note("r.csv"), None)
    assert noted.format_notes == (ESCAPED_CSV_NOTE,)
    assert Certificate.from_json(noted.to_json()) == noted
    assert cert.with_format_notes(format_note("r.csv", escape_formulas=False)).format_notes == (RAW_CSV_NOTE,)
    assert noted.epsilon == cert.epsilon and noted.summary() == cert.summary()
    data = json.loads(cert.to_json())
    del data["format_notes"]  # a version 2 file written before the notes existed
    assert Certificate.from_dict(data) == cert


def test_unreviewed_schema_choices_make_a_release_unfit_and_round_trip():
    """A schema draft's ``from_data`` markers on a column the release used: one reason per column,
    naming it and what was read; written as version 3 so an older reader refuses the file rather
    than drop the reason; read back with the same reasons, kept through composition."""
    cert = dps("s1")
    marked = cert.with_unreviewed_schema({"zip": ["hierarchy mask depth"], "city": ("hierarchy groups",)})
    assert cert.fit_for_release and not marked.fit_for_release
    assert list(marked.unreviewed_schema) == ["city", "zip"]  # sorted, as the JSON form reads back
    assert marked.unfit_reasons == (
        "unreviewed schema draft: column 'city': hierarchy groups read from the data, not marked reviewed "
        "(check it is public, then delete the column's from_data line in the schema)",
        "unreviewed schema draft: column 'zip': hierarchy mask depth read from the data, not marked reviewed "
        "(check it is public, then delete the column's from_data line in the schema)")
    assert marked.summary().endswith("(unreviewed schema draft: NOT fit for release)")
    data = json.loads(marked.to_json())
    assert data["version"] == 3 and data["unreviewed_schema"] == {"city": ["hierarchy groups"],
                                                                   "zip": ["hierarchy mask depth"]}
    assert Certificate.from_json(marked.to_json()) == marked
    assert "unreviewed_schema" not in cert.to_dict() and cert.to_dict()["version"] == 2
    assert cert.with_unreviewed_schema({}) == cert
    total = compose_certificates([marked, dps("s2")])
    assert total.unfit_reasons == marked.unfit_reasons
    for bad in ({"zip": []}, {"zip": "hierarchy"}, {"zip": [""]}, ["zip"]):
        with pytest.raises(ParameterError, match="unreviewed_schema"):
            cert.with_unreviewed_schema(bad)  # type: ignore[arg-type]


def test_reader_refuses_other_versions_and_non_certificates():
    data = json.loads(dps("s1").to_json())
    data["version"] = 4
    with pytest.raises(InputError, match="version 4 is not supported"):
        Certificate.from_dict(data)
    with pytest.raises(InputError, match="not a crowdsafe certificate"):
        Certificate.from_json("{}")
    with pytest.raises(InputError, match="not valid JSON"):
        Certificate.from_json("{")
    del data["theorem"]
    data["version"] = 1
    with pytest.raises(InputError, match="missing the field 'theorem'"):
        Certificate.from_dict(data)


def test_reader_refuses_fields_of_the_wrong_type_naming_the_first():
    """Every field is checked for its JSON type before the values are (each reader, the report's
    too, gets a one-line InputError instead of a crash later); optional fields may be null."""
    good = json.loads(dps("s1").to_json())
    for key, value, words in (("epsilon", "x", "'epsilon' must be a number or null, got 'x'"),
                              ("delta", [1], "'delta' must be a number or null, got [1]"),
                              ("format_notes", 5, "'format_notes' must be a list of strings or null, got 5"),
                              ("assumptions", "one", "'assumptions' must be a list of strings, got 'one'"),
                              ("components", [1], "'components' must be a list of objects, got [1]"),
                              ("version", True, "version True is not supported")):
        with pytest.raises(InputError, match=re.escape(words)):
            Certificate.from_dict({**good, key: value})
    with pytest.raises(InputError, match="missing the field 'version'"):
        Certificate.from_json('{"format": "crowdsafe-certificate"}')
    bad_first = {**good, "epsilon": "x", "format_notes": 5}
    with pytest.raises(InputError, match="'epsilon'"):
        Certificate.from_dict(bad_first)
    nulls = {**good, "format_notes": None, "unreviewed_schema": None, "unfit_reasons": None, "seeded": None}
    assert Certificate.from_dict(nulls) == Certificate.from_dict(good)


def test_failed_write_leaves_nothing(tmp_path):
    (tmp_path / "taken").mkdir()
    with pytest.raises(ParameterError, match="is a folder"):  # the output guard's refusal, before any write
        dps("s1").write(tmp_path / "taken")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_invalid_certificates_are_refused():
    with pytest.raises(ParameterError, match="needs its reason"):
        Certificate("none", None, None, None, (), {}, ())
    with pytest.raises(ParameterError, match="name its theorem"):
        Certificate("dp", 1.0, 0.0, None, (), {}, ())
    with pytest.raises(ParameterError, match="name its sample"):
        Certificate("dps", 1.0, 1e-9, "t", (), {}, ())
    with pytest.raises(ParameterError):
        Certificate("dp", -1.0, 0.0, "t", (), {}, ())


def test_dps_release_refuses_a_second_use_of_its_sample():
    with pytest.raises(SampleReuseError, match="same sample|use sample s1"):
        compose_certificates([dps("s1"), dps("s1")])


def test_dp_query_on_the_same_sample_is_refused():
    query = certify_mechanism(laplace(), sampling=SamplingProfile(0.2, "s1"), randomness=SECURE)
    with pytest.raises(SampleReuseError):
        compose_certificates([dps("s1"), query])


def test_fresh_samples_compose_as_dp():
    total = compose_certificates([dps("a"), dps("b"), dps("c")])
    one = dps("x")
    assert total.guarantee == "dp"
    assert total.epsilon == pytest.approx(3 * one.epsilon)
    assert total.delta == pytest.approx(3 * one.delta)
    assert len(total.components) == 3
    assert Certificate.from_json(total.to_json()) == total


def test_fresh_samples_use_the_best_bound_with_slack():
    releases = [dps(f"s{i}") for i in range(50)]
    total = compose_certificates(releases, delta_slack=1e-6)
    assert total.parameters["bound"] == "kov"
    assert total.epsilon < 50 * releases[0].epsilon


def test_dp_query_on_the_full_data_composes_with_a_dps_release():
    query = certify_mechanism(laplace(0.5), randomness=SECURE)
    total = compose_certificates([dps("s1"), query])
    assert total.epsilon == pytest.approx(1.5)


def test_a_release_without_guarantee_makes_the_whole_none():
    mondrian = no_guarantee("data-dependent recoding (Mondrian)")
    total = compose_certificates([dps("s1"), mondrian])
    assert total.guarantee == "none" and "release 2" in total.reason


def test_seeded_component_makes_the_composition_unfit():
    total = compose_certificates([dps("a"), dps("b", randomness=Randomness(seed=1))])
    assert not total.fit_for_release
    assert total.seeded and total.to_dict()["seeded"] is True
    assert total.randomness is not None and total.randomness["seeded"] is True
    assert total.randomness["fit_for_release"] is False


def test_the_composition_states_the_randomness_its_releases_ran_with():
    seeded = compose_certificates([dps("a", randomness=Randomness(seed=5)), dps("b", randomness=Randomness(seed=5))])
    data = json.loads(seeded.to_json())
    assert data["seeded"] is True and data["fit_for_release"] is False
    assert data["randomness"] == {"source": "ChaCha20, seeded", "seeded": True, "reproducible": True,
                                  "fit_for_release": False}
    assert Certificate.from_json(seeded.to_json()).seeded
    secure = compose_certificates([dps("c"), dps("d")])
    assert not secure.seeded and secure.randomness == {"source": "ChaCha20 keyed from the OS CSPRNG",
                                                       "seeded": False, "reproducible": False,
                                                       "fit_for_release": True}
    assert secure.fit_for_release
    mondrian = no_guarantee("data-dependent recoding (Mondrian)")
    assert compose_certificates([dps("e", randomness=Randomness(seed=2)), mondrian]).seeded
    assert compose_certificates([mondrian, mondrian]).randomness is None


def test_a_composed_certificate_without_its_own_randomness_is_seeded_when_a_component_is():
    total = compose_certificates([dps("a"), dps("b", randomness=Randomness(seed=1))])
    data = total.to_dict()
    data["randomness"] = None  # as written before the composition carried it
    assert Certificate.from_dict(data).seeded


def test_chain_of_profiles():
    cert = certify_chain(
        [SamplingProfile(0.2, "s9"), SAFE, SuppressionProfile(20)], epsilon=1.0, randomness=SECURE
    )
    assert cert.guarantee == "dps" and cert.delta == dps_delta(20, 0.2, 1.0)
    none = certify_chain([RecodingProfile.unsafe("MDAV microaggregation"), SuppressionProfile(5)])
    assert none.reason == "data-dependent recoding (MDAV microaggregation)"


def test_chain_amplifies_the_composed_mechanisms_once():
    cert = certify_chain([SamplingProfile(0.1), laplace(0.3), laplace(0.7)], randomness=SECURE)
    expected = amplify(PrivacyLoss(1.0), 0.1)
    assert cert.guarantee == "dps"
    assert cert.epsilon == pytest.approx(expected.epsilon)
    # Amplifying each query separately and summing would claim less than this: unsound.
    separately = amplify(PrivacyLoss(0.3), 0.1).epsilon + amplify(PrivacyLoss(0.7), 0.1).epsilon
    assert separately < cert.epsilon


@pytest.mark.parametrize(
    "chain, message",
    [
        ([], "empty chain"),
        ([SuppressionProfile(5)], "needs the recoding"),
        ([SAFE, SamplingProfile(0.2)], "first step"),
        ([SamplingProfile(0.2), SAFE, laplace()], "mixes a recoding"),
        (["sample"], "not a privacy profile"),
    ],
)
def test_bad_chains(chain, message):
    with pytest.raises(ParameterError, match=message):
        certify_chain(chain, epsilon=1.0, randomness=SECURE)


def test_recoding_profile_validation():
    with pytest.raises(ParameterError, match="epsilon1 > 0"):
        RecodingProfile("epsilon-safe", "x")
    with pytest.raises(ParameterError, match="no selection budget"):
        RecodingProfile("strongly-safe", "x", 0.1)
    with pytest.raises(ParameterError, match="must be strongly-safe"):
        RecodingProfile("safe", "x")  # type: ignore[arg-type]
