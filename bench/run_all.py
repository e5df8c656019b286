"""Run every benchmark script at a set of sizes and regenerate docs/performance.md.

``python bench/run_all.py`` runs each bench/ script (one subprocess per job and size, with
``PYTHONPATH=src``, each while holding ``/tmp/bench.lock``, the lock
``flock /tmp/bench.lock`` takes, so that no two benchmarks on the
machine time each other), reads the JSON each script prints, and writes

- ``bench/results/run_all.json``: every run's arguments, exit status, wall time and full JSON,
  the machine facts, and the table rows extracted from them;
- the generated part of ``docs/performance.md`` (between the ``run_all`` markers; the
  hand-written sections after it are kept): one table of every figure with its floor, the
  ratio, the issue's target where there is one and whether it is met, and the peers timed in
  the same run;
- one log-log plot per job under ``docs/performance/`` (time against rows; crowdsafe, its
  floor and the peers as separate lines).

Options: ``--quick`` (small sizes, one repeat: a smoke run of a few minutes), ``--only
publish,check`` (some jobs), ``--sizes adult,1m`` (override every job's sizes; a job keeps only
the sizes it supports), ``--spark-sizes 1m,10m``, ``--repeat N``, ``--from-json FILE`` (rebuild
the document and the plots from a saved run without timing anything), ``--no-lock`` (tests).

The scripts' JSON keys are read where present and absent ones are tolerated: a figure a script
does not print is left out of the table, a run that failed is listed with its error.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))

from perf_report import write_outputs  # noqa: E402
from sizes import rows_of  # noqa: E402

LOCK = "/tmp/bench.lock"
Row = dict[str, Any]


# -- peers: third-party code run as is, beside our figure ------------------------------------------

PEERS: dict[str, dict[str, str]] = {
    "pycanon": {"job": "check", "module": "pycanon", "install": "pip install pycanon",
                "what": "k-anonymity, ℓ-diversity (distinct, entropy) and t-closeness on the same frame"},
    "OpenDP": {"job": "queries", "module": "opendp", "install": "pip install opendp",
               "what": "count, histogram and clamped mean on Python lists (its Polars front end needs Polars 1.x)"},
    "diffprivlib": {"job": "queries", "module": "", "install": "bench/peers/requirements-dplr.txt (its own venv: "
                    "diffprivlib 0.6.6 does not import with scikit-learn ≥ 1.6)",
                    "what": "count, histogram and mean (diffprivlib.tools) on NumPy arrays, bench/peers_queries.py"},
    "anjana": {"job": "anonymize", "module": "", "install": "pip install anjana",
               "status": "installed by bench/anonymize.py in a venv of its own, per run (Adult only)",
               "what": "greedy full-domain k-anonymity with suppression on Adult, beside the optimal lattice search"},
    "pure-Python Mondrian": {"job": "anonymize", "module": "", "install": "none on PyPI", "status": "none on PyPI",
                             "what": "no installable third-party pure-Python Mondrian was found on PyPI (the "
                                     "`mondrian*` packages there are logging, art and OLAP tools); none is shown "
                                     "rather than one written here and called a peer"},
}


# -- extraction: one script's JSON -> table rows ---------------------------------------------------

def _get(data: Any, *path: str) -> Any:
    for key in path:
        if not isinstance(data, dict) or key not in data:
            return None
        data = data[key]
    return data


def _num(value: Any) -> float | None:
    if isinstance(value, dict):
        value = value.get("best", value.get("best_s"))
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def row(job: str, figure: str, size: str, rows: Any, seconds: Any, floor: Any, floor_name: str, *,
        target_ratio: float | None = None, target_s: float | None = None, peers: dict | None = None) -> Row:
    return {"job": job, "figure": figure, "size": size, "rows": int(rows) if rows else None,
            "crowdsafe_s": _num(seconds), "floor_s": _num(floor), "floor": floor_name,
            "target_ratio": target_ratio, "target_s": target_s, "peers": peers or {}}


#: Issue 34's targets for publish_dataset with its report, as ratios to the Polars group-by floor.
PUBLISH_TARGETS = {"adult": 15.0, "1m": 5.0, "10m": 3.0}


def _publish(out: dict, size: str) -> list[Row]:
    rows = []
    for r in out.get("results", []):
        name = r.get("dataset", size)
        target = PUBLISH_TARGETS.get(name)
        rows.append(row("publish", "publish_dataset", name, r.get("rows"), r.get("publish_dataset_seconds"),
                        r.get("floor_group_by_seconds"), "Polars group-by of the published columns",
                        target_ratio=target))
        if r.get("publish_dataset_no_report_seconds") is not None:
            rows.append(row("publish", "publish_dataset without the HTML report", name, r.get("rows"),
                            r.get("publish_dataset_no_report_seconds"), r.get("floor_group_by_seconds"),
                            "Polars group-by of the published columns"))
        start = r.get("process_start_floor_seconds")
        if r.get("cli_end_to_end_seconds") is not None:
            # its target (≤ 2× the publish floor) is on bench/cli.py's row; the 0.6 s one is withdrawn
            rows.append(row("publish", "CLI `crowdsafe publish adult`", name, r.get("rows"),
                            r.get("cli_end_to_end_seconds"), start, "`python -c 'import polars, numpy'` start-up"))
        for key in ("cli_help_seconds", "help_seconds"):
            if r.get(key) is not None:
                rows.append(row("publish", "CLI `crowdsafe --help`", name, None, r.get(key), start,
                                "interpreter start-up"))
    return rows


def _check(out: dict, size: str) -> list[Row]:
    rows = []
    for r in out.get("results", []):
        name, n = r.get("size", size), r.get("rows")
        peer = r.get("pycanon")
        peers = {}
        if isinstance(peer, dict):
            peers["pycanon"] = ({"seconds": peer.get("wall_s")} if peer.get("finished")
                                else {"note": peer.get("note", "did not finish")})
        floor_name = "Polars group-by(QIs + sensitive)"
        rows.append(row("check", "four models (k, ℓ, entropy ℓ, t)", name, n, _get(r, "four_models", "wall_s"),
                        r.get("floor_group_by_s"), floor_name, peers=peers))
        nominal = rows_of(name) if name != "adult" else None  # the generator's rows before missing values drop
        target = 3.0 if (nominal or 0) >= 10_000_000 else None
        rows.append(row("check", "full `check` report", name, n, _get(r, "full_check", "wall_s"),
                        r.get("floor_group_by_s"), floor_name, target_s=target))
    return rows


QUERY_FIGURES = {"count": "DP count", "histogram_3_attributes": "DP histogram (3 attributes)", "mean": "DP mean"}


def _query_rows(part: dict, size: str, peers_at: dict[str, dict]) -> list[Row]:
    rows, n = [], part.get("rows")
    for key, label in QUERY_FIGURES.items():
        r = part.get(key)
        if not isinstance(r, dict):
            continue
        floors = [_num(v) for k, v in r.items() if k.startswith("floor_") and k.endswith("_ms")]
        floors = [f for f in floors if f is not None]
        ours = _num(r.get("crowdsafe_ms"))
        target = 1.5 if key != "mean" and (n or 0) >= 1_000_000 else None
        peers = {name: ({"seconds": _num(p.get(f"{key}_ms")) / 1000} if _num(p.get(f"{key}_ms")) is not None
                        else {"note": p.get("skipped", "not measured")}) for name, p in peers_at.items()}
        rows.append(row("queries", label, size, n, ours / 1000 if ours is not None else None,
                        min(floors) / 1000 if floors else None, "lazy Polars filter/group-by/mean",
                        target_ratio=target, peers=peers))
    return rows


def _spark_attack(out: dict, size: str) -> list[Row]:
    rows = []
    master = out.get("master", "local[2]")
    for r in out.get("workloads", []):
        n = max(r.get("release_rows") or [0]) or None
        name = r.get("size", size)
        rows.append(row("attacks", f"intersection attack on Spark {master}", name, n, r.get("attack_seconds"),
                        r.get("floor_spark_join_seconds"), "Spark semi-join of the releases and the targets"))
        rows.append(row("attacks", f"intersection attack on Spark {master}, per-target metrics written", name, n,
                        r.get("attack_with_targets_out_seconds"), r.get("floor_spark_join_seconds"),
                        "Spark semi-join of the releases and the targets"))
        rows.append(row("attacks", f"intersection attack, Spark {master} ÷ Polars engine", name, n,
                        r.get("attack_seconds"), r.get("polars_engine_attack_seconds"),
                        "the Polars engine's attack"))
    return rows


def _queries(out: dict, size: str) -> list[Row]:
    rows = []
    opendp = out.get("opendp") if isinstance(out.get("opendp"), dict) else {}
    for name, part in (("adult", out.get("adult")), (size, out.get("synthetic"))):
        if not isinstance(part, dict):
            continue
        peer = opendp.get("adult" if name == "adult" else "synthetic") if opendp else None
        peers = {}
        if isinstance(peer, dict) and (peer.get("skipped") or peer.get("rows") == part.get("rows")):
            peers["OpenDP"] = peer
        rows.extend(_query_rows(part, name, peers))
    return rows


def _peers_queries(out: dict, size: str) -> list[Row]:
    """diffprivlib's figures, as rows that extract_rows merges into the queries rows of the same size."""
    rows = []
    for part in out.get("sizes") or [{"size": size}]:
        for key, label in QUERY_FIGURES.items():
            ms = _num(part.get(f"{key}_ms"))
            peer = {"seconds": ms / 1000} if ms is not None else {
                "note": part.get("skipped") or out.get("skipped") or "not measured"}
            rows.append(row("queries", label, part.get("size", size), part.get("rows"), None, None, "",
                            peers={"diffprivlib": peer}))
    return rows


