"""Benchmark the command line's start-up and the cost of its parts; print JSON.

Every figure is a fresh process timed from start to exit (best of --repeat, wall clock), next to
floors measured in the same run: ``python -c pass`` (the interpreter alone), ``python -c
"import polars, numpy"`` (the libraries a publish cannot do without) and the *publish floor*
(issue 34): a process that imports Polars and NumPy, reads the bundled Adult file and runs one
group-by, the least any command that publishes Adult does:

- ``cli_help_seconds``: ``crowdsafe --help``; ``cli_publish_help_seconds``: ``crowdsafe publish
  --help`` (building the command line: no Polars, NumPy, SciPy, Spark or Matplotlib);
- ``cli_publish_seconds``: ``crowdsafe publish adult --epsilon 1 --delta 1e-6 --out ...`` with a
  fresh private ledger (as bench/publish.py's ``cli_end_to_end_seconds``), and
  ``cli_publish_no_report_seconds`` the same with ``--no-report``: their difference is the HTML
  report; ``cli_anonymize_seconds``: ``crowdsafe anonymize adult --algorithm mondrian --k 10
  --out ...`` (with its report); each also ``*_over_publish_floor`` (target: at most 2);
- ``report_build_seconds``: ``build_report`` of the Adult release in a child process, imports
  warm (the drawing alone; target: at most 50 ms).

Each process figure also has a ``*_cpu_seconds`` twin: the least processor time (user + system,
of the process and its threads) over the runs, steadier than the wall clock on a loaded machine.

``heavy_on_help`` lists the heavy modules ``crowdsafe --help`` imported (``-X importtime``):
empty when the command line starts lazily. ``pydantic_on_publish``: whether ``crowdsafe publish
adult --plan-only`` imported Pydantic (Typer's option coercion); ``matplotlib_on_publish``:
whether ``crowdsafe publish adult`` (with its report) imported Matplotlib (it should not: the
report draws its own SVG).

With ``--baseline PATH`` a second source tree (e.g. main's ``src``) is timed in turn with the
first, run by run, and its figures are given under ``baseline``: a before/after on a loaded machine.

Usage: python bench/cli.py [--repeat 5] [--src PATH (default ../src)] [--baseline PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HEAVY = ("polars", "numpy", "scipy", "pyspark", "matplotlib", "pandas", "pyarrow", "sklearn")
#: The publish floor: import Polars and NumPy, read the bundled Adult file, one group-by.
PUBLISH_FLOOR = ("import polars as pl, numpy\n"
                 "import crowdsafe.datasets as d, pathlib\n"
                 "path = pathlib.Path(d.__file__).parent / 'files' / 'adult.data.gz'\n"
                 "frame = pl.read_csv(path, has_header=False, infer_schema_length=10000)\n"
                 "print(frame.group_by(frame.columns[:9]).len().height)\n")


def children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def run_seconds(argv: list[str], env: dict[str, str], repeat: int, fresh_ledger: Path | None = None,
                cpu: list[float] | None = None) -> float:
    """Best wall time of ``repeat`` runs of ``argv`` (a fresh ledger file per run when given); the
    processor time (user + system) of each run is appended to ``cpu`` when given."""
    best = float("inf")
    for run in range(repeat):
        extra = {"CROWDSAFE_LEDGER": str(fresh_ledger / f"ledger-{time.monotonic_ns()}-{run}.sqlite3")} \
            if fresh_ledger else {}
        started, used = time.perf_counter(), children_cpu()
        subprocess.run(argv, check=True, env={**env, **extra}, stdout=subprocess.DEVNULL)
        best = min(best, time.perf_counter() - started)
        if cpu is not None:
            cpu.append(children_cpu() - used)
    return best


def heavy_on_help(env: dict[str, str]) -> list[str]:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "crowdsafe", "--help"], env=env,
                          capture_output=True, text=True, check=True)
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \| +(\S+)$", done.stderr, flags=re.MULTILINE)
    return sorted(n for n in set(names) if (n in HEAVY) or n == "numpy.linalg")


def imported_on(argv: list[str], module: str, env: dict[str, str]) -> bool:
    """Whether running ``crowdsafe ARGV`` imported ``module`` (``-X importtime``)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "crowdsafe", *argv], env=env,
                          capture_output=True, text=True, check=True)
    return bool(re.search(rf"^import time:\s+\d+ \|\s+\d+ \| +{re.escape(module)}$", done.stderr, flags=re.MULTILINE))


def pydantic_on_publish(env: dict[str, str]) -> bool:
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "crowdsafe", "publish", "adult", "--plan-only"],
                          env=env, capture_output=True, text=True, check=True)
    return bool(re.search(r"^import time:\s+\d+ \|\s+\d+ \| +pydantic$", done.stderr, flags=re.MULTILINE))


