"""The arguments the public functions share (crowdsafe.arguments), found by an API sweep:

- a string where a list of column names is expected was split into characters (``qi="sex"``:
  "unknown attribute 's'"; ``plan_publish(columns="age")`` planned ('a', 'g', 'e')); one name is
  now the list of that name, everywhere, and a list of non-strings is refused in one line;
- ``anonymize(sensitive=[...])`` crashed (unhashable list) where check and publish took a list;
- ``query("adult", ["count"])`` and ``estimate(view, 5)`` crashed deep inside;
- a misspelled or missing keyword of ``**options`` named an internal class
  (``AnonymizeRequest.__init__() got an unexpected keyword argument``);
- ``schema={"age": "numeric"}`` raised "'dict' object has no attribute 'decimal_comma'" from inside
  the reader;
- ``ledger=5`` raised pathlib's "expected str, bytes or os.PathLike object, not int";
- ``attack(sensitive=["job"])`` raised "unhashable type: 'list'" from inside the attack, where
  check, publish and anonymize take a list;
- ``estimate(perturb(...), query)`` raised pathlib's "expected str, bytes or os.PathLike object, not
  Perturbation": it estimates from the Perturbation's view;
- one parameter, two names: ``check(k=5)`` (``crowdsafe check --k``, ``compare(k=)``) raised
  "unexpected keyword argument 'k'" (it was ``target_k``), and ``query(seed=1)`` (``publish(seed=)``,
  ``perturb(seed=)``, ``crowdsafe query --seed``) raised it too (it was ``randomness``, whose refusal
  said "seed must be a whole number"); both take the common name, and the older one still;
- ``Schema.of(types, identifiers="pid")`` split the name into characters ("names unknown attribute
  'p'"), and ``Schema.of(["age", "sex"])`` raised "'list' object has no attribute 'items'";
- the same split in the model layer and the data layer: ``crowdsafe.models.k_anonymity(frame,
  qi="age")`` (and every model), ``assess(dataset, qi="age")``, ``Schema.select("age")``,
  ``Schema.with_role("age", ...)``, ``Dataset.select("age")``, ``encode`` and ``frequency_table``
  read 'a', 'g', 'e'; and in the metrics and attacks layers: ``information_loss``, ``utility``, ``marginal_distances``,
  ``FullDomainScorer.from_dataset``, ``intersection_attack`` and ``linkage_attack``;
- ``check(k="5")`` and ``check(threshold="0.2")`` raised a TypeError from a comparison inside, and
  ``check(k=2.5)``, ``k=True`` and ``population_size="1000"`` (or ``1000.5``, read as 1000) were taken;
  so with ``compare``: ``queries="100"`` and ``max_attributes="2"`` raised a TypeError, ``k="5"``,
  ``k=2.5`` and ``input_rows="10"`` were taken;
- ``publish(epsilon1="0.1")`` raised a TypeError from a comparison inside, and
  ``attack(levels=0.5)`` "'float' object is not iterable": one level is the list of that level.
"""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.data import Schema, encode, frequency_table, load
from crowdsafe.errors import ParameterError

FRAME = pl.DataFrame({
    "age": [30, 31, 32, 40, 41, 42, 50, 51] * 3,
    "sex": ["F", "M"] * 12,
    "job": ["x", "y", "z", "x", "y", "z", "x", "y"] * 3,
})


def test_one_qi_name_is_a_list_of_one():
    assert api.check(FRAME, qi="sex").quasi_identifiers == api.check(FRAME, qi=["sex"]).quasi_identifiers == ["sex"]
    assert api.anonymize(FRAME, k=2, qi="sex", report=False).frame.equals(
        api.anonymize(FRAME, k=2, qi=["sex"], report=False).frame)
    assert api.compare(FRAME, FRAME, qi="age").quasi_identifiers == ["age"]


def test_one_column_name_is_planned_and_published_as_itself():
    assert api.plan_publish(1.0, columns="age").columns == ("age",)
    publication = api.publish(FRAME, epsilon=1.0, columns="age", qi="age", ledger=None, seed=1, report=False)
    assert publication.release.frame.columns == ["age"]