def _attacks(out: dict, size: str) -> list[Row]:
    rows = []
    for r in out.get("workloads", []):
        n = max(r.get("release_rows") or [0]) or None
        rows.append(row("attacks", "intersection attack", r.get("size", size), n, r.get("attack_seconds"),
                        r.get("floor_join_seconds"), "Polars join of the releases and the targets",
                        target_ratio=2.0))
        if r.get("attack_with_targets_table_seconds") is not None:  # the per-target table made too
            rows.append(row("attacks", "intersection attack, per-target table read", r.get("size", size), n,
                            r.get("attack_with_targets_table_seconds"), r.get("floor_join_seconds"),
                            "Polars join of the releases and the targets"))
        if r.get("attack_median_seconds") is not None:  # the same runs' medians, for their spread
            rows.append(row("attacks", "intersection attack, medians", r.get("size", size), n,
                            r.get("attack_median_seconds"), r.get("floor_join_median_seconds"),
                            "the same join, median of the same turns"))
    return rows


def _anonymize(out: dict, size: str) -> list[Row]:
    rows = []
    for d in out.get("datasets", []):
        name, n = d.get("dataset", size), d.get("rows")
        runs = d.get("runs", [])
        anjana = [r for r in runs if str(r.get("algorithm", "")).startswith("anjana")]
        for r in runs:
            algorithm = str(r.get("algorithm", ""))
            if algorithm.startswith("anjana"):
                continue
            peers: dict[str, dict] = {}
            if algorithm.startswith("lattice") and name == "adult":
                same_k = [a for a in anjana if a.get("k") == r.get("k")]
                if same_k:
                    peers["anjana"] = ({"note": same_k[0]["failed"]} if same_k[0].get("failed")
                                       else {"seconds": _get(same_k[0], "seconds", "fit_total")})
                elif d.get("anjana_error"):
                    peers["anjana"] = {"note": f"failed: {d['anjana_error'][:120]}"}
                else:
                    peers["anjana"] = {"note": "not run (--no-anjana)"}
            if algorithm == "mondrian":
                peers["pure-Python Mondrian"] = {"note": "none on PyPI"}
            rows.append(row("anonymize", f"{algorithm} k={r.get('k')}", name, n, _get(r, "seconds", "fit_total"),
                            d.get("floor_group_by_seconds"), "Polars group-by of the QIs", peers=peers))
    return rows


