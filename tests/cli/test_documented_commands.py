"""Every ``crowdsafe ...`` command shown in a fenced code block of README.md and docs/*.md runs as
written: readers copy them. One test per document; its commands run in document order in one
scratch folder (a later command reads what an earlier one wrote, e.g. ``release.csv``),
in-process through ``crowdsafe.cli.main`` (shlex-split, the ``# comment`` left out), with HOME and
the ledger inside that folder, and each must exit 0.

Input files a document expects its reader to have (their own table, a domains file, a release
they made) are made from bundled data by :data:`FIXTURES`, one reason each. A command that
cannot run here as written is in :data:`NOT_AS_WRITTEN` with its reason and the check run
instead; the test checks that the table names commands of the document only, and that every
command that starts a server or a Spark session is in it, so a new one cannot slip through.
"""

from __future__ import annotations

import http.cookiejar
import json
import re
import shlex
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from crowdsafe import cli
from documented import enter_scratch_folder

ROOT = Path(__file__).resolve().parents[2]
DOCUMENTS = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]

_COMMAND = re.compile(r"^(?:\$ )?(?:.*&& )?(crowdsafe(?: .*)?)$")  # `pip install . && crowdsafe ...` too


@dataclass(frozen=True)
class Command:
    document: str
    line: int
    written: str  # as written: continued lines joined, the trailing comment left out

    @property
    def text(self) -> str:
        """The command with its blanks collapsed: how the tables below name it."""
        return " ".join(self.written.split())

    @property
    def argv(self) -> list[str]:
        return shlex.split(self.written)[1:]

    def __str__(self) -> str:
        return f"{self.document}:{self.line}: {self.text}"


def _uncommented(text: str) -> str:
    """``text`` without a ``# comment`` (a ``#`` after a blank, outside quotes)."""
    quote = None
    for i, char in enumerate(text):
        if quote:
            quote = None if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char == "#" and (i == 0 or text[i - 1].isspace()):
            return text[:i].rstrip()
    return text.rstrip()


def documented_commands(document: str) -> list[Command]:
    """The ``crowdsafe`` commands of ``document``'s fenced code blocks, in order."""
    lines = (ROOT / document).read_text(encoding="utf-8").splitlines()
    commands, fenced, i = [], False, 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("```"):
            fenced = not fenced
        elif fenced and (match := _COMMAND.match(stripped)):
            start, text = i + 1, _uncommented(match.group(1))
            while text.endswith("\\") and i + 1 < len(lines):
                i += 1
                text = _uncommented(text[:-1] + " " + lines[i].strip())
            commands.append(Command(document, start, text))
        i += 1
    return commands


# -- input files the documents expect the reader to have --------------------------------------

def _domains(path: Path) -> None:
    # the README's own line: python -c "import json; json.dump({'age': list(range(101)), ...
    json.dump({"age": list(range(101)), "sex": ["F", "M"], "zip": [f"{z:05d}" for z in range(100000)]},
              path.open("w"))


def _people_csv(path: Path, duplicate_header: bool = False) -> None:
    from crowdsafe.datasets.people import write_people_csv

    write_people_csv(path, duplicate_header=duplicate_header)


def _people_parquet(path: Path) -> None:
    from crowdsafe.datasets.people import people

    people().write_parquet(path)


def _people_toml(path: Path) -> None:
    from crowdsafe.data import load
    from crowdsafe.data.schema_draft import draft_schema

    draft_schema(load(path.with_name("people.parquet"))).write(path)


def _mondrian(path: Path, rows: slice, k: int) -> None:
    """A Mondrian release of Adult's rows ``rows`` over the README's attack columns."""
    from crowdsafe.api import anonymize
    from crowdsafe.datasets import adult

    data = adult(drop_missing=True)
    part = data.frame[rows]
    anonymize(part, algorithm="mondrian", k=k, sensitive="occupation", out=path,
              qi=["age", "workclass", "education", "marital-status", "race", "sex", "native-country"])


