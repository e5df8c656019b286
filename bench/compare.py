"""Time every benchmark script in bench/ on two revisions, in one sitting; print a before/after table.

``python bench/compare.py OLD_REV NEW_REV [--repeat N] [--quick] [--only a,b] [--out DIR]``

What it does:

1. makes two throw-away git worktrees (``git worktree add --detach``) of this repository under
   a temporary folder, at OLD_REV and NEW_REV, and byte-compiles both (so neither side pays for
   it in its first run); each side runs its own copy of every bench/ script, with
   ``PYTHONPATH=<worktree>/src`` and the worktree as working directory (checked: ``crowdsafe``
   must import from that worktree, not from an installed copy);
2. runs each benchmark of the table ``BENCHMARKS`` below with the SAME arguments on both sides,
   old and new taking turns run by run, the order swapped every other round (old, new, new,
   old, ...: ABBA), so that load on a shared machine, a warm page cache or a JIT start hits both
   sides alike; ``--repeat N`` rounds, each round running every benchmark once per side;
3. parses each run's JSON (stdout), flattens it to ``path -> seconds`` (every number under a key
   ending in ``seconds``, ``_s`` or ``_ms``, milliseconds converted; goals, targets, limits and
   load averages left out; a list item is named by its size/dataset/algorithm/k/master/rows
   fields, e.g. ``results[size=adult].total_s``), and pairs the two sides path by path;
4. prints a JSON report on stdout (every paired figure, every run's status) and a Markdown table
   on stderr (and in ``report.md`` with ``--out``) of each script's headline figures and of the
   floor it measured in the same run (a bare Polars/Spark/SciPy job: if the floor moved between
   sides, the machine's load moved, not the code).

Verdict of a figure: old and new are each the best over the rounds; ``ratio = new / old``. The
noise tolerance is the larger of ``--tolerance`` (default 10 %) and the spread of the repeats
themselves, (max − min) / min over the rounds, on either side. ``slower`` when ratio > 1 +
tolerance and new − old > 5 ms (timer noise on millisecond jobs); ``faster`` in the mirror case;
else ``same``. A benchmark with a headline found slower is run ``--confirm`` more rounds (default
2, still ABBA) before the table is made, so that one burst of load does not make a verdict.
Figures are paired by path: a figure a script added, renamed or dropped between the
revisions is listed as ``only in old``/``only in new``; a run that failed, printed no JSON, or
reported a failed part (a Spark child) is listed under ``problem``. Each script's total wall time
and CPU time (of its waited-for processes: a Spark JVM's CPU is not counted) close its rows.

Scripts left out: bench/sizes.py and bench/timing.py are helper libraries the scripts import;
bench/peers/ runs third-party generators (AIM, MST, diffprivlib) in their own virtual
environments for an hour or more, and times no crowdsafe code path the redesign changes.

``--quick`` (one small size each, one round; about 3 minutes on an idle 2-core machine) is a
smoke check that every script runs on both revisions, not a measurement. The full comparison
(``--repeat 2``, the default) takes about 20 minutes on an idle 2-core machine (estimated from
the scripts' CPU time: about 290 s per side and round, of which selection_scores ~55 s,
alpha_beta ~40 s, publish ~30 s, the two Spark scripts ~80 s; the machine was at load 10–20 when
these were chosen, where a quick run took 16 min and a full one would take over an hour). Run it
with nothing else on the machine; under ``nice -n 10`` beside other jobs the floors show how much
the load moved.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Benchmark:
    """One invocation of a bench/ script: its arguments (full and --quick), the reason for them,
    and which of its figures are the headline and which the floor measured in the same run."""

    name: str
    script: str
    full: tuple[str, ...]
    quick: tuple[str, ...] | None  # None: left out of --quick (no cheap size)
    reason: str
    headline: tuple[str, ...]  # figure paths; '*' matches anything
    floor: tuple[str, ...] = field(default=())


# The arguments, chosen so that --repeat 2 takes about 15-20 min on an idle 2-core machine.
BENCHMARKS: tuple[Benchmark, ...] = (
    Benchmark(
        "alpha_beta", "alpha_beta.py",
        ("--sizes", "adult,1m", "--repeat", "2"), ("--sizes", "adult", "--repeat", "1"),
        "Adult + 1M, best of 2: 10M adds a minute of generation per run, and the sweep's floor (129 "
        "group-bys) costs seconds per repeat",
        ("perturb[size=*].perturb_s", "estimate_sweep_adult.sweep_s"),
        ("perturb[size=*].floor_groupby_s", "estimate_sweep_adult.floor_polars_groupby_per_attribute_set_s"),
    ),
    Benchmark(
        "anonymize", "anonymize.py",
        ("--sizes", "adult,1m", "--ks", "5,50", "--no-anjana", "--repeat", "2"),
        ("--sizes", "adult", "--ks", "10", "--no-anjana", "--repeat", "1"),
        "Adult + 1M, k = 5 and 50 (the ends of the default grid); no anjana (a pip install per run, not our code)",
        ("datasets[dataset=*].runs[algorithm=*,k=*].seconds.fit_total",
         "datasets[dataset=*].runs[algorithm=*,k=*].seconds.fit_cpu",
         "datasets[dataset=*].runs[algorithm=*,k=*].seconds.apply"),
        ("datasets[dataset=*].floor_group_by_seconds",),
    ),
    Benchmark(
        "attacks", "attacks.py",
        ("--sizes", "adult,1m", "--repeat", "3"), ("--sizes", "adult", "--repeat", "1"),
        "the default sizes (Adult and the 1M-row pair); 3 interleaved runs instead of 5",
        ("workloads[size=*].attack_seconds", "workloads[size=*].making_releases_seconds"),
        ("workloads[size=*].floor_join_seconds",),
    ),
    Benchmark(
        "calculus", "calculus.py",
        ("--repeat", "5"), ("--repeat", "1"),
        "the default: a few seconds",
        ("delta_table.seconds", "solve_k.seconds"),
        ("delta_table.baseline_naive_scipy_seconds", "solve_k.baseline_naive_scipy_linear_scan_seconds"),
    ),
    Benchmark(
        "check", "check.py",
        ("--sizes", "adult,1m", "--repeat", "3", "--pycanon-timeout", "1"),
        ("--sizes", "adult", "--repeat", "1", "--pycanon-timeout", "1"),
        "Adult + 1M; pycanon (a third-party package, minutes at 1M) stopped after 1 s of CPU",
        ("results[size=*].four_models.wall_s", "results[size=*].full_check.wall_s"),
        ("results[size=*].floor_group_by_s",),
    ),
    Benchmark(
        "data_layer", "data_layer.py",
        ("--sizes", "adult,1m", "--repeat", "3"), ("--sizes", "adult", "--repeat", "1"),
        "Adult (fixed costs) + 1M (per-row cost of the load pipeline the redesign rewrites); 10M adds "
        "about a minute of generation and Parquet writing per run",
        ("results[size=*].total_s", "results[size=*].load_s"),
        ("results[size=*].floor_groupby_s", "results[size=*].floor_read_groupby_s"),
    ),
    Benchmark(
        "publish", "publish.py",
        ("--sizes", "adult,1m", "--repeat", "3"), ("--sizes", "adult", "--repeat", "1"),
        "Adult (with the CLI end to end) + 1M, the retained objective; 10M adds minutes of generation",
        ("results[dataset=*].publish_dataset_seconds", "results[dataset=*].plan_and_publish_seconds",
         "results[dataset=adult].cli_end_to_end_seconds"),
        ("results[dataset=*].floor_group_by_seconds", "results[dataset=adult].process_start_floor_seconds"),
    ),
    Benchmark(
        "publish_classification", "publish.py",
        ("--sizes", "adult", "--objective", "classification", "--repeat", "3"),
        ("--sizes", "adult", "--objective", "classification", "--repeat", "1"),
        "the classification objective's selection and planner (the last speed-up on main), Adult",
        ("results[dataset=*].publish_dataset_seconds", "results[dataset=*].plan_and_publish_seconds",
         "results[dataset=adult].cli_end_to_end_seconds"),
        ("results[dataset=*].floor_group_by_seconds", "results[dataset=adult].process_start_floor_seconds"),
    ),
    Benchmark(
        "queries", "queries.py",
        ("--rows", "1000000", "--repeat", "7", "--skip-opendp"),
        ("--rows", "100000", "--repeat", "1", "--skip-opendp"),
        "1M synthetic rows instead of 10M (per-query cost is linear); OpenDP is a peer, not our code",
        ("*.*.crowdsafe_ms.best", "*.*.crowdsafe_with_ledger_ms.best", "ledger_overhead.best_ms"),
        ("*.*.floor_polars_ms.best",),
    ),
    Benchmark(
        "selection_scores", "selection_scores.py",
        (), None,
        "the default (Adult, eps 1; about a minute, its only size, so not in --quick); it has no floor of its own",
        ("seconds",),
    ),
    Benchmark(
        "spark", "spark.py",
        ("--sizes", "1M", "--threads", "2", "--no-histogram"),
        ("--sizes", "200k", "--threads", "2", "--no-histogram"),
        "the smallest size where Spark's work is more than its start-up; one JVM (local[2]); "
        "the histogram runs as its own benchmark",
        ("results[rows=*].polars.publish_dataset_seconds", "results[rows=*].spark[master=*].publish_table_seconds"),
        ("results[rows=*].polars.floor_group_by_seconds",
         "results[rows=*].spark[master=*].floor_spark_group_by_seconds"),
    ),
    Benchmark(
        "spark_histogram", "spark_histogram.py",
        ("--sizes", "1M", "--repeat", "3"), ("--sizes", "200k", "--repeat", "1"),
        "1M rows instead of 10M/50M (minutes of Parquet writing); one JVM",
        ("sizes[rows=*].polars.best_s", "sizes[rows=*].spark.best_s"),
        ("sizes[rows=*].polars_floor.best_s", "sizes[rows=*].spark_floor.best_s"),
    ),
)

NAME_KEYS = ("size", "dataset", "master", "rows")
DETAIL_KEYS = ("algorithm", "k")
SKIPPED_WORDS = ("goal", "target", "limit", "under", "load_average", "within")
ABSOLUTE_NOISE_S = 0.005


# -- flattening a run's JSON into timing figures ------------------------------------------------

def _unit(key: str) -> float | None:
    """Seconds per unit of a key's figures, or None when the key names no time."""
    if key.endswith("_ms"):
        return 1e-3
    if key.endswith(("seconds", "_s")):
        return 1.0
    return None