def _data_layer(out: dict, size: str) -> list[Row]:
    return [row("data_layer", "load + encode + frequency table", r.get("size", size), r.get("rows"), r.get("total_s"),
                r.get("floor_read_groupby_s"), "read_parquet + Polars group-by") for r in out.get("results", [])]


def _alpha_beta(out: dict, size: str) -> list[Row]:
    return [row("alpha_beta", "α-β perturb", r.get("size", size), r.get("rows"), r.get("perturb_s"),
                r.get("floor_groupby_s"), "Polars group-by of the attributes") for r in out.get("perturb", [])]


def _calculus(out: dict, size: str) -> list[Row]:
    return [row("calculus", "δ = d(k, β, ε) table", "-", None, _get(out, "delta_table", "seconds"),
                _get(out, "delta_table", "baseline_naive_scipy_seconds"), "naive SciPy"),
            row("calculus", "smallest-k solver", "-", None, _get(out, "solve_k", "seconds"),
                _get(out, "solve_k", "baseline_naive_scipy_linear_scan_seconds"), "naive SciPy linear scan")]


def _spark(out: dict, size: str) -> list[Row]:
    rows = []
    for r in out.get("results", []):
        n, name = r.get("rows"), size
        polars = r.get("polars") if isinstance(r.get("polars"), dict) else {}
        for run in r.get("spark", []) or []:
            master = run.get("master", "local[?]")
            if run.get("failed"):
                rows.append(row("spark", f"publish on Spark {master}", name, n, None, None, "failed: "
                                + " ".join(map(str, run.get("error", [])))[:120]))
                continue
            # issue 34: within 2× a bare Spark group-by of the same rows on the same session, at 10M
            rows.append(row("spark", f"publish on Spark {master}", name, n, run.get("publish_table_seconds"),
                            run.get("floor_spark_group_by_seconds"), "Spark group-by",
                            target_ratio=2.0 if (n or 0) >= 10_000_000 else None))
            if polars:
                rows.append(row("spark", f"Spark {master} ÷ Polars engine", name, n, run.get("publish_table_seconds"),
                                polars.get("publish_dataset_seconds"), "the Polars engine's publish"))
        if polars:
            rows.append(row("spark", "publish on the Polars engine", name, n, polars.get("publish_dataset_seconds"),
                            polars.get("floor_group_by_seconds"), "Polars group-by"))
    histogram = out.get("dp_histogram")
    for h in (histogram or {}).get("sizes", []) if isinstance(histogram, dict) else []:
        for engine in ("spark", "polars"):
            if isinstance(h.get(engine), dict):
                rows.append(row("spark", f"DP histogram on {engine}", size, h.get("rows"), h[engine].get("best_s"),
                                _get(h, f"{engine}_floor", "best_s"), f"bare {engine} group-by"))
    return rows