def _voters(path: Path) -> None:
    """Half of Adult's people, each with a made-up name: the identified list of ``experiment linkage``."""
    from crowdsafe.datasets import adult

    frame = adult(drop_missing=True).frame
    chosen = np.sort(np.random.default_rng(0).choice(frame.height, frame.height // 2, replace=False))
    (frame[chosen].select("age", "sex", "race", "marital-status", "native-country")
     .with_columns(pl.format("person-{}", pl.Series(chosen)).alias("name")).write_csv(path))


def _hospital_csv(path: Path) -> None:
    """The reader's own table of docs/coming-from.md: ``;``-separated, ``NA`` for a missing ZIP code
    (as R and sdcMicro write it), a patient number first; 400 invented rows."""
    rng = np.random.default_rng(0)
    zips = ["13053", "13068", "13067", "14850", "14853", "13012", "13015"]
    diagnoses = ["Influenza", "Pneumonia", "Asthma", "Diabetes", "Hypertension", "Fracture", "Migraine"]
    lines = ["patient_id;age;sex;zip;diagnosis"]
    for i in range(400):
        zip_code = "NA" if rng.random() < 0.03 else zips[rng.integers(len(zips))]
        lines.append(f"P{i:04d};{rng.integers(18, 91)};{'FM'[rng.integers(2)]};{zip_code};"
                     f"{diagnoses[rng.integers(len(diagnoses))]}")
    path.write_text("\n".join(lines) + "\n")


def _page_file(document: str, name: str) -> str:
    """The text of the fenced block that ``document`` marks ``<!-- file: NAME -->``: the page shows
    the file, and the test writes what it shows."""
    lines = (ROOT / document).read_text(encoding="utf-8").splitlines()
    start = lines.index(f"<!-- file: {name} -->") + 2  # the marker, then the opening fence
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("```"))
    return "\n".join(lines[start:end]) + "\n"


def _coming_from_schema(path: Path) -> None:
    """hospital.toml and the ARX hierarchy file it names, as docs/coming-from.md shows them."""
    path.write_text(_page_file("docs/coming-from.md", "hospital.toml"))
    path.with_name("zip.csv").write_text(_page_file("docs/coming-from.md", "zip.csv"))


#: (document, file) -> (why the reader has it, how this test makes it)
FIXTURES: dict[tuple[str, str], tuple[str, Callable[[Path], object]]] = {
    ("README.md", "domains.json"): ("the public domains of the people table: the README's python -c line "
                                    "writes them", _domains),
    ("README.md", "release.csv"): ("check and compare read a release the reader made: the Mondrian release "
                                   "that the README's anonymize block makes further down",
                                   lambda p: _mondrian(p, slice(None), 10)),
    ("README.md", "r1.csv"): ("the intersection attack reads the reader's releases: as the README says, Mondrian "
                              "at k = 5 of overlapping Adult subsets", lambda p: _mondrian(p, slice(0, 20_000), 5)),
    ("README.md", "r2.csv"): ("the other release of the intersection attack",
                              lambda p: _mondrian(p, slice(10_000, None), 5)),
    ("README.md", "voters.csv"): ("the linkage attack's identified list (the reader's external data): drawn from "
                                  "Adult as experiment linkage draws it", _voters),
    ("docs/alpha-beta.md", "people.csv"): ("the reader's own table: the bundled people table as a file", _people_csv),
    ("docs/alpha-beta.md", "domains.json"): ("its public domains, in the format the document gives", _domains),
    ("docs/report.md", "people.csv"): ("the reader's own table: the bundled people table as a file", _people_csv),
    ("docs/report.md", "domains.json"): ("its public domains (docs/alpha-beta.md)", _domains),
    ("docs/own-data.md", "people.csv"): ("written by the guide's first line (python -c ... write_people_csv("
                                         "'people.csv', duplicate_header=True))", lambda p: _people_csv(p, True)),
    ("docs/schema-draft.md", "people.csv"): ("the table of docs/own-data.md, whose draft this page describes",
                                             lambda p: _people_csv(p, True)),
    ("docs/app.md", "people.csv"): ("the reader's own table: the bundled people table as a file", _people_csv),
    ("docs/spark.md", "people.parquet"): ("the reader's table: the bundled people table as a Parquet file",
                                          _people_parquet),
    ("docs/spark.md", "people.toml"): ("its schema: the draft docs/own-data.md makes and reviews", _people_toml),
    ("docs/coming-from.md", "hospital.csv"): ("the reader's own table, as the page describes it", _hospital_csv),
    ("docs/coming-from.md", "hospital.toml"): ("the schema and the ARX hierarchy file the page shows",
                                               _coming_from_schema),
}


# -- commands that cannot run here as written ---------------------------------------------------

class _SparkAsked(BaseException):  # not an Exception: the command line's handler of bugs lets it through
    pass


def until_spark(command: Command, capsys, monkeypatch) -> None:
    """Run the command until it asks for its Spark session (each would start a JVM, 10-20 s on 2
    cores; tests/engines/spark runs these paths): its options, the checks before any data is read
    and the output guard have passed, and it asks for the master it names."""
    capsys.readouterr()
    asked: list[str | None] = []

    def session(master: str | None = None, config: object = None) -> None:
        asked.append(master)
        raise _SparkAsked

    argv = command.argv
    code: int | None = None
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("crowdsafe.engines.spark.session.spark_session", session)
        try:
            code = cli.main(argv)
        except _SparkAsked:
            pass
    master = argv[argv.index("--spark-master") + 1] if "--spark-master" in argv else None
    assert code is None and asked == [master], f"{command}\nexit {code}: {capsys.readouterr().err.strip()}"


def served(command: Command, capsys, monkeypatch) -> None:
    """Run the app as its reader does, in a process of its own, until it answers its one-time
    address with a page; then stop it with Ctrl+C (SIGINT), as the document says. The browser it
    opens is a recorder (``$BROWSER``, which Python's webbrowser module obeys), so no browser
    starts; the port is the one written, or a free one if that is taken, as the app does.

    (In process, the app shared the test process's logging: uvicorn's set-up closed every
    handler there, and one of absl's, made by an earlier test, closed pytest's capture of stderr;
    the app now leaves logging alone, tests/app/test_app_logging.py. A process of its own is
    still what the reader runs.)"""
    import os
    import signal
    import subprocess
    import sys
    import time

    opened = Path("opened-by-browser.txt").resolve()
    opened.unlink(missing_ok=True)
    recorder = f"import sys; open({str(opened)!r}, 'a').write(sys.argv[1])"
    env = {**os.environ, "BROWSER": f"{shlex.quote(sys.executable)} -c {shlex.quote(recorder)} %s"}
    browser = "--no-browser" not in command.argv
    # started as a shell starts it: Ctrl+C at its default, whatever this test process inherited (an
    # ignored SIGINT is inherited, and the app keeps an ignored signal ignored, as nohup wants)
    process = subprocess.Popen([sys.executable, "-m", "crowdsafe", *command.argv], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True, env=env,
                               preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    status, url = None, ""
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()  # the address is the first line it prints
        assert url.startswith("http://127.0.0.1:") and "token=" in url, f"{command}: printed {url!r}"
        opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar()))
        with opener.open(url, timeout=30) as response:
            status = response.status
        waited = time.monotonic()
        while browser and not opened.exists() and time.monotonic() - waited < 10:  # opened 0.5 s after
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=60)
    # Ctrl+C: 128 + SIGINT, and one line saying what stopping left (not the plain commands' line too)
    stopped = [line for line in err.splitlines() if line.startswith("crowdsafe: interrupted")]
    assert process.returncode == 130 and status == 200, f"{command}: exit {process.returncode}, {status}\n{err}"
    assert len(stopped) == 1 and "the app stopped" in stopped[0], err
    assert (opened.read_text() if opened.exists() else None) == (url if browser else None), command


