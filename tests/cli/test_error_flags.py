"""Library errors name parameters; the command line names its flags (crowdsafe.cli.flags).

``REWORDED`` lists every library error that named a command-line flag (issue 17), as
``(where, library message, parameters, command-line line)``: the library's wording in the
Python API's terms, the parameters the error lists, and the line the command line prints for
it, which still names the flags the user typed. A message that lists no parameter is printed
unchanged.

``TRIGGERS`` (and ``SPARK_TRIGGERS``, on a Spark session) raise each of them for real: every
raise site through the library, which must give the message and parameters listed, and, where a
flag sets the parameter, the command line, which must print the line listed.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import polars as pl
import pytest

import crowdsafe.api as api
from crowdsafe.anonymize.cells import cell_table
from crowdsafe.anonymize.constraints import sensitive_constraints
from crowdsafe.cli import main
from crowdsafe.cli.flags import cli_message, flag
from crowdsafe.data import load
from crowdsafe.engines import get_engine
from crowdsafe.errors import LEDGER_REFUSAL, BudgetExceeded, CrowdsafeError, InputError, ParameterError, SchemaError
from crowdsafe.mechanisms.queries import answer_query
from crowdsafe.mechanisms.query_plan import QueryRequest
from crowdsafe.models.classes import EquivalenceClasses
from crowdsafe.privacy.ledger import Ledger

REWORDED = [
    ("anonymize/cells.py:cell_table",
     "no quasi-identifiers to anonymize; name them with qi=[...]", "qi",
     "no quasi-identifiers to anonymize; name them with --qi a,b,c"),
    ("classic/algorithms.py:_sensitive_attribute (several)",
     "the data has several sensitive attributes (sex, income); name the one to protect with the sensitive parameter",
     "sensitive",
     "the data has several sensitive attributes (sex, income); name the one to protect with --sensitive"),
    ("classic/algorithms.py:_sensitive_attribute and anonymize/constraints.py:sensitive_constraints",
     "ℓ-diversity and t-closeness need a sensitive attribute; name it with the sensitive parameter", "sensitive",
     "ℓ-diversity and t-closeness need a sensitive attribute; name it with --sensitive"),
    ("classic/algorithms.py:anonymize_dataset, anonymize/publish.py:prepare_dataset, api.py:check_dataset",
     "the data has no quasi-identifiers; name them with qi=[...]", "qi",
     "the data has no quasi-identifiers; name them with --qi a,b,c"),
    ("selection/score.py:make_objective (target)",
     "the target parameter is for objective='classification', not entropy", ("target", "objective"),
     "--target is for --objective classification, not entropy"),
    ("selection/score.py:check_objective_columns",
     "the target 'income' is not a published column (age, sex); declare it a quasi-identifier or sensitive "
     "attribute, or include it in the columns parameter", "columns",
     "the target 'income' is not a published column (age, sex); declare it a quasi-identifier or sensitive "
     "attribute, or include it in --columns"),
    ("selection/score.py:make_objective (no target)",
     "the classification objective needs the target column: target=COLUMN", "target",
     "the classification objective needs the target column: --target COLUMN"),
    ("anonymize/publish.py:check_columns (none)",
     "the columns parameter names no column", "columns",
     "--columns names no column"),
    ("anonymize/publish.py:check_columns (twice)",
     "the columns parameter names 'age' twice", "columns",
     "--columns names 'age' twice"),
    ("anonymize/publish.py:check_columns (unknown)",
     "the columns parameter names 'salary', which the data does not have (columns: age, sex, zip, income)",
     "columns",
     "--columns names 'salary', which the data does not have (columns: age, sex, zip, income)"),
    ("anonymize/publish.py:check_public_domains",
     "the entropy objective needs a declared hierarchy (a public domain) for every published column; 'zip' has "
     "none, or one built over the data's values: declare one in the schema, or choose another value of the "
     "objective parameter (nothing was charged)",
     "objective",
     "the entropy objective needs a declared hierarchy (a public domain) for every published column; 'zip' has "
     "none, or one built over the data's values: declare one in the schema, or choose another value of "
     "--objective (nothing was charged)"),
    ("anonymize/plan.py:plan_publication (fixed scheme)",
     "a fixed scheme is chosen without looking at the data, so it spends no epsilon1; drop the epsilon1 "
     "parameter, or drop the scheme parameter to let the exponential mechanism choose", ("epsilon1", "scheme"),
     "a fixed scheme is chosen without looking at the data, so it spends no epsilon1; drop --epsilon1, "
     "or drop --scheme to let the exponential mechanism choose"),
    ("anonymize/plan.py:plan_publication (epsilon1 = 0)",
     "epsilon1 must be > 0 when the scheme is chosen from the data, got 0.0; give a fixed scheme with the "
     "scheme parameter for a strongly safe release", ("epsilon1", "scheme"),
     "epsilon1 must be > 0 when the scheme is chosen from the data, got 0.0; give a fixed scheme with "
     "--scheme for a strongly safe release"),
    ("engines/polars_engine.py:PolarsEngine.read_table",
     "the spark_master parameter needs engine='spark'", ("spark_master", "engine"),
     "--spark-master needs --engine spark"),
    ("drivers/attack.py:attack",
     "the intersection attack needs the sensitive attribute (the sensitive parameter)", "sensitive",
     "the intersection attack needs the sensitive attribute (--sensitive)"),
    ("drivers/query.py:with_budget",
     "no privacy budget is set for 'people.csv' in the ledger l.db; set one with "
     "set_budget('people.csv', epsilon=E, delta=D), or pass budget=(ε, δ)" + LEDGER_REFUSAL, "budget",
     "no privacy budget is set for 'people.csv' in the ledger l.db; set one with "
     "`crowdsafe ledger init people.csv --epsilon E --delta D`, or pass --budget E,D" + LEDGER_REFUSAL),
    ("engines/spark/engine.py:SparkEngine.check_perturbation (out)",
     "the spark engine writes the view as it draws it: give out=VIEW.parquet", "out",
     "the spark engine writes the view as it draws it: give --out VIEW.parquet"),
    ("engines/spark/engine.py:SparkEngine.check_perturbation (ledger)",
     "the spark engine does not charge a budget ledger yet: use engine='polars' with a ledger, or run it without "
     "one (ledger=None; nothing then records the view)", ("engine", "ledger"),
     "the spark engine does not charge a budget ledger yet: use --engine polars with a ledger, or run it without "
     "one (--no-ledger; nothing then records the view)"),
    ("engines/spark/engine.py:SparkEngine.check_attack and linkage_attack",
     "the spark engine runs the intersection attack (with the sensitive parameter); run the linkage attack "
     "with engine='polars'", ("sensitive", "engine"),
     "the spark engine runs the intersection attack (with --sensitive); run the linkage attack "
     "with --engine polars"),
    ("engines/spark/engine.py:SparkEngine.write_attack_targets",
     "with engine='spark' the per-target metrics are written as Parquet: name t.csv *.parquet", "engine",
     "with --engine spark the per-target metrics are written as Parquet: name t.csv *.parquet"),
    ("attacks/intersection.py:run_intersection",
     "name the quasi-identifiers the attacker knows (qi=[...])", "qi",
     "name the quasi-identifiers the attacker knows (--qi a,b,c)"),
    ("attacks/linkage.py:linkage_attack",
     "name the quasi-identifiers the external table shares with the release (qi=[...])", "qi",
     "name the quasi-identifiers the external table shares with the release (--qi a,b,c)"),
    ("engines/spark/alpha_beta.py:prepare_spark",
     "the domain has m = 6.116e+19 >= 2^63 tuples, beyond the spark engine's 64-bit signed indices; "
     "use engine='polars' or coarser domains", "engine",
     "the domain has m = 6.116e+19 >= 2^63 tuples, beyond the spark engine's 64-bit signed indices; "
     "use --engine polars or coarser domains"),
    ("engines/spark/attacks.py:SparkAttackTables.locations",
     "the spark engine locates targets exactly (location 'auto' or 'exact'); nearest-centroid location "
     "needs engine='polars'", "engine",
     "the spark engine locates targets exactly (location 'auto' or 'exact'); nearest-centroid location "
     "needs --engine polars"),
    ("engines/spark/attacks.py:SparkAttackTables.sensitive_cells",
     "the targets' quasi-identifier domains have 2^63 or more combinations; use engine='polars'", "engine",
     "the targets' quasi-identifier domains have 2^63 or more combinations; use --engine polars"),
    ("engines/spark/attack_steps.py:locate",
     "release r1 publishes centroids (microaggregation): locating targets by the nearest centroid needs "
     "engine='polars'", "engine",
     "release r1 publishes centroids (microaggregation): locating targets by the nearest centroid needs "
     "--engine polars"),
    ("engines/spark/engine.py:SparkEngine.prepare (entropy)",
     "the entropy objective is not available with engine='spark' yet (its sensitivity needs every column's "
     "public domain); choose another value of the objective parameter (nothing was charged)",
     ("engine", "objective"),
     "the entropy objective is not available with --engine spark yet (its sensitivity needs every column's "
     "public domain); choose another value of --objective (nothing was charged)"),
    ("engines/spark/engine.py:SparkEngine.prepare (columns)",
     "the columns parameter is not available with engine='spark' yet; choose the published columns with the "
     "qi parameter and the sensitive parameter (nothing was charged)", ("columns", "engine", "qi", "sensitive"),
     "--columns is not available with --engine spark yet; choose the published columns with --qi and "
     "--sensitive (nothing was charged)"),
    ("engines/spark/queries.py:SparkAggregate.check",
     "quantiles are not computed on the spark engine (the exponential mechanism needs every value on the "
     "driver); use engine='polars'", "engine",
     "quantiles are not computed on the spark engine (the exponential mechanism needs every value on the "
     "driver); use --engine polars"),
    ("engines/spark/session.py:spark_session",
     "a Spark session on 'local[2]' is already active; cannot switch to spark_master='local[1]'",
     "spark_master",
     "a Spark session on 'local[2]' is already active; cannot switch to --spark-master local[1]"),
    ("mechanisms/queries.py:_plan",
     "the schema names the person identifier 'pid': a person may own several rows, so say how many rows per "
     "person a query may use (max_rows_per_person=N)", "max_rows_per_person",
     "the schema names the person identifier 'pid': a person may own several rows, so say how many rows per "
     "person a query may use (--max-rows-per-person N)"),
    ("metrics/report.py:utility",
     "the release holds none of the original's quasi-identifiers; name them with qi=[...]", "qi",
     "the release holds none of the original's quasi-identifiers; name them with --qi a,b,c"),
    ("models/classes.py:EquivalenceClasses",
     "no quasi-identifiers: name them with qi=[...]", "qi",
     "no quasi-identifiers: name them with --qi a,b,c"),
    ("perturb/domain.py:uncharged_error",
     "an exploratory run carries no guarantee to charge to a ledger: declare the public domains and "
     "max_rows=N, or run it without a ledger (ledger=None)", ("max_rows", "ledger"),
     "an exploratory run carries no guarantee to charge to a ledger: declare the public domains and "
     "--max-rows N, or run it without a ledger (--no-ledger)"),
    ("perturb/alpha_beta.py:check_max_rows",
     "declare a public bound on the number of rows with max_rows=N, fixed without looking at the data: "
     "d = c n/m, beta and the error bars use it in place of the exact n; or pass exploratory=True for an "
     "uncertified run", ("max_rows", "exploratory"),
     "declare a public bound on the number of rows with --max-rows N, fixed without looking at the data: "
     "d = c n/m, beta and the error bars use it in place of the exact n; or pass --exploratory for an "
     "uncertified run"),
    ("perturb/alpha_beta.py:bound_exceeded",
     "the data holds more than max_rows=5 rows: nothing was perturbed or written; this refusal tells whoever "
     "reads it that the bound is exceeded (keep it to the custodian); choose a larger bound from public "
     "knowledge, not from this data", "max_rows",
     "the data holds more than --max-rows 5 rows: nothing was perturbed or written; this refusal tells whoever "
     "reads it that the bound is exceeded (keep it to the custodian); choose a larger bound from public "
     "knowledge, not from this data"),
    ("perturb/alpha_beta.py:duplicates_error",
     "some rows repeat another row's tuple over the published attributes; the alpha-beta algorithm publishes a "
     "set: use duplicates='collapse' or publish an attribute that tells the rows apart (a custodian-only fact "
     "about the data: duplicates='error' checks the data itself; nothing was charged)", "duplicates",
     "some rows repeat another row's tuple over the published attributes; the alpha-beta algorithm publishes a "
     "set: use --duplicates collapse or publish an attribute that tells the rows apart (a custodian-only fact "
     "about the data: --duplicates error checks the data itself; nothing was charged)"),
    ("perturb/domain.py:domain_missing_error",
     "no public domain for 'age', 'sex', 'zip', 'income': the (d, gamma) guarantee needs each attribute's "
     "values fixed before the data is read; declare them with domains={attribute: [values]}, an 'order' in the "
     "schema file or a hierarchy file, or pass exploratory=True for an uncertified run on the data's own values",
     ("domains", "exploratory"),
     "no public domain for 'age', 'sex', 'zip', 'income': the (d, gamma) guarantee needs each attribute's "
     "values fixed before the data is read; declare them with --domains FILE (JSON: {\"attribute\": [values]}), "
     "an 'order' in the schema file or a hierarchy file, or pass --exploratory for an uncertified run on the "
     "data's own values"),
    ("perturb/view.py:read_view",
     "no certificate for the view v.csv (looked for v.certificate.json); give it with the certificate "
     "parameter", "certificate",
     "no certificate for the view v.csv (looked for v.certificate.json); give it with --certificate"),
    ("data/schema.py:Schema.with_roles (qi)",
     "the qi parameter names unknown attribute 'nope'; the attributes are: age, sex, zip, income", "qi",
     "--qi names unknown attribute 'nope'; the attributes are: age, sex, zip, income"),
    ("data/schema.py:Schema.with_roles (sensitive)",
     "the sensitive parameter names unknown attribute 'nope'; the attributes are: age, sex, zip, income",
     "sensitive",
     "--sensitive names unknown attribute 'nope'; the attributes are: age, sex, zip, income"),
    ("privacy/ledger.py:Ledger (schema 1)",
     "this ledger was written by an earlier crowdsafe (schema 1) whose dataset identities this version cannot "
     "match: its spent budgets would not be found. Keep it for your records, start a new ledger (ledger=PATH "
     "or CROWDSAFE_LEDGER) and register each dataset's remaining budget with "
     "set_budget(DATA, epsilon=E, delta=D)", ("ledger", "budget"),
     "this ledger was written by an earlier crowdsafe (schema 1) whose dataset identities this version cannot "
     "match: its spent budgets would not be found. Keep it for your records, start a new ledger (--ledger PATH "
     "or CROWDSAFE_LEDGER) and register each dataset's remaining budget with "
     "`crowdsafe ledger init DATA --epsilon E --delta D`"),
    ("privacy/ledger.py:Ledger.charge",
     "no privacy budget is set for dataset '0123456789abcdef0123' in the ledger l.db; set one with "
     "set_budget(DATA, epsilon=E, delta=D) (or pass budget=(ε, δ))", "budget",
     "no privacy budget is set for dataset '0123456789abcdef0123' in the ledger l.db; set one with "
     "`crowdsafe ledger init DATA --epsilon E --delta D` (or pass --budget E,D)"),
    ("privacy/ledger.py:Ledger._write",
     "the ledger l.db cannot be written (read-only file or folder); nothing was charged. Use a ledger you can "
     "write (ledger=PATH or CROWDSAFE_LEDGER)", "ledger",
     "the ledger l.db cannot be written (read-only file or folder); nothing was charged. Use a ledger you can "
     "write (--ledger PATH or CROWDSAFE_LEDGER)"),
    ("privacy/ledger_mark.py:refuse_foreign (tables)",
     "contacts.db is not a crowdsafe ledger: it is an SQLite database with other tables (contacts), and crowdsafe "
     "never writes into it; give a new file (ledger=PATH or CROWDSAFE_LEDGER)", "ledger",
     "contacts.db is not a crowdsafe ledger: it is an SQLite database with other tables (contacts), and crowdsafe "
     "never writes into it; give a new file (--ledger PATH or CROWDSAFE_LEDGER)"),
    ("privacy/ledger_mark.py:refuse_foreign (application id)",
     "map.gpkg is not a crowdsafe ledger: it is the SQLite database of another application (application id "
     "0x47504b47), and crowdsafe never writes into it; give a new file (ledger=PATH or CROWDSAFE_LEDGER)", "ledger",
     "map.gpkg is not a crowdsafe ledger: it is the SQLite database of another application (application id "
     "0x47504b47), and crowdsafe never writes into it; give a new file (--ledger PATH or CROWDSAFE_LEDGER)"),
    ("privacy/ledger_mark.py:look (not SQLite)",
     "people.csv is not a usable crowdsafe ledger: it is not an SQLite database; give a new file (ledger=PATH or "
     "CROWDSAFE_LEDGER)", "ledger",
     "people.csv is not a usable crowdsafe ledger: it is not an SQLite database; give a new file (--ledger PATH or "
     "CROWDSAFE_LEDGER)"),
    ("privacy/ledger.py:Ledger.set_budget (already set)",
     "dataset 'people' already has the budget (ε=1, δ=0); change it on the record with change_budget('people', "
     "epsilon=E, delta=D) (a raise also needs allow_raise=True)" + LEDGER_REFUSAL, ("budget", "allow_raise"),
     "dataset 'people' already has the budget (ε=1, δ=0); change it on the record with `crowdsafe ledger budget "
     "people --epsilon E --delta D` (a raise also needs --raise)" + LEDGER_REFUSAL),
    ("privacy/ledger.py:Ledger.change_budget (raise)",
     "(ε=2, δ=0) would raise the budget of 'people' from (ε=1, δ=0): a raise needs allow_raise=True, and is "
     "recorded in the ledger's history", "allow_raise",
     "(ε=2, δ=0) would raise the budget of 'people' from (ε=1, δ=0): a raise needs --raise, and is recorded in "
     "the ledger's history"),
    ("privacy/ledger.py:Ledger.change_budget (unknown)",
     "dataset 'nobody' has no budget in the ledger l.db; register one with set_budget(DATA, epsilon=E, delta=D)",
     "budget",
     "dataset 'nobody' has no budget in the ledger l.db; register one with `crowdsafe ledger init DATA --epsilon E "
     "--delta D`"),
    ("privacy/ledger.py:Ledger._validate (delta 0)",
     "refused: 'count' costs (ε=0.1, δ=1e-07) but dataset 'people' has spent (ε=0, δ=0) of its budget (ε=1, δ=0); "
     "nothing was computed (a custodian-only fact about the data: the ledger knows this table by its rows; keep "
     "this message to the custodian). A budget with δ = 0 admits nothing that costs δ > 0; if δ was left out by "
     "mistake, "
     "raise it on the record: change_budget('people', epsilon=E, delta=D) with allow_raise=True",
     ("budget", "allow_raise"),
     "refused: 'count' costs (ε=0.1, δ=1e-07) but dataset 'people' has spent (ε=0, δ=0) of its budget (ε=1, δ=0); "
     "nothing was computed (a custodian-only fact about the data: the ledger knows this table by its rows; keep "
     "this message to the custodian). A budget with δ = 0 admits nothing that costs δ > 0; if δ was left out by "
     "mistake, "
     "raise it on the record: `crowdsafe ledger budget people --epsilon E --delta D` with --raise"),
]


@pytest.mark.parametrize(("where", "library", "parameters", "line"), REWORDED, ids=[r[0] for r in REWORDED])
def test_the_command_line_names_the_flags_of_the_parameters_a_library_error_lists(where, library, parameters, line):
    assert "--" not in library  # the library's wording names no flag
    assert cli_message(ParameterError(library, parameter=parameters)) == line


def test_a_message_listing_no_parameter_is_printed_as_it_is():
    old = "--columns names 'salary', which the data does not have (columns: age, sex)"
    assert cli_message(ParameterError(old)) == old
    assert cli_message(InputError("the qi parameter\n  spans   lines")) == "the qi parameter spans lines"
    assert cli_message(SchemaError("")) == "SchemaError"


def test_only_the_listed_parameters_are_renamed_and_only_in_their_forms():
    error = ParameterError("the qi parameter and the sensitive parameter; qi is a word here; "
                           "columns: a, b; missing='drop'", parameter="qi")
    assert cli_message(error) == ("--qi and the sensitive parameter; qi is a word here; "
                                  "columns: a, b; missing='drop'")
    assert cli_message(ParameterError("use my_qi=[...]", parameter="qi")) == "use my_qi=[...]"


def test_the_parameters_are_kept_on_the_error():
    error = BudgetExceeded("x", parameter=("budget", "ledger"))
    assert error.parameters == ("budget", "ledger") and error.parameter == "budget"
    assert CrowdsafeError("y").parameters == () and CrowdsafeError("y").parameter is None
    assert str(ParameterError("z", parameter="qi")) == "z"
    assert flag("max_rows_per_person") == "--max-rows-per-person" and flag("qi") == "--qi"


def test_main_prints_the_flags(monkeypatch, capsys):
    import crowdsafe.cli.datasets as command

    def refuse(*args, **kwargs):
        raise ParameterError("the columns parameter names no column", parameter="columns")

    monkeypatch.setattr(command.bundled, "catalogue", refuse)
    assert main(["datasets", "list"]) == 2
    assert capsys.readouterr().err.strip() == "crowdsafe: error: --columns names no column"

# -- each error raised for real: by the library (its message and parameters), and by the command
# line where a flag sets the parameter (the line it prints) --------------------------------------

PEOPLE = pl.DataFrame({"age": [30, 31, 32, 40, 41, 42] * 5, "sex": ["F", "M"] * 15, "zip": ["1", "2", "3"] * 10,
                       "income": ["lo", "hi", "lo"] * 10})
WIDE = pl.DataFrame({f"c{i}": [0, 1] for i in range(19)})  # 10^19 tuples once each column has 10 values
PERSON_SCHEMA = """
person_id = "pid"
[attributes.pid]
role = "identifier"
type = "categorical"
[attributes.age]
type = "numeric"
"""
ROLES_SCHEMA = """
[attributes.age]
role = "quasi-identifier"
type = "numeric"
[attributes.zip]
role = "quasi-identifier"
type = "categorical"
[attributes.sex]
role = "sensitive"
type = "categorical"
[attributes.income]
role = "sensitive"
type = "categorical"
"""
PLAN = ["--epsilon", "1", "--delta", "1e-6", "--plan-only"]
RUN = ["--epsilon", "1", "--delta", "1e-6", "--no-ledger", "--out", "r.csv"]
PERTURB = ["--c", "2", "--gamma", "0.3"]


@pytest.fixture
def workdir(tmp_path, monkeypatch):
    """The files the triggers read, in the current folder (so messages show short paths)."""
    monkeypatch.chdir(tmp_path)
    PEOPLE.write_csv("people.csv")
    PEOPLE.write_csv("v.csv")
    WIDE.write_csv("wide.csv")
    PEOPLE.select(pl.col("income").alias("other")).write_csv("other.csv")
    PEOPLE.with_columns(pl.col("age").alias("pid")).select("pid", "age").write_csv("persons.csv")
    Path("persons.toml").write_text(PERSON_SCHEMA)
    Path("roles.toml").write_text(ROLES_SCHEMA)
    Path("no-qi.toml").write_text(ROLES_SCHEMA.replace('"quasi-identifier"', '"insensitive"')
                                  .replace('"sensitive"', '"insensitive"'))
    Path("sex.json").write_text(json.dumps({"sex": ["F", "M"]}))
    # 19 columns of 10 values, and null in each (missing values kept): m = 11^19 >= 2^63
    Path("wide.json").write_text(json.dumps({f"c{i}": list(range(10)) for i in range(19)}))
    return tmp_path


def _several_sensitive():
    api.anonymize(load(PEOPLE, qi=["age"], sensitive=["sex", "income"]), qi=["age"], l=2)


def _schema_1_ledger():
    conn = sqlite3.connect("old.db")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
    conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
    conn.execute("CREATE TABLE datasets (fingerprint TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
                 "epsilon_budget REAL, delta_budget REAL, created_at TEXT)")
    conn.execute("CREATE TABLE samples (sample_id TEXT PRIMARY KEY, entry_id INTEGER, rate REAL)")
    conn.execute("INSERT INTO datasets VALUES ('f', 'people', 1.0, 0.0, 'then')")
    conn.commit()
    conn.close()
    Path("old.db").chmod(0o600)  # made by hand: private, as crowdsafe makes a ledger
    Ledger("old.db")


def _unknown_dataset():
    with Ledger("l.db").charge("0123456789abcdef0123", epsilon=0.1, kind="query", description="q",
                               mechanism="laplace"):
        pass


def _read_only_ledger():
    book = Ledger("l.db")
    book._conn.close()
    book._conn = sqlite3.connect("file:l.db?mode=ro", uri=True, isolation_level=None)  # as a read-only file
    book.set_budget("f", "people", 1.0)


def _person_identifier():
    answer_query(load("persons.csv", schema="persons.toml"), QueryRequest("count", epsilon=1.0))


def _foreign_database(name, application_id=0):
    conn = sqlite3.connect(name)
    if application_id:
        conn.execute(f"PRAGMA application_id = {application_id}")
    conn.execute("CREATE TABLE contacts (name TEXT)")
    conn.commit()
    conn.close()
    Path(name).chmod(0o600)
    Ledger(name)


def _people_ledger():
    Path("l.db").unlink(missing_ok=True)
    book = Ledger("l.db")
    book.set_budget("f", "people", 1.0)
    return book


# where -> (the library calls that raise it, one per raise site; the command lines that do)
TRIGGERS: dict[str, tuple[tuple[Callable[[], object], ...], tuple[list[str], ...]]] = {
    "anonymize/cells.py:cell_table": ((lambda: cell_table(load(PEOPLE), []),), ()),
    "classic/algorithms.py:_sensitive_attribute (several)": (
        (_several_sensitive,), (["anonymize", "people.csv", "--schema", "roles.toml", "--l", "2"],)),
    "classic/algorithms.py:_sensitive_attribute and anonymize/constraints.py:sensitive_constraints": (
        (lambda: api.anonymize(PEOPLE, qi=["age"], l=2),
         lambda: sensitive_constraints(load(PEOPLE), None, l=2)),
        (["anonymize", "people.csv", "--qi", "age", "--l", "2"],)),
    "classic/algorithms.py:anonymize_dataset, anonymize/publish.py:prepare_dataset, api.py:check_dataset": (
        (lambda: api.anonymize(PEOPLE, qi=[]),
         lambda: api.publish(PEOPLE, qi=[], epsilon=1, delta=1e-6, ledger=None),
         lambda: api.check(PEOPLE, qi=[])),
        (["anonymize", "people.csv", "--schema", "no-qi.toml"],
         ["publish", "people.csv", "--schema", "no-qi.toml", *RUN],
         ["check", "people.csv", "--schema", "no-qi.toml"])),
    "selection/score.py:make_objective (target)": (
        (lambda: api.plan_publish(1, 1e-6, objective="entropy", target="income"),),
        (["publish", "people.csv", *PLAN, "--objective", "entropy", "--target", "income"],)),
    "selection/score.py:check_objective_columns": (
        (lambda: api.publish(PEOPLE, epsilon=1, delta=1e-6, columns=["age", "sex"], objective="classification",
                             target="income", ledger=None),),
        (["publish", "people.csv", *RUN, "--columns", "age,sex", "--objective", "classification", "--target",
          "income"],)),
    "selection/score.py:make_objective (no target)": (
        (lambda: api.plan_publish(1, 1e-6, objective="classification"),),
        (["publish", "people.csv", *PLAN, "--objective", "classification"],)),
    "anonymize/publish.py:check_columns (none)": (
        (lambda: api.publish(PEOPLE, epsilon=1, delta=1e-6, columns=[], ledger=None),),
        ()),  # the command line refuses an empty list itself
    "anonymize/publish.py:check_columns (twice)": (
        (lambda: api.publish(PEOPLE, epsilon=1, delta=1e-6, columns=["age", "age"], ledger=None),),
        (["publish", "people.csv", *RUN, "--columns", "age,age"],)),
    "anonymize/publish.py:check_columns (unknown)": (
        (lambda: api.publish(PEOPLE, epsilon=1, delta=1e-6, columns=["salary"], ledger=None),),
        (["publish", "people.csv", *RUN, "--columns", "salary"],)),
    "anonymize/publish.py:check_public_domains": (
        (lambda: api.publish(PEOPLE, epsilon=1, delta=1e-6, columns=["zip"], objective="entropy", ledger=None),),
        (["publish", "people.csv", *RUN, "--columns", "zip", "--objective", "entropy"],)),
    "anonymize/plan.py:plan_publication (fixed scheme)": (
        (lambda: api.plan_publish(1, 1e-6, scheme="coarse", epsilon1=0.5),),
        (["publish", "people.csv", *PLAN, "--scheme", "coarse", "--epsilon1", "0.5"],)),
    "anonymize/plan.py:plan_publication (epsilon1 = 0)": (
        (lambda: api.plan_publish(1, 1e-6, epsilon1=0.0),),
        ((["publish", "people.csv", *PLAN, "--epsilon1", "0"], "--epsilon1: {line}"),)),
    "engines/polars_engine.py:PolarsEngine.read_table": (
        (lambda: api.publish(PEOPLE, epsilon=1, delta=1e-6, spark_master="local[2]", ledger=None),),
        (["publish", "people.csv", *RUN, "--spark-master", "local[2]"],)),
    "drivers/attack.py:attack": (
        (lambda: api.attack(["people.csv"], PEOPLE, qi=["age"]),),
        ()),  # the command line asks for --sensitive itself
    "drivers/query.py:with_budget": (
        (lambda: api.query("people.csv", "count", epsilon=1, ledger="l.db"),),
        (["query", "people.csv", "count", "--epsilon", "1", "--ledger", "l.db"],)),
    "attacks/intersection.py:run_intersection": (
        (lambda: api.attack(["people.csv"], PEOPLE, qi=[], sensitive="income"),),
        ()),  # the command line refuses an empty --qi itself
    "attacks/linkage.py:linkage_attack": (
        (lambda: api.attack(["people.csv"], PEOPLE, qi=[], kind="linkage"),),
        ()),  # the command line refuses an empty --qi itself
    "mechanisms/queries.py:_plan": (
        (_person_identifier,),
        (["query", "persons.csv", "count", "--schema", "persons.toml", "--epsilon", "1", "--no-ledger"],)),
    "metrics/report.py:utility": (
        (lambda: api.compare(PEOPLE, "other.csv"),), (["compare", "people.csv", "other.csv"],)),
    "models/classes.py:EquivalenceClasses": ((lambda: EquivalenceClasses(load(PEOPLE), []),), ()),
    "perturb/domain.py:uncharged_error": (
        (lambda: api.perturb(PEOPLE, c=2, gamma=0.3, exploratory=True, ledger="l.db", budget=(1, 1e-6)),
         lambda: api.perturb(PEOPLE, c=2, gamma=0.3, exploratory=True, ledger="l.db", max_rows=100)),
        (["perturb", "people.csv", *PERTURB, "--exploratory", "--ledger", "l.db", "--budget", "1,1e-6",
          "--out", "w.csv"],
         ["perturb", "people.csv", *PERTURB, "--exploratory", "--max-rows", "100", "--out", "w.csv"])),
    "perturb/alpha_beta.py:check_max_rows": (
        (lambda: api.perturb(PEOPLE, c=2, gamma=0.3),), (["perturb", "people.csv", *PERTURB, "--out", "w.csv"],)),
    "perturb/alpha_beta.py:bound_exceeded": (
        (lambda: api.perturb(PEOPLE, c=2, gamma=0.3, attributes=["sex"], domains={"sex": ["F", "M"]}, max_rows=5,
                             ledger=None),),
        (["perturb", "people.csv", "--no-ledger", *PERTURB, "--attributes", "sex", "--domains", "sex.json",
          "--max-rows", "5",
          "--out", "w.csv"],)),
    "perturb/alpha_beta.py:duplicates_error": (
        (lambda: api.perturb(PEOPLE, c=2, gamma=0.3, attributes=["sex"], domains={"sex": ["F", "M"]}, max_rows=100,
                             duplicates="error", ledger=None),),
        (["perturb", "people.csv", "--no-ledger", *PERTURB, "--attributes", "sex", "--domains", "sex.json",
          "--max-rows", "100",
          "--duplicates", "error", "--out", "w.csv"],)),
    "perturb/domain.py:domain_missing_error": (
        (lambda: api.perturb(PEOPLE, c=2, gamma=0.3, max_rows=100, ledger=None),),
        (["perturb", "people.csv", "--no-ledger", *PERTURB, "--max-rows", "100", "--out", "w.csv"],)),
    "perturb/view.py:read_view": (
        (lambda: api.estimate("v.csv", "age=30"),), (["estimate", "v.csv", "--equality", "1", "--out", "e.csv"],)),
    "data/schema.py:Schema.with_roles (qi)": (
        (lambda: api.check(PEOPLE, qi=["nope"]),), (["check", "people.csv", "--qi", "nope"],)),
    "data/schema.py:Schema.with_roles (sensitive)": (
        (lambda: api.check(PEOPLE, sensitive=["nope"]),), (["check", "people.csv", "--sensitive", "nope"],)),
    "privacy/ledger.py:Ledger (schema 1)": ((_schema_1_ledger,), (["ledger", "show", "--ledger", "old.db"],)),
    "privacy/ledger.py:Ledger.charge": ((_unknown_dataset,), ()),
    "privacy/ledger.py:Ledger._write": ((_read_only_ledger,), ()),
    "privacy/ledger_mark.py:refuse_foreign (tables)": (
        (lambda: _foreign_database("contacts.db"),),
        (["ledger", "show", "--ledger", "contacts.db"],
         ["query", "people.csv", "count", "--epsilon", "1", "--ledger", "contacts.db"])),
    "privacy/ledger_mark.py:refuse_foreign (application id)": (
        (lambda: _foreign_database("map.gpkg", 0x47504B47),), (["ledger", "show", "--ledger", "map.gpkg"],)),
    "privacy/ledger_mark.py:look (not SQLite)": (
        (lambda: Ledger("people.csv"),), (["ledger", "show", "--ledger", "people.csv"],)),
    "privacy/ledger.py:Ledger.set_budget (already set)": (
        (lambda: _people_ledger().set_budget("f", "people", 2.0),), ()),
    "privacy/ledger.py:Ledger.change_budget (raise)": (
        (lambda: _people_ledger().change_budget("people", 2.0, 0.0),),
        (["ledger", "budget", "people", "--epsilon", "2", "--delta", "0", "--ledger", "l.db"],)),
    "privacy/ledger.py:Ledger.change_budget (unknown)": (
        (lambda: _people_ledger().change_budget("nobody", 2.0, 0.0),),
        (["ledger", "budget", "nobody", "--epsilon", "2", "--delta", "0", "--ledger", "l.db"],)),
    "privacy/ledger.py:Ledger._validate (delta 0)": (
        (lambda: _people_ledger().check("people", epsilon=0.1, delta=1e-7, description="count", mechanism="m"),),
        ()),
}


def _spark_write_attack_targets():
    get_engine("spark").write_attack_targets(None, Path("t.csv"), escape_formulas=True)


def _spark_session():
    from crowdsafe.engines.spark.session import spark_session

    spark_session("local[1]")


def _spark_release(frame, name):
    from crowdsafe.engines.spark.attacks import SparkTextRelease
    from crowdsafe.engines.spark.session import spark_session

    return SparkTextRelease(spark_session().createDataFrame(frame.to_arrow()), name)


def _spark_attack(release, targets, qi, **options):
    from crowdsafe.engines.spark.attacks import intersection_attack_spark
    from crowdsafe.engines.spark.session import spark_session

    targets = spark_session().createDataFrame(targets.to_arrow())
    intersection_attack_spark([release], targets, qi, "income", **options)


def _spark_wide_targets():
    wide = pl.DataFrame({f"c{i}": [str(v) for v in range(10)] for i in range(19)}).with_columns(
        income=pl.lit("lo"))
    _spark_attack(_spark_release(wide, "r1"), wide, [f"c{i}" for i in range(19)])


def _spark_centroids():
    release = PEOPLE.with_columns(pl.col("age") + 0.5)  # a mean, so the release reads as microaggregated
    _spark_attack(_spark_release(release, "r1"), PEOPLE, ["age"])


def _here(name):
    """An absolute path: Spark resolves a relative one against the folder its JVM started in."""
    return str(Path(name).resolve())


SPARK = ["--engine", "spark"]
SPARK_TRIGGERS: dict[str, tuple[tuple[Callable[[], object], ...], tuple[list[str], ...]]] = {
    "engines/spark/engine.py:SparkEngine.check_perturbation (out)": (
        (lambda: api.perturb(_here("people.csv"), c=2, gamma=0.3, engine="spark", exploratory=True),),
        ()),  # the command line asks for --out itself
    "engines/spark/engine.py:SparkEngine.check_perturbation (ledger)": (
        (lambda: api.perturb(_here("people.csv"), c=2, gamma=0.3, engine="spark", exploratory=True, out="w.parquet",
                             ledger="l.db"),),
        (["perturb", "people.csv", *PERTURB, "--exploratory", *SPARK, "--out", "w.parquet", "--ledger", "l.db"],)),
    "engines/spark/engine.py:SparkEngine.check_attack and linkage_attack": (
        (lambda: api.attack([_here("people.csv")], _here("people.csv"), qi=["age"], engine="spark"),
         lambda: get_engine("spark").linkage_attack(None, None, ["age"])),
        ()),  # the linkage command has no --engine; intersection asks for --sensitive itself
    "engines/spark/engine.py:SparkEngine.write_attack_targets": ((_spark_write_attack_targets,), ()),
    "engines/spark/alpha_beta.py:prepare_spark": (
        (lambda: api.plan_perturbation(_here("wide.csv"), c=2, gamma=0.3, engine="spark", max_rows=10,
                                       domains=json.loads(Path("wide.json").read_text())),),
        (["perturb", "wide.csv", *PERTURB, "--max-rows", "10", "--domains", "wide.json", "--plan-only", *SPARK],)),
    "engines/spark/attacks.py:SparkAttackTables.locations": (
        (lambda: api.attack([_here("people.csv")], _here("people.csv"), qi=["age"], sensitive="income", engine="spark",
                            location="nearest"),),
        (["attack", "intersection", "people.csv", "--targets", "people.csv", "--qi", "age", "--sensitive", "income",
          "--location", "nearest", *SPARK],)),
    "engines/spark/attacks.py:SparkAttackTables.sensitive_cells": ((_spark_wide_targets,), ()),
    "engines/spark/attack_steps.py:locate": ((_spark_centroids,), ()),
    "engines/spark/engine.py:SparkEngine.prepare (entropy)": (
        (lambda: api.publish(_here("people.csv"), epsilon=1, delta=1e-6, objective="entropy", engine="spark",
                             ledger=None),),
        (["publish", "people.csv", *RUN, "--objective", "entropy", *SPARK],)),
    "engines/spark/engine.py:SparkEngine.prepare (columns)": (
        (lambda: api.publish(_here("people.csv"), epsilon=1, delta=1e-6, columns=["age"], engine="spark",
                             ledger=None),),
        (["publish", "people.csv", *RUN, "--columns", "age", *SPARK],)),
    "engines/spark/queries.py:SparkAggregate.check": (
        (lambda: api.query(_here("people.csv"), "quantile(age, 0.5) clamp 0..100", epsilon=1, engine="spark",
                           ledger=None),),
        (["query", "people.csv", "quantile(age, 0.5) clamp 0..100", "--epsilon", "1", "--no-ledger", *SPARK],)),
    "engines/spark/session.py:spark_session": ((_spark_session,), ()),
}

BY_WHERE = {entry[0]: entry for entry in REWORDED}


def test_every_reworded_message_has_a_real_trigger():
    assert set(TRIGGERS) | set(SPARK_TRIGGERS) == set(BY_WHERE)
    assert not set(TRIGGERS) & set(SPARK_TRIGGERS)


def _check(where, triggers, commands, capsys, *, absolute=False):
    _, library, parameters, line = BY_WHERE[where]
    expected = (parameters,) if isinstance(parameters, str) else tuple(parameters)
    for trigger in triggers:
        with pytest.raises(CrowdsafeError) as raised:
            trigger()
        assert str(raised.value) == library
        assert raised.value.parameters == expected
        assert cli_message(raised.value) == line
    for command in commands:
        argv, printed = command if isinstance(command, tuple) else (command, "{line}")
        if absolute:
            argv = [_here(a) if Path(a).is_file() else a for a in argv]
        capsys.readouterr()
        code = main(argv)
        printed = "crowdsafe: error: " + printed.format(line=line)
        assert capsys.readouterr().err.strip().splitlines()[-1] == printed, argv
        assert code == raised.value.exit_code  # 2, or 3 for a refusal of the ledger


@pytest.mark.parametrize("where", list(TRIGGERS))
def test_the_library_raises_the_reworded_message_and_the_command_line_prints_the_flags(where, workdir, capsys):
    _check(where, *TRIGGERS[where], capsys)


@pytest.fixture(scope="module")
def spark_on(spark):
    """The test process's one Spark session (tests/conftest.py), active for the library's calls."""
    return spark


@pytest.mark.spark
@pytest.mark.parametrize("where", list(SPARK_TRIGGERS))
def test_the_spark_engine_raises_the_reworded_message_and_the_command_line_prints_the_flags(where, spark_on, workdir,
                                                                                           capsys):
    _check(where, *SPARK_TRIGGERS[where], capsys, absolute=True)