PUBLISH_FLOOR = "a process importing Polars and NumPy, reading Adult, one group-by"


def _cli(out: dict, size: str) -> list[Row]:
    """bench/cli.py (start-up of the command line, fresh processes; Adult)."""
    rows = [row("cli", "`crowdsafe --help`", "adult", None, out.get("cli_help_seconds"),
                out.get("process_start_floor_seconds"), "`python -c pass`"),
            row("cli", "`crowdsafe publish --help`", "adult", None, out.get("cli_publish_help_seconds"),
                out.get("process_start_floor_seconds"), "`python -c pass`"),
            row("cli", "`crowdsafe publish adult`", "adult", None, out.get("cli_publish_seconds"),
                out.get("publish_floor_seconds"), PUBLISH_FLOOR, target_ratio=2.0),
            row("cli", "`crowdsafe publish adult --no-report`", "adult", None, out.get("cli_publish_no_report_seconds"),
                out.get("publish_floor_seconds"), PUBLISH_FLOOR),
            row("cli", "`crowdsafe anonymize adult --algorithm mondrian --k 10`", "adult", None,
                out.get("cli_anonymize_seconds"), out.get("publish_floor_seconds"), PUBLISH_FLOOR, target_ratio=2.0,
                target_s=1.0),
            row("cli", "report of the Adult release (in process)", "adult", None, out.get("report_build_seconds"),
                None, "none (an absolute target)", target_s=0.05)]
    heavy = out.get("heavy_on_help")
    if isinstance(heavy, list):
        rows[0]["note"] = "heavy imports on --help: " + (", ".join(heavy) or "none")
    return [r for r in rows if r["crowdsafe_s"] is not None]


