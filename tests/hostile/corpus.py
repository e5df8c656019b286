"""The bad-input corpus: one row per hostile or careless command line (see test_corpus.py).

A case is ``Case(id, argv, files, fragment)``:

- ``argv``: the command line after ``crowdsafe``; ``{in}`` is the folder holding the case's
  input files, ``{out}`` an empty output folder, ``{ledger}`` the case's ledger file (a copy of
  a ledger in which ``people.csv`` has a budget: a charge would show).
- ``files``: input files written into ``{in}`` before the run, besides the standard ones
  (``people.csv``, ``schema.toml``, ``r1.csv``, ``r2.csv``, ``targets.csv``): a name and its
  bytes or text, or :data:`FOLDER` for a folder of that name.
- ``fragment``: a piece of the one error line (case-insensitive).
- ``knowable``: the failure can be decided before the data is read, so no budget may be spent
  (every case here also checks that nothing is written).
- ``xfail``: why the case fails today and which file holds the fix (a strict xfail).

To add a case, add a row.
"""

from __future__ import annotations

import gzip
from dataclasses import dataclass, field

FOLDER = object()


@dataclass(frozen=True)
class Case:
    id: str
    argv: tuple[str, ...]
    fragment: str
    files: dict[str, object] = field(default_factory=dict)
    knowable: bool = True
    xfail: str | None = None
    setup: str | None = None  # "lock-ledger", "read-only-ledger", "corrupt-ledger", "ledger-mode-644",
    # "foreign-sqlite-ledger", "foreign-app-ledger" (FOREIGN_SETUPS), ...
    exit: int = 2  # 3 for a refusal of the ledger (crowdsafe.errors.BudgetExceeded)


def people_csv(rows: int = 240) -> str:
    """A small table: age, zip, sex, disease (a deterministic pattern, no randomness)."""
    sexes = ("F", "M")
    diseases = ("flu", "cold", "asthma", "none")
    lines = ["age,zip,sex,disease"]
    for i in range(rows):
        lines.append(f"{20 + (i * 7) % 50},{2130 + i % 9:05d},{sexes[i % 2]},{diseases[(i * 3) % 4]}")
    return "\n".join(lines) + "\n"


SCHEMA = ('[attributes.age]\ntype = "numeric"\n[attributes.zip]\ntype = "categorical"\n'
          '[attributes.sex]\ntype = "categorical"\n[attributes.disease]\nrole = "sensitive"\ntype = "categorical"\n')
RELEASE = 'age,sex,disease\n"[20, 29]",F,flu\n"[20, 29]",F,cold\n"[30, 39]",M,flu\n"[30, 39]",M,none\n'
TARGETS = "age,sex\n25,F\n33,M\n"

STANDARD_FILES = {"people.csv": people_csv(), "schema.toml": SCHEMA, "r1.csv": RELEASE, "r2.csv": RELEASE,
                  "targets.csv": TARGETS}

# bad files, by kind
GZIPPED_GARBAGE = b"\x1f\x8b\x08\x00" + b"\x00" * 12 + b"not really deflate"
BAD_FILES: dict[str, object] = {
    "empty.csv": b"",
    "blank.csv": b"\n\n  \n",
    "header.csv": b"age,zip,sex,disease\n",
    "binary.csv": bytes(range(256)) * 4,
    "ragged.csv": b"age,zip,sex\n30,02139,F\n31,02139\n32,02139,M,extra,cells\n",
    "long.csv": b"age,zip,sex,disease\n30,02139,F,flu\n32,02139,M,flu,extra\n",
    "short.csv": b"age,zip,sex,disease\n30,02139,F,flu\n31,02139\n32,02139,M,flu\n",
    "latin1.csv": "age,zip,sex,disease\n30,02139,F,caf\xe9\n".encode("latin-1"),
    "utf16.csv": "age,zip,sex,disease\n30,02139,F,flu\n".encode("utf-16"),
    "xlsx.csv": b"PK\x03\x04\x14\x00\x06\x00\x08\x00\x00\x00!\x00[Content_Types].xml" + b"\x00" * 64,
    "xls.csv": b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504,
    "zip.csv": b"PK\x03\x04\x14\x00\x00\x00\x08\x00data.csv" + b"\x00" * 64,
    "bz2.csv": b"BZh91AY&SY" + b"\x00" * 32,
    "badgzip.csv": GZIPPED_GARBAGE,
    "gzipped-binary.csv": gzip.compress(bytes(range(256)) * 4, mtime=0),
    "sqlite.csv": b"SQLite format 3\x00" + b"\x00" * 84,
    "folder.csv": FOLDER,
    "text.age.csv": b"age,zip,sex,disease\n30,02139,F,flu\nthirty,02139,M,flu\n",
    # a NUL past the 64 KiB that are sniffed (ds6 #3: it was read as part of a cell and published)
    "late-nul.csv": (people_csv(6000) + "30,02130,F,fl\x00u\n").encode(),
}

PUBLISH = ("publish", "{in}/people.csv", "--epsilon", "1", "--delta", "1e-6", "--ledger", "{ledger}",
           "--out", "{out}/r.csv")
CHECK = ("check", "{in}/people.csv", "--k", "2")
ANONYMIZE = ("anonymize", "{in}/people.csv", "--k", "2", "--out", "{out}/a.csv")
QUERY = ("query", "{in}/people.csv", "count where age >= 30", "--epsilon", "0.5", "--ledger", "{ledger}",
         "--out", "{out}/q.json")
# --exploratory: people.csv declares no public domains or --max-rows, which a certified view needs
# (refused first otherwise); the cases test the options' limits
PERTURB = ("perturb", "--no-ledger", "{in}/people.csv", "--c", "2", "--gamma", "0.5", "--exploratory", "--out",
           "{out}/v.csv")
ATTACK = ("attack", "intersection", "{in}/r1.csv", "{in}/r2.csv", "--targets", "{in}/targets.csv",
          "--qi", "age,sex", "--sensitive", "disease", "--out", "{out}/t.csv")
LEDGER_INIT = ("ledger", "init", "{in}/people.csv", "--epsilon", "5", "--delta", "1e-6", "--ledger", "{ledger}")
LEDGER_SHOW = ("ledger", "show", "--ledger", "{ledger}")


AGE_INF = "age,sex\n" + "".join(f"{a},{'MF'[a % 2]}\n" for a in range(20, 80)) + "-inf,M\ninf,F\n"


def with_data(base: tuple[str, ...], data: str) -> tuple[str, ...]:
    """``base`` with its input file replaced by ``{in}/data``."""
    return tuple("{in}/" + data if a == "{in}/people.csv" else a for a in base)


def with_option(base: tuple[str, ...], option: str, value: str) -> tuple[str, ...]:
    """``base`` with ``option`` set to ``value`` (replaced where ``base`` has it, else added)."""
    argv = list(base)
    if option in argv:
        argv[argv.index(option) + 1] = value
        return tuple(argv)
    return (*argv, option, value)


