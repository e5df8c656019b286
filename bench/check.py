"""Benchmark of the privacy models and the ``check`` report, against pycanon and a bare group-by.

For Adult (rows without a missing value, 30,162) and synthetic Adults of 1M and 10M rows
(missing values dropped too, so pycanon, which drops them silently, sees the same table):

- **ours, the four models**: k-anonymity, distinct ℓ, entropy ℓ and t-closeness (equal ground
  distance, as pycanon uses for text) with quasi-identifiers age, workclass, education,
  marital-status, race, sex, native-country and sensitive attribute occupation, from a fresh
  Dataset (no cached encoding) each time;
- **floor**: a bare Polars ``group_by(qi + [occupation]).len()`` over the same frame;
- **full check**: ``crowdsafe.api.check_dataset`` with k target 5 and a population size (so
  every model, risk and the Zayatz estimate run), its fingerprint timed apart as well. Each run
  gets a cache-free copy of the table made before the timer (``_fresh``); ``fresh_dataset_s`` times
  the copy the timer used to include, ``with_frame``, which checks every hierarchy against all the
  rows again (load-time work; until rep21 it was part of ``full_check`` and ``four_models``);
- **pycanon** (1.3.6) on the same rows in a subprocess, each of its four functions timed (wall
  and CPU), stopped once it has used ``--pycanon-timeout`` seconds of CPU (default 300, i.e. 5
  minutes; CPU rather than wall time so that a busy machine does not cut it short; wall time is
  capped at three times that): where it does not finish, the JSON says so and keeps the
  functions that did. Speed-ups are reported on wall and on CPU time.

Each size runs in its own subprocess, on data written to Parquet by a preparation subprocess;
peak memory (``ru_maxrss``) of the full check is measured in a further fresh subprocess that
loads the Parquet file and runs the check once. Timings are the best of ``--repeat`` runs
(wall clock; CPU time beside it, which a machine shared with other jobs distorts less). Prints
JSON.

The memory figure ``check_over_frame`` is the check's added peak RSS over the frame's size (see
``_peak``; goal 1.5, issue 19).

Usage: ``python bench/check.py [--sizes adult,1000000,10000000] [--repeat 3] [--pycanon-timeout 300]``
"""

from __future__ import annotations

from sizes import rows_of  # this folder's size names (adult, 1m, 10M, ...)

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

QI = ["age", "workclass", "education", "marital-status", "race", "sex", "native-country"]
SENSITIVE = "occupation"
GOAL_SPEEDUP_ADULT = 500.0
GOAL_CHECK_10M_S = 10.0
GOAL_PEAK_GIB = 4.0
GOAL_CHECK_OVER_FRAME = 1.5  # issue 19: the check's added memory at most 1.5 x the frame
GOAL_CHECK_10M_S_ISSUE_19 = 3.0


def _prepare(size: str, path: Path) -> None:
    from crowdsafe.data import write
    from crowdsafe.datasets import adult, synthetic

    dataset = adult(drop_missing=True) if size == "adult" else synthetic(rows_of(size), seed=1, missing="drop")
    write(dataset, path)


def _load(path: Path):
    from crowdsafe.data import load
    from crowdsafe.datasets import uci_adult

    return load(path, schema=uci_adult.schema(), hierarchies=uci_adult.hierarchies()).with_roles(
        qi=QI, sensitive=[SENSITIVE])


def _timed(job):
    wall, cpu = time.perf_counter(), time.process_time()
    result = job()
    return time.perf_counter() - wall, time.process_time() - cpu, result


def _fresh(dataset):
    """A copy of ``dataset`` with nothing cached (no encoding, no fingerprint), made before the
    timer starts. ``with_frame`` would also check every hierarchy against all the rows again (about
    0.5 s at 10M rows), which a loaded table has already passed: that is load time, not the check's
    (it is timed apart, ``fresh_dataset_s``)."""
    fresh = dataset.with_roles(qi=QI, sensitive=[SENSITIVE])  # the same table: no hierarchy checked again
    assert not fresh._encoded and fresh._fingerprint is None, "the benchmark's table must hold no cache"
    return fresh


def _four(dataset) -> dict:
    """k, distinct ℓ, entropy ℓ and t on a fresh copy of ``dataset`` (nothing cached)."""
    from crowdsafe.models import EquivalenceClasses, closeness, diversity

    fresh = dataset  # made fresh by the caller, before the timer
    stages = {}
    start = time.perf_counter()
    classes = EquivalenceClasses(fresh, QI, sensitive=[SENSITIVE])
    counts = classes.sensitive(SENSITIVE)
    stages["classes_s"] = time.perf_counter() - start
    mark = time.perf_counter()
    k = classes.k
    l_distinct = int(diversity.distinct_values(counts).min())
    l_entropy = float(diversity.entropy_values(counts).min())
    t = float(closeness.equal_emd(counts).max())
    stages["models_s"] = time.perf_counter() - mark
    return {"values": {"k": k, "l_distinct": l_distinct, "l_entropy": l_entropy, "t_equal": t}, "stages": stages}