def _streaming(out: dict, size: str) -> list[Row]:
    """bench/streaming.py (the Polars engine's frequency table, streamed from Parquet parts; the publish and
    the check of a CSV over EAGER_BYTES, streamed and read whole, the streamed plan, and a DP count and histogram
    streamed and read whole, with peak memory)."""
    results = out.get("results", [out]) if isinstance(out.get("results", [out]), list) else [out]
    rows = []
    for r in results:
        if not isinstance(r, dict):
            continue
        if r.get("frequency_table_seconds") is not None:
            rows.append(row("streaming", "frequency table, streamed", size, r.get("rows"),
                            r.get("frequency_table_seconds"), r.get("floor_group_by_seconds_scaled"),
                            "group-by of one part read whole × parts"))
        for key, figure, job in (("publish_streamed", "publish of a CSV over 256 MiB, streamed", "publish"),
                                 ("publish_in_memory", "publish of the same CSV, read whole", "publish"),
                                 ("check_streamed", "`check` of a CSV over 256 MiB, streamed", "check"),
                                 ("check_in_memory", "`check` of the same CSV, read whole", "check"),
                                 ("plan_streamed", "`publish --plan-only` of a CSV over 256 MiB, streamed", "check")):
            if r.get(f"{key}_seconds") is None:
                continue
            made = row("streaming", figure, size, r.get(f"{job}_rows"), r.get(f"{key}_seconds"),
                       r.get(f"{job}_floor_streamed_group_by_seconds"), "Polars streamed group-by of the CSV")
            memory = r.get(f"{key}_peak_rss_mb")
            if memory is not None:
                same = {"publish_streamed": ("publish_same_output", "; same release as read whole"),
                        "check_streamed": ("check_same_output", "; same report as read whole")}.get(key)
                made["note"] = f"peak RSS {memory:,.0f} MB (floor {r.get(f'{job}_floor_peak_rss_mb') or 0:,.0f} MB)" + (
                    same[1] if same and r.get(same[0]) else "")
            rows.append(made)
        for kind in ("count", "histogram"):
            for run, figure in (("streamed_ledger", f"DP {kind} of a CSV over 256 MiB, streamed, with a ledger"),
                                ("in_memory_ledger", f"DP {kind} of the same CSV, read whole, with a ledger")):
                prefix = f"query_{kind}_{run}"
                if r.get(f"{prefix}_seconds") is None:
                    continue
                made = row("streaming", figure, size, r.get("query_rows"), r.get(f"{prefix}_seconds"),
                           r.get(f"query_{kind}_floor_seconds"), f"Polars streamed {kind} of the CSV")
                memory = r.get(f"{prefix}_peak_rss_mb")
                if memory is not None:
                    made["note"] = f"peak RSS {memory:,.0f} MB" + (
                        "; same answer as read whole" if run == "streamed_ledger" and r.get(f"query_{kind}_same_answer")
                        else "")
                rows.append(made)
    return rows


