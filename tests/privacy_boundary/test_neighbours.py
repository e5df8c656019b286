"""Every artifact of every command, on D and on D minus one row: only DP outputs may differ.

The rule (issue 16, docs/privacy-boundary.md): every byte that leaves a run is fixed before the
data is read, or an output of a charged DP mechanism (and what is computed from it alone), or in
a part explicitly labelled custodian-only. So on neighbouring tables (one row removed), with the
same seed and a fresh ledger each, every field of every public artifact that is not declared a
DP output or custodian-only must come out identical; and no field may be a hash of the data.

Each case below declares, for review, the few fields that may differ. A field not declared that
differs fails the test with its JSON path, so a new data-dependent field cannot slip in.
"""

from __future__ import annotations

import inspect
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from boundary_data import PEOPLE, QI, removals, write_inputs, write_people
from boundary_helpers import Classification, digests_of, judge, matches, normalized
from runs import (
    LEDGER,
    SEED,
    Case,
    api_case,
    cli_case,
    if_option,
    publish_api,
    run_cli,
    written_files,
)

TIMESTAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:[+-]\d\d:\d\d|Z)?")

# -- what may differ, per command ----------------------------------------------------------------

# publish: the release's rows are the DP output; rows_published and classes are computed from
# them alone.
PUBLISH_RELEASE = tuple(f"{where}releases[*].{part}{field}" for where in ("stdout.", "api.summary.")
                        for part in ("", "dp_output.") for field in ("rows_published", "classes")) + (
    "api.release_summaries[*].rows_published", "api.release_summaries[*].classes",
    "api.release_summaries[*].smallest_class")
# with the exponential mechanism the chosen scheme is a DP output (ε1-DP, charged), and so is
# every field that only restates it
PUBLISH_CHOSEN = ("**releases[*].scheme.*", "**releases[*].dp_output.scheme.*", "**parameters.scheme.*",
                  "**parameters.scheme_level_names.*", "**parameters.scheme_level_descriptions.*",
                  "**parameters.selection.levels.*", "**.mechanisms[*].name",
                  "api.release_summaries[*].recoding.**", "**releases[*].chooser.levels.*")
PUBLISH_LINES = (r"^  published     [\d,]+ rows in [\d,]+ classes of >= \d+ rows$",)
PUBLISH_CHOSEN_LINES = (r"^  scheme        ",)
# several releases: one line each, its scheme (fixed, or chosen: a DP output) and its rows and classes
# (with a fixed scheme the scheme is the same on both inputs, as the JSON case checks)
RELEASE_LINE = r"^  release \d+ +scheme [^;]+; published [\d,]+ rows in [\d,]+ classes of >= \d+ rows$"
CUSTODIAN = ("**custodian**",)

FIXED = Classification(dp_outputs=PUBLISH_RELEASE, custodian_only=CUSTODIAN, dp_lines=PUBLISH_LINES + (RELEASE_LINE,))
CHOSEN = Classification(dp_outputs=PUBLISH_RELEASE + PUBLISH_CHOSEN, custodian_only=CUSTODIAN,
                        dp_lines=PUBLISH_LINES + PUBLISH_CHOSEN_LINES + (RELEASE_LINE,))

# query: the noisy value (each cell of a histogram over a public domain) and, for a mean, the
# interval computed from the noisy sum and count
QUERY = Classification(dp_outputs=("stdout.value", "stdout.value[*].count", "stdout.components.*.value",
                                   "stdout.components.*.value[*]"),
                       custodian_only=CUSTODIAN, dp_lines=(r"^answer        ", r"^│ "))
MEAN = Classification(dp_outputs=QUERY.dp_outputs + ("stdout.error_interval_95[*]",),
                      custodian_only=CUSTODIAN, dp_lines=QUERY.dp_lines + (r"^95% interval  ",))

