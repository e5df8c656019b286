"""Benchmark the Polars engine on a table larger than memory (frequency table, publish, queries); print JSON.

A synthetic Adult of ``--rows`` rows is written as Parquet parts
(``crowdsafe.datasets.synthetic.write_synthetic_parts``, never whole in memory), outside the
timing. In a child process (its peak RSS measured alone, VmHWM), optionally under an
address-space limit (``--limit 3g``: ``prlimit --as``, a memory limit smaller than the table),
``PolarsEngine().frequency_table`` counts the distinct tuples of the nine published columns by
scanning the parts lazily and reducing them with Polars' streaming engine
(``crowdsafe.data.streaming``). Reported: the time, the child's peak RSS, the table's size in
memory (one part read whole, ``estimated_size``, times the parts), the distinct tuples, and a
floor: the same group-by of one part read whole, times the parts.

Then the streamed publish (``--no-publish`` skips it): the same columns written as one CSV file
(``sink_csv``, outside the timing), published by ``crowdsafe.api.publish`` (seeded, a ledger, no
HTML report) in a child process each: streamed (the file is over ``EAGER_BYTES``), optionally
under ``--publish-limit`` (``prlimit --as``), and read whole (``EAGER_BYTES`` raised; skipped with
``--no-in-memory``); the floor is Polars' streamed group-by of the same columns of the same file
(``scan_csv`` + ``collect(engine="streaming")``), also in a child. Reported (keys ``publish_*``):
each child's best time of ``--repeat`` and peak RSS, the ratios to the floor, the CSV's size and
whether the two publishes wrote the same bytes (release, certificate, ledger identities).

Then ``crowdsafe check`` and ``crowdsafe publish --plan-only`` of the same CSV (keys ``check_*``,
``plan_*``; ``--no-check`` skips them), each in a child process: the check (quasi-identifiers
:data:`CHECK_QI`, sensitive occupation, k target 5, a population size: every model and the
Zayatz estimate) streamed (the file is over ``EAGER_BYTES``: ``streamed_check_report``) and read
whole (``EAGER_BYTES`` raised; skipped with ``--no-in-memory``), against a floor: Polars'
streamed group-by of the check's columns (``scan_csv`` + ``collect(engine="streaming")``); and
the plan-only command streamed. Reported: best time of ``--repeat``, peak RSS, ratios to the
floor, and whether the two checks printed the same JSON.

Then the DP queries of the same CSV (``--no-query`` skips them, ``--only-query`` times nothing
else): a count (``count where age >= 30``) and a histogram over public values (sex × race × income,
20 cells), by ``crowdsafe.api.query`` (seeded) in a child process each: streamed without a ledger
and with one (its identity is one more pass over every row), read whole with a ledger (skipped
with ``--no-in-memory``), and the floor, Polars' streamed filter + count or group-by + count of
the same columns (``scan_csv`` + ``collect(engine="streaming")``). Reported (keys ``query_*``):
each child's best time of ``--repeat`` and peak RSS, the ratios to the floor, whether it streamed
and whether the streamed and in-memory answers (with the ledger's entry) are the same.

Usage: python bench/streaming.py [--rows 60M | --sizes 60M] [--limit 3g] [--publish-limit 3g]
       [--no-publish] [--no-check] [--no-query] [--only-query] [--no-in-memory] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from sizes import rows_of

COLUMNS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country", "income"]
CHECK_QI = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
CHECK_SENSITIVE = "occupation"


def child(folder: str) -> dict[str, object]:
    import polars as pl

    from crowdsafe.data import streaming
    from crowdsafe.engines.polars_engine import PolarsEngine

    started = time.perf_counter()
    table = PolarsEngine().frequency_table(folder, COLUMNS)
    seconds = time.perf_counter() - started
    return {"frequency_table_seconds": seconds, "streamed": not streaming.reads_eagerly(folder),
            "distinct_tuples": table.height, "rows_counted": int(table.get_column("count").sum()),
            "child_peak_rss_mb": _peak_rss_mb(),
            "polars": pl.__version__}


def _peak_rss_mb() -> float:
    """This process's peak RSS (VmHWM; getrusage's ru_maxrss would carry the parent's across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def publish_child(path: str, mode: str, ledger: str, out: str) -> dict[str, object]:
    """One publish of the CSV at ``path`` (``mode``: streamed, in-memory, or floor: the streamed
    group-by), timed, with this process's peak RSS and digests of what it wrote."""
    import hashlib

    import polars as pl

    from crowdsafe import api
    from crowdsafe.data import streaming

    if mode == "floor":
        started = time.perf_counter()
        table = pl.scan_csv(path).group_by(COLUMNS).len().collect(engine="streaming")
        seconds = time.perf_counter() - started
        return {"seconds": seconds, "distinct_tuples": table.height, "peak_rss_mb": _peak_rss_mb()}
    if mode == "in-memory":
        streaming.EAGER_BYTES = 1 << 62
    elif os.environ.get("STREAM_ABOVE"):  # --stream-above: a smaller threshold (try the script on small tables)
        streaming.EAGER_BYTES = _bytes(os.environ["STREAM_ABOVE"])
    started = time.perf_counter()
    publication = api.publish(path, epsilon=1.0, delta=1e-6, seed=0, ledger=ledger, out=out, report=False)
    seconds = time.perf_counter() - started
    custodian = publication.custodian_report()
    digests = {name: hashlib.sha256(Path(name).read_bytes()).hexdigest()[:16]
               for name in (out, str(Path(out).with_suffix(".certificate.json")))}
    identity = hashlib.sha256(json.dumps(custodian["ledger"]["dataset_identity"]).encode()).hexdigest()[:16]
    return {"seconds": seconds, "peak_rss_mb": _peak_rss_mb(), "streamed": not streaming.reads_eagerly(path),
            "written": sorted(digests.values()), "identity": identity,
            "input_rows": custodian["input_rows"], "sample_rows": custodian["releases"][0]["sample_rows"]}