def without_option(base: tuple[str, ...], option: str) -> tuple[str, ...]:
    """``base`` without ``option`` and its value."""
    at = base.index(option)
    return base[:at] + base[at + 2:]


def _bad_files_for(command: str, base: tuple[str, ...]) -> list[Case]:
    expected = {
        "missing.csv": "not found",
        "empty.csv": "empty",
        "blank.csv": "empty",
        "header.csv": "no rows",
        "binary.csv": "binary file",
        "ragged.csv": "line 3 has 2 fields where the header has 3 (a ragged row)",
        "long.csv": "line 3 has 5 fields where the header has 4 (a ragged row)",
        "short.csv": "line 3 has 2 fields where the header has 4 (a ragged row)",
        "latin1.csv": "not UTF-8",
        "utf16.csv": "UTF-16",
        "xlsx.csv": "Excel workbook",
        "xls.csv": "Excel 97-2003",
        "zip.csv": "ZIP archive",
        "bz2.csv": "bzip2",
        "badgzip.csv": "cannot be decompressed",
        "gzipped-binary.csv": "binary file",
        "sqlite.csv": "SQLite database",
        "folder.csv": "is a folder",
        "late-nul.csv": "holds a NUL character",
    }
    return [Case(f"{command}-{name.removesuffix('.csv')}", with_data(base, name), fragment,
                 files={name: BAD_FILES[name]} if name in BAD_FILES else {})
            for name, fragment in expected.items()]


# --- issue 33 points 3, 10, 12 (one block, to ease merging) ---------------------------------------


# another application's database as the ledger (tests/foreign_sqlite.py), by setup: its application id
# (the second is a GeoPackage's)
FOREIGN_SETUPS = {"foreign-sqlite-ledger": 0, "foreign-app-ledger": 0x47504B47}
LEDGER_BUDGET = ("ledger", "budget", "people.csv", "--epsilon", "5", "--delta", "1e-6", "--ledger", "{ledger}")
FRESH = {"fresh.csv": people_csv(200)}  # a table the template ledger has no budget for


def _number_cases() -> list[Case]:
    """Each number Python's float() or int() would read but plain notation would not: refused before
    anything is read, naming the option."""
    publish_fresh = (*with_data(PUBLISH, "fresh.csv"), "--name", "fresh")
    rows = [
        ("publish-epsilon-underscore", with_option(PUBLISH, "--epsilon", "1_0"),
         "--epsilon: '1_0' is not a number (write it as 10)"),
        ("publish-epsilon-leading-space", with_option(PUBLISH, "--epsilon", " 1"), "--epsilon: ' 1' is not a number"),
        ("publish-epsilon-infinity-word", with_option(PUBLISH, "--epsilon", "infinity"),
         "--epsilon: 'infinity' is not a finite number"),
        ("publish-epsilon-overflow", with_option(PUBLISH, "--epsilon", "1e400"), "--epsilon: '1e400' is too large"),
        ("publish-delta-underflow", with_option(PUBLISH, "--delta", "1e-400"), "--delta: '1e-400' is too close to 0"),
        ("publish-k-hex", (*PUBLISH, "--k", "0x10"), "--k: '0x10' is not a whole number (write it as 16)"),
        ("publish-k-fraction", (*PUBLISH, "--k", "2.5"), "--k: '2.5' is not a whole number"),
        ("publish-delta-nan-named", with_option(PUBLISH, "--delta", "nan"), "--delta: 'nan' is not a finite number"),
        ("publish-beta-inf-named", (*PUBLISH, "--beta", "inf"), "--beta: 'inf' is not a finite number"),
        ("publish-releases-underscore", (*PUBLISH, "--releases", "1_000_000"),
         "--releases: '1_000_000' is not a whole number (write it as 1000000)"),
        ("publish-epsilon1-fullwidth", (*PUBLISH, "--epsilon1", "０.１"), "--epsilon1: '０.１' is not a number"),
        ("publish-scheme-level-hex", (*PUBLISH, "--scheme", "age=0x1"),
         "the level of 'age' in the scheme: '0x1' is not a whole number (write it as 1)"),
        ("publish-budget-delta-underscore", (*publish_fresh, "--budget", "3,1_0"),
         "--budget: '1_0' is not a number (write it as 10)"),
        ("publish-budget-epsilon-hex", (*publish_fresh, "--budget", "0x3,1e-5"),
         "--budget: '0x3' is not a number (write it as 3)"),
        ("query-epsilon-underscore", with_option(QUERY, "--epsilon", "0_5"), "--epsilon: '0_5' is not a number"),
        ("query-epsilon-fullwidth", with_option(QUERY, "--epsilon", "１"),
         "--epsilon: '１' is not a number (write it as 1)"),
        ("query-max-rows-per-person-hex", (*QUERY, "--max-rows-per-person", "0x2"),
         "--max-rows-per-person: '0x2' is not a whole number (write it as 2)"),
        ("query-clamp-overflow", QUERY[:2] + ("sum(age) clamp 0..1e400",) + QUERY[3:], "'1e400' is too large"),
        ("query-clamp-beyond-2-62", QUERY[:2] + ("sum(age) clamp 0..1e19",) + QUERY[3:], "within ±2^62"),
        ("query-number-fullwidth", QUERY[:2] + ("count where age >= ３０",) + QUERY[3:], "digits 0-9"),
        ("query-bins-too-many", QUERY[:2] + ("histogram age[0..1e12 by 1]",) + QUERY[3:], "1,000,000 bins"),
        ("perturb-c-leading-space", with_option(PERTURB, "--c", " 2"), "--c: ' 2' is not a number (write it as 2)"),
        ("perturb-gamma-decimal-comma", with_option(PERTURB, "--gamma", "0,5"),
         "--gamma: '0,5' is not a number (write it as 0.5)"),
        ("check-k-underscore", with_option(CHECK, "--k", "1_0"), "--k: '1_0' is not a whole number"),
        ("anonymize-k-fullwidth", with_option(ANONYMIZE, "--k", "２"), "--k: '２' is not a whole number"),
        ("ledger-init-epsilon-underscore", with_option(LEDGER_INIT, "--epsilon", "1_0"),
         "--epsilon: '1_0' is not a number"),
        ("ledger-budget-delta-nan", with_option(LEDGER_BUDGET, "--delta", "nan"), "--delta: 'nan' is not a finite"),
    ]
    return [Case(f"number-{name}", argv, fragment, files=FRESH if "fresh.csv" in " ".join(argv) else {})
            for name, argv, fragment in rows]


def _foreign_ledger_cases() -> list[Case]:
    """Another application's SQLite file as the ledger, for every command that opens one."""
    commands = {"publish": PUBLISH, "query": QUERY, "ledger-init": LEDGER_INIT, "ledger-show": LEDGER_SHOW,
                "ledger-budget": LEDGER_BUDGET}
    return [Case(f"ledger-foreign-{name}-{setup.split('-')[1]}", argv, "not a crowdsafe ledger", setup=setup)
            for setup in FOREIGN_SETUPS for name, argv in commands.items()]