# -- jobs ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """One bench/ script: the sizes it is run at (default and --quick), its arguments for one size,
    and how its JSON becomes table rows."""

    name: str
    script: str
    sizes: tuple[str, ...]
    quick_sizes: tuple[str, ...]
    args: Callable[[str, int, bool], list[str]]
    extract: Callable[[dict, str], list[Row]]
    supports: Callable[[str], bool] = lambda size: True
    repeat: int = 3


def _queries_args(size: str, repeat: int, quick: bool) -> list[str]:
    rows = rows_of(size) or 100_000
    return ["--rows", str(rows), "--repeat", str(repeat), "--opendp-rows", str(min(rows, 1_000_000))]


JOBS: tuple[Job, ...] = (
    Job("publish", "publish.py", ("adult", "100k", "1m", "10m"), ("adult",),
        lambda s, r, q: ["--sizes", s, "--repeat", str(r)], _publish),
    Job("check", "check.py", ("adult", "100k", "1m", "10m"), ("adult",),
        lambda s, r, q: ["--sizes", s, "--repeat", str(r), "--pycanon-timeout",
                                 "5" if q else ("120" if s == "adult" else "10")], _check),
    Job("queries", "queries.py", ("100k", "1m", "10m"), ("100k",), _queries_args, _queries,
        supports=lambda s: s != "adult", repeat=7),
    Job("peers_queries", "peers_queries.py", ("100k", "1m", "10m"), ("100k",),
        lambda s, r, q: ["--sizes", s, "--repeat", str(r)], _peers_queries, supports=lambda s: s != "adult"),
    Job("spark", "spark.py", ("1m", "10m"), ("100k",),
        lambda s, r, q: ["--sizes", s, "--threads", "2", "--driver-memory", "1g", "--repeat", str(r)]
        + (["--no-histogram"] if q else []),
        _spark, supports=lambda s: s != "adult"),
    Job("attacks", "attacks.py", ("adult", "1m"), ("adult",),
        lambda s, r, q: ["--sizes", s, "--repeat", str(r)], _attacks, supports=lambda s: s in ("adult", "1m")),
    Job("spark_attack", "spark_attack.py", ("adult", "1m"), ("adult",),
        lambda s, r, q: ["--sizes", s, "--repeat", str(r), "--threads", "2"], _spark_attack,
        supports=lambda s: s in ("adult", "1m")),
    Job("anonymize", "anonymize.py", ("adult", "100k", "1m"), ("adult",),
        lambda s, r, q: ["--sizes", s, "--ks", "10", "--repeat", str(r)] + (["--no-anjana"] if q else []),
        _anonymize),
    Job("data_layer", "data_layer.py", ("adult", "100k", "1m"), ("adult",),
        lambda s, r, q: ["--sizes", s, "--repeat", str(r)], _data_layer),
    Job("alpha_beta", "alpha_beta.py", ("adult", "100k", "1m"), ("adult",),
        lambda s, r, q: ["--sizes", s, "--repeat", str(r)], _alpha_beta),
    Job("cli", "cli.py", ("adult",), ("adult",), lambda s, r, q: ["--repeat", str(r)], _cli,
        supports=lambda s: s == "adult", repeat=5),
    Job("streaming", "streaming.py", ("10m",), ("1m",), lambda s, r, q: ["--rows", s], _streaming,
        supports=lambda s: s != "adult"),
    Job("calculus", "calculus.py", ("-",), ("-",), lambda s, r, q: ["--repeat", str(r)], _calculus,
        supports=lambda s: s == "-"),
)


def extract_rows(runs: list[dict]) -> list[Row]:
    """Every table row from the saved runs (what --from-json rebuilds from); diffprivlib's
    figures are merged into the queries rows of the same size and figure."""
    jobs = {job.name: job for job in JOBS}
    rows: list[Row] = []
    extra: list[Row] = []
    for run in runs:
        job = jobs.get(run["job"])
        if job is None or not isinstance(run.get("json"), dict):
            continue
        (extra if job.name == "peers_queries" else rows).extend(job.extract(run["json"], run["size"]))
    seen: set[tuple] = set()
    unique = []
    for r in rows:  # queries.py times Adult at every size: keep the first
        key = (r["job"], r["figure"], r["size"])
        if key not in seen:
            seen.add(key)
            unique.append(r)
    for e in extra:
        for r in unique:
            if (r["job"], r["figure"], r["size"]) == (e["job"], e["figure"], e["size"]):
                r["peers"].update(e["peers"])
    return unique


# -- running ---------------------------------------------------------------------------------------

def parse_json(stdout: str) -> dict | None:
    """A script's JSON: the whole stdout, or else its last line that is a JSON object."""
    try:
        value = json.loads(stdout)
        return value if isinstance(value, dict) else None
    except json.JSONDecodeError:
        pass
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except json.JSONDecodeError:
                continue
    return None