def check_child(path: str, mode: str) -> dict[str, object]:
    """One ``check`` (``mode``: check-streamed, check-in-memory), ``plan`` (publish --plan-only,
    streamed) or ``check-floor`` (the streamed group-by of the check's columns) of the CSV at
    ``path``, timed, with this process's peak RSS and a digest of what it printed."""
    import contextlib
    import hashlib
    import io

    import polars as pl

    from crowdsafe import api, cli
    from crowdsafe.data import streaming

    if mode == "check-floor":
        started = time.perf_counter()
        table = pl.scan_csv(path).group_by([*CHECK_QI, CHECK_SENSITIVE]).len().collect(engine="streaming")
        return {"seconds": time.perf_counter() - started, "distinct_tuples": table.height,
                "peak_rss_mb": _peak_rss_mb()}
    if mode == "check-in-memory":
        streaming.EAGER_BYTES = 1 << 62
    elif os.environ.get("STREAM_ABOVE"):
        streaming.EAGER_BYTES = _bytes(os.environ["STREAM_ABOVE"])
    printed = io.StringIO()
    started = time.perf_counter()
    if mode == "plan":
        with contextlib.redirect_stdout(printed):
            code = cli.main(["publish", path, "--epsilon", "1", "--delta", "1e-6", "--plan-only", "--json"])
        assert code == 0, code
        text = printed.getvalue()
    else:
        rows = int(os.environ["CHECK_ROWS"])
        report = api.check(path, qi=CHECK_QI, sensitive=[CHECK_SENSITIVE], target_k=5, population_size=10 * rows)
        text = json.dumps(report.to_dict(), sort_keys=True, default=str)
    seconds = time.perf_counter() - started
    return {"seconds": seconds, "peak_rss_mb": _peak_rss_mb(), "streamed": not streaming.reads_eagerly(path),
            "printed": hashlib.sha256(text.encode()).hexdigest()[:16]}