# perturb (α-β): the view's rows are the DP output ((d, γ)-private); its size is computed from it
PERTURB = Classification(dp_outputs=("stdout.view_rows", "api.result.view_rows",
                                     "**certificate**parameters.view_rows"),
                         custodian_only=CUSTODIAN, dp_lines=(r"^view: [\d,]+ rows -> ",))

# classic k-anonymity gives no guarantee: the release is what it is, and fields computed from the
# release alone may differ (how many rows and classes it has, the generalization it shows). The
# certificate and anything about the input (rows in, suppressed, utility against the input,
# search scores, timings) may not, unless labelled custodian-only.
CLASSIC = Classification(dp_outputs=("stdout.rows_published", "stdout.classes", "stdout.smallest_class",
                                     "stdout.recoding.**", "**parameters.scheme.*",
                                     "**parameters.scheme_level_names.*",
                                     "**parameters.scheme_level_descriptions.*"),
                         custodian_only=CUSTODIAN)

# attack: the attack reads public releases and the attacker's own targets table; its
# measurements over those targets are its result (when the targets are the custodian's own
# data, the whole report is the custodian's). What it says about each release must not move.
ATTACK = Classification(dp_outputs=tuple(
    [f"stdout.summary.{k}" for k in ("targets", "average_prior_anonymity", "average_posterior_anonymity",
                                      "average_drop", "vulnerable", "perfect_breach", "partial_breach.**",
                                      "contradictions", "average_partition_size[*]", "perfect_breach_true",
                                      "true_value_in_candidates")]
    + [f"stdout.releases[*].{k}" for k in ("located", "ambiguous", "average_partition_size",
                                            "average_prior_anonymity", "correct_location")]),
                        custodian_only=CUSTODIAN)
LINKAGE = Classification(dp_outputs=tuple(
    f"stdout.summary.{k}" for k in ("external_records", "rows_with_a_candidate", "reidentified_uniquely",
                                     "reidentified_with_probability_at_least_half",
                                     "expected_correct_links_if_listed", "reidentified_uniquely_correct")),
                         custodian_only=CUSTODIAN)

# check on a release (with its original for reading generalized cells): a function of the
# release; the original must not show through
CHECK_RELEASE = Classification(custodian_only=CUSTODIAN)


def publish_cli(*extra: str, as_json: bool = True) -> list[str]:
    return ["publish", "data.parquet", "--schema", "schema.toml", "--epsilon", "1", "--delta", "1e-3",
            "--budget", "20,1e-2", "--ledger", LEDGER, "--seed", SEED, "--out", "out/r.csv", *extra,
            *if_option("publish", "--custodian-report", "custodian/report.json"),
            *(["--json"] if as_json else [])]


def query_cli(text: str, *extra: str, as_json: bool = True) -> list[str]:
    return ["query", "data.parquet", text, "--schema", "schema.toml", "--epsilon", "1", "--budget", "10,1e-5",
            "--ledger", LEDGER, "--seed", SEED, *extra, *(["--json"] if as_json else [])]


# a public bound on n and a custodian-only report file, where the command takes them
PERTURB_ARGS = ["perturb", "--no-ledger", "data.parquet", "--schema", "schema.toml", "--gamma", "0.2",
                "--attributes", "age,education,sex,income", "--seed", SEED, "--out", "out/view.csv",
                *if_option("perturb", "--max-rows", "10000"),
                *if_option("perturb", "--custodian-report", "custodian/report.json")]
# the public form: d fixed and every domain declared (nothing about the data assumed public)
PERTURB_PUBLIC = PERTURB_ARGS + ["--d", "0.1", "--domains", "domains.json"]


# a schema with unreviewed from_data markers (issue 32): the reasons the certificate gives are read
# from the schema alone, so identical on neighbours
def drafted(argv: list[str]) -> list[str]:
    return ["drafted.toml" if a == "schema.toml" else a for a in argv]