def listed_experiment(name: str) -> Callable[[Command, object, object], None]:
    def check(command: Command, capsys, monkeypatch) -> None:
        code, out = cli.main(["experiment", "list"]), capsys.readouterr().out
        assert code == 0 and re.search(rf"^\s*{re.escape(name)}\b", out, re.MULTILINE), out

    return check


def fewer_synthetic_rows(command: Command, capsys, monkeypatch) -> None:
    argv = command.argv
    path = Path(argv[3])
    assert cli.main([*argv[:2], "10000", *argv[3:]]) == 0, capsys.readouterr().err
    assert pl.read_parquet(path).height == 10_000
    path.unlink()


_SPARK = "needs Spark: run until it asks for its session (until_spark)"
_APP = "serves until Ctrl+C: run until it answers its address, then stopped (served)"

#: (document, command) -> (why it is not run as written, the check run instead)
NOT_AS_WRITTEN: dict[tuple[str, str], tuple[str, Callable[[Command, object, object], None]]] = {
    **{("README.md", c): (_APP, served) for c in (
        "crowdsafe app people",
        "crowdsafe app --port 8765 --no-browser")},
    **{("docs/app.md", c): (_APP, served) for c in (
        "crowdsafe app",
        "crowdsafe app people.csv",
        "crowdsafe app --port 8765 --no-browser")},
    **{("README.md", c): (_SPARK, until_spark) for c in (
        "crowdsafe publish people.parquet --engine spark --spark-master 'local[4]' --budget 10,1e-5 "
        "--out release/people.parquet",
        "crowdsafe publish hdfs:///data/people/ --engine spark --scheme medium --out hdfs:///release/people.parquet",
        "crowdsafe query people.parquet \"histogram age[0..100 by 10], sex in ('F', 'M')\" --epsilon 0.5 "
        "--budget 10,1e-5 --engine spark --spark-master local[4]",
        "crowdsafe perturb people.parquet --c 5 --gamma 0.2 --attributes age,sex,zip --domains domains.json "
        "--max-rows 1000000 --engine spark --out spark-view.parquet --no-ledger",
        "crowdsafe attack intersection k5.parquet k10.parquet --targets people.parquet --qi age,sex "
        "--sensitive charge --engine spark")},
    **{("docs/spark.md", c): (_SPARK, until_spark) for c in (
        "crowdsafe publish people.parquet --engine spark --spark-master 'local[4]' --qi age,zip,sex "
        "--sensitive charge --schema people.toml --out release/people.parquet",
        "crowdsafe publish s3a://bucket/people/ --engine spark --out s3a://bucket/release/people.parquet")},
    ("README.md", "crowdsafe experiment composition"): (
        "about 30 s (3 seeds x 10 k on two tables); tests/experiments/test_attack_experiments.py runs its "
        "reduced grid: here the name is checked to be a listed experiment", listed_experiment("composition")),
    ("README.md", "crowdsafe datasets synthetic 10000000 adult-10m.parquet"): (
        "10M rows, 78 MB, about 7 s: the same command with 10,000 rows", fewer_synthetic_rows),
}