def _best(repeat: int, job, setup=None) -> dict:
    """The best of ``repeat`` runs of ``job`` (of ``setup()``'s result, made before the timer)."""
    best = None
    for _ in range(repeat):
        if setup is not None:
            given = setup()
            wall, cpu, result = _timed(lambda given=given: job(given))
        else:
            wall, cpu, result = _timed(job)
        if best is None or wall < best["wall_s"]:
            best = {"wall_s": wall, "cpu_s": cpu, "result": result}
    return best


def _measure(path: Path, repeat: int) -> dict:
    import polars as pl

    from crowdsafe import api

    wall, _, dataset = _timed(lambda: _load(path))
    four = _best(repeat, _four, lambda: _fresh(dataset))
    floor = _best(repeat, lambda: dataset.frame.group_by([*QI, SENSITIVE]).len())

    def full_check(fresh):
        return api.check_dataset(fresh, target_k=5, population_size=10 * dataset.n_rows)

    check = _best(repeat, full_check, lambda: _fresh(dataset))
    revalidated = _best(repeat, lambda: dataset.with_frame(dataset.frame))  # what the timer used to include
    fingerprint = _best(1, lambda: dataset.with_frame(dataset.frame).fingerprint())
    report = check.pop("result")
    return {
        "rows": dataset.n_rows,
        "classes": report.classes["groups"],
        "load_s": wall,
        "four_models": {"wall_s": four["wall_s"], "cpu_s": four["cpu_s"], **four["result"]["stages"],
                        "values": four["result"]["values"]},
        "floor_group_by_s": floor["wall_s"],
        "four_models_over_floor": four["wall_s"] / floor["wall_s"],
        "full_check": {**check, "fingerprint_s": fingerprint["wall_s"],
                       "without_fingerprint_s": check["wall_s"] - fingerprint["wall_s"],
                       "under_goal_10m": check["wall_s"] < GOAL_CHECK_10M_S,
                       "under_goal_10m_issue_19": check["wall_s"] <= GOAL_CHECK_10M_S_ISSUE_19},
        "full_check_over_floor": check["wall_s"] / floor["wall_s"],
        "fresh_dataset_s": revalidated["wall_s"],
        "polars_threads": pl.thread_pool_size(),
    }


def _status_kib(field: str) -> int | None:
    """A field of /proc/self/status in KiB (VmRSS, VmHWM), None where unavailable."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return None


def _peak(path: Path) -> dict:
    """Peak memory of one full check. ``peak_gib``: the process's whole peak (ru_maxrss, load
    included). ``check_over_frame``: what the check adds, (peak RSS during the check - RSS with
    the frame loaded) / the frame's size (Polars ``estimated_size``): RSS, because the check's
    memory is mostly Polars and NumPy buffers, which tracemalloc does not see; the peak is
    reset (/proc/self/clear_refs) after loading, so the load's own peak does not count."""
    from crowdsafe import api

    dataset = _load(path)
    frame_gib = dataset.frame.estimated_size() / 2**30
    loaded = _status_kib("VmRSS")
    try:
        Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
        reset = True
    except OSError:
        reset = False
    api.check_dataset(dataset, target_k=5, population_size=10 * dataset.n_rows)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
    result = {"peak_gib": peak, "under_goal": peak < GOAL_PEAK_GIB, "frame_gib": frame_gib}
    during = _status_kib("VmHWM")
    if reset and loaded is not None and during is not None:
        added = max(during - loaded, 0) / 2**20
        result.update({"rss_with_frame_gib": loaded / 2**20, "peak_during_check_gib": during / 2**20,
                       "check_added_gib": added, "check_over_frame": added / frame_gib,
                       "check_over_frame_goal": GOAL_CHECK_OVER_FRAME,
                       "check_over_frame_met": added / frame_gib <= GOAL_CHECK_OVER_FRAME})
    return result


def _pycanon(path: Path) -> None:
    """Run pycanon's four functions, printing one JSON line per function as it finishes."""
    import warnings

    import pandas as pd

    warnings.simplefilter("ignore")
    from pycanon import anonymity

    frame = pd.read_parquet(path, columns=[*QI, SENSITIVE])
    jobs = {
        "k": lambda: anonymity.k_anonymity(frame, QI),
        "l_distinct": lambda: anonymity.l_diversity(frame, QI, [SENSITIVE]),
        "l_entropy": lambda: anonymity.entropy_l_diversity(frame, QI, [SENSITIVE]),
        "t_equal": lambda: anonymity.t_closeness(frame, QI, [SENSITIVE]),
    }
    for name, job in jobs.items():
        wall, cpu, value = _timed(job)
        print(json.dumps({"function": name, "wall_s": wall, "cpu_s": cpu, "value": float(value)}), flush=True)