LEDGER_NUMBER_BUDGET_CASES: list[Case] = [
    *_foreign_ledger_cases(),
    *_number_cases(),
    # a budget names its delta (a budget of (3, 0) admits no release, and is recorded for good)
    Case("budget-publish-without-delta", (*with_data(PUBLISH, "fresh.csv"), "--name", "fresh", "--budget", "3"),
         "--budget 3 has no delta: write EPSILON,DELTA, e.g. 3,1e-6", files=FRESH),
    Case("budget-query-without-delta", (*QUERY, "--name", "fresh", "--budget", "3"), "--budget 3 has no delta"),
    Case("budget-ledger-init-without-delta", without_option(LEDGER_INIT, "--delta"), "--delta is required"),
    # a budget is changed on the record: a raise needs --raise
    Case("budget-raise-without-flag", with_option(LEDGER_BUDGET, "--epsilon", "20"),
         "would raise the budget of 'people.csv' from (ε=10, δ=1e-05): a raise needs --raise"),
    Case("budget-change-unknown-dataset", ("ledger", "budget", "nobody", "--epsilon", "1", "--delta", "0",
                                           "--ledger", "{ledger}"), "dataset 'nobody' has no budget"),
    Case("budget-change-without-delta", without_option(LEDGER_BUDGET, "--delta"), "--delta"),
]


EPSILON_LIMITS = [("0", "epsilon"), ("-1", "epsilon"), ("nan", "epsilon"), ("inf", "epsilon"), ("abc", "--epsilon")]