def _check_runs(csv: Path, rows: int, args: argparse.Namespace, env: dict[str, str]) -> dict[str, object]:
    """The ``check_*`` and ``plan_*`` keys (module docstring)."""

    def best(mode: str) -> dict[str, object]:
        runs = []
        for _ in range(args.repeat):
            done = subprocess.run([sys.executable, __file__, "--check-child", str(csv), mode],
                                  env={**env, "CHECK_ROWS": str(rows)}, capture_output=True, text=True)
            if done.returncode != 0:
                return {"failed": True, "error": done.stderr.strip().splitlines()[-3:]}
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        return min(runs, key=lambda r: float(r["seconds"]))

    floor, streamed, plan = best("check-floor"), best("check-streamed"), best("plan")
    memory = best("check-in-memory") if args.in_memory else {"skipped": True}
    result: dict[str, object] = {
        "check_rows": rows, "check_csv_bytes": csv.stat().st_size, "check_repeat": args.repeat,
        "check_floor_streamed_group_by_seconds": floor.get("seconds"),
        "check_floor_peak_rss_mb": floor.get("peak_rss_mb"),
        "check_streamed_seconds": streamed.get("seconds"), "check_streamed_peak_rss_mb": streamed.get("peak_rss_mb"),
        "check_streamed_was_streamed": streamed.get("streamed"),
        "check_in_memory_seconds": memory.get("seconds"), "check_in_memory_peak_rss_mb": memory.get("peak_rss_mb"),
        "plan_streamed_seconds": plan.get("seconds"), "plan_streamed_peak_rss_mb": plan.get("peak_rss_mb"),
    }
    for name, run in (("check_floor", floor), ("check_streamed", streamed), ("check_in_memory", memory),
                      ("plan_streamed", plan)):
        if run.get("failed"):
            result[f"{name}_error"] = run["error"]
    if isinstance(floor.get("seconds"), float):
        for name, run in (("check_streamed", streamed), ("check_in_memory", memory), ("plan_streamed", plan)):
            if isinstance(run.get("seconds"), float):
                result[f"{name}_ratio_to_floor"] = float(run["seconds"]) / float(floor["seconds"])
    if "printed" in streamed and "printed" in memory:
        result["check_same_output"] = streamed["printed"] == memory["printed"]
    return result


def _csv(folder: Path, parts: list[Path]) -> Path:
    """The published columns of the parts as one CSV file (written once)."""
    import polars as pl

    csv = folder.parent / "table.csv"
    if not csv.exists():
        pl.scan_parquet(parts).select(COLUMNS).sink_csv(csv)
    return csv


QUERIES = {  # a DP count and a histogram over public values (20 cells), and their floors' Polars queries
    "count": ("count where age >= 30", ["age"]),
    "histogram": ("histogram sex in ('Female', 'Male'), race in ('White', 'Black', 'Asian-Pac-Islander', "
                  "'Amer-Indian-Eskimo', 'Other'), income in ('<=50K', '>50K')", ["sex", "race", "income"]),
}


def query_child(path: str, mode: str, kind: str, ledger: str) -> dict[str, object]:
    """One DP query (``kind``) of the CSV at ``path`` (``mode``: streamed, in-memory, or floor: Polars'
    streamed filter + count or group-by + count of the same columns), timed, with this process's
    peak RSS and a digest of the answer (seeded; ``ledger``: a ledger file, or - for none)."""
    import hashlib

    import polars as pl

    from crowdsafe import api
    from crowdsafe.data import streaming

    text, columns = QUERIES[kind]
    if os.environ.get("STREAM_ABOVE"):  # --stream-above (try the script on small tables)
        streaming.EAGER_BYTES = _bytes(os.environ["STREAM_ABOVE"])
    if mode == "floor":
        lazy = pl.scan_csv(path)
        query = (lazy.filter(pl.col("age") >= 30).select(pl.len()) if kind == "count"
                 else lazy.group_by(columns).len())
        started = time.perf_counter()
        table = query.collect(engine="streaming")
        return {"seconds": time.perf_counter() - started, "cells": table.height, "peak_rss_mb": _peak_rss_mb()}
    if mode == "in-memory":
        streaming.EAGER_BYTES = 1 << 62
    import crowdsafe.drivers.query
    import crowdsafe.engines.streamed_query
    import crowdsafe.mechanisms.queries  # noqa: F401 (imported before the timer: the query's cost, not imports)

    started = time.perf_counter()
    answer = api.query(path, text, epsilon=1.0, randomness=0, ledger=None if ledger == "-" else ledger,
                       budget=None if ledger == "-" else (100.0, 1e-6))
    seconds = time.perf_counter() - started
    public = answer.as_dict(custodian=True)
    if public.get("ledger"):
        public["ledger"].pop("path")
    digest = hashlib.sha256(json.dumps(public, sort_keys=True, default=str).encode()).hexdigest()[:16]
    return {"seconds": seconds, "peak_rss_mb": _peak_rss_mb(), "streamed": not streaming.reads_eagerly(path),
            "answer": digest}