# α-β with every domain from the (drafted) schema's hierarchy files
PERTURB_DRAFTED = drafted(["perturb", "--no-ledger", "data.parquet", "--schema", "schema.toml", "--gamma", "0.2",
                           "--d", "0.1",
                           "--attributes", "education,workclass,marital-status", "--seed", SEED, "--out",
                           "out/view.csv", *if_option("perturb", "--max-rows", "10000")])


# publish a table with identifier columns and no schema: the published email is warned about
PEOPLE_PUBLISH = ["publish", PEOPLE, "--qi", "age,education,sex,email", "--epsilon", "1", "--delta", "1e-3",
                  "--budget", "20,1e-2", "--ledger", LEDGER, "--seed", SEED, "--out", "out/r.csv"]


def anonymize_cli(algorithm: str, *extra: str) -> list[str]:
    return ["anonymize", "data.parquet", "--algorithm", algorithm, "--k", "5", "--out", "out/a.csv", "--json", *extra]


def _query_api(text: str):
    def call():
        from crowdsafe import api

        return api.query("data.parquet", text, epsilon=1.0, schema="schema.toml", randomness=int(SEED), ledger=LEDGER,
                         budget=(10.0, 1e-5))

    return api_case(call)


def _perturb_api():
    from crowdsafe import api

    bound = {"max_rows": 10_000} if "max_rows" in inspect.signature(api.perturb).parameters else {}
    return api.perturb("data.parquet", schema="schema.toml", attributes=["age", "education", "sex", "income"],
                       domains=json.loads(Path("domains.json").read_text(encoding="utf-8")),
                       d=0.1, gamma=0.2, seed=int(SEED), out="out/view.csv", ledger=None, **bound)


def _anonymize_api():
    from crowdsafe import api

    return api.anonymize("data.parquet", algorithm="lattice", k=5, schema="schema.toml", out="out/a.csv")


API_QUERY = Classification(dp_outputs=tuple(p.replace("stdout.", "api.result.") for p in QUERY.dp_outputs),
                           custodian_only=CUSTODIAN)