CASES: list[Case] = [
    # --- files: every command that reads a table, on every kind of bad file
    *_bad_files_for("publish", PUBLISH),
    # (check reads a header-only table: a release whose every row was suppressed, k-anonymous vacuously)
    *[c for c in _bad_files_for("check", CHECK) if c.id != "check-header"],
    *[c for c in _bad_files_for("anonymize", ANONYMIZE)
      if c.id.split("-", 1)[1] in ("missing", "empty", "header", "binary", "xlsx", "latin1", "folder")],
    *[c for c in _bad_files_for("query", QUERY)
      if c.id.split("-", 1)[1] in ("missing", "empty", "header", "binary", "utf16", "folder", "badgzip", "short")],
    *[c for c in _bad_files_for("perturb", PERTURB)
      if c.id.split("-", 1)[1] in ("missing", "empty", "header", "xls", "bz2", "folder")],
    Case("publish-ragged-rows", with_data(PUBLISH, "ragged.csv"), "ragged row",
         files={"ragged.csv": BAD_FILES["ragged.csv"]}),
    # --- publish: options at and beyond their limits
    *[Case(f"publish-epsilon-{v}", with_option(PUBLISH, "--epsilon", v), f) for v, f in EPSILON_LIMITS],
    Case("publish-epsilon-1e308", with_option(PUBLISH, "--epsilon", "1e308"),
         "--epsilon: epsilon = 1e+308 is too large"),
    *[Case(f"publish-delta-{v}", with_option(PUBLISH, "--delta", v), "delta") for v in ("0", "-1e-6", "1", "2", "nan")],
    *[Case(f"publish-k-{v}", with_option(PUBLISH, "--k", v), "k") for v in ("0", "-3", "1e9", "abc")],
    Case("publish-k-huge", with_option(PUBLISH, "--k", "1000000000000000000000000"), "k"),
    *[Case(f"publish-beta-{v}", with_option(PUBLISH, "--beta", v), "beta") for v in ("0", "-0.5", "1.5", "nan", "inf")],
    *[Case(f"publish-epsilon1-{v}", with_option(PUBLISH, "--epsilon1", v), "epsilon") for v in ("-1", "nan", "5")],
    *[Case(f"publish-releases-{v}", with_option(PUBLISH, "--releases", v), "releases") for v in ("0", "-2", "x")],
    Case("publish-scheme-garbage", with_option(PUBLISH, "--scheme", "age=banana"), "scheme"),
    Case("publish-budget-text", with_option(PUBLISH, "--budget", "lots"), "budget"),
    Case("publish-budget-negative", (*PUBLISH, "--name", "fresh", "--budget", "-1,0"), "--budget"),
    # a table the template ledger does not know (the ledger knows a table by its keyed digest, not its name)
    Case("publish-budget-below-request", (*with_data(PUBLISH, "fresh.csv"), "--name", "fresh", "--budget", "0.5,1e-5"),
         "budget", files={"fresh.csv": people_csv(200)}, exit=3),
    Case("publish-objective-unknown", with_option(PUBLISH, "--objective", "accuracy"), "unknown objective 'accuracy'"),
    Case("publish-classification-no-target", with_option(PUBLISH, "--objective", "classification"), "--target"),
    Case("publish-target-without-classification", with_option(PUBLISH, "--target", "disease"), "--target"),
    Case("publish-target-unknown", (*PUBLISH, "--objective", "classification", "--target", "salary"),
         "target 'salary' is not a published column"),
    Case("publish-target-not-in-columns", (*PUBLISH, "--objective", "classification", "--target", "disease",
                                           "--columns", "age,sex"), "target 'disease' is not a published column"),
    Case("publish-entropy-without-hierarchies", with_option(PUBLISH, "--objective", "entropy"),
         "entropy objective needs a declared hierarchy"),
    Case("publish-columns-unknown", with_option(PUBLISH, "--columns", "age,salary"), "'salary'"),
    Case("publish-columns-repeated", with_option(PUBLISH, "--columns", "age,sex,age"), "twice"),
    Case("publish-columns-empty", with_option(PUBLISH, "--columns", " , "), "empty"),
    Case("publish-columns-two-sets", (*PUBLISH, "--columns", "age,sex", "--columns", "age,zip"), "--plan-only"),
    Case("publish-qi-unknown", with_option(PUBLISH, "--qi", "age,salary"), "salary"),
    Case("publish-qi-empty", with_option(PUBLISH, "--qi", " , "), "empty"),
    Case("publish-sensitive-unknown", with_option(PUBLISH, "--sensitive", "diagnosis"), "diagnosis"),
    Case("publish-out-xlsx", with_option(PUBLISH, "--out", "{out}/r.xlsx"), "output format"),
    Case("publish-out-is-folder", (*with_option(PUBLISH, "--out", "{out}/sub.csv"), "--name", "fresh"),
         "folder",
         setup="out-subfolder"),
    Case("publish-out-under-a-file", (*with_option(PUBLISH, "--out", "{in}/people.csv/r.csv"), "--name", "fresh"),
         "is a file, not a folder"),
    Case("publish-out-no-suffix", with_option(PUBLISH, "--out", "{out}/release"), "output format"),
    Case("publish-engine-unknown", with_option(PUBLISH, "--engine", "duckdb"), "engine"),
    Case("publish-unknown-option", with_option(PUBLISH, "--epsilom", "1"), "No such option"),
    # --- schemas
    Case("publish-schema-missing", with_option(PUBLISH, "--schema", "{in}/nope.toml"), "nope.toml"),
    Case("publish-schema-folder", with_option(PUBLISH, "--schema", "{in}/folder.toml"), "folder.toml",
         files={"folder.toml": FOLDER}),
    Case("check-schema-not-toml", with_option(CHECK, "--schema", "{in}/s.toml"), "not valid TOML",
         files={"s.toml": "[attributes.age\ntype = numeric"}),
    Case("check-schema-typo-key", with_option(CHECK, "--schema", "{in}/s.toml"), "tpye",
         files={"s.toml": '[attributes.age]\ntpye = "numeric"\n'}),
    Case("check-schema-unknown-type", with_option(CHECK, "--schema", "{in}/s.toml"), "numerical",
         files={"s.toml": '[attributes.age]\ntype = "numerical"\n'}),
    Case("check-schema-unknown-role", with_option(CHECK, "--schema", "{in}/s.toml"), "secret",
         files={"s.toml": '[attributes.age]\nrole = "secret"\ntype = "numeric"\n'}),
    Case("publish-schema-unknown-column", with_option(PUBLISH, "--schema", "{in}/s.toml"), "salary",
         files={"s.toml": '[attributes.salary]\ntype = "numeric"\n'}),
    Case("publish-schema-no-attributes", with_option(PUBLISH, "--schema", "{in}/s.toml"), "attributes",
         files={"s.toml": 'title = "x"\n'}),
    Case("publish-schema-binary", with_option(PUBLISH, "--schema", "{in}/s.toml"), "s.toml",
         files={"s.toml": b"\xff\xfe\x00garbage\x00"}),
    Case("publish-wrong-type-in-column",
         with_option(with_data(PUBLISH, "text.age.csv"), "--schema", "{in}/schema.toml"),
         "thirty", files={"text.age.csv": BAD_FILES["text.age.csv"]}),
    # --- check
    *[Case(f"check-k-{v}", with_option(CHECK, "--k", v), "k") for v in ("0", "-1", "x")],
    *[Case(f"check-l-{v}", (*CHECK, "--sensitive", "disease", "--l", v), "l") for v in ("0", "-2")],
    *[Case(f"check-risk-threshold-{v}", (*CHECK, "--risk-threshold", v), "threshold") for v in ("-0.1", "1.5", "nan")],
    Case("check-population-size-0", (*CHECK, "--population-size", "0"), "population"),
    Case("check-missing-policy-unknown", (*CHECK, "--missing", "ignore"), "ignore"),
    Case("check-ground-unknown", (*CHECK, "--sensitive", "disease", "--ground", "manhattan"), "manhattan"),
    Case("check-original-missing", (*CHECK, "--original", "{in}/nope.csv"), "not found"),
    # --- anonymize
    *[Case(f"anonymize-k-{v}", with_option(ANONYMIZE, "--k", v), "k") for v in ("0", "-1", "1e3")],
    Case("anonymize-algorithm-unknown", (*ANONYMIZE, "--algorithm", "datafly"), "datafly"),
    *[Case(f"anonymize-t-{v}", (*ANONYMIZE, "--sensitive", "disease", "--t", v), "t") for v in ("-0.5", "2", "nan")],
    *[Case(f"anonymize-suppression-limit-{v}", (*ANONYMIZE, "--suppression-limit", v), "suppression")
      for v in ("-0.1", "1.5", "inf")],
    Case("anonymize-time-budget-negative", (*ANONYMIZE, "--algorithm", "lattice", "--search", "greedy",
                                            "--time-budget", "-1"), "time"),
    Case("anonymize-out-xlsx", with_option(ANONYMIZE, "--out", "{out}/a.xlsx"), "output format"),
    Case("anonymize-out-is-folder", with_option(ANONYMIZE, "--out", "{out}/sub.csv"), "folder", setup="out-subfolder"),
    # a number that is not finite has no place in a range or a centroid: refused before anything is written
    *[Case(f"anonymize-{algorithm}-age-inf", (*with_data(ANONYMIZE, "inf.csv"), "--algorithm", algorithm),
           "column 'age' holds a value that is not a finite number (-inf, inf)", files={"inf.csv": AGE_INF})
      for algorithm in ("mondrian", "mdav", "lattice")],
    Case("anonymize-report-is-a-folder", (*with_option(ANONYMIZE, "--out", "{in}/y.csv"), "--force"),
         "cannot write the report to {in}/y.report.html: it is a folder", files={"y.report.html": FOLDER}),
    Case("schema-draft-separator-two-characters", ("schema", "draft", "{in}/people.csv", "--out", "{out}/s.toml",
                                                   "--separator", ";;"),
         "--separator must be one ASCII character"),
    # --- query
    *[Case(f"query-epsilon-{v}", with_option(QUERY, "--epsilon", v), f) for v, f in EPSILON_LIMITS],
    Case("query-syntax", QUERY[:2] + ("count wher age >= 30",) + QUERY[3:], "wher"),
    Case("query-unknown-column", QUERY[:2] + ("count where salary >= 30",) + QUERY[3:], "salary"),
    Case("query-mechanism-unknown", (*QUERY, "--mechanism", "cauchy"), "cauchy"),
    *[Case(f"query-delta-{v}", (*QUERY, "--mechanism", "gaussian", "--delta", v), "delta") for v in ("0", "1", "nan")],
    Case("query-max-rows-per-person-0", (*QUERY, "--max-rows-per-person", "0"), "rows"),
    Case("query-budget-too-small", (*QUERY, "--name", "fresh", "--budget", "0.1"), "budget"),
    Case("query-budget-nan", (*QUERY, "--name", "fresh", "--budget", "nan"), "--budget"),
    # --- perturb
    *[Case(f"perturb-gamma-{v}", with_option(PERTURB, "--gamma", v), "gamma") for v in ("0", "1", "-0.5", "nan", "2")],
    Case("perturb-d-0", (*without_option(PERTURB, "--c"), "--d", "0"), "d must"),
    Case("perturb-c-and-d", (*PERTURB, "--d", "0.1"), "exactly one of d"),
    Case("perturb-alpha-2", (*PERTURB, "--alpha", "2"), "alpha"),
    Case("perturb-confidence-1.5", (*PERTURB, "--confidence", "1.5"), "confidence"),
    Case("perturb-attributes-unknown", (*PERTURB, "--attributes", "age,salary"), "salary"),
    Case("perturb-no-public-bound", tuple(a for a in PERTURB if a != "--exploratory"), "--max-rows"),
    Case("perturb-out-xlsx", with_option(PERTURB, "--out", "{out}/v.xlsx"), "output format"),
    Case("perturb-out-is-folder", with_option(PERTURB, "--out", "{out}/sub.csv"), "folder", setup="out-subfolder"),
    # --- attack
    Case("attack-release-missing", (*ATTACK[:2], "{in}/nope.csv", *ATTACK[3:]), "nope.csv"),
    Case("attack-release-binary", (*ATTACK[:2], "{in}/binary.csv", *ATTACK[3:]), "binary.csv",
         files={"binary.csv": BAD_FILES["binary.csv"]}),
    Case("attack-release-empty", (*ATTACK[:2], "{in}/empty.csv", *ATTACK[3:]), "empty.csv",
         files={"empty.csv": b""}),
    Case("attack-targets-missing", with_option(ATTACK, "--targets", "{in}/nope.csv"), "nope.csv"),
    Case("attack-targets-xlsx", with_option(ATTACK, "--targets", "{in}/xlsx.csv"), "Excel",
         files={"xlsx.csv": BAD_FILES["xlsx.csv"]}),
    Case("attack-qi-unknown", with_option(ATTACK, "--qi", "age,zodiac"), "zodiac"),
    Case("attack-levels-text", (*ATTACK, "--levels", "high,low"), "levels"),
    Case("attack-linkage-external-missing", ("attack", "linkage", "{in}/r1.csv", "--external", "{in}/nope.csv",
                                             "--qi", "age,sex"), "nope.csv"),
    # --- ledgers
    Case("ledger-init-epsilon-negative", with_option(LEDGER_INIT, "--epsilon", "-1"), "epsilon"),
    Case("ledger-init-epsilon-nan", with_option(LEDGER_INIT, "--epsilon", "nan"), "epsilon"),
    Case("ledger-init-delta-1", (*LEDGER_INIT, "--delta", "1"), "delta"),
    Case("ledger-corrupt-publish", PUBLISH, "not a usable crowdsafe ledger", setup="corrupt-ledger"),
    Case("ledger-corrupt-show", LEDGER_SHOW, "not a usable crowdsafe ledger", setup="corrupt-ledger"),
    Case("ledger-corrupt-query", QUERY, "not a usable crowdsafe ledger", setup="corrupt-ledger"),
    Case("ledger-is-folder", with_option(PUBLISH, "--ledger", "{in}/folder"), "folder",
         files={"folder": FOLDER}),
    Case("ledger-missing-path", with_option(PUBLISH, "--ledger", "{in}/people.csv/sub/ledger.sqlite3"), "ledger"),
    Case("ledger-locked-publish", PUBLISH, "locked", setup="lock-ledger"),
    Case("ledger-locked-query", QUERY, "locked", setup="lock-ledger"),
    Case("ledger-read-only-publish", PUBLISH, "ledger", setup="read-only-ledger"),
    Case("ledger-others-can-write", QUERY, "open to other users (", setup="ledger-mode-666"),
    Case("ledger-others-can-read-publish", PUBLISH, "chmod 600", setup="ledger-mode-644"),
    Case("ledger-group-can-read-query", QUERY, "is 640): it holds the secret identity key", setup="ledger-mode-640"),
    Case("ledger-others-can-read-show", LEDGER_SHOW, "open to other users (", setup="ledger-mode-604"),
    Case("ledger-others-can-read-init", LEDGER_INIT, "open to other users (", setup="ledger-mode-644"),
    # --- issue 33 points 3, 10, 12: ledgers are marked, numbers are plain, budgets name their delta
    *LEDGER_NUMBER_BUDGET_CASES,
]