def test_anonymize_takes_a_list_of_sensitive_attributes_as_check_does():
    by_list = api.anonymize(FRAME, k=2, qi=["age", "sex"], sensitive=["job"], l=1.5, report=False)
    by_name = api.anonymize(FRAME, k=2, qi=["age", "sex"], sensitive="job", l=1.5, report=False)
    assert by_list.frame.equals(by_name.frame)


def test_one_attribute_is_perturbed_as_a_list_of_one():
    one = api.plan_perturbation(FRAME, attributes="job", gamma=0.5, d=0.3, exploratory=True)
    listed = api.plan_perturbation(FRAME, attributes=["job"], gamma=0.5, d=0.3, exploratory=True)
    assert one.as_dict() == listed.as_dict()


def test_one_release_path_is_attacked_as_a_list_of_one(tmp_path):
    path = tmp_path / "r.csv"
    api.anonymize(FRAME, k=2, qi=["age", "sex"], out=path, report=False)
    kwargs = {"qi": ["age", "sex"], "sensitive": "job"}
    assert api.attack(str(path), FRAME, **kwargs).as_dict() == api.attack([str(path)], FRAME, **kwargs).as_dict()


def test_one_identifier_is_declared_as_a_list_of_one():
    types = {"age": "integer", "pid": "integer"}
    assert Schema.of(types, identifiers="pid") == Schema.of(types, identifiers=["pid"])
    assert Schema.of(types, identifiers="pid").identifiers == ["pid"]


def test_one_name_is_a_list_of_one_in_the_model_and_data_layers():
    from crowdsafe import models
    from crowdsafe.data import Role

    for model in (models.k_anonymity, models.entropy_l_diversity, models.t_closeness):
        given = (FRAME,) if model is models.k_anonymity else (FRAME, "job")
        assert model(*given, qi="sex") == model(*given, qi=["sex"])
    dataset = load(FRAME)
    assert models.assess(dataset, qi="sex", sensitive="job").to_dict() == \
        models.assess(dataset, qi=["sex"], sensitive=["job"]).to_dict()
    assert dataset.select("age").columns == ["age"] and dataset.schema.select("age").names == ["age"]
    assert dataset.schema.with_role("job", Role.SENSITIVE).sensitive == ["job"]
    assert list(encode(dataset, "age")) == list(encode(FRAME, "age")) == ["age"]
    assert frequency_table(dataset, "age").equals(frequency_table(dataset, ["age"]))


def test_one_name_is_a_list_of_one_in_the_metrics_and_attacks_layers():
    from crowdsafe import attacks, metrics

    dataset, release = load(FRAME), api.anonymize(FRAME, k=3, qi=["age", "sex"], report=False).frame
    calls = [
        lambda qi: metrics.information_loss(dataset, release, qi=qi).to_dict(),
        lambda qi: metrics.utility(dataset, release, qi=qi).as_dict(),
        lambda qi: metrics.marginal_distances(dataset, release, qi).to_dict(),
        lambda qi: metrics.FullDomainScorer.from_dataset(dataset, qi).columns,
        lambda qi: attacks.intersection_attack([release], FRAME, qi, "job").as_dict(),
        lambda qi: attacks.linkage_attack(release, FRAME, qi).as_dict(),
    ]
    for call in calls:
        assert call("age") == call(["age"])


def test_a_publication_is_attacked_as_its_releases():
    """``attack(api.publish(...))`` was refused ("cannot attack a crowdsafe.Publication"): what
    publish returns is attacked as each of its releases."""
    data = pl.concat([FRAME] * 20)
    kwargs = {"qi": ["age", "sex"], "sensitive": "job"}
    first = api.publish(data, epsilon=2.0, seed=1, ledger=None, releases=2, scheme="none,age=1", report=False, **kwargs)
    second = api.publish(data, epsilon=2.0, seed=2, ledger=None, scheme="none,age=1", report=False, **kwargs)
    assert first.release.rows_published > 0
    found = api.attack([first, second], data, **kwargs).as_dict()
    assert found == api.attack([*first.releases, *second.releases], data, **kwargs).as_dict()
    assert found["summary"]["releases"] == 3


