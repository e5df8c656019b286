"""Benchmark the classic anonymizers; print JSON.

Data: Adult (rows with no missing value, 30,162) and the synthetic Adult at 1M and 10M rows
(rows with a missing value dropped), quasi-identifiers age, workclass, education,
marital-status, occupation, race, sex, native-country, default hierarchies; k in {5, 10, 20, 50}.

For each dataset: the floor (a bare Polars group-by over the quasi-identifiers, timed in the same
run), then Mondrian (strict), MDAV (Adult only: it is quadratic in the distinct tuples) and the
optimal lattice search (suppression limit --limit) with fit / apply times, NCP (GCP),
discernibility, C_avg and suppression from crowdsafe.metrics. On Adult the greedy full-domain
generalizer of the ``anjana`` package runs at the same k and suppression limit; it is installed
by this script into a temporary virtual environment (not a crowdsafe dependency), timed in a
subprocess, and its output measured with the same metrics. Mondrian and MDAV also report
``fit_cpu``, the best CPU time of the fit (single-threaded, so steadier than wall time when
other jobs share the cores).

Usage: python bench/anonymize.py [--sizes adult,1m,10m] [--ks 5,10,20,50] [--limit 0.05]
       [--no-anjana] [--repeat 3]
"""

from __future__ import annotations

from sizes import rows_of  # this folder's size names (adult, 1m, 10M, ...)

import argparse
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import venv
from pathlib import Path
from typing import Any

import polars as pl
from timing import best_of as _best  # best wall time of n runs

from crowdsafe.anonymize import apply, cell_table, lattice_search, mdav, mondrian
from crowdsafe.anonymize.release import Release
from crowdsafe.datasets import adult, synthetic
from crowdsafe.metrics import information_loss
from crowdsafe.privacy import RecodingProfile, certify_k_anonymization

QIS = ["age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country"]


def timed(function, repeat: int = 1):
    """(best wall time over ``repeat`` runs, the last result)."""
    return _best(repeat, function)


def cpu_timed(function, repeat: int = 1):
    """(best wall time, best CPU time of this process, the last result) over ``repeat`` runs.
    On a shared machine the CPU time is the steadier figure: it leaves out the time other
    processes held the cores (the algorithms run on one thread)."""
    wall = cpu = float("inf")
    result = None
    for _ in range(repeat):
        started, started_cpu = time.perf_counter(), time.process_time()
        result = function()
        wall, cpu = min(wall, time.perf_counter() - started), min(cpu, time.process_time() - started_cpu)
    return wall, cpu, result


def load(name: str):
    if name == "adult":
        data = adult(drop_missing=True)
    else:
        data = synthetic(rows_of(name), seed=0, missing="drop")
    data = data.with_roles(qi=QIS)
    started = time.perf_counter()
    for column in QIS:
        data.encoded(column)  # dictionary encoding happens once per dataset
    return data, time.perf_counter() - started


def floor(data, repeat: int) -> float:
    seconds, _ = timed(lambda: data.frame.group_by(QIS).agg(pl.len()), repeat)
    return seconds


def utility(data, frame: pl.DataFrame, k: int) -> dict[str, Any]:
    loss = information_loss(data, frame, qi=QIS, k=k, input_rows=data.n_rows)
    return {
        "ncp": loss.gcp,
        "ncp_per_attribute": loss.ncp,
        "discernibility": loss.discernibility,
        "c_avg": loss.c_avg,
        "suppression_rate": loss.suppression_rate,
        "classes": loss.classes,
    }


def release_of(data, recoding, applied, k: int, name: str) -> Release:
    certificate = certify_k_anonymization(sampling=None, recoding=RecodingProfile.unsafe(name), k=k)
    return Release(applied.frame, certificate, name, k, tuple(QIS), None, recoding, applied, data)


def run_local(data, name: str, k: int, repeat: int) -> dict[str, Any]:
    cells_seconds, cells = timed(lambda: cell_table(data, QIS), repeat)
    if name == "mondrian":
        fit_seconds, fit_cpu, recoding = cpu_timed(lambda: mondrian(data, k, columns=QIS, cells=cells), repeat)
    else:
        fit_seconds, fit_cpu, recoding = cpu_timed(lambda: mdav(data, k, columns=QIS, cells=cells), 1)
    apply_seconds, applied = timed(lambda: apply(data, recoding, k), repeat)
    release = release_of(data, recoding, applied, k, name)
    measures_frame = release.frame
    if getattr(recoding, "extents", None) is not None:  # MDAV: NCP of each group's extent
        classes = recoding.class_of_row[applied.kept]
        measures_frame = pl.DataFrame([recoding.extents[c].gather(classes).alias(c) for c in QIS])
    return {
        "algorithm": name,
        "k": k,
        "seconds": {"cell_table": cells_seconds, "fit": fit_seconds, "fit_total": cells_seconds + fit_seconds,
                    "fit_cpu": fit_cpu, "apply": apply_seconds},
        **utility(data, measures_frame, k),
        "partitions": recoding.details.get("partitions", recoding.details.get("groups")),
    }


def run_lattice(data, k: int, limit: float) -> dict[str, Any]:
    seconds, (scheme, result) = timed(lambda: lattice_search(data, k, columns=QIS, suppression_limit=limit,
                                                             search="optimal"))
    apply_seconds, applied = timed(lambda: apply(data, scheme, k, suppression_limit=limit))
    return {
        "algorithm": "lattice (optimal)",
        "k": k,
        "suppression_limit": limit,
        "seconds": {"fit_total": seconds, "apply": apply_seconds},
        "levels": result.scheme_levels,
        "nodes": result.nodes,
        "nodes_evaluated": result.evaluated,
        "nodes_scored": result.scored,
        **utility(data, applied.frame, k),
    }


