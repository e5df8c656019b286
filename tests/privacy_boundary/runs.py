"""How each command is run for the neighbouring-input test, and what of its output is public.

A case runs one command in a fresh working directory holding ``data.parquet`` (D or D minus one
row), ``schema.toml`` and the hierarchy files, with a fresh ledger ``ledger.sqlite3`` in that
directory and a fixed seed, and returns its artifacts as one JSON-like tree:

- ``exit``, ``stdout`` (parsed JSON, or the printed lines), ``stderr`` (lines); printed lines
  labelled custodian-only (a line saying so, and the indented lines under it) go to
  ``stdout_custodian_only``;
- ``files``: every file the run wrote except the release table itself (certificates, reports),
  JSON parsed;
- ``api``: for Python API cases, what the public function returned, as JSON (summaries,
  certificates); and apart, ``_tables``: the attribute paths of the returned object that hold a
  table (only the release's own rows may: never the sample).

Each case declares its :class:`~boundary_helpers.Classification`: which fields are DP outputs
(or computed from them alone), which are custodian-only. Everything else must be identical.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from boundary_data import write_people
from boundary_helpers import Classification

SEED = "7"
LEDGER = "ledger.sqlite3"
RELEASE_TABLES = {"out/r.csv", "out/r-1.csv", "out/r-2.csv", "out/r-3.csv", "out/view.csv", "out/a.csv",
                  # the HTML reports: DP outputs like the tables (their non-DP parts: tests/report/)
                  "out/r.report.html", "out/r-1.report.html", "out/r-2.report.html", "out/r-3.report.html",
                  "out/a.report.html", "out/view.report.html"}
INPUTS = {"data.parquet", "people.parquet", "schema.toml", "drafted.toml", LEDGER, "domains.json", "r1.csv",
          "r2.csv"}


def run_cli(argv: list[str]) -> dict[str, Any]:
    """Run ``crowdsafe ARGV`` in this process (the console script's entry point)."""
    from crowdsafe import cli

    out, err = io.StringIO(), io.StringIO()
    env = {"COLUMNS": "120"}
    old = {k: os.environ.get(k) for k in env}
    os.environ.update(env)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = cli.main(argv)
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    text = out.getvalue()
    if "--json" in argv and code == 0:
        try:
            return {"exit": code, "stdout": json.loads(text), "stderr": err.getvalue().splitlines()}
        except json.JSONDecodeError:
            pass
    public, custodian = split_custodian_lines(text.splitlines())
    return {"exit": code, "stdout": public, "stdout_custodian_only": custodian, "stderr": err.getvalue().splitlines()}


CUSTODIAN_LABEL = re.compile(r"custodian[ -]only|for the custodian", re.IGNORECASE)


def split_custodian_lines(lines: list[str]) -> tuple[list[str], list[str]]:
    """(public lines, custodian-only lines). A line that says "custodian only" / "for the
    custodian" is custodian-only, and so are the indented lines right under it (a heading)."""
    public: list[str] = []
    custodian: list[str] = []
    under_heading = False
    for line in lines:
        if CUSTODIAN_LABEL.search(line):
            custodian.append(line)
            under_heading = True
        elif under_heading and line[:1].isspace():
            custodian.append(line)
        else:
            under_heading = False
            public.append(line)
    return public, custodian


def has_option(command: str, option: str) -> bool:
    """Whether ``crowdsafe COMMAND`` takes ``option`` (the interfaces of issue 16 add a few)."""
    import typer

    from crowdsafe.cli import app

    group = typer.main.get_command(app)
    found = group
    for part in command.split():
        found = found.commands[part]  # type: ignore[attr-defined]
    return any(option in param.opts for param in found.params)


def if_option(command: str, option: str, *values: str) -> list[str]:
    """``[option, *values]`` when the command takes it, else nothing."""
    return [option, *values] if has_option(command, option) else []


def written_files(directory: Path) -> dict[str, Any]:
    """Every file under ``directory`` that is not an input or a release table (a file, or a part
    file of a release directory): JSON parsed, text as lines, anything else by size."""
    found: dict[str, Any] = {}
    for path in sorted(directory.rglob("*")):
        rel = path.relative_to(directory).as_posix()
        if not path.is_file() or rel in INPUTS or rel in RELEASE_TABLES or rel.endswith(".hierarchy.csv"):
            continue
        if path.parent.relative_to(directory).as_posix() in RELEASE_TABLES and path.name.startswith("part-"):
            continue  # a release written by Spark: a directory of part files (random names), the table
        if rel.startswith(LEDGER):  # the ledger's own journal files
            continue
        raw = path.read_bytes()
        if path.suffix == ".json":
            found[rel] = json.loads(raw)
        else:
            try:
                found[rel] = raw.decode("utf-8").splitlines()
            except UnicodeDecodeError:
                found[rel] = f"<{len(raw)} bytes>"
    return found


def to_json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=str))