CASES = [
    # publish, Polars engine
    Case("publish-fixed", cli_case(publish_cli("--scheme", "medium")), FIXED),
    Case("publish-fixed-text", cli_case(publish_cli("--scheme", "medium", as_json=False)), FIXED),
    Case("publish-exponential", cli_case(publish_cli()), CHOSEN),
    Case("publish-exponential-text", cli_case(publish_cli(as_json=False)), CHOSEN),
    # the plan alone (reads only the row count, for the expected sample size)
    Case("publish-classification", cli_case(publish_cli("--objective", "classification", "--target", "income")),
         CHOSEN),
    # entropy needs a public domain (a hierarchy) for every published column
    Case("publish-entropy", cli_case(publish_cli("--objective", "entropy", "--columns",
                                                 "age,workclass,education,marital-status")), CHOSEN),
    Case("publish-discernibility-columns",
         cli_case(publish_cli("--objective", "discernibility", "--columns", "age,education,sex,income")), CHOSEN),
    Case("publish-plan-only-column-sets",
         cli_case(["publish", "data.parquet", "--schema", "schema.toml", "--plan-only", "--json", "--objective",
                   "classification", "--target", "income", "--columns", "age,education,income",
                   "--columns", "age,workclass,education,marital-status,race,sex,income"]), FIXED),
    Case("publish-plan-only", cli_case(["publish", "data.parquet", "--plan-only", "--json"]), FIXED),
    Case("publish-plan-only-text", cli_case(["publish", "data.parquet", "--plan-only"]), FIXED),
    Case("publish-2-releases", cli_case(publish_cli("--scheme", "medium", "--releases", "2")), FIXED),
    Case("publish-2-releases-text", cli_case(publish_cli("--scheme", "medium", "--releases", "2", as_json=False)),
         FIXED),
    Case("publish-2-exponential", cli_case(publish_cli("--releases", "2")), CHOSEN),
    Case("publish-2-exponential-text", cli_case(publish_cli("--releases", "2", as_json=False)), CHOSEN),
    # a scheme too fine for the table: it suppresses > 90%, and is written like any other release
    # (the warning is in the custodian-only part)
    Case("publish-heavy-suppression", cli_case(publish_cli("--scheme", "none")), FIXED),
    Case("publish-heavy-suppression-text", cli_case(publish_cli("--scheme", "none", as_json=False)), FIXED),
    Case("api-publish-fixed", publish_api("medium"), FIXED, tables=("releases[*].rows",)),
    # publish, Spark engine (the table counted on Spark, each sample thinned from the counts)
    Case("spark-publish-fixed", cli_case(publish_cli("--scheme", "medium", "--engine", "spark")), FIXED),
    Case("spark-publish-exponential", cli_case(publish_cli("--engine", "spark")), CHOSEN),
    # the plan the Spark run makes, from the table's hierarchies (the table pass, no count)
    Case("spark-publish-plan-only", cli_case(["publish", "data.parquet", "--schema", "schema.toml", "--plan-only",
                                              "--json", "--engine", "spark"]), FIXED),
    Case("api-publish-exponential-2", publish_api(None, releases=2), CHOSEN, tables=("releases[*].rows",)),
    Case("publish-drafted", cli_case(drafted(publish_cli())), CHOSEN),
    Case("publish-drafted-text", cli_case(drafted(publish_cli("--scheme", "medium", as_json=False))), FIXED),
    Case("publish-plan-only-drafted", cli_case(["publish", "data.parquet", "--schema", "drafted.toml",
                                                "--plan-only"]), FIXED),
    # DP queries
    Case("query-count", cli_case(query_cli("count where age >= 30")), QUERY),
    Case("query-count-text", cli_case(query_cli("count where age >= 30", as_json=False)), QUERY),
    Case("query-histogram", cli_case(query_cli("histogram sex in ('Female', 'Male')")), QUERY),
    Case("query-histogram-private-domain", cli_case(query_cli("histogram education", "--delta", "1e-6")), QUERY),
    Case("query-sum", cli_case(query_cli("sum(age) clamp 20..60")), QUERY),
    Case("query-sum-text", cli_case(query_cli("sum(age) clamp 20..60", as_json=False)), QUERY),
    # with the custodian's facts asked for (clamp counts): they must come labelled custodian-only
    Case("query-mean-custodian", cli_case(query_cli("mean(hours-per-week) clamp 30..50",
                                                    *if_option("query", "--custodian"))), MEAN),
    Case("query-mean-custodian-text", cli_case(query_cli("mean(hours-per-week) clamp 30..50",
                                                         *if_option("query", "--custodian"), as_json=False)), MEAN),
    Case("query-mean", cli_case(query_cli("mean(hours-per-week) clamp 30..50")), MEAN),
    Case("query-quantile", cli_case(query_cli("quantile(age, 0.5) clamp 17..90")), QUERY),
    Case("api-query-sum", _query_api("sum(age) clamp 20..60"), API_QUERY, tables=()),
    # α-β perturbation
    Case("perturb", cli_case(PERTURB_PUBLIC + ["--json"]), PERTURB),
    Case("perturb-text", cli_case(PERTURB_PUBLIC), PERTURB),
    # the README's form (d = c·n/m, domains not declared): either refused before the data is read,
    # or every public field must still match
    Case("perturb-c-undeclared-domains", cli_case(PERTURB_ARGS + ["--c", "0.5", "--json"]), PERTURB, exit=None),
    Case("api-perturb", api_case(_perturb_api), PERTURB, tables=("view.**",)),
    Case("perturb-drafted", cli_case(PERTURB_DRAFTED + ["--json"]), PERTURB),
    Case("perturb-drafted-text", cli_case(PERTURB_DRAFTED), PERTURB),
    # classic k-anonymity
    Case("anonymize-mondrian", cli_case(anonymize_cli("mondrian", "--qi", ",".join(QI), "--sensitive", "income")),
         CLASSIC),
    Case("anonymize-mdav", cli_case(anonymize_cli("mdav", "--qi", "age,hours-per-week", "--sensitive", "income")),
         CLASSIC),
    Case("anonymize-lattice", cli_case(anonymize_cli("lattice", "--schema", "schema.toml")), CLASSIC),
    Case("api-anonymize-lattice", api_case(_anonymize_api),
         Classification(dp_outputs=tuple(p.replace("stdout.", "api.result.") for p in CLASSIC.dp_outputs),
                        custodian_only=CUSTODIAN),
         # a classic release keeps the table the caller passed in (no sample is drawn)
         tables=("rows", "frame", "source")),
    # attacks: the releases are fixed, the targets table is the neighbouring input
    Case("attack-intersection", cli_case(["attack", "intersection", "r1.csv", "r2.csv", "--targets", "data.parquet",
                                          "--schema", "schema.toml", "--qi", "age,education,sex",
                                          "--sensitive", "income", "--json"]), ATTACK),
    Case("attack-linkage", cli_case(["attack", "linkage", "r1.csv", "--external", "data.parquet", "--schema",
                                     "schema.toml", "--qi", "age,education,sex", "--json"]), LINKAGE),
    # no schema, columns named like direct identifiers (issue 18): each command warns on stderr (and
    # in its notes) from the names alone, so the warning lines must be identical on D and D-1
    Case("publish-inferred-identifiers", cli_case(PEOPLE_PUBLISH + ["--scheme", "coarse", "--json"], people=True),
         FIXED),
    Case("publish-inferred-identifiers-text", cli_case(PEOPLE_PUBLISH, people=True), CHOSEN),
    Case("query-inferred-identifier", cli_case(["query", PEOPLE, "count where email is not null and age >= 30",
                                                "--epsilon", "1", "--budget", "10,1e-5", "--ledger", LEDGER,
                                                "--seed", SEED, "--json"], people=True), QUERY),
    Case("anonymize-inferred-identifiers", cli_case(["anonymize", PEOPLE, "--qi", "age,sex", "--k", "5", "--out",
                                                     "out/a.csv", "--json"], people=True), CLASSIC),
    # check on a release: the original is read only to interpret generalized cells
    Case("check-release", cli_case(["check", "r1.csv", "--original", "data.parquet", "--schema", "schema.toml",
                                    "--json"]), CHECK_RELEASE),
]