# ==== issue 33, reading input (input-reading branch): literal paths, line endings, decimal commas,
# Parquet column types, schemas and hierarchies validated as trees. Each case is refused before
# anything is charged; what now reads correctly is tested in tests/data/test_input_reading.py.

def _parquet(**columns: object) -> bytes:
    """A small Parquet file (people.csv's columns plus ``columns``, polars expressions by name)."""
    import io

    import polars as pl

    frame = pl.read_csv(io.StringIO(people_csv(60)))
    buffer = io.BytesIO()
    frame.with_columns(**columns).write_parquet(buffer)
    return buffer.getvalue()


def _nested_parquet() -> dict[str, bytes]:
    import datetime as dt

    import polars as pl

    return {
        "list.parquet": _parquet(tags=pl.concat_list("age", "age")),
        "struct.parquet": _parquet(place=pl.struct("zip", "sex")),
        "binary.parquet": _parquet(blob=pl.col("sex").cast(pl.Binary)),
        "duration.parquet": _parquet(stay=pl.duration(days=pl.col("age"))),
        "time.parquet": _parquet(seen=pl.lit(dt.time(8, 30))),
    }


_LINES = people_csv(40).splitlines()
MIXED_CR_CRLF = "".join(line + ("\r" if i % 2 else "\r\n") for i, line in enumerate(_LINES)).encode()
MIXED_CR_LF = ("\n".join(_LINES[:20]) + "\n" + "\r".join(_LINES[20:]) + "\r").encode()
PARQUET_FILES = _nested_parquet()
HEADER_ONLY = "age,zip,sex,disease\n"
COMMA_CSV = 'age,zip,sex,disease\n"35,5",02139,F,flu\n"41,25",02138,M,cold\n'
NUMERIC_AGE = '[attributes.age]\ntype = "numeric"\n'
SEX_SCHEMA = '[attributes.sex]\ntype = "categorical"\nhierarchy = "sex.csv"\n'
GROUPS_CYCLE = ('[attributes.sex]\ntype = "categorical"\n[[attributes.sex.hierarchy.groups]]\nG = ["F", "M"]\n'
                '[[attributes.sex.hierarchy.groups]]\nF = ["G"]\n')
DEEP_TOML = "x = " + "[" * 5000 + "]" * 5000 + "\n" + NUMERIC_AGE
DEEP_TABLES = "[attributes.age]\ntype = \"numeric\"\n[" + ".".join(f"t{i}" for i in range(60)) + "]\nx = 1\n"