def _cpu_seconds(pid: int) -> float | None:
    """CPU time (user + system) of a running process, from /proc; None where unavailable."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return None


def _run_pycanon(path: Path, limit: float) -> dict:
    """pycanon in a subprocess, stopped once it has used ``limit`` seconds of CPU (so a busy
    machine does not cut it short), or after 3 x ``limit`` of wall time in any case."""
    process = subprocess.Popen([sys.executable, __file__, "--pycanon-worker", str(path)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    start = time.perf_counter()
    stopped = None
    while process.poll() is None:
        cpu = _cpu_seconds(process.pid)
        wall = time.perf_counter() - start
        if (cpu if cpu is not None else wall) > limit or wall > 3 * limit:
            stopped = f"{cpu:.0f} s of CPU" if cpu is not None and cpu > limit else f"{wall:.0f} s of wall time"
            process.kill()
            break
        time.sleep(0.5)
    out, err = process.communicate()
    functions = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    finished = stopped is None and process.returncode == 0
    result = {"finished": finished, "cpu_limit_s": limit, "functions": {f["function"]: f for f in functions}}
    if finished:
        result["wall_s"] = sum(f["wall_s"] for f in functions)
        result["cpu_s"] = sum(f["cpu_s"] for f in functions)
    elif stopped:
        done = ", ".join(result["functions"]) or "none"
        result["note"] = f"did not finish: stopped after {stopped} (functions completed: {done})"
    else:
        result["note"] = f"failed: {err.strip().splitlines()[-1:] }"
    return result


def _subprocess(*args: str) -> dict:
    completed = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True, check=False)
    if completed.returncode != 0:
        raise RuntimeError(f"{args[0]} failed: {completed.stderr.strip()[-2000:]}")
    return json.loads(completed.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="adult,1000000,10000000")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--pycanon-timeout", type=float, default=300.0)
    parser.add_argument("--prepare", nargs=2, metavar=("SIZE", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--measure", nargs=2, metavar=("PATH", "REPEAT"), help=argparse.SUPPRESS)
    parser.add_argument("--peak", metavar="PATH", help=argparse.SUPPRESS)
    parser.add_argument("--pycanon-worker", metavar="PATH", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.prepare:
        _prepare(args.prepare[0], Path(args.prepare[1]))
        print(json.dumps({"prepared": args.prepare[1]}))
        return
    if args.measure:
        print(json.dumps(_measure(Path(args.measure[0]), int(args.measure[1]))))
        return
    if args.peak:
        print(json.dumps(_peak(Path(args.peak))))
        return
    if args.pycanon_worker:
        _pycanon(Path(args.pycanon_worker))
        return

    results = []
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes.split(","):
            path = Path(folder) / f"{size}.parquet"
            _subprocess("--prepare", size, str(path))
            entry = {"size": size, **_subprocess("--measure", str(path), str(args.repeat))}
            entry["memory"] = _subprocess("--peak", str(path))
            entry["pycanon"] = _run_pycanon(path, args.pycanon_timeout)
            if entry["pycanon"]["finished"]:
                ours = entry["four_models"]
                entry["speedup_over_pycanon"] = {
                    "wall": entry["pycanon"]["wall_s"] / ours["wall_s"],
                    "cpu": entry["pycanon"]["cpu_s"] / ours["cpu_s"],
                }
                entry["agreement"] = {
                    name: {"ours": ours["values"][name], "pycanon": f["value"]}
                    for name, f in entry["pycanon"]["functions"].items()
                }
            results.append(entry)
            print(json.dumps({"done": size}), file=sys.stderr, flush=True)
    adult = next((r for r in results if r["size"] == "adult"), None)
    ten = next((r for r in results if r["size"] != "adult" and rows_of(r["size"]) == 10_000_000), None)
    goals = {
        "speedup_adult_at_least": GOAL_SPEEDUP_ADULT,
        "speedup_adult_met": bool(adult and adult.get("speedup_over_pycanon", {}).get("cpu", 0) >= GOAL_SPEEDUP_ADULT),
        "check_10m_under_s": GOAL_CHECK_10M_S,
        "check_10m_met": bool(ten and ten["full_check"]["under_goal_10m"]),
        "peak_gib_under": GOAL_PEAK_GIB,
        "peak_met": all(r["memory"]["under_goal"] for r in results),
    }
    print(json.dumps({
        "benchmark": "check",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(),
                    "load_average_at_end": os.getloadavg()},
        "goals": goals,
        "results": results,
    }, indent=2))


if __name__ == "__main__":
    main()