# -- running a case on D and on D minus one row --------------------------------------------------


def _domains(frame) -> dict[str, list[Any]]:
    """Public value lists (declared from the full table, identical for both runs)."""
    return {c: sorted(frame.get_column(c).unique().to_list()) for c in ("age", "education", "sex", "income")}


@pytest.fixture(scope="session")
def prepared(base_frame, tmp_path_factory) -> dict[str, Any]:
    """Two releases of the full table (inputs of the attack and of check-release) and the
    public domains file, made once."""
    from crowdsafe import api

    root = tmp_path_factory.mktemp("fixed-inputs")
    write_inputs(root, base_frame)
    here = os.getcwd()
    os.chdir(root)
    try:
        for i in (1, 2):
            api.publish("data.parquet", schema="schema.toml", epsilon=1.0, delta=1e-3, scheme="medium", seed=i,
                        ledger=None, out=f"r{i}.csv")
    finally:
        os.chdir(here)
    (root / "domains.json").write_text(json.dumps(_domains(base_frame)), encoding="utf-8")
    return {"files": [root / "r1.csv", root / "r2.csv", root / "domains.json"]}


def run_case(case: Case, frame, directory: Path, prepared: dict[str, Any]) -> dict[str, Any]:
    """Run ``case`` on ``frame`` in a fresh ``directory`` (fresh ledger, same file names)."""
    write_inputs(directory, frame)
    for path in prepared["files"]:
        shutil.copy(path, directory / path.name)
    os.chdir(directory)
    artifacts = case.run(directory)
    return normalized(artifacts, {str(directory.resolve()): "<run>", str(directory): "<run>"})