READING_CASES: list[Case] = [
    # paths are literal: a name with glob characters is that file (here a header without rows), never a
    # pattern that would read the good table beside it
    Case("publish-glob-brackets", with_data(PUBLISH, "data[1].csv"), "has a header but no rows",
         files={"data[1].csv": HEADER_ONLY, "data1.csv": people_csv(30)}),
    Case("check-glob-brackets-year", with_data(CHECK, "kunden[2024].csv"), "is empty",
         files={"kunden[2024].csv": ""}),  # (check reads a table without rows: a release all suppressed)
    Case("query-glob-question", with_data(QUERY, "people?.csv"), "has a header but no rows",
         files={"people?.csv": HEADER_ONLY, "peopleX.csv": people_csv(30)}),
    Case("perturb-glob-star", with_data(PERTURB, "p*.csv"), "has a header but no rows",
         files={"p*.csv": HEADER_ONLY}),
    Case("anonymize-glob-double-star", with_data(ANONYMIZE, "x**y.csv"), "has a header but no rows",
         files={"x**y.csv": HEADER_ONLY, "xy.csv": people_csv(30)}),
    Case("check-schema-glob", with_option(CHECK, "--schema", "{in}/s[1].toml"), "s[1].toml",
         files={"s1.toml": NUMERIC_AGE}),
    Case("attack-release-glob", (*ATTACK[:2], "{in}/r[1].csv", *ATTACK[3:]), "release r[1] has no sensitive column",
         files={"r[1].csv": "height,weight\n180,75\n"}),
    # line endings: lone CRs mixed with CRLF or LF are refused, never read as fewer rows
    Case("publish-mixed-cr-crlf", with_data(PUBLISH, "mixed.csv"), "mixes line endings",
         files={"mixed.csv": MIXED_CR_CRLF}),
    Case("check-mixed-cr-lf", with_data(CHECK, "mixed.csv"), "convert the line endings to LF",
         files={"mixed.csv": MIXED_CR_LF}),
    Case("query-mixed-cr-crlf", with_data(QUERY, "mixed.csv"), "lone CR (old Mac)", files={"mixed.csv": MIXED_CR_CRLF}),
    Case("anonymize-mixed-cr-lf", with_data(ANONYMIZE, "mixed.csv"), "mixes line endings",
         files={"mixed.csv": MIXED_CR_LF}),
    Case("perturb-mixed-cr-crlf", with_data(PERTURB, "mixed.csv"), "mixes line endings",
         files={"mixed.csv": MIXED_CR_CRLF}),
    Case("check-mixed-cr-crlf-gzip", with_data(CHECK, "mixed.csv.gz"), "mixes line endings",
         files={"mixed.csv.gz": gzip.compress(MIXED_CR_CRLF, mtime=0)}),
    # decimal commas: a declared number refused with a hint; a forced reading refuses a decimal point
    Case("check-decimal-comma-hint", (*with_data(CHECK, "comma.csv"), "--schema", "{in}/s.toml"),
         "a decimal comma? give --decimal-comma", files={"comma.csv": COMMA_CSV, "s.toml": NUMERIC_AGE}),
    Case("publish-decimal-comma-hint", (*with_data(PUBLISH, "comma.csv"), "--schema", "{in}/s.toml"),
         "give --decimal-comma", files={"comma.csv": COMMA_CSV, "s.toml": NUMERIC_AGE}),
    Case("publish-decimal-comma-forced-point", (*with_data(PUBLISH, "point.csv"), "--schema", "{in}/s.toml",
                                                "--decimal-comma"),
         "not a number written with a decimal comma",
         files={"point.csv": "age,zip,sex,disease\n35.5,02139,F,flu\n41.25,02138,M,cold\n", "s.toml": NUMERIC_AGE}),
    Case("check-schema-csv-unknown-key", with_option(CHECK, "--schema", "{in}/s.toml"), "unknown key(s) ['separator']",
         files={"s.toml": "[csv]\nseparator = \";\"\n" + NUMERIC_AGE}),
    Case("check-schema-decimal-comma-text", with_option(CHECK, "--schema", "{in}/s.toml"),
         "decimal_comma must be true or false", files={"s.toml": "[csv]\ndecimal_comma = \"yes\"\n" + NUMERIC_AGE}),
    # Parquet columns of a type crowdsafe cannot use: named in one line when the run would use them
    Case("check-parquet-list", with_data(CHECK, "list.parquet"), "column 'tags' of",
         files={"list.parquet": PARQUET_FILES["list.parquet"]}),
    Case("publish-parquet-struct", with_data(PUBLISH, "struct.parquet"), "is a struct (nested) column",
         files={"struct.parquet": PARQUET_FILES["struct.parquet"]}),
    # (a query names the column: one it does not name is dropped with a note, tests/data/test_query_unusable_columns.py)
    Case("query-parquet-binary", tuple("count where blob = 'F'" if a == "count where age >= 30" else a
                                       for a in with_data(QUERY, "binary.parquet")), "'blob' of",
         files={"binary.parquet": PARQUET_FILES["binary.parquet"]}),
    Case("anonymize-parquet-duration", with_data(ANONYMIZE, "duration.parquet"), "is a duration column",
         files={"duration.parquet": PARQUET_FILES["duration.parquet"]}),
    Case("perturb-parquet-time", with_data(PERTURB, "time.parquet"), "is a time-of-day column",
         files={"time.parquet": PARQUET_FILES["time.parquet"]}),
    Case("check-parquet-list-named-qi", (*with_data(CHECK, "list.parquet"), "--qi", "age,tags"), "'tags'",
         files={"list.parquet": PARQUET_FILES["list.parquet"]}),
    Case("publish-parquet-list-sensitive", (*with_data(PUBLISH, "list.parquet"), "--qi", "age,sex",
                                            "--sensitive", "tags"), "is a list (nested) column",
         files={"list.parquet": PARQUET_FILES["list.parquet"]}),
    Case("publish-parquet-struct-declared", (*with_data(PUBLISH, "struct.parquet"), "--schema", "{in}/s.toml"),
         "cannot publish, measure or query",
         files={"struct.parquet": PARQUET_FILES["struct.parquet"],
                "s.toml": NUMERIC_AGE + '[attributes.place]\ntype = "categorical"\n'}),
    # schemas: bounded nesting, finite numbers
    Case("check-schema-nested-arrays", with_option(CHECK, "--schema", "{in}/s.toml"), "nested too deeply",
         files={"s.toml": DEEP_TOML}),
    Case("publish-schema-nested-tables", with_option(PUBLISH, "--schema", "{in}/s.toml"), "nested too deeply",
         files={"s.toml": DEEP_TABLES}),
    Case("publish-schema-widths-nan", with_option(PUBLISH, "--schema", "{in}/s.toml"), "widths[0] is nan",
         files={"s.toml": NUMERIC_AGE + "hierarchy = { widths = [nan, 10] }\n"}),
    Case("check-schema-top-inf", with_option(CHECK, "--schema", "{in}/s.toml"), "hierarchy.top is inf",
         files={"s.toml": NUMERIC_AGE + "hierarchy = { widths = [5, 10], top = inf }\n"}),
    Case("query-schema-cuts-nan", with_option(QUERY, "--schema", "{in}/s.toml"), "cuts[0][1] is nan",
         files={"s.toml": NUMERIC_AGE + "hierarchy = { cuts = [[30, nan]] }\n"}),
    Case("anonymize-schema-bottom-minus-inf", with_option(ANONYMIZE, "--schema", "{in}/s.toml"), "bottom is -inf",
         files={"s.toml": NUMERIC_AGE + "hierarchy = { widths = [10], bottom = -inf }\n"}),
    Case("perturb-schema-order-nan", with_option(PERTURB, "--schema", "{in}/s.toml"), "order[1] is nan",
         files={"s.toml": '[attributes.age]\ntype = "ordinal"\norder = [20.0, nan]\n'}),
    # hierarchies: a node may not publish one value as another (cycles, reused labels)
    Case("publish-hierarchy-file-cycle", (*PUBLISH, "--schema", "{in}/s.toml", "--scheme", "coarse,sex=1"),
         "the value 'F' would be published as 'M'", files={"s.toml": SEX_SCHEMA, "sex.csv": "F;M;*\nM;F;*\n"}),
    Case("check-hierarchy-file-label-reused", with_option(CHECK, "--schema", "{in}/s.toml"),
         "would be published as 'M' at level 1", files={"s.toml": SEX_SCHEMA, "sex.csv": "F;M;*\nM;M;*\n"}),
    Case("publish-hierarchy-groups-cycle", (*PUBLISH, "--schema", "{in}/s.toml", "--scheme", "coarse,sex=2"),
         "the value 'M' would be published as 'F' at level 2", files={"s.toml": GROUPS_CYCLE}),
    Case("perturb-hierarchy-groups-cycle", with_option(PERTURB, "--schema", "{in}/s.toml"),
         "would be published as", files={"s.toml": GROUPS_CYCLE}),
    # ... nor as an empty cell (read back as missing), and a file's top level is one root (sweep ds5)
    Case("publish-hierarchy-file-empty-label", (*PUBLISH, "--schema", "{in}/s.toml", "--scheme", "coarse,sex=1"),
         "the value 'F' has an empty label at level 1", files={"s.toml": SEX_SCHEMA, "sex.csv": "M;A;*\nF;;*\n"}),
    Case("check-hierarchy-groups-empty-label", with_option(CHECK, "--schema", "{in}/s.toml"),
         "level 1 has a group with an empty label (holding 'F')",
         files={"s.toml": '[attributes.sex]\ntype = "categorical"\n[[attributes.sex.hierarchy.groups]]\n'
                          'A = ["M"]\n"" = ["F"]\n'}),
    Case("publish-hierarchy-file-two-roots", (*PUBLISH, "--schema", "{in}/s.toml", "--scheme", "coarse,sex=2"),
         "ends in 2 labels at its top level 2", files={"s.toml": SEX_SCHEMA, "sex.csv": "M;A;*\nF;B;ROOT\n"}),
    Case("check-schema-widths-text", with_option(CHECK, "--schema", "{in}/s.toml"),
         "hierarchy of 'age': widths must be a list of numbers",
         files={"s.toml": NUMERIC_AGE + 'hierarchy = { widths = "5", bottom = 0, top = 120 }\n'}),
]
CASES += READING_CASES