def run_one(job: Job, size: str, repeat: int, quick: bool, lock: bool, console: Any) -> dict:
    """Run one script at one size. With ``lock``, the script runs while this process holds
    /tmp/bench.lock (flock(2), the lock ``flock /tmp/bench.lock ...`` takes), so the time spent
    waiting for other benchmarks is measured apart from the run itself."""
    import fcntl

    if not (HERE / job.script).exists():
        console.print(f"  {job.name}: bench/{job.script} is not on this revision: skipped")
        return {"job": job.name, "size": size, "skipped": f"bench/{job.script} is not on this revision"}
    command = [sys.executable, str(HERE / job.script), *job.args(size, repeat, quick)]
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    waited = time.perf_counter()
    with open(LOCK, "a") as handle:
        if lock:
            fcntl.flock(handle, fcntl.LOCK_EX)
        started = time.perf_counter()
        done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, check=False)
        wall = time.perf_counter() - started
    parsed = parse_json(done.stdout)
    record = {"job": job.name, "size": size, "command": ["python", f"bench/{job.script}", *command[2:]],
              "returncode": done.returncode, "wall_seconds": round(wall, 2),
              "lock_wait_seconds": round(started - waited, 2), "json": parsed}
    if done.returncode != 0 or parsed is None:
        record["error"] = (done.stderr.strip().splitlines() or ["no output"])[-1][:300]
    status = "ok" if "error" not in record else f"[red]failed: {record['error']}[/red]"
    console.print(f"  {job.name} {size}: {wall:.1f} s (waited {started - waited:.0f} s for the lock) {status}")
    return record