_D_CACHE: dict[str, dict[str, Any]] = {}
_DIGESTS: dict[str, list[str]] = {}


def _digests(directory: Path) -> list[str]:
    """Digests of the input of a run: its unkeyed fingerprint, hashes of the file's bytes and of
    the table as CSV text."""
    from crowdsafe.data import load

    dataset = load(str(directory / "data.parquet"), schema=str(directory / "schema.toml"))
    return digests_of(dataset, [(directory / "data.parquet").read_bytes(), dataset.frame.write_csv().encode()])


def _times_masked(tree: Any) -> Any:
    """Wall-clock timestamps (when a ledger entry was made) are not functions of the data;
    durations are, and are not masked."""
    if isinstance(tree, dict):
        return {k: _times_masked(v) for k, v in tree.items()}
    if isinstance(tree, list):
        return [_times_masked(v) for v in tree]
    if isinstance(tree, str):
        return TIMESTAMP.sub("<time>", tree)
    return tree


REMOVALS = ("first", "unique-qi", "large-class")
# every removal for one form of each command; the other forms (text output, variants) with the
# first row only, to keep the module fast
EVERY_REMOVAL = {"publish-fixed", "publish-exponential", "query-sum", "query-mean", "perturb", "anonymize-lattice",
                 "attack-intersection", "publish-inferred-identifiers", "publish-drafted", "spark-publish-exponential"}
PAIRS = [pytest.param(c, r, id=f"{c.name}-{r}", marks=[pytest.mark.spark] if c.name.startswith("spark-") else [])
         for c in CASES for r in (REMOVALS if c.name in EVERY_REMOVAL else REMOVALS[:1])]


@pytest.mark.parametrize(("case", "removal"), PAIRS)
def test_only_dp_outputs_differ_between_neighbours(case: Case, removal: str, base_frame, prepared, tmp_path):
    """``case`` on D and on D minus one row (the ``removal``), same seed, fresh ledgers: every
    field not declared a DP output or custodian-only is identical; no field is a data digest;
    the Python API hands back no table but the release's own rows."""
    if case.name not in _D_CACHE:
        _D_CACHE[case.name] = run_case(case, base_frame, tmp_path / "D", prepared)
    full = _D_CACHE[case.name]
    row = removals(base_frame)[removal]
    neighbour = base_frame.filter(base_frame.with_row_index("_r")["_r"] != row)
    assert neighbour.height == base_frame.height - 1
    smaller = run_case(case, neighbour, tmp_path / "D-1", prepared)

    for side, art in (("D", full), ("D-1", smaller)):
        if case.exit is not None:
            assert art.get("exit", 0) == case.exit, f"{case.name} on {side}: exit {art.get('exit')}: {art['stderr']}"
    tables = {side: art.pop("_tables", []) for side, art in (("D", full), ("D-1", smaller))}
    full, smaller = _times_masked(full), _times_masked(smaller)
    digests = _digests(tmp_path / "D") if case.name not in _DIGESTS else _DIGESTS[case.name]
    _DIGESTS[case.name] = digests
    digests = digests + _digests(tmp_path / "D-1")
    verdict = judge(full, smaller, case.classification, digests)
    problems = [str(d) for d in verdict.leaks]
    for side, paths in tables.items():
        problems += [f"{side}: the returned object holds a table at {p} (only the release's rows may be handed back)"
                     for p in paths if not matches(p, case.tables)]
    _D_CACHE[case.name]["_tables"] = tables["D"]
    assert not problems, f"{case.name}, removing the {removal} row: not covered by the guarantee:\n  " + \
        "\n  ".join(dict.fromkeys(problems))


# -- the heavy-suppression warning is the custodian's (issue 32) ---------------------------------