def _query_runs(csv: Path, rows: int, args: argparse.Namespace, env: dict[str, str]) -> dict[str, object]:
    """The ``query_*`` keys: each query streamed (without and with a ledger: its identity is one more
    pass over every row), read whole (with a ledger) and its floor, best of ``--repeat`` child runs."""
    from crowdsafe.privacy.ledger import Ledger

    template = csv.parent / "query-template.ledger"
    with Ledger(template) as book:  # one identity key for every run, so the answers compare
        assert book.identity_key
    result: dict[str, object] = {"query_rows": rows, "query_csv_bytes": csv.stat().st_size, "query_repeat": args.repeat}

    def best(mode: str, kind: str, ledger: bool) -> dict[str, object]:
        runs = []
        for i in range(args.repeat):
            path = "-"
            if ledger:
                path = str(csv.parent / f"query-{mode}-{kind}-{i}.ledger")
                shutil.copy(template, path)
                Path(path).chmod(0o600)
            done = subprocess.run([sys.executable, __file__, "--query-child", str(csv), mode, kind, path],
                                  env=env, capture_output=True, text=True)
            if done.returncode != 0:
                return {"failed": True, "error": done.stderr.strip().splitlines()[-3:]}
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        return min(runs, key=lambda r: float(r["seconds"]))

    for kind, (text, _) in QUERIES.items():
        runs = {"floor": best("floor", kind, False), "streamed": best("streamed", kind, False),
                "streamed_ledger": best("streamed", kind, True)}
        if args.in_memory:
            runs["in_memory_ledger"] = best("in-memory", kind, True)
        result[f"query_{kind}_text"] = text
        floor = runs["floor"].get("seconds")
        for name, run in runs.items():
            prefix = f"query_{kind}_{name}"
            if run.get("failed"):
                result[f"{prefix}_error"] = run["error"]
                continue
            result[f"{prefix}_seconds"], result[f"{prefix}_peak_rss_mb"] = run["seconds"], run["peak_rss_mb"]
            if name != "floor" and isinstance(floor, float):
                result[f"{prefix}_ratio_to_floor"] = float(run["seconds"]) / floor
            if name.startswith("streamed"):
                result[f"{prefix}_was_streamed"] = run.get("streamed")
        streamed, whole = runs["streamed_ledger"], runs.get("in_memory_ledger", {})
        if "answer" in streamed and "answer" in whole:
            result[f"query_{kind}_same_answer"] = streamed["answer"] == whole["answer"]
    return result