def _label(item: dict[str, Any], index: int) -> str:
    """A list item's name: its first naming field (size, dataset, master, rows), then its
    algorithm and k if it has them; else its index."""
    def scalar(key: str) -> bool:
        return key in item and isinstance(item[key], (str, int)) and not isinstance(item[key], bool)

    first = next((key for key in NAME_KEYS if scalar(key)), None)
    keys = ([first] if first else []) + [key for key in DETAIL_KEYS if scalar(key)]
    return ",".join(f"{key}={item[key]}" for key in keys) if keys else str(index)


def figures(report: Any) -> dict[str, float]:
    """Every timing figure of a benchmark's JSON, in seconds, keyed by its path."""
    out: dict[str, float] = {}

    def walk(node: Any, path: str, unit: float | None) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if any(word in key for word in SKIPPED_WORDS):
                    continue
                own = _unit(key)
                walk(value, f"{path}.{key}" if path else key, own if own is not None else unit)
        elif isinstance(node, list):
            if all(isinstance(item, dict) for item in node):  # lists of numbers are per-run timings
                for index, item in enumerate(node):
                    walk(item, f"{path}[{_label(item, index)}]", unit)
        elif (isinstance(node, (int, float)) and not isinstance(node, bool) and unit is not None
              and math.isfinite(node)):
            out[path] = float(node) * unit

    walk(report, "", None)
    return out