def data_objects(obj: Any, path: str = "", seen: set[int] | None = None) -> list[str]:
    """Attribute paths of ``obj`` (dataclasses, tuples, lists, dicts) holding a table: a Dataset
    or a Polars frame. Used to check that a public function hands back no sample."""
    from crowdsafe.data import Dataset

    seen = set() if seen is None else seen
    if id(obj) in seen:
        return []
    seen.add(id(obj))
    if isinstance(obj, (Dataset, pl.DataFrame)):
        return [path]
    out: list[str] = []
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        for f in dataclasses.fields(obj):
            out += data_objects(getattr(obj, f.name), f"{path}.{f.name}" if path else f.name, seen)
    elif isinstance(obj, (list, tuple)):
        for i, item in enumerate(obj):
            out += data_objects(item, f"{path}[{i}]", seen)
    elif isinstance(obj, dict):
        for key, item in obj.items():
            out += data_objects(item, f"{path}.{key}", seen)
    return out


@dataclass(frozen=True)
class Case:
    """One command on one table: ``run(directory)`` is called with the working directory
    already set to ``directory``; it returns the artifacts."""

    name: str
    run: Callable[[Path], dict[str, Any]]
    classification: Classification
    tables: tuple[str, ...] = ()  # attribute paths of the returned object that may hold a table
    # the exit status both runs must have (a case that fails on both sides tests nothing); None:
    # either, as long as both sides agree (a refusal that names no data is correct too)
    exit: int | None = 0


def cli_case(argv: list[str], *, people: bool = False) -> Callable[[Path], dict[str, Any]]:
    """``crowdsafe ARGV`` in the case's directory; with ``people``, ``people.parquet`` (the table
    with identifier columns, :func:`boundary_data.write_people`) is made first."""

    def run(directory: Path) -> dict[str, Any]:
        if people:
            write_people(directory)
        result = run_cli(argv)
        result["files"] = written_files(directory)
        return result

    return run


def publish_api(scheme: str | None, releases: int = 1) -> Callable[[Path], dict[str, Any]]:
    """``crowdsafe.api.publish``: its Publication's summary, certificate and releases' summaries,
    and the paths of any table it hands back besides the releases' own rows."""

    def run(directory: Path) -> dict[str, Any]:
        from crowdsafe import api

        publication = api.publish("data.parquet", schema="schema.toml", epsilon=1.0, delta=1e-3, scheme=scheme,
                                  releases=releases, seed=int(SEED), ledger=LEDGER, budget=(20.0, 1e-2),
                                  out="out/r.csv")
        return {
            "api": {
                "summary": to_json(publication.summary()),
                "certificate": publication.certificate.to_dict(),
                "release_summaries": [to_json(r.summary()) for r in publication.releases],
            },
            "_tables": data_objects(publication),
            "files": written_files(directory),
        }

    return run


def api_case(call: Callable[[], Any]) -> Callable[[Path], dict[str, Any]]:
    """A public API function whose result has ``as_dict()`` (or ``to_dict()``, ``summary()``);
    a result with a certificate has it collected too."""

    def run(directory: Path) -> dict[str, Any]:
        result = call()
        method = next(getattr(result, m) for m in ("as_dict", "to_dict", "summary") if hasattr(result, m))
        tree = method()
        view = getattr(result, "view", None)
        certificate = getattr(result, "certificate", None) or getattr(view, "certificate", None)
        if certificate is not None:
            tree = {**tree, "certificate": certificate.to_dict()}
        return {"api": {"result": to_json(tree)}, "_tables": data_objects(result),
                "files": written_files(directory)}

    return run