def test_attack_takes_one_confidence_level_as_a_list_of_one(tmp_path):
    path = tmp_path / "r.csv"
    api.anonymize(FRAME, k=2, qi=["age", "sex"], out=path, report=False)
    kwargs = {"qi": ["age", "sex"], "sensitive": "job"}
    one = api.attack(str(path), FRAME, levels=0.5, **kwargs).as_dict()
    assert one == api.attack(str(path), FRAME, levels=[0.5], **kwargs).as_dict()
    assert list(one["summary"]["partial_breach"]) == ["0.5"]


def test_attack_takes_its_sensitive_attribute_as_a_list_of_one(tmp_path):
    path = tmp_path / "r.csv"
    api.anonymize(FRAME, k=2, qi=["age", "sex"], out=path, report=False)
    by_list = api.attack(str(path), FRAME, qi=["age", "sex"], sensitive=["job"])
    assert by_list.as_dict() == api.attack(str(path), FRAME, qi=["age", "sex"], sensitive="job").as_dict()
    assert by_list.summary["sensitive"] == "job"


def test_estimate_reads_the_view_of_the_perturbation_perturb_returned():
    perturbation = api.perturb(FRAME, attributes="job", domains={"job": ["x", "y", "z"]}, max_rows=100, c=0.2,
                               gamma=0.5, seed=1, ledger=None)
    query = "count where job = 'x'"
    assert api.estimate(perturbation, query) == api.estimate(perturbation.view, query)


def test_check_takes_k_as_the_command_line_and_compare_name_it():
    by_k = api.check(FRAME, qi=["age", "sex"], k=4).as_dict()
    assert by_k == api.check(FRAME, qi=["age", "sex"], target_k=4).as_dict()
    assert by_k != api.check(FRAME, qi=["age", "sex"]).as_dict()  # the k is counted below
    dataset = load(FRAME, qi=["age", "sex"])
    assert api.check_dataset(dataset, k=4).as_dict() == api.check_dataset(dataset, target_k=4).as_dict() == by_k


def test_query_takes_seed_as_publish_and_perturb_name_it():
    seeded = api.query(FRAME, "count where sex = 'F'", epsilon=0.5, seed=7, ledger=None)
    assert seeded.as_dict() == api.query(FRAME, "count where sex = 'F'", epsilon=0.5, randomness=7,
                                         ledger=None).as_dict()
    assert not seeded.fit_for_release


