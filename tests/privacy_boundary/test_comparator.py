"""The comparator of the neighbouring-input test can fail: leaky artifacts are caught, with the
JSON path of each leaking field, and declared DP outputs and labelled custodian-only parts are
let through."""

from __future__ import annotations

import pytest
from boundary_data import write_inputs
from boundary_helpers import Classification, differences, digests_of, judge, matches


@pytest.fixture(scope="module")
def neighbours(base_frame, tmp_path_factory):
    """D and D minus its first row as loaded Datasets."""
    from crowdsafe.data import load

    out = []
    for name, frame in (("D", base_frame), ("D-1", base_frame.slice(1))):
        directory = tmp_path_factory.mktemp(name)
        write_inputs(directory, frame)
        out.append(load(str(directory / "data.parquet"), schema=str(directory / "schema.toml")))
    return out


@pytest.fixture(scope="module")
def certificates(neighbours, tmp_path_factory):
    """The real certificates of a seeded fixed-scheme publish on D and on D-1 (fresh ledgers)."""
    from crowdsafe import api

    return [api.publish(d, epsilon=1.0, delta=1e-3, scheme="medium", seed=7, budget=(20.0, 1e-2),
                        ledger=str(tmp_path_factory.mktemp("ledger") / "ledger.sqlite3")).certificate.to_dict()
            for d in neighbours]


def _clean(certificate: dict) -> dict:
    """The certificate without the fields issue 16 removes (so the planted leak is the only one)."""
    certificate = {k: v for k, v in certificate.items() if k != "input_fingerprint"}
    if certificate.get("sample"):
        certificate["sample"] = {k: v for k, v in certificate["sample"].items() if k in ("rate", "release_id")}
    if isinstance(certificate.get("parameters", {}).get("selection"), dict):
        certificate["parameters"]["selection"].pop("nodes_scored", None)
    return certificate


def test_a_certificate_carrying_an_input_fingerprint_is_caught(neighbours, certificates):
    left, right = (_clean(c) for c in certificates)
    assert not judge(left, right, Classification()).leaks  # the planted field is the only difference
    left["input_fingerprint"] = neighbours[0].fingerprint()
    right["input_fingerprint"] = neighbours[1].fingerprint()
    digests = digests_of(neighbours[0]) + digests_of(neighbours[1])
    verdict = judge({"certificate": left}, {"certificate": right}, Classification(), digests)
    paths = {(d.path, d.why) for d in verdict.leaks}
    assert ("certificate.input_fingerprint", "value differs") in paths
    assert ("certificate.input_fingerprint", "a digest of the input data") in paths


def test_a_digest_is_caught_even_where_it_does_not_differ_or_sits_at_a_dp_output(neighbours):
    """A keyed or unkeyed digest equal on both sides (e.g. of a shared column) is still caught when
    it equals a digest of the input; a hex string that differs is caught even at a DP-output path."""
    digest = neighbours[0].fingerprint()
    verdict = judge({"note": f"input {digest}"}, {"note": f"input {digest}"}, Classification(), [digest])
    assert [d.path for d in verdict.leaks] == ["note"]
    verdict = judge({"value": "ab" * 16}, {"value": "cd" * 16}, Classification(dp_outputs=("value",)))
    assert [d.why for d in verdict.leaks] == ["a hex string (12+ chars) that depends on the data"]
    # a digest cut short (a refusal once printed 16 characters of a keyed identity)
    verdict = judge({"error": "no budget for '7f7333f7989a8b02'"}, {"error": "no budget for 'dd366ea9d7cc2953'"},
                    Classification())
    assert any("hex string" in d.why for d in verdict.leaks)
    verdict = judge({"note": f"input {digest[:16]}"}, {"note": f"input {digest[:16]}"}, Classification(), [digest])
    assert [d.why for d in verdict.leaks] == ["a digest of the input data"]


def test_an_exact_sample_size_in_a_public_summary_is_caught_and_allowed_only_when_labelled(neighbours):
    left = {"plan": {"k": 10}, "releases": [{"rows_published": 900, "classes": 12}],
            "sample_rows": neighbours[0].n_rows}
    right = {"plan": {"k": 10}, "releases": [{"rows_published": 880, "classes": 12}],
             "sample_rows": neighbours[1].n_rows}
    declared = Classification(dp_outputs=("releases[*].rows_published", "releases[*].classes"),
                              custodian_only=("**sample_rows",))
    leaks = judge(left, right, declared).leaks
    assert [d.path for d in leaks] == ["sample_rows"]
    assert "not in a part labelled custodian-only" in leaks[0].why
    for side in (left, right):
        side["for_custodian_only"] = {"sample_rows": side.pop("sample_rows")}
    assert not judge(left, right, declared).leaks
    # undeclared, the DP output itself is a leak: the declaration is what lets it through
    assert [d.path for d in judge(left, right, Classification(custodian_only=("**sample_rows",))).leaks] == [
        "releases[0].rows_published"]


def test_a_new_field_or_a_changed_length_is_reported_at_its_path():
    left = {"a": {"b": [1, 2, 3]}, "c": 1}
    right = {"a": {"b": [1, 2]}, "c": 1, "suppression_rate": 0.4}
    found = {(d.path, d.why) for d in differences(left, right)}
    assert found == {("a.b", "length differs"), ("suppression_rate", "present on one side only")}


def test_printed_lines_only_dp_lines_or_lines_labelled_for_the_custodian_may_differ():
    declared = Classification(dp_lines=(r"^  published ",))
    left = {"stdout": ["plan", "  published 10 rows", "  utility 12% suppressed [for the custodian only]",
                       "  expected 1,896 rows of 3,000"]}
    right = {"stdout": ["plan", "  published 11 rows", "  utility 13% suppressed [for the custodian only]",
                        "  expected 1,896 rows of 2,999"]}
    assert [d.path for d in judge(left, right, declared).leaks] == ["stdout[3]"]


def test_path_patterns():
    assert matches("releases[2].rows_published", ["releases[*].rows_published"])
    assert not matches("releases[2].rows_in", ["releases[*].rows_published"])
    assert matches("files.out/r.certificate.json.parameters.scheme.age", ["**parameters.scheme.*"])
    assert not matches("a.parameters.scheme.age.extra", ["**parameters.scheme.*"])
    assert matches("for_custodian_only.utility.ncp", ["**custodian**"])


def test_a_keyed_identity_may_sit_in_a_custodian_part_but_a_plain_digest_nowhere(neighbours):
    keyed = [d.fingerprint(key=bytes(32)) for d in neighbours]
    plain = [d.fingerprint() for d in neighbours]
    left = {"custodian_only": {"ledger": {"dataset_identity": keyed[0]}}}
    right = {"custodian_only": {"ledger": {"dataset_identity": keyed[1]}}}
    declared = Classification(custodian_only=("**custodian**",))
    assert not judge(left, right, declared, plain).leaks
    left["custodian_only"]["ledger"]["dataset_identity"] = plain[0]
    right["custodian_only"]["ledger"]["dataset_identity"] = plain[1]
    assert [d.why for d in judge(left, right, declared, plain).leaks] == ["a digest of the input data"]