def _matches(pattern: str, path: str) -> bool:
    return re.fullmatch(re.escape(pattern).replace(r"\*", ".*"), path) is not None


def _role(bench: Benchmark, path: str) -> str | None:
    if any(_matches(p, path) for p in bench.headline):
        return "headline"
    if any(_matches(p, path) for p in bench.floor):
        return "floor"
    return None


def parse_json(stdout: str) -> Any:
    """The script's JSON report: the whole stdout, or failing that the last JSON object in it."""
    try:
        return json.loads(stdout)
    except json.JSONDecodeError:
        pass
    starts = [m.start() for m in re.finditer(r"^\{", stdout, flags=re.MULTILINE)]
    for start in reversed(starts):
        try:
            return json.loads(stdout[start:])
        except json.JSONDecodeError:
            continue
    raise ValueError("no JSON object on stdout")


# -- worktrees and runs -------------------------------------------------------------------------

def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True,
                          text=True).stdout.strip()


def environment(tree: Path) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items() if key not in ("PYTHONPATH", "CROWDSAFE_LEDGER")}
    env["PYTHONPATH"] = str(tree / "src")
    return env


def prepare(tree: Path) -> None:
    """Byte-compile the worktree and check that crowdsafe imports from it."""
    env = environment(tree)
    subprocess.run([sys.executable, "-m", "compileall", "-q", "src", "bench"], cwd=tree, env=env,
                   check=False, capture_output=True)
    where = subprocess.run([sys.executable, "-c", "import crowdsafe; print(crowdsafe.__file__)"], cwd=tree,
                           env=env, check=True, capture_output=True, text=True).stdout.strip()
    if not Path(where).resolve().is_relative_to(tree.resolve()):
        raise SystemExit(f"compare: crowdsafe imports from {where}, not from {tree}")