def report_build_seconds(release: Path, env: dict[str, str], repeat: int) -> float:
    """``build_report`` of ``release`` in a child process with its imports warmed up first."""
    code = ("import sys, time\nfrom crowdsafe.report.build import build_report\nbuild_report(sys.argv[1])\n"
            "best = float('inf')\nfor _ in range(int(sys.argv[2])):\n    t = time.perf_counter()\n"
            "    build_report(sys.argv[1])\n    best = min(best, time.perf_counter() - t)\nprint(best)\n")
    done = subprocess.run([sys.executable, "-c", code, str(release), str(repeat)], env=env, check=True,
                          capture_output=True, text=True)
    return float(done.stdout.strip())


def measure(sources: dict[str, Path], repeat: int, folder: Path) -> dict[str, dict[str, float]]:
    """Best wall time of each command per source tree, the trees taking turns run by run (so that a
    change in the machine's load falls on all of them alike)."""
    cli = [sys.executable, "-m", "crowdsafe"]
    publish = [*cli, "publish", "adult", "--epsilon", "1", "--delta", "1e-6"]
    jobs: dict[str, tuple[list[str], bool]] = {
        "process_start_floor_seconds": ([sys.executable, "-c", "pass"], False),
        "import_floor_seconds": ([sys.executable, "-c", "import polars, numpy"], False),
        "publish_floor_seconds": ([sys.executable, "-c", PUBLISH_FLOOR], False),
        "cli_help_seconds": ([*cli, "--help"], False),
        "cli_publish_help_seconds": ([*cli, "publish", "--help"], False),
        "cli_publish_no_report_seconds": ([*publish, "--no-report", "--out", "{out}/plain/adult.csv"], True),
        "cli_publish_seconds": ([*publish, "--out", "{out}/reported/adult.csv"], True),
        "cli_anonymize_seconds": ([*cli, "anonymize", "adult", "--algorithm", "mondrian", "--k", "10", "--out",
                                   "{out}/mondrian/adult.csv"], False),
    }
    best = {label: dict.fromkeys(jobs, float("inf")) for label in sources}
    cpu: dict[str, dict[str, list[float]]] = {label: {key: [] for key in jobs} for label in sources}
    for _ in range(repeat):
        for key, (argv, ledger) in jobs.items():
            for label, src in sources.items():
                env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "100"}
                out = folder / label
                command = [part.replace("{out}", str(out)) for part in argv]
                best[label][key] = min(best[label][key], run_seconds(command, env, 1, out if ledger else None,
                                                                     cpu[label][key]))
    for label in sources:  # processor time: less sensitive than the wall clock to other jobs' load
        best[label].update({key.replace("_seconds", "_cpu_seconds"): min(times) for key, times in cpu[label].items()})
    return best


def figures(best: dict[str, float], src: Path, folder: Path, repeat: int) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(src), "COLUMNS": "100"}
    result: dict[str, object] = {"src": str(src), **best}
    floor = best["process_start_floor_seconds"]
    result["heavy_on_help"] = heavy_on_help(env)
    result["pydantic_on_publish"] = pydantic_on_publish(env)
    result["matplotlib_on_publish"] = imported_on(["publish", "adult", "--epsilon", "1", "--delta", "1e-6",
                                                   "--no-ledger", "--out", str(folder / "probe" / "adult.csv")],
                                                  "matplotlib", env)
    result["report_build_seconds"] = report_build_seconds(folder / "reported" / "adult.csv", env, repeat)
    result["report_share_of_publish_seconds"] = best["cli_publish_seconds"] - best["cli_publish_no_report_seconds"]
    for key in ("cli_help_seconds", "cli_publish_help_seconds", "cli_publish_no_report_seconds", "cli_publish_seconds"):
        result[key.replace("_seconds", "_over_floor")] = best[key] / floor
    for key in ("cli_publish_seconds", "cli_anonymize_seconds"):
        result[key.replace("_seconds", "_over_publish_floor")] = best[key] / best["publish_floor_seconds"]
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--src", default=str(Path(__file__).resolve().parents[1] / "src"))
    parser.add_argument("--baseline", default=None, help="another crowdsafe source tree (e.g. a worktree of main's "
                        "src) timed in turn with --src: its figures under 'baseline'")
    args = parser.parse_args()
    sources = {"current": Path(args.src).resolve()}
    if args.baseline:
        sources["baseline"] = Path(args.baseline).resolve()
    with tempfile.TemporaryDirectory() as folder:
        base = Path(folder)
        best = measure(sources, args.repeat, base)
        result: dict[str, object] = {"python": platform.python_version(), "cpus": os.cpu_count(),
                                     "repeat": args.repeat}
        result.update(figures(best["current"], sources["current"], base / "current", args.repeat))
        if args.baseline:
            result["baseline"] = figures(best["baseline"], sources["baseline"], base / "baseline", args.repeat)
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