# --- outputs onto inputs, special files, existing files, quick refusals (issue 33; crowdsafe.output_guard)
# setup "fifo:NAME" makes {in}/NAME a FIFO, "hardlink:NAME=TARGET" and "symlink:NAME=TARGET" link {in}/NAME
# to {in}/TARGET; "bounded-memory" caps the memory of a run that reads a device (special_files.py: a run
# blocked on a FIFO is released after a timeout, one reading /dev/zero fails with MemoryError)
ESTIMATE = ("estimate", "{in}/v.csv", "--equality", "1", "--out", "{out}/e.csv")
VIEW_FILES = {"v.csv": "age,sex\n30,F\n", "v.certificate.json": "{}\n"}
# a perturbation with public domains and a public bound: a certified view, charged to the ledger
DOMAINS = {"d.json": '{"sex": ["F", "M"], "disease": ["flu", "cold", "asthma", "none"]}\n'}
PUBLIC_PERTURB = ("perturb", "{in}/people.csv", "--c", "0.5", "--gamma", "0.9", "--attributes", "sex,disease",
                  "--domains", "{in}/d.json", "--max-rows", "1000", "--out", "{out}/v.csv")
HIERARCHY_SCHEMA = '[attributes.age]\ntype = "numeric"\n[attributes.sex]\ntype = "categorical"\nhierarchy = "{}"\n'
SEX_HIERARCHY = "F;*\nM;*\n"


def _parquet_part() -> bytes:
    import io

    import polars as pl

    buffer = io.BytesIO()
    pl.DataFrame({"age": [30, 41], "sex": ["F", "M"]}).write_parquet(buffer)
    return buffer.getvalue()