# -- anjana ---------------------------------------------------------------------------------

ANJANA_RUNNER = r"""
import json, sys, time
import pandas as pd
from anjana.anonymity import k_anonymity
spec = json.load(open(sys.argv[1]))
data = pd.read_parquet(spec["data"])
hierarchies = {c: {int(level): values for level, values in levels.items()} for c, levels in spec["hierarchies"].items()}
for k in spec["ks"]:
    started = time.perf_counter()
    out = k_anonymity(data, [], spec["qis"], k, spec["supp_level"], hierarchies)
    seconds = time.perf_counter() - started
    out[spec["qis"]].astype(str).to_parquet(spec["out"].format(k=k))
    print(json.dumps({"k": k, "seconds": seconds}), flush=True)
"""


def anjana_python(workdir: Path) -> Path:
    """A virtual environment with anjana, made for this run (not a crowdsafe dependency)."""
    env = workdir / "anjana-venv"
    venv.EnvBuilder(with_pip=True).create(env)
    python = env / ("Scripts" if os.name == "nt" else "bin") / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "anjana", "pyarrow"], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return python


def run_anjana(data, ks: list[int], limit: float, workdir: Path) -> list[dict[str, Any]]:
    python = anjana_python(workdir)
    frame = data.frame.select(QIS)
    frame.write_parquet(workdir / "adult.parquet")
    hierarchies = {}
    for column in QIS:
        h = data.hierarchies[column]
        leaves = h.leaves.to_list()
        levels = {0: leaves}
        for level in range(1, h.height + 1):
            levels[level] = [h.labels[level][int(node)] for node in h.leaf_map(level)]
        hierarchies[column] = levels
    spec = {"data": str(workdir / "adult.parquet"), "qis": QIS, "ks": ks, "supp_level": limit * 100,
            "hierarchies": hierarchies, "out": str(workdir / "anjana-{k}.parquet")}
    (workdir / "spec.json").write_text(json.dumps(spec))
    (workdir / "runner.py").write_text(ANJANA_RUNNER)
    completed = subprocess.run([str(python), str(workdir / "runner.py"), str(workdir / "spec.json")],
                               check=True, capture_output=True, text=True)
    results = []
    for line in completed.stdout.splitlines():
        if not line.startswith("{"):
            continue
        timing = json.loads(line)
        out = pl.read_parquet(workdir / f"anjana-{timing['k']}.parquet")
        entry = {"algorithm": "anjana k_anonymity (greedy)", "k": timing["k"], "suppression_limit": limit,
                 "seconds": {"fit_total": timing["seconds"]}}
        if out.height == 0:
            entry["failed"] = "anjana returned an empty table"
        else:
            entry.update(utility(data, out, timing["k"]))
            levels = {}
            for column in QIS:
                h = data.hierarchies[column]
                seen = set(out.get_column(column).unique().to_list())
                levels[column] = next(
                    (lv for lv in range(h.height + 1)
                     if seen <= ({str(v) for v in h.leaves.to_list()} if lv == 0 else set(h.labels[lv]))),
                    None,
                )
            entry["levels"] = levels
        results.append(entry)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="adult,1m,10m")
    parser.add_argument("--ks", default="5,10,20,50")
    parser.add_argument("--limit", type=float, default=0.05, help="lattice and anjana suppression limit")
    parser.add_argument("--repeat", type=int, default=3, help="best of n for the fast steps")
    parser.add_argument("--no-anjana", action="store_true")
    parser.add_argument("--lattice-max-rows", type=int, default=1_000_000)
    args = parser.parse_args()
    ks = [int(x) for x in args.ks.split(",")]
    report: dict[str, Any] = {
        "benchmark": "anonymize",
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "platform": platform.platform(),
                    "load_average_at_start": os.getloadavg()},
        "quasi_identifiers": QIS,
        "datasets": [],
    }
    for name in args.sizes.split(","):
        data, encode_seconds = load(name)
        entry: dict[str, Any] = {"dataset": name, "rows": data.n_rows, "encode_seconds": encode_seconds,
                                 "floor_group_by_seconds": floor(data, args.repeat), "runs": []}
        entry["distinct_qi_tuples"] = cell_table(data, QIS).n_cells
        for k in ks:
            entry["runs"].append(run_local(data, "mondrian", k, args.repeat))
            if name == "adult":
                entry["runs"].append(run_local(data, "mdav", k, 1))
            if data.n_rows <= args.lattice_max_rows:
                entry["runs"].append(run_lattice(data, k, args.limit))
        if name != "adult":
            entry["skipped"] = {"mdav": "quadratic in the distinct tuples (about n^2/k distance evaluations)"}
            if data.n_rows > args.lattice_max_rows:
                entry["skipped"]["lattice"] = f"more than --lattice-max-rows={args.lattice_max_rows:,} rows"
        if name == "adult" and not args.no_anjana:
            with tempfile.TemporaryDirectory() as tmp:
                try:
                    entry["runs"].extend(run_anjana(data, ks, args.limit, Path(tmp)))
                except (subprocess.CalledProcessError, OSError) as exc:
                    entry["anjana_error"] = str(exc)
        report["datasets"].append(entry)
        print(f"# {name} done", file=sys.stderr, flush=True)
    report["machine"]["load_average_at_end"] = os.getloadavg()
    json.dump(report, sys.stdout, indent=2, default=str)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