@pytest.mark.parametrize("call, message", [
    (lambda: api.plan_publish(1.0, columns=5), "columns must be a list of column names, got the int 5"),
    (lambda: api.check(FRAME, qi=[1, 2]), "qi must be a list of column names (strings), but it holds the int 1"),
    (lambda: api.check(FRAME, qi={"age"}), "qi must be a list of column names, got a set"),
    (lambda: api.publish(FRAME, epsilon=1.0, sensitive=3, ledger=None), "sensitive must be a list of column names"),
    (lambda: api.query(FRAME, ["count"], epsilon=0.1, ledger=None), "text must be one query (a string), got a list"),
    (lambda: api.estimate("view.csv", 5),
     "queries must be a counting query (a string) or a list of them, got the int 5"),
    (lambda: api.anonymize(FRAME, k=2, suppresion_limit=0.1),
     "anonymize() got an unknown keyword 'suppresion_limit' (did you mean 'suppression_limit'?); beside its named "
     "parameters it takes: distance, mode,"),
    (lambda: api.perturb(FRAME, c=1, max_rows=100, ledger=None), "perturb() needs the keyword 'gamma'"),
    (lambda: api.plan_perturbation(FRAME, c=1, gama=0.2), "plan_perturbation() got an unknown keyword 'gama' "
     "(did you mean 'gamma'?)"),
    (lambda: api.perturb(FRAME, c=1, gamma=0.2, failure=0.1, ledger=None),
     "perturb() takes no keyword 'failure': give confidence"),
    # a dict of column types as the schema raised "'dict' object has no attribute 'decimal_comma'"
    (lambda: api.publish(FRAME, epsilon=1.0, schema={"age": "numeric"}, ledger=None),
     "schema must be a crowdsafe Schema, the path of a schema file, or None; got a dict (declare one in Python "
     "with Schema.of("),
    (lambda: api.check(FRAME, schema={"age": "numeric"}), "schema must be a crowdsafe Schema"),
    (lambda: api.query(FRAME, "count", epsilon=0.1, schema=["age"], ledger=None),
     "schema must be a crowdsafe Schema, the path of a schema file, or None; got a list"),
    (lambda: load(FRAME, schema={"age": "numeric"}), "schema must be a crowdsafe Schema"),
    # a ledger that is no path raised pathlib's "expected str, bytes or os.PathLike object, not int"
    (lambda: api.query(FRAME, "count", epsilon=0.1, ledger=5),
     "ledger must be 'default', the path of a ledger file, a crowdsafe Ledger, or None (no ledger); got the int 5"),
    (lambda: api.publish(FRAME, epsilon=1.0, seed=1, ledger=1.5), "ledger must be 'default'"),
    (lambda: api.set_budget(FRAME, epsilon=1.0, ledger=5), "ledger must be 'default'"),
    (lambda: api.attack("r.csv", FRAME, qi="age", sensitive=["sex", "job"]),
     "sensitive must be one column name: an attack infers one sensitive attribute; got 2 names (sex, job)"),
    (lambda: api.attack("r.csv", FRAME, qi="age", sensitive=5), "sensitive must be a list of column names"),
    (lambda: api.estimate(FRAME, "count"), "view must be a View, the Perturbation perturb returned, or the path of "
     "a view file; got a polars.DataFrame"),
    (lambda: api.check(FRAME, k=3, target_k=4), "k and target_k are one parameter: give k only"),
    (lambda: api.check(FRAME, k="5"), "k must be a whole number >= 1, got '5'"),
    (lambda: api.check(FRAME, k=2.5), "k must be a whole number >= 1, got 2.5"),
    (lambda: api.check(FRAME, k=True), "k must be a whole number >= 1, got True"),
    (lambda: api.check(FRAME, threshold="0.2"), "the risk threshold must lie in (0, 1], got '0.2'"),
    (lambda: api.check(FRAME, population_size="1000"), "population_size must be a whole number >= 1, got '1000'"),
    (lambda: api.check(FRAME, population_size=1000.5), "population_size must be a whole number >= 1, got 1000.5"),
    (lambda: api.check(FRAME, l="2"), "l must be a whole number >= 1, got '2'"),
    (lambda: api.compare(FRAME, FRAME, queries="100"), "queries must be a whole number >= 1, got '100'"),
    (lambda: api.compare(FRAME, FRAME, max_attributes="2"), "max_attributes must be a whole number >= 1, got '2'"),
    (lambda: api.compare(FRAME, FRAME, k="5"), "k must be a whole number >= 1, got '5'"),
    (lambda: api.compare(FRAME, FRAME, k=2.5), "k must be a whole number >= 1, got 2.5"),
    (lambda: api.compare(FRAME, FRAME, input_rows="10"), "input_rows must be a whole number >= 0, got '10'"),
    (lambda: api.publish(FRAME, epsilon=1.0, epsilon1="0.1", ledger=None), "epsilon1 must be > 0 when the scheme is "
     "chosen from the data, got '0.1'"),
    (lambda: Schema.of(["age", "sex"]), "types must map each column to its type, e.g. Schema.of({'age': 'integer'}); "
     "got a list"),
    (lambda: Schema.of({"age": "integer"}, identifiers=5), "identifiers must be a list of column names, got the int 5"),
    (lambda: api.query(FRAME, "count", epsilon=0.1, seed=1, randomness=2, ledger=None),
     "seed and randomness are one parameter: give seed only"),
])
def test_a_malformed_argument_is_refused_in_one_line_naming_it(call, message):
    with pytest.raises(ParameterError) as refused:
        call()
    assert message in str(refused.value)
    assert "\n" not in str(refused.value) and "Request" not in str(refused.value)


def test_a_misspelled_keyword_writes_and_charges_nothing(tmp_path):
    ledger, out = tmp_path / "ledger.sqlite3", tmp_path / "view.csv"
    with pytest.raises(ParameterError, match="'gama'"):
        api.perturb(FRAME, c=1, gama=0.2, max_rows=100, ledger=ledger, out=out, budget=(5, 1e-6))
    with pytest.raises(ParameterError, match="'suppresion_limit'"):
        api.anonymize(FRAME, k=2, suppresion_limit=0.1, out=tmp_path / "r.csv")
    assert list(tmp_path.iterdir()) == []