def _cannot_run_here(command: Command) -> bool:
    """Starts a server or a Spark session: must be in NOT_AS_WRITTEN."""
    argv = command.argv
    return argv[:1] == ["app"] or "--engine" in argv and argv[argv.index("--engine") + 1:][:1] == ["spark"]


def _names(command: Command) -> set[str]:
    return {part for arg in command.argv for part in (arg, arg.partition("=")[2])}


def _run(command: Command, capsys) -> None:
    capsys.readouterr()
    code = cli.main(command.argv)
    captured = capsys.readouterr()
    assert code == 0, f"{command}\nexit {code}: {captured.err.strip()[-2000:]}"


@pytest.mark.slow  # all documents: about 60 s of CPU, 40 s of it the README (compare: 10 s)
@pytest.mark.parametrize("document", [d for d in DOCUMENTS if documented_commands(d)])
def test_documented_commands_run_as_written(document, tmp_path, monkeypatch, capsys):
    commands = documented_commands(document)
    texts = {c.text for c in commands}
    special = {text: entry for (doc, text), entry in NOT_AS_WRITTEN.items() if doc == document}
    assert set(special) <= texts, f"NOT_AS_WRITTEN names commands {document} no longer shows: {set(special) - texts}"
    unlisted = [str(c) for c in commands if _cannot_run_here(c) and c.text not in special]
    assert not unlisted, f"add these to NOT_AS_WRITTEN with a reason and a check: {unlisted}"
    assert all(reason for reason, _ in special.values())
    fixtures = {name: entry for (doc, name), entry in FIXTURES.items() if doc == document}
    named = set().union(*(_names(c) for c in commands))
    assert set(fixtures) <= named, f"FIXTURES makes files no command of {document} names: {set(fixtures) - named}"

    enter_scratch_folder(tmp_path, monkeypatch, fixtures)
    for command in commands:
        if command.text in special:
            special[command.text][1](command, capsys, monkeypatch)
        else:
            _run(command, capsys)


def test_the_commands_are_found():
    """The extraction itself: continued lines, comments, ``pip install . && crowdsafe``, ``$``."""
    found = [c for d in DOCUMENTS for c in documented_commands(d)]
    commands = {c.text for c in found}
    assert "crowdsafe publish adult --epsilon 1 --delta 1e-6 --budget 10,1e-5 --out release/adult.csv" in commands
    assert ("crowdsafe perturb adult --missing drop --c 10 --gamma 0.2 --max-rows 50000 --attributes "
            "age,workclass,education,marital-status,occupation,race,sex,native-country,income --budget 10,0 "
            "--out view.csv"
            ) in commands
    assert _uncommented("crowdsafe x \"a # b\" --k 5   # note") == "crowdsafe x \"a # b\" --k 5"
    assert _COMMAND.match("$ crowdsafe calc dps").group(1) == "crowdsafe calc dps"
    assert len(found) >= 80