def machine_facts() -> dict[str, Any]:
    import polars as pl

    memory = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory = round(int(line.split()[1]) / 1024**2, 1)
    except OSError:
        pass
    git = subprocess.run(["git", "-C", str(ROOT), "describe", "--always", "--dirty", "--abbrev=10"],
                         capture_output=True, text=True, check=False).stdout.strip()
    cpu = platform.processor() or platform.machine()
    try:
        cpu = next(line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                   if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    return {"cores": os.cpu_count(), "cpu": cpu, "memory_gib": memory, "python": platform.python_version(),
            "polars": pl.__version__, "platform": platform.platform(), "git": git or "unknown",
            "load_average_at_start": [round(x, 2) for x in os.getloadavg()]}


def peer_status() -> dict[str, str]:
    """Whether each peer can run here (an importable module, or its own environment)."""
    status = {}
    for name, peer in PEERS.items():
        if peer["module"]:
            found = importlib.util.find_spec(peer["module"]) is not None
            status[name] = "installed" if found else f"not installed: {peer['install']}"
        elif name == "diffprivlib":
            venv = HERE / "peers" / ".venv-dplr" / "bin" / "python"
            status[name] = ("installed in bench/peers/.venv-dplr" if venv.exists()
                            else f"not installed: {peer['install']}")
        else:
            status[name] = peer["status"]
    return status


def plan(args: argparse.Namespace) -> list[tuple[Job, str]]:
    only = set(args.only.split(",")) if args.only else None
    unknown = (only or set()) - {j.name for j in JOBS}
    if unknown:
        raise SystemExit(f"run_all: unknown job(s) {sorted(unknown)}; jobs: {', '.join(j.name for j in JOBS)}")
    chosen = []
    for job in JOBS:
        if only is not None and job.name not in only:
            continue
        if job.name == "spark":
            sizes = args.spark_sizes.split(",") if args.spark_sizes else (job.quick_sizes if args.quick else job.sizes)
        elif args.sizes and job.name != "calculus":
            sizes = [s for s in args.sizes.split(",") if job.supports(s)]
        else:
            sizes = list(job.quick_sizes if args.quick else job.sizes)
        chosen.extend((job, size) for size in sizes)
    return chosen


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes, one repeat: a smoke run")
    parser.add_argument("--only", help="comma-separated jobs: " + ",".join(j.name for j in JOBS))
    parser.add_argument("--sizes", help="sizes for every job (each keeps those it supports), e.g. adult,1m")
    parser.add_argument("--spark-sizes", help="sizes for the Spark job (default 1m,10m; --quick 100k)")
    parser.add_argument("--repeat", type=int, help="best of N (default: each job's own; --quick: 1)")
    parser.add_argument("--from-json", type=Path, help="rebuild the document and plots from a saved run")
    parser.add_argument("--json-out", type=Path, default=HERE / "results" / "run_all.json")
    parser.add_argument("--doc", type=Path, default=ROOT / "docs" / "performance.md")
    parser.add_argument("--plots", type=Path, default=ROOT / "docs" / "performance")
    parser.add_argument("--merge", action="store_true",
                        help="keep the runs already in --json-out of the jobs and sizes not run now")
    parser.add_argument("--no-lock", action="store_true", help=f"do not take {LOCK} (tests only)")
    args = parser.parse_args(argv)
    from rich.console import Console

    console = Console(stderr=True)
    if args.from_json:
        saved = json.loads(args.from_json.read_text())
        saved["rows"] = extract_rows(saved["runs"])
        write_outputs(saved, args.doc, args.plots, PEERS, ROOT)
        console.print(f"wrote {args.doc} and plots under {args.plots} from {args.from_json}")
        return
    todo = plan(args)
    facts = machine_facts()
    console.print(f"run_all: {len(todo)} runs on {facts['cores']} cores, git {facts['git']}"
                  + ("" if args.no_lock else f" (each holding {LOCK})"))
    started = time.time()
    runs: list[dict] = []
    kept: list[dict] = []
    if args.merge and args.json_out.exists():
        now = {(job.name, size) for job, size in todo}
        kept = [r for r in json.loads(args.json_out.read_text())["runs"] if (r["job"], r["size"]) not in now]
    saved = {"generated_by": "python bench/run_all.py " + " ".join(argv if argv is not None else sys.argv[1:]),
             "started": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(started)), "wall_seconds": 0.0,
             "quick": args.quick, "machine": facts, "peers": peer_status(), "runs": runs, "complete": False,
             "planned": [f"{job.name} {size}" for job, size in todo]}
    args.json_out.parent.mkdir(parents=True, exist_ok=True)
    for i, (job, size) in enumerate(todo, 1):
        console.print(f"[bold][{i}/{len(todo)}][/bold] {job.script} {size}")
        repeat = args.repeat or (1 if args.quick else job.repeat)
        runs.append(run_one(job, size, repeat, args.quick, not args.no_lock, console))
        saved["wall_seconds"] = round(time.time() - started, 1)
        saved["runs"] = kept + runs
        saved["rows"] = extract_rows(kept + runs)  # saved after every run: an interrupted run can still be shown
        args.json_out.write_text(json.dumps(saved, indent=1, default=str) + "\n")
    facts["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    saved["complete"] = True
    args.json_out.write_text(json.dumps(saved, indent=1, default=str) + "\n")
    write_outputs(saved, args.doc, args.plots, PEERS, ROOT)
    failed = [f"{r['job']} {r['size']}" for r in runs if "error" in r]
    if kept:
        console.print(f"kept {len(kept)} earlier runs from {args.json_out} (--merge)")
    console.print(f"wrote {args.json_out}, {args.doc}, plots under {args.plots} in {saved['wall_seconds']:.0f} s"
                  + (f"; [red]failed: {', '.join(failed)}[/red]" if failed else ""))


if __name__ == "__main__":
    main()