def _publish_runs(folder: Path, csv: Path, rows: int, args: argparse.Namespace, env: dict[str, str]
                  ) -> dict[str, object]:
    """The ``publish_*`` keys (module docstring)."""
    from crowdsafe.privacy.ledger import Ledger

    template = folder.parent / "template.ledger"
    with Ledger(template) as ledger:  # one identity key for every run, so the identities compare
        assert ledger.identity_key

    def best(mode: str, limit: str | None) -> dict[str, object]:
        runs = []
        for i in range(args.repeat):
            ledger, out = folder.parent / f"{mode}-{i}.ledger", folder.parent / f"{mode}-{i}" / "release.csv"
            shutil.copy(template, ledger)
            ledger.chmod(0o600)
            command = [sys.executable, __file__, "--publish-child", str(csv), mode, str(ledger), str(out)]
            if limit:
                command = ["prlimit", f"--as={_bytes(limit)}", *command]
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            if done.returncode != 0:
                return {"failed": True, "error": done.stderr.strip().splitlines()[-3:]}
            runs.append(json.loads(done.stdout.strip().splitlines()[-1]))
        return min(runs, key=lambda r: float(r["seconds"]))

    floor = best("floor", None)
    streamed = best("streamed", args.publish_limit)
    memory = best("in-memory", None) if args.in_memory else {"skipped": True}
    result: dict[str, object] = {
        "publish_rows": rows, "publish_csv_bytes": csv.stat().st_size, "publish_repeat": args.repeat,
        "publish_floor_streamed_group_by_seconds": floor.get("seconds"),
        "publish_floor_peak_rss_mb": floor.get("peak_rss_mb"),
        "publish_streamed_seconds": streamed.get("seconds"),
        "publish_streamed_peak_rss_mb": streamed.get("peak_rss_mb"),
        "publish_streamed_was_streamed": streamed.get("streamed"), "publish_address_space_limit": args.publish_limit,
        "publish_in_memory_seconds": memory.get("seconds"), "publish_in_memory_peak_rss_mb": memory.get("peak_rss_mb"),
        "publish_sample_rows": streamed.get("sample_rows"),
    }
    for name, run in (("floor", floor), ("streamed", streamed), ("in_memory", memory)):
        if run.get("failed"):
            result[f"publish_{name}_error"] = run["error"]
    if isinstance(floor.get("seconds"), float):
        for name, run in (("streamed", streamed), ("in_memory", memory)):
            if isinstance(run.get("seconds"), float):
                result[f"publish_{name}_ratio_to_floor"] = float(run["seconds"]) / float(floor["seconds"])
    if "written" in streamed and "written" in memory:
        result["publish_same_output"] = (streamed["written"] == memory["written"]
                                         and streamed["identity"] == memory["identity"])
    return result


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--publish-child":
        print(json.dumps(publish_child(*sys.argv[2:6])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--check-child":
        print(json.dumps(check_child(*sys.argv[2:4])))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "--query-child":
        print(json.dumps(query_child(*sys.argv[2:6])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", "--sizes", dest="rows", default="60M")
    parser.add_argument("--limit", default=None, help="address-space limit of the child (prlimit --as), e.g. 3g")
    parser.add_argument("--publish-limit", default=None, help="address-space limit of the streamed publish's child")
    parser.add_argument("--no-publish", dest="publish", action="store_false", help="time the frequency table only")
    parser.add_argument("--no-check", dest="check", action="store_false",
                        help="skip the check and --plan-only of the CSV")
    parser.add_argument("--no-query", dest="query", action="store_false",
                        help="skip the DP count and histogram of the CSV (streamed, read whole, floor)")
    parser.add_argument("--only-query", action="store_true",
                        help="time the DP queries only (no frequency table, no publish)")
    parser.add_argument("--no-in-memory", dest="in_memory", action="store_false",
                        help="skip the publish of the file read whole (it needs the table in memory)")
    parser.add_argument("--repeat", type=int, default=1, help="best of N runs of each publish child")
    parser.add_argument("--stream-above", default=None,
                        help="the streamed publish's threshold instead of EAGER_BYTES (e.g. 1m, to try small tables)")
    args = parser.parse_args()
    import polars as pl

    from crowdsafe.datasets.synthetic import PART_ROWS, write_synthetic_parts

    rows = rows_of(args.rows)
    if rows is None:
        raise SystemExit("bench/streaming.py: use a synthetic size (60M)")
    folder = Path(tempfile.mkdtemp(prefix="crowdsafe-streaming-bench-")) / "table.parquet"
    try:
        started = time.perf_counter()
        parts = write_synthetic_parts(rows, folder, seed=0)
        generate = time.perf_counter() - started
        first = pl.read_parquet(parts[0])
        scale = rows / first.height
        started = time.perf_counter()
        first.group_by(COLUMNS).len()
        floor = (time.perf_counter() - started) * scale
        in_memory_mb = first.estimated_size("mb") * scale
        del first
        src = str(Path(__file__).resolve().parents[1] / "src")
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([src, str(Path(__file__).resolve().parent)])}
        if args.stream_above:
            env["STREAM_ABOVE"] = args.stream_above
        command = [sys.executable, __file__, "--child", str(folder)]
        if args.limit:
            command = ["prlimit", f"--as={_bytes(args.limit)}", *command]
        result: dict[str, object] = {"skipped": True}
        if not args.only_query:
            done = subprocess.run(command, env=env, capture_output=True, text=True)
            result = (json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0
                      else {"failed": True, "error": done.stderr.strip().splitlines()[-3:]})
        tables = not args.only_query  # --only-query: the queries alone
        queries = args.query or args.only_query
        csv = _csv(folder, parts) if (tables and (args.publish or args.check)) or queries else None
        published = _publish_runs(folder, csv, rows, args, env) if csv and tables and args.publish else {}
        checked = _check_runs(csv, rows, args, env) if csv and tables and args.check else {}
        if csv and queries:
            published.update(_query_runs(csv, rows, args, env))
        print(json.dumps({
            "rows": rows, "parts": len(parts), "part_rows": PART_ROWS,
            "parquet_bytes": sum(p.stat().st_size for p in parts), "generate_and_write_seconds": generate,
            "table_in_memory_mb": in_memory_mb, "address_space_limit": args.limit,
            "floor_group_by_seconds_scaled": floor, **result,
            "ratio_to_floor": float(result.get("frequency_table_seconds", float("nan"))) / floor,
            "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(), **published,
            **checked,
        }, indent=2))
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


def _bytes(size: str) -> int:
    size = size.strip().lower()
    factor = {"k": 2**10, "m": 2**20, "g": 2**30}.get(size[-1], 1)
    return int(float(size.rstrip("kmg")) * factor)


if __name__ == "__main__":
    main()