# 12 rows of one value and 110 unique ones; k = 5, β = 0.5, seed 57. The sample of D holds 71
# rows of which 64 are suppressed (90.1%: above the 90% warning threshold); D without its last
# row (a unique value, sampled) gives the same sample less that row, 63 of 70 suppressed (90.0%:
# not above). The test checks this premise from the custodian reports before anything else.
STRADDLE = ["a"] * 12 + [f"u{i}" for i in range(110)]
STRADDLE_SEED = "57"


def _publish_straddle(directory: Path, values: list[str], as_json: bool) -> dict[str, Any]:
    import polars as pl

    directory.mkdir()
    pl.DataFrame({"x": values}).write_parquet(directory / "data.parquet")
    os.chdir(directory)
    artifacts = run_cli(["publish", "data.parquet", "--qi", "x", "--epsilon", "2", "--delta", "0.05", "--k", "5",
                         "--beta", "0.5", "--scheme", "none", "--budget", "20,0.5", "--ledger", LEDGER,
                         "--seed", STRADDLE_SEED, "--out", "out/r.csv",
                         "--custodian-report", "custodian/report.json", *(["--json"] if as_json else [])])
    artifacts["files"] = written_files(directory)
    artifacts["release_files"] = sorted(p.name for p in (directory / "out").iterdir())
    return _times_masked(normalized(artifacts, {str(directory.resolve()): "<run>", str(directory): "<run>"}))


@pytest.mark.parametrize("as_json", [True, False], ids=["json", "text"])
def test_the_heavy_suppression_warning_changes_no_public_output(as_json, tmp_path):
    """D warns (it suppresses just over 90% of its sample), D minus one row does not: both write
    the release, exit 0, and every public byte (stdout outside the custodian-only part, stderr,
    certificate, files written) is the same; the warning, with its exact rate, is only in the
    custodian-only places (the report file, ``custodian_only`` or the lines under the heading)."""
    from crowdsafe.data import load

    full = _publish_straddle(tmp_path / "D", STRADDLE, as_json)
    smaller = _publish_straddle(tmp_path / "D-1", STRADDLE[:-1], as_json)
    reports = [side["files"]["custodian/report.json"] for side in (full, smaller)]
    assert [r["releases"][0]["suppression_rate"] > 0.9 for r in reports] == [True, False], \
        "the premise no longer holds (sampling changed?): pick a seed whose runs straddle 90%"
    (warning,) = reports[0]["warnings"]
    assert reports[1]["warnings"] == [] and "suppressed 90.1% of its sample (64 of 71 rows)" in warning
    if as_json:
        assert full["stdout"]["custodian_only"]["warnings"] == [warning]
    else:
        assert f"  warning       {warning}" in full["stdout_custodian_only"]
    for side in (full, smaller):
        assert side["exit"] == 0 and side["release_files"] == ["r.certificate.json", "r.csv", "r.report.html"]
        public = {k: v for k, v in side.items() if k not in ("files", "stdout_custodian_only")}
        if as_json:
            public["stdout"] = {k: v for k, v in side["stdout"].items() if k != "custodian_only"}
        assert "90.1%" not in json.dumps(public) and "suppressed" not in json.dumps(public)
    digests = []
    for side in ("D", "D-1"):
        raw = (tmp_path / side / "data.parquet").read_bytes()
        digests += digests_of(load(str(tmp_path / side / "data.parquet"), qi=["x"]), [raw])
    verdict = judge(full, smaller, FIXED, digests)
    assert not verdict.leaks, "\n  ".join(str(d) for d in verdict.leaks)


# -- reports on the raw data are the custodian's ------------------------------------------------

RAW_REPORTS = {
    "check": ["check", "data.parquet", "--schema", "schema.toml"],
    "compare": ["compare", "data.parquet", "r1.csv", "--schema", "schema.toml", "--queries", "100"],
}


