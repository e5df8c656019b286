"""Library errors name parameters; the command line names its flags (crowdsafe.cli.flags).

``REWORDED`` lists every library error that named a command-line flag (issue 17), as
``(where, library message, parameters, command-line line)``: the library's wording in the
Python API's terms, the parameters the error lists, and the line the command line prints for
it, which still names the flags the user typed. A message that lists no parameter (every one of
them before the rewording) is printed unchanged.
"""

from __future__ import annotations

import pytest

from crowdsafe.cli import main
from crowdsafe.cli.flags import cli_message, flag
from crowdsafe.errors import BudgetExceeded, CrowdsafeError, InputError, ParameterError, SchemaError

REWORDED = [
    ("anonymize/cells.py:103",
     "no quasi-identifiers to anonymize; name them with qi=[...]", "qi",
     "no quasi-identifiers to anonymize; name them with --qi a,b,c"),
    ("anonymize/classic.py:38",
     "the data has several sensitive attributes (a, b); name the one to protect with the sensitive parameter",
     "sensitive",
     "the data has several sensitive attributes (a, b); name the one to protect with --sensitive"),
    ("anonymize/classic.py:37 and anonymize/constraints.py:178",
     "ℓ-diversity and t-closeness need a sensitive attribute; name it with the sensitive parameter", "sensitive",
     "ℓ-diversity and t-closeness need a sensitive attribute; name it with --sensitive"),
    ("anonymize/classic.py:85, anonymize/publish.py:534, api.py:141",
     "the data has no quasi-identifiers; name them with qi=[...]", "qi",
     "the data has no quasi-identifiers; name them with --qi a,b,c"),
    ("anonymize/objectives.py:230",
     "the target parameter is for objective='classification', not entropy", ("target", "objective"),
     "--target is for --objective classification, not entropy"),
    ("anonymize/objectives.py:237",
     "the target 'income' is not a published column (age, sex); declare it a quasi-identifier or sensitive "
     "attribute, or include it in the columns parameter", "columns",
     "the target 'income' is not a published column (age, sex); declare it a quasi-identifier or sensitive "
     "attribute, or include it in --columns"),
    ("anonymize/objectives.py:227",
     "the classification objective needs the target column: target=COLUMN", "target",
     "the classification objective needs the target column: --target COLUMN"),
    ("anonymize/publish.py:434",
     "the columns parameter names no column", "columns",
     "--columns names no column"),
    ("anonymize/publish.py:443",
     "the columns parameter names 'age' twice", "columns",
     "--columns names 'age' twice"),
    ("anonymize/publish.py:437",
     "the columns parameter names 'salary', which the data does not have (columns: age, sex)", "columns",
     "--columns names 'salary', which the data does not have (columns: age, sex)"),
    ("anonymize/publish.py:469",
     "the entropy objective needs a hierarchy (a public domain) for every published column; 'zip' has none: "
     "give one in the schema, or choose another value of the objective parameter (nothing was charged)",
     "objective",
     "the entropy objective needs a hierarchy (a public domain) for every published column; 'zip' has none: "
     "give one in the schema, or choose another value of --objective (nothing was charged)"),
    ("anonymize/publish.py:856",
     "stopped after the charge (the budget is spent; nothing was written): a release would suppress more than "
     "50% of its sampled rows. This is a custodian-only fact, not covered by the guarantee: do not publish it "
     "(the exact rates are in the custodian report and the ledger entry). Use a coarser scheme "
     "(scheme='coarse' or higher levels), a larger epsilon or delta (smaller k), a larger beta, or fewer "
     "quasi-identifiers; force=True writes it anyway", ("scheme", "force"),
     "stopped after the charge (the budget is spent; nothing was written): a release would suppress more than "
     "50% of its sampled rows. This is a custodian-only fact, not covered by the guarantee: do not publish it "
     "(the exact rates are in the custodian report and the ledger entry). Use a coarser scheme "
     "(--scheme coarse or higher levels), a larger epsilon or delta (smaller k), a larger beta, or fewer "
     "quasi-identifiers; --force writes it anyway"),
    ("anonymize/publish.py:193",
     "a fixed scheme is chosen without looking at the data, so it spends no epsilon1; drop the epsilon1 "
     "parameter, or drop the scheme parameter to let the exponential mechanism choose", ("epsilon1", "scheme"),
     "a fixed scheme is chosen without looking at the data, so it spends no epsilon1; drop --epsilon1, "
     "or drop --scheme to let the exponential mechanism choose"),
    ("anonymize/publish.py:203",
     "epsilon1 must be > 0 when the scheme is chosen from the data, got 0.0; give a fixed scheme with the "
     "scheme parameter for a strongly safe release", ("epsilon1", "scheme"),
     "epsilon1 must be > 0 when the scheme is chosen from the data, got 0.0; give a fixed scheme with "
     "--scheme for a strongly safe release"),
    ("api.py:616",
     "the spark_master parameter needs engine='spark'", ("spark_master", "engine"),
     "--spark-master needs --engine spark"),
    ("api.py:683",
     "the intersection attack needs the sensitive attribute (the sensitive parameter)", "sensitive",
     "the intersection attack needs the sensitive attribute (--sensitive)"),
    ("api.py:268",
     "no privacy budget is set for 'people.csv' in the ledger l.db; set one with "
     "set_budget('people.csv', epsilon=E, delta=D), or pass budget=(ε, δ)", "budget",
     "no privacy budget is set for 'people.csv' in the ledger l.db; set one with "
     "`crowdsafe ledger init people.csv --epsilon E --delta D`, or pass --budget E,D"),
    ("api.py:464",
     "the spark engine writes the view as it draws it: give out=VIEW.parquet", "out",
     "the spark engine writes the view as it draws it: give --out VIEW.parquet"),
    ("api.py:466",
     "the spark engine does not charge a budget ledger yet: use engine='polars' with a ledger", "engine",
     "the spark engine does not charge a budget ledger yet: use --engine polars with a ledger"),
    ("api.py:665",
     "the spark engine runs the intersection attack (with the sensitive parameter); run the linkage attack "
     "with engine='polars'", ("sensitive", "engine"),
     "the spark engine runs the intersection attack (with --sensitive); run the linkage attack "
     "with --engine polars"),
    ("attacks/intersection.py:137 and engines/spark/attacks.py:144",
     "name the quasi-identifiers the attacker knows (qi=[...])", "qi",
     "name the quasi-identifiers the attacker knows (--qi a,b,c)"),
    ("attacks/linkage.py:52",
     "name the quasi-identifiers the external table shares with the release (qi=[...])", "qi",
     "name the quasi-identifiers the external table shares with the release (--qi a,b,c)"),
    ("engines/spark/alpha_beta.py:142",
     "the domain has m = 1.000e+19 >= 2^63 tuples, beyond the spark engine's 64-bit signed indices; "
     "use engine='polars' or coarser domains", "engine",
     "the domain has m = 1.000e+19 >= 2^63 tuples, beyond the spark engine's 64-bit signed indices; "
     "use --engine polars or coarser domains"),
    ("engines/spark/attacks.py:141",
     "the spark engine locates targets exactly (location 'auto' or 'exact'); nearest-centroid location "
     "needs engine='polars'", "engine",
     "the spark engine locates targets exactly (location 'auto' or 'exact'); nearest-centroid location "
     "needs --engine polars"),
    ("engines/spark/attacks.py:172",
     "the targets' quasi-identifier domains have 2^63 or more combinations; use engine='polars'", "engine",
     "the targets' quasi-identifier domains have 2^63 or more combinations; use --engine polars"),
    ("engines/spark/attacks.py:328",
     "release r1 publishes centroids (microaggregation): locating targets by the nearest centroid needs "
     "engine='polars'", "engine",
     "release r1 publishes centroids (microaggregation): locating targets by the nearest centroid needs "
     "--engine polars"),
    ("engines/spark/publish.py:157",
     "the entropy objective is not available with engine='spark' yet (its sensitivity needs every column's "
     "public domain); choose another value of the objective parameter (nothing was charged)",
     ("engine", "objective"),
     "the entropy objective is not available with --engine spark yet (its sensitivity needs every column's "
     "public domain); choose another value of --objective (nothing was charged)"),
    ("engines/spark/publish.py:160",
     "the columns parameter is not available with engine='spark' yet; choose the published columns with the "
     "qi parameter and the sensitive parameter (nothing was charged)", ("columns", "engine", "qi", "sensitive"),
     "--columns is not available with --engine spark yet; choose the published columns with --qi and "
     "--sensitive (nothing was charged)"),
    ("engines/spark/queries.py:125",
     "quantiles are not computed on the spark engine (the exponential mechanism needs every value on the "
     "driver); use engine='polars'", "engine",
     "quantiles are not computed on the spark engine (the exponential mechanism needs every value on the "
     "driver); use --engine polars"),
    ("engines/spark/session.py:33",
     "a Spark session on 'local[1]' is already active; cannot switch to spark_master='local[2]'",
     "spark_master",
     "a Spark session on 'local[1]' is already active; cannot switch to --spark-master local[2]"),
    ("mechanisms/queries.py:314",
     "the schema names the person identifier 'pid': a person may own several rows, so say how many rows per "
     "person a query may use (max_rows_per_person=N)", "max_rows_per_person",
     "the schema names the person identifier 'pid': a person may own several rows, so say how many rows per "
     "person a query may use (--max-rows-per-person N)"),
    ("metrics/report.py:75",
     "the release holds none of the original's quasi-identifiers; name them with qi=[...]", "qi",
     "the release holds none of the original's quasi-identifiers; name them with --qi a,b,c"),
    ("models/classes.py:151",
     "no quasi-identifiers: name them with qi=[...]", "qi",
     "no quasi-identifiers: name them with --qi a,b,c"),
    ("perturb/alpha_beta.py:479",
     "an exploratory run carries no guarantee to charge to a ledger: declare the public domains and "
     "max_rows=N, or run it without a ledger", "max_rows",
     "an exploratory run carries no guarantee to charge to a ledger: declare the public domains and "
     "--max-rows N, or run it without a ledger"),
    ("perturb/alpha_beta.py:160",
     "declare a public bound on the number of rows with max_rows=N, fixed without looking at the data: "
     "d = c n/m, beta and the error bars use it in place of the exact n; or pass exploratory=True for an "
     "uncertified run", ("max_rows", "exploratory"),
     "declare a public bound on the number of rows with --max-rows N, fixed without looking at the data: "
     "d = c n/m, beta and the error bars use it in place of the exact n; or pass --exploratory for an "
     "uncertified run"),
    ("perturb/domain.py:213",
     "column 'age' of the data holds a value outside its public domain; add the value to the declared domain "
     "(a missing value counts: list null, or use missing='drop') or recode the data", "missing",
     "column 'age' of the data holds a value outside its public domain; add the value to the declared domain "
     "(a missing value counts: list null, or use --missing drop) or recode the data"),
    ("perturb/view.py:124",
     "no certificate for the view v.csv (looked for v.csv.certificate.json); give it with the certificate "
     "parameter", "certificate",
     "no certificate for the view v.csv (looked for v.csv.certificate.json); give it with --certificate"),
    ("privacy/ledger.py:349",
     "this ledger was written by an earlier crowdsafe (schema 1) whose dataset identities this version cannot "
     "match: its spent budgets would not be found. Keep it for your records, start a new ledger (ledger=PATH "
     "or CROWDSAFE_LEDGER) and register each dataset's remaining budget with "
     "set_budget(DATA, epsilon=E, delta=D)", ("ledger", "budget"),
     "this ledger was written by an earlier crowdsafe (schema 1) whose dataset identities this version cannot "
     "match: its spent budgets would not be found. Keep it for your records, start a new ledger (--ledger PATH "
     "or CROWDSAFE_LEDGER) and register each dataset's remaining budget with "
     "`crowdsafe ledger init DATA --epsilon E --delta D`"),
    ("privacy/ledger.py:511",
     "no privacy budget is set for dataset '0123456789abcdef' in the ledger l.db; set one with "
     "set_budget(DATA, epsilon=E, delta=D) (or pass budget=(ε, δ))", "budget",
     "no privacy budget is set for dataset '0123456789abcdef' in the ledger l.db; set one with "
     "`crowdsafe ledger init DATA --epsilon E --delta D` (or pass --budget E,D)"),
    ("privacy/ledger.py:379",
     "the ledger l.db cannot be written (read-only file or folder); nothing was charged. Use a ledger you can "
     "write (ledger=PATH or CROWDSAFE_LEDGER)", "ledger",
     "the ledger l.db cannot be written (read-only file or folder); nothing was charged. Use a ledger you can "
     "write (--ledger PATH or CROWDSAFE_LEDGER)"),
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