OUTPUT_CASES: list[Case] = [
    # an output onto the data, for every command that writes (the same path, a hard link, a symbolic link)
    Case("publish-out-is-the-data", with_option(PUBLISH, "--out", "{in}/people.csv"),
         "the release {in}/people.csv would overwrite the data {in}/people.csv (the same file)"),
    Case("anonymize-out-is-the-data", with_option(ANONYMIZE, "--out", "{in}/people.csv"), "overwrite the data"),
    Case("perturb-out-is-the-data", with_option(PERTURB, "--out", "{in}/people.csv"), "overwrite the data"),
    Case("query-out-is-the-data", with_option(QUERY, "--out", "{in}/people.csv"), "overwrite the data"),
    Case("estimate-out-is-the-view", with_option(ESTIMATE, "--out", "{in}/v.csv"),
         "the estimates {in}/v.csv would overwrite the view", files=VIEW_FILES),
    Case("estimate-out-is-the-certificate", (*with_option(ESTIMATE, "--out", "{in}/c.csv"), "--certificate",
                                             "{in}/c.csv"), "the certificate of the view",
         files={**VIEW_FILES, "c.csv": "{}\n"}),
    Case("publish-out-is-a-hard-link-to-the-data", with_option(PUBLISH, "--out", "{in}/hard.csv"),
         "a hard link to it", setup="hardlink:hard.csv=people.csv"),
    Case("anonymize-out-is-a-hard-link-to-the-data", with_option(ANONYMIZE, "--out", "{in}/hard.csv"),
         "a hard link to it", setup="hardlink:hard.csv=people.csv"),
    Case("publish-out-is-a-symlink-to-the-data", with_option(PUBLISH, "--out", "{in}/link.csv"),
         "a symbolic link to it", setup="symlink:link.csv=people.csv"),
    Case("publish-out-in-the-data-folder", (*with_data(PUBLISH, "parts")[:-1], "{in}/parts/r.csv"),
         "inside that folder", files={"parts": FOLDER, "parts/part-0.parquet": _parquet_part()}),
    # onto the ledger and its companions (a lost ledger is a reset budget)
    Case("query-out-is-the-ledger", with_option(QUERY, "--out", "{ledger}"), "would overwrite the ledger {ledger}"),
    Case("query-out-is-the-ledger-wal", with_option(QUERY, "--out", "{ledger}-wal"), "the ledger's wal file"),
    Case("ledger-show-out-is-the-ledger", (*LEDGER_SHOW, "--out", "{ledger}"), "would overwrite the ledger"),
    Case("ledger-show-out-is-the-ledger-shm", (*LEDGER_SHOW, "--out", "{ledger}-shm"), "the ledger's shm file"),
    Case("publish-out-is-a-new-ledger", (*with_option(PUBLISH, "--ledger", "{in}/book.csv")[:-1], "{in}/book.csv"),
         "would overwrite the ledger {in}/book.csv"),
    Case("perturb-certificate-is-the-ledger-wal", (*PUBLIC_PERTURB, "--ledger", "{ledger}", "--certificate",
                                                   "{ledger}-wal"),
         "the certificate {ledger}-wal would overwrite the ledger's wal file", files=DOMAINS),
    # onto the schema, a hierarchy file it names, the domain file, the targets, another output
    Case("query-out-is-the-schema", (*with_option(QUERY, "--out", "{in}/schema.toml"), "--schema", "{in}/schema.toml",
                                     "--name", "declared", "--budget", "5"),
         "would overwrite the schema {in}/schema.toml"),
    Case("publish-out-is-a-hierarchy-file", (*with_option(PUBLISH, "--out", "{in}/sex.csv"), "--schema", "{in}/h.toml",
                                             "--name", "declared"),
         "would overwrite the hierarchy file of 'sex'",
         files={"h.toml": HIERARCHY_SCHEMA.format("sex.csv"), "sex.csv": SEX_HIERARCHY}),
    Case("perturb-certificate-is-the-domain-file", (*PERTURB, "--domains", "{in}/d.json", "--certificate",
                                                    "{in}/d.json"), "would overwrite the domain file",
         files={"d.json": '{"sex": ["F", "M"]}\n'}),
    Case("perturb-domain-file-key-twice", PUBLIC_PERTURB, "gives 'sex' twice",
         files={"d.json": '{"sex": ["F", "M"], "disease": ["flu", "cold", "asthma", "none"], "sex": ["X"]}\n'}),
    Case("perturb-domain-file-number-for-text", PUBLIC_PERTURB, "'disease': 1 is a number, but the column is text",
         files={"d.json": '{"sex": ["F", "M"], "disease": [1, "cold", "asthma", "none"]}\n'}),
    Case("perturb-custodian-report-is-the-data", (*PERTURB, "--custodian-report", "{in}/people.csv"),
         "the custodian report {in}/people.csv would overwrite the data"),
    Case("attack-out-is-the-targets", with_option(ATTACK, "--out", "{in}/targets.csv"), "overwrite the targets"),
    Case("attack-out-is-a-release", with_option(ATTACK, "--out", "{in}/r2.csv"), "overwrite the release {in}/r2.csv"),
    # custodian-only (scored against each target's true value), as publish's --custodian-report
    Case("attack-out-in-a-releases-folder", with_option(ATTACK, "--out", "{in}/per-target.csv"),
         "the per-target table {in}/per-target.csv would lie in the release's folder"),
    Case("schema-draft-out-is-the-data", ("schema", "draft", "{in}/people.toml", "--out", "{in}/people.toml"),
         "would overwrite the data", files={"people.toml": people_csv(50)}),
    # special files as outputs (/dev/null too: test_outputs.py, which never writes there even when broken; run
    # as root, a guard that let it through would rename a file onto the device node)
    Case("publish-out-is-a-fifo", with_option(PUBLISH, "--out", "{in}/pipe.csv"), "it is a FIFO (named pipe)",
         setup="fifo:pipe.csv"),
    Case("datasets-export-onto-a-fifo", ("datasets", "export", "people", "{in}/pipe.csv"), "it is a FIFO",
         setup="fifo:pipe.csv"),
    # an existing file crowdsafe did not write (with --force it is replaced: test_outputs.py)
    Case("publish-out-exists", with_option(PUBLISH, "--out", "{in}/mine.csv"),
         "the release {in}/mine.csv exists and crowdsafe did not write it: give --force",
         files={"mine.csv": "my own table\n"}),
    Case("publish-report-exists", with_option(PUBLISH, "--out", "{in}/mine.csv"),
         "the report {in}/mine.report.html exists and crowdsafe did not write it",
         files={"mine.report.html": "<p>notes</p>\n"}),
    Case("query-out-exists", with_option(QUERY, "--out", "{in}/mine.json"), "exists and crowdsafe did not write it",
         files={"mine.json": '{"mine": true}\n'}),
    Case("datasets-export-exists", ("datasets", "export", "people", "{in}/r1.csv"), "exists: give --force"),
    # special files as inputs: refused before they are opened (a FIFO's open blocks; /dev/zero never ends)
    Case("publish-data-is-a-fifo", with_data(PUBLISH, "pipe.csv"), "{in}/pipe.csv is a FIFO (named pipe)",
         setup="fifo:pipe.csv"),
    Case("query-data-is-a-fifo", with_data(QUERY, "pipe.csv"), "is a FIFO", setup="fifo:pipe.csv"),
    Case("publish-schema-is-a-fifo", with_option(PUBLISH, "--schema", "{in}/pipe.toml"),
         "the schema file {in}/pipe.toml is a FIFO", setup="fifo:pipe.toml"),
    Case("publish-hierarchy-is-a-fifo", with_option(PUBLISH, "--schema", "{in}/h.toml"),
         "the hierarchy file {in}/pipe.csv is a FIFO", files={"h.toml": HIERARCHY_SCHEMA.format("pipe.csv")},
         setup="fifo:pipe.csv"),
    Case("check-hierarchy-is-dev-zero", with_option(CHECK, "--schema", "{in}/h.toml"),
         "the hierarchy file /dev/zero is a character device", files={"h.toml": HIERARCHY_SCHEMA.format("/dev/zero")},
         setup="bounded-memory"),
    Case("attack-release-is-a-fifo", (*ATTACK[:2], "{in}/pipe.csv", *ATTACK[3:]), "the release {in}/pipe.csv is a FIFO",
         setup="fifo:pipe.csv"),
    Case("attack-targets-is-a-fifo", with_option(ATTACK, "--targets", "{in}/pipe.csv"), "is a FIFO",
         setup="fifo:pipe.csv"),
    Case("perturb-domains-is-a-fifo", (*PERTURB, "--domains", "{in}/pipe.json"),
         "the domain file {in}/pipe.json is a FIFO", setup="fifo:pipe.json"),
    Case("estimate-certificate-is-a-fifo", ("estimate", "{in}/v.csv", "count", "--certificate", "{in}/pipe.json"),
         "the certificate {in}/pipe.json is a FIFO", files=VIEW_FILES, setup="fifo:pipe.json"),
    Case("report-certificate-is-a-fifo", ("report", "{in}/v.csv", "--certificate", "{in}/pipe.json"),
         "the certificate {in}/pipe.json is a FIFO", files=VIEW_FILES, setup="fifo:pipe.json"),
    Case("publish-ledger-is-a-fifo", with_option(PUBLISH, "--ledger", "{in}/pipe.sqlite3"),
         "the ledger {in}/pipe.sqlite3 is not a regular file (a FIFO", setup="fifo:pipe.sqlite3"),
    # quick refusals: a count beyond its limit, before any planning
    Case("publish-releases-1000000", with_option(PUBLISH, "--releases", "1000000"),
         "the number of releases must be at most 1,000"),
    Case("publish-plan-only-releases-1000000", (*with_option(PUBLISH, "--releases", "1000000"), "--plan-only"),
         "at most 1,000"),
]
CASES += OUTPUT_CASES