@pytest.mark.slow  # half a second or more (the quick loop: README)
@pytest.mark.parametrize("command", sorted(RAW_REPORTS))
def test_reports_on_raw_data_are_labelled_custodian_only_and_hold_no_digest(command, base_frame, prepared, tmp_path):
    """`crowdsafe check DATA` and `crowdsafe compare DATA RELEASE` report exact facts about the
    data (class sizes, uniques, risk; information loss against the input): they can only be
    custodian-only. Each must say so, printed and in JSON, and carry no digest of the data."""
    from crowdsafe.data import load

    write_inputs(tmp_path, base_frame)
    for path in prepared["files"]:
        shutil.copy(path, tmp_path / path.name)
    os.chdir(tmp_path)
    text = run_cli(RAW_REPORTS[command])
    payload = run_cli(RAW_REPORTS[command] + ["--json"])
    assert text["exit"] == 0 and payload["exit"] == 0, (text["stderr"], payload["stderr"])
    problems = []
    if not text["stdout_custodian_only"]:
        problems.append("the printed report does not say it is for the custodian only")
    top = payload["stdout"]
    if not any("custodian" in key.lower() or (isinstance(value, str) and "custodian" in value.lower())
               for key, value in top.items()):
        problems.append("the JSON report has no part labelled custodian-only")
    digests = digests_of(load("data.parquet", schema="schema.toml"),
                         [Path("data.parquet").read_bytes(), base_frame.write_csv().encode()])
    verdict = judge(payload, payload, Classification(), digests)
    problems += [str(d) for d in verdict.leaks]
    assert not problems, "\n  ".join([f"{command} on the raw data:"] + problems)


# -- the warning about identifier-like column names is public ------------------------------------


@pytest.mark.parametrize("removal", REMOVALS)
def test_check_warns_about_identifier_names_identically_on_neighbours(removal, base_frame, prepared, tmp_path):
    """`crowdsafe check` on a table with no schema is custodian-only as a whole, but its warnings
    about columns named like direct identifiers come from the names alone: on D and D minus one
    row they are the same lines, one per column."""
    row = removals(base_frame)[removal]
    neighbour = base_frame.filter(base_frame.with_row_index("_r")["_r"] != row)
    lines = []
    for side, frame in (("D", base_frame), ("D-1", neighbour)):
        write_inputs(tmp_path / side, frame)
        write_people(tmp_path / side)
        os.chdir(tmp_path / side)
        result = run_cli(["check", PEOPLE])
        assert result["exit"] == 0, result["stderr"]
        lines.append(result["stderr"])
    assert lines[0] == lines[1]
    assert [line.split("'")[1] for line in lines[0] if line.startswith("crowdsafe: warning: column ")] == \
        ["name", "email", "case_number"]


@pytest.mark.spark
def test_the_spark_comparison_can_fail(monkeypatch, base_frame, prepared, tmp_path):
    """Broken on purpose: the Spark engine's publication notes name how many distinct tuples the
    table's counts hold (read from the data, not a DP output). The comparison of the Spark case
    must catch it, at the notes' paths."""
    from crowdsafe.engines.spark.engine import SparkEngine

    seen: dict[str, int] = {}
    prepare, notes = SparkEngine.prepare, SparkEngine.publication_notes

    def leaky_prepare(self, table, *args, **kwargs):
        seen["cells"] = table.counted.n_cells
        return prepare(self, table, *args, **kwargs)

    monkeypatch.setattr(SparkEngine, "prepare", leaky_prepare)
    monkeypatch.setattr(SparkEngine, "publication_notes",
                        lambda self, seeded: [*notes(self, seeded), f"{seen['cells']} distinct tuples"])
    case = next(c for c in CASES if c.name == "spark-publish-fixed")
    runs = [run_case(case, frame, tmp_path / side, prepared)
            for side, frame in (("D", base_frame), ("D-1", base_frame.slice(1)))]
    assert all(run.get("exit", 0) == 0 for run in runs)
    for run in runs:
        run.pop("_tables", None)
    leaks = [str(d) for d in judge(*runs, case.classification, []).leaks]
    assert leaks and all("distinct tuples" in leak for leak in leaks), leaks