def run_once(tree: Path, bench: Benchmark, arguments: tuple[str, ...], timeout: float,
             raw: Path | None, tag: str) -> dict[str, Any]:
    script = tree / "bench" / bench.script
    if not script.exists():
        return {"status": "missing", "error": f"bench/{bench.script} does not exist at this revision"}
    started, children = time.perf_counter(), _children_cpu()
    try:
        done = subprocess.run([sys.executable, str(script), *arguments], cwd=tree, env=environment(tree),
                              capture_output=True, text=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"status": "timeout", "error": f"killed after {timeout:.0f} s",
                "wall_seconds": time.perf_counter() - started}
    wall = time.perf_counter() - started
    if raw is not None:
        (raw / f"{tag}.out.json").write_text(done.stdout)
        (raw / f"{tag}.err.txt").write_text(done.stderr)
    run: dict[str, Any] = {"wall_seconds": wall, "cpu_seconds": _children_cpu() - children,
                           "returncode": done.returncode,
                           "load_average_after": round(os.getloadavg()[0], 2)}
    if done.returncode != 0:
        return {**run, "status": "failed", "error": "\n".join(done.stderr.strip().splitlines()[-5:])}
    try:
        report = parse_json(done.stdout)
    except ValueError as exc:
        return {**run, "status": "no-json", "error": str(exc)}
    found = figures(report)
    if not found:
        return {**run, "status": "no-figures", "error": "the JSON holds no timing figure"}
    errors = _nested_failures(report)
    return {**run, "status": "ok", "figures": found, **({"inner_failures": errors} if errors else {})}


def _children_cpu() -> float:
    """User + system CPU seconds of every finished child process so far."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _nested_failures(report: Any) -> list[str]:
    """Parts of a report that say they failed (a Spark child, a sub-benchmark) although the run exited 0."""
    found: list[str] = []

    def walk(node: Any, path: str) -> None:
        if isinstance(node, dict):
            if node.get("failed") is True:
                found.append(f"{path or '.'}: {node.get('error')}")
            for key, value in node.items():
                walk(value, f"{path}.{key}" if path else key)
        elif isinstance(node, list):
            for index, item in enumerate(node):
                walk(item, f"{path}[{index}]")

    walk(report, "")
    return found


# -- the comparison -----------------------------------------------------------------------------

def _spread(values: list[float]) -> float:
    return (max(values) - min(values)) / min(values) if len(values) > 1 and min(values) > 0 else 0.0


def compare_figure(old: list[float], new: list[float], tolerance: float) -> dict[str, Any]:
    entry: dict[str, Any] = {"old_runs": old, "new_runs": new}
    if not old or not new:
        entry["verdict"] = "only in old" if old else "only in new"
        return entry
    best_old, best_new = min(old), min(new)
    noise = max(tolerance, _spread(old), _spread(new))
    ratio = best_new / best_old if best_old > 0 else math.inf
    if ratio > 1 + noise and best_new - best_old > ABSOLUTE_NOISE_S:
        verdict = "slower"
    elif ratio < 1 / (1 + noise) and best_old - best_new > ABSOLUTE_NOISE_S:
        verdict = "faster"
    else:
        verdict = "same"
    entry.update({"old": best_old, "new": best_new, "ratio": ratio, "tolerance": noise, "verdict": verdict})
    return entry


def summarize(bench: Benchmark, runs: dict[str, list[dict[str, Any]]], tolerance: float) -> dict[str, Any]:
    values: dict[str, dict[str, list[float]]] = {}
    for side in ("old", "new"):
        for run in runs[side]:
            for path, seconds in run.get("figures", {}).items():
                values.setdefault(path, {"old": [], "new": []})[side].append(seconds)
        for key, label in (("wall_seconds", "(script wall time)"), ("cpu_seconds", "(script CPU time)")):
            total = [r[key] for r in runs[side] if r.get("status") == "ok"]
            values.setdefault(label, {"old": [], "new": []})[side].extend(total)
    compared = {}
    for path, sides in values.items():
        entry = compare_figure(sides["old"], sides["new"], tolerance)
        entry["role"] = _role(bench, path) or ("total" if path.startswith("(script") else "other")
        compared[path] = entry
    problems = [f"{side} run {i + 1}: {run['status']}: {''.join((run.get('error') or '').strip().splitlines()[-1:])}"
                for side in ("old", "new") for i, run in enumerate(runs[side]) if run.get("status") != "ok"]
    problems += [f"{side} run {i + 1}: {failure}" for side in ("old", "new")
                 for i, run in enumerate(runs[side]) for failure in run.get("inner_failures", [])]
    missing = [p for p in bench.headline if not any(_matches(p, path) for path in values)]
    if missing and not problems:
        problems.append(f"headline figure(s) not found: {', '.join(missing)}")
    return {"script": f"bench/{bench.script}", "reason": bench.reason, "figures": compared, "problems": problems,
            "runs": {side: [{k: v for k, v in r.items() if k != "figures"} for r in runs[side]]
                     for side in ("old", "new")}}


def _seconds(value: float | None) -> str:
    if value is None:
        return "–"
    return f"{value * 1000:.1f} ms" if value < 1 else f"{value:.2f} s"


def markdown(report: dict[str, Any], every: bool) -> str:
    rows = ["| benchmark | figure | kind | old (best) | new (best) | new/old | tolerance | verdict | floors new/old |",
            "|---|---|---|---:|---:|---:|---:|---|---:|"]
    order = {"headline": 0, "floor": 1, "total": 2, "other": 3}
    for name, bench in report["benchmarks"].items():
        shown = [(path, f) for path, f in bench["figures"].items() if every or f["role"] != "other"]
        shown.sort(key=lambda item: (order[item[1]["role"]], item[0]))
        drift = sorted(f["ratio"] for f in bench["figures"].values() if f["role"] == "floor" and "ratio" in f)
        median_drift = (drift[(len(drift) - 1) // 2] + drift[len(drift) // 2]) / 2 if drift else None
        floors = f"{median_drift:.2f}" if median_drift is not None else "–"
        for path, f in shown:
            ratio = f"{f['ratio']:.2f}" if "ratio" in f else "–"
            noise = f"{f['tolerance']:.0%}" if "tolerance" in f else "–"
            verdict = f["verdict"]
            if (f["role"] == "headline" and verdict == "slower" and median_drift is not None
                    and median_drift > 1 + f["tolerance"]):
                verdict = "slower (floors moved too)"
            if f["role"] in ("floor", "total") and verdict in ("slower", "faster", "same"):
                verdict = f"({verdict}: machine)" if f["role"] == "floor" else f"({verdict})"
            rows.append(f"| {name} | `{path}` | {f['role']} | {_seconds(f.get('old'))} | {_seconds(f.get('new'))} "
                        f"| {ratio} | {noise} | {verdict} | {floors if f['role'] == 'headline' else ''} |")
        for problem in bench["problems"]:
            rows.append(f"| {name} | **problem** | | | | | | {problem.replace('|', '/').splitlines()[0][:200]} | |")
    meta = report["meta"]
    overlay = "".join(f" {side} side: {', '.join(meta[side + '_files'])} overlaid;"
                      for side in ("old", "new") if meta[side + "_files"])
    head = (f"Old {meta['old']} ({meta['old_rev']}), new {meta['new']} ({meta['new_rev']});{overlay} "
            f"{meta['rounds']} round(s), {'quick' if meta['quick'] else 'full'} arguments, "
            f"load average {meta['load_average_before']} before, {meta['load_average_after']} after; "
            f"{meta['minutes']:.1f} min. Tolerance: max({meta['tolerance']:.0%}, spread of the rounds); "
            f"floors are bare Polars/Spark/SciPy jobs timed in the same run; 'floors new/old' (the median "
            f"of the benchmark's floor ratios) is how much the machine, not the code, moved between sides.")
    slower = [f"{name}: `{path}` ×{f['ratio']:.2f}" for name, bench in report["benchmarks"].items()
              for path, f in bench["figures"].items() if f["role"] == "headline" and f["verdict"] == "slower"]
    tail = "Headline figures slower: " + ("; ".join(slower) if slower else "none") + "."
    if meta.get("confirmed"):
        tail += (f" Measured again ({meta['confirm_rounds']} more rounds, since a headline first came out slower): "
                 f"{', '.join(meta['confirmed'])}.")
    if meta["quick"]:
        tail += " --quick is one round at small sizes: a smoke check that every script runs, not a measurement."
    if meta.get("left_out"):
        tail += f" Not run (--quick): {', '.join(meta['left_out'])}."
    return "\n".join([head, "", *rows, "", tail]) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old", nargs="?", help="the revision before (any git revision)")
    parser.add_argument("new", nargs="?", help="the revision after")
    parser.add_argument("--repeat", type=int, default=2, help="rounds (each runs every benchmark once per side)")
    parser.add_argument("--quick", action="store_true", help="one small size each, one round: a smoke check")
    parser.add_argument("--only", help="comma-separated benchmark names (see BENCHMARKS)")
    parser.add_argument("--confirm", type=int, default=2,
                        help="extra rounds for a benchmark with a headline found slower (default 2; not with --quick)")
    parser.add_argument("--tolerance", type=float, default=0.10, help="least noise tolerance (default 0.10)")
    parser.add_argument("--timeout", type=float, default=1800.0, help="seconds per script run")
    parser.add_argument("--repo", type=Path, default=Path(__file__).resolve().parents[1])
    parser.add_argument("--out", type=Path, help="folder for report.json, report.md and every run's raw output")
    parser.add_argument("--old-file", action="append", default=[], metavar="REV:PATH",
                        help="replace PATH in the old worktree by its version at REV (e.g. a bench script "
                             "fixed after OLD_REV); repeatable")
    parser.add_argument("--new-file", action="append", default=[], metavar="REV:PATH",
                        help="the same for the new worktree")
    parser.add_argument("--all-figures", action="store_true", help="every timing figure in the Markdown table")
    parser.add_argument("--list", action="store_true", help="print the benchmarks and their arguments, then stop")
    args = parser.parse_args()

    chosen = list(BENCHMARKS)
    if args.only:
        names = args.only.split(",")
        unknown = set(names) - {b.name for b in BENCHMARKS}
        if unknown:
            raise SystemExit(f"compare: unknown benchmark(s) {sorted(unknown)}; known: {[b.name for b in BENCHMARKS]}")
        chosen = [b for b in BENCHMARKS if b.name in names]
    left_out = [b.name for b in chosen if args.quick and b.quick is None]
    chosen = [b for b in chosen if not (args.quick and b.quick is None)]
    if args.list:
        for b in chosen:
            quick = " ".join(b.quick) if b.quick is not None else "(left out)"
            print(f"{b.name:24} bench/{b.script} {' '.join(b.full)}\n{'':24} quick: {quick}\n"
                  f"{'':24} {b.reason}")
        return
    if not (args.old and args.new):
        parser.error("give OLD_REV and NEW_REV")
    rounds = 1 if args.quick else args.repeat
    confirm = 0 if args.quick else args.confirm
    confirmed: list[str] = []
    revs = {side: git(args.repo, "rev-parse", "--verify", f"{rev}^{{commit}}")
            for side, rev in (("old", args.old), ("new", args.new))}
    overlays = {"old": args.old_file, "new": args.new_file}
    for spec in args.old_file + args.new_file:
        rev, _, path = spec.partition(":")
        git(args.repo, "cat-file", "-e", f"{rev}:{path}")  # fails early on a wrong REV:PATH
    raw = None
    if args.out:
        raw = args.out / "raw"
        raw.mkdir(parents=True, exist_ok=True)
    before = [round(x, 2) for x in os.getloadavg()]
    started = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="crowdsafe-compare-"))
    trees = {side: folder / side for side in ("old", "new")}
    runs: dict[str, dict[str, list[dict[str, Any]]]] = {b.name: {"old": [], "new": []} for b in chosen}
    try:
        for side, tree in trees.items():
            git(args.repo, "worktree", "add", "--detach", str(tree), revs[side])
            for spec in overlays[side]:
                rev, _, path = spec.partition(":")
                (tree / path).write_bytes(subprocess.run(["git", "-C", str(args.repo), "show", f"{rev}:{path}"],
                                                         check=True, capture_output=True).stdout)
            prepare(tree)
        def play(first: int, last: int, benches: list[Benchmark]) -> None:
            for round_ in range(first, last):
                for bench in benches:
                    arguments = bench.quick if args.quick and bench.quick is not None else bench.full
                    for side in (("old", "new") if round_ % 2 == 0 else ("new", "old")):
                        tag = f"{bench.name}-{side}-{round_ + 1}"
                        print(f"# round {round_ + 1}/{last} {bench.name} {side} ...", file=sys.stderr, flush=True)
                        run = run_once(trees[side], bench, arguments, args.timeout, raw, tag)
                        runs[bench.name][side].append(run)
                        print(f"#   {run['status']} in {run.get('wall_seconds', 0):.1f} s "
                              f"({run.get('cpu_seconds', 0):.1f} s CPU)", file=sys.stderr, flush=True)

        play(0, rounds, chosen)
        if confirm:  # a headline found slower is measured again before it is reported
            suspects = [b for b in chosen if any(
                f["role"] == "headline" and f["verdict"] == "slower"
                for f in summarize(b, runs[b.name], args.tolerance)["figures"].values())]
            if suspects:
                confirmed = [b.name for b in suspects]
                print(f"# slower headline(s) in {', '.join(confirmed)}: {confirm} more round(s)", file=sys.stderr)
                play(rounds, rounds + confirm, suspects)
    finally:
        for tree in trees.values():
            if tree.exists():
                subprocess.run(["git", "-C", str(args.repo), "worktree", "remove", "--force", str(tree)],
                               capture_output=True, check=False)
        subprocess.run(["git", "-C", str(args.repo), "worktree", "prune"], capture_output=True, check=False)
        shutil.rmtree(folder, ignore_errors=True)
    report = {
        "meta": {"old": args.old, "new": args.new, "old_rev": revs["old"][:12], "new_rev": revs["new"][:12],
                 "old_files": args.old_file, "new_files": args.new_file,
                 "rounds": rounds, "quick": args.quick, "tolerance": args.tolerance,
                 "absolute_noise_seconds": ABSOLUTE_NOISE_S, "cpus": os.cpu_count(),
                 "python": sys.version.split()[0], "nice": os.nice(0),
                 "load_average_before": before, "load_average_after": [round(x, 2) for x in os.getloadavg()],
                 "minutes": (time.perf_counter() - started) / 60,
                 "arguments": {b.name: list(b.quick if args.quick and b.quick is not None else b.full)
                               for b in chosen},
                 "left_out": left_out, "confirm_rounds": confirm, "confirmed": confirmed},
        "benchmarks": {b.name: summarize(b, runs[b.name], args.tolerance) for b in chosen},
    }
    table = markdown(report, args.all_figures)
    report["markdown"] = table
    if args.out:
        (args.out / "report.json").write_text(json.dumps(report, indent=2))
        (args.out / "report.md").write_text(table)
    json.dump(report, sys.stdout, indent=2)
    sys.stdout.write("\n")
    sys.stderr.write("\n" + table)


if __name__ == "__main__":
    main()
