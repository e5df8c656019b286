"""Benchmark the safe pipeline (``crowdsafe publish``); print JSON.

For each dataset (Adult, and the synthetic Adult at 1M and 10M rows; published columns: the eight
quasi-identifiers and income, default hierarchies) and the default plan (ε = 1, δ = 1e-6; ε1, β
and k from the planner, ``plan_for_dataset``), under ``--objective`` (default: the plan's default
objective, as the command runs it; ``retained``, ``marginals``, or ``classification``, which
predicts income): the time of each stage run the way ``publish_dataset`` runs it — plan, load,
fingerprint, sample (+ the sample's fingerprint, its identity), the sample counted once (its
frequency table, read by both the choice and Apply), the ε1-safe choice (exponential mechanism over
the lattice), Apply, certify + write (CSV, as the pipeline writes it: one formatted line per
class, repeated) — and the end-to-end time of
``publish_dataset`` (no ledger; the best of at least --repeat runs, and of up to fifteen while
they take less than about five seconds, as its floor is timed; with the HTML report beside the
release, as the command writes it by default, and again without it:
``publish_dataset_no_report_seconds``), next to
the floor measured in the same run: a bare Polars group-by over the same rows and columns
(``frame.group_by(columns).len()``), warmed up as the publication is (five untimed runs: on Adult
the first calls took 19, 10, 11, 7 and 7 ms against 5 ms warm), then the best of at least fifteen
runs (at least five, and no more than about five seconds of them, on large tables): on Adult the
warm group-by moved between about 4.8 and 7.5 ms for whole stretches of runs, and a best of five
could land in the slow stretch.

It also times the plan and the publication together, as a run from the data to the release
does (``plan_and_publish_seconds``: ``plan_for_dataset`` with the planner's cache cleared, then
``publish_dataset``; runs as for the publication). For Adult it times the command line end to end, process
start included, as a subprocess: ``crowdsafe publish adult --epsilon 1 --delta 1e-6 --out ...``
(with ``--objective``/``--target`` when given) with a fresh private ledger in $CROWDSAFE_LEDGER
for each run (best and median of --repeat), and the start-up floor ``python -c "import polars,
numpy"``. With ``--objective classification`` on Adult, the plan-and-publish time is set against
AIM's generation time at ε = 1 read from bench/results/peers-synth.json (bench/peers; its own
run, not timed here).

Usage: python bench/publish.py [--sizes adult,1m,10m] [--repeat 3] [--objective classification]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import polars as pl
from sizes import rows_of  # this folder's size names (adult, 1m, 10M, ...)

from crowdsafe.anonymize.counted import class_frame
from crowdsafe.anonymize.plan import best_rate
from crowdsafe.anonymize.publish import (
    PlanRequest,
    RunOptions,
    apply_recoding,
    choose_recoding,
    count_sample,
    plan_for_dataset,
    prepare_dataset,
    publish_dataset,
)
from crowdsafe.anonymize.release import write_classes_csv
from crowdsafe.datasets import adult, synthetic
from crowdsafe.randomness import Randomness
from crowdsafe.sampling import sample_of


DEFAULT = "default"  # the plan's default objective (objective=None), as `crowdsafe publish adult` runs


def timed(function):
    started = time.perf_counter()
    result = function()
    return time.perf_counter() - started, result


#: Untimed runs of the floor before it is timed; the number of timed runs (at least FLOOR_LEAST,
#: and no more once FLOOR_SECONDS have passed).
FLOOR_WARM_UP, FLOOR_REPEAT, FLOOR_LEAST, FLOOR_SECONDS = 5, 15, 5, 5.0


def timed_runs(fresh, job, repeat: int) -> list[float]:
    """The times of ``job(fresh())`` (``fresh`` untimed): at least ``repeat`` runs, and up to
    FLOOR_REPEAT while they add up to less than FLOOR_SECONDS, so the publication gets as many
    runs as its floor (:func:`floor_of`) on the sizes where they are cheap."""
    runs: list[float] = []
    while len(runs) < repeat or (len(runs) < FLOOR_REPEAT and sum(runs) < FLOOR_SECONDS):
        value = fresh()
        started = time.perf_counter()
        job(value)
        runs.append(time.perf_counter() - started)
    return runs


def floor_of(function, repeat: int) -> float:
    """The best of ``repeat`` timed runs of ``function``, after FLOOR_WARM_UP untimed ones; on a
    slow floor, stopped after FLOOR_LEAST runs once FLOOR_SECONDS have passed."""
    for _ in range(FLOOR_WARM_UP):
        function()
    runs: list[float] = []
    started = time.perf_counter()
    while len(runs) < repeat and (len(runs) < FLOOR_LEAST or time.perf_counter() - started < FLOOR_SECONDS):
        runs.append(timed(function)[0])
    return min(runs)


def load(name: str):
    return adult() if name == "adult" else synthetic(rows_of(name), seed=0)


def command_line(repeat: int, objective: str) -> dict[str, object]:
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    chosen = [] if objective == DEFAULT else \
        ["--objective", objective] + (["--target", "income"] if objective == "classification" else [])
    with tempfile.TemporaryDirectory() as folder:
        runs = []
        for run in range(repeat):
            command = [sys.executable, "-m", "crowdsafe", "publish", "adult", "--epsilon", "1", "--delta", "1e-6",
                       *chosen, "--out", str(Path(folder) / f"adult-{run}.csv")]
            ledger = {"CROWDSAFE_LEDGER": str(Path(folder) / f"ledger-{run}.sqlite3")}
            started = time.perf_counter()
            subprocess.run(command, check=True, env={**env, **ledger}, stdout=subprocess.DEVNULL)
            runs.append(time.perf_counter() - started)
        floor = []
        for _ in range(repeat):
            started = time.perf_counter()
            subprocess.run([sys.executable, "-c", "import polars, numpy"], check=True, env=env)
            floor.append(time.perf_counter() - started)
    return {"cli_end_to_end_seconds": min(runs), "cli_median_seconds": statistics.median(runs), "cli_runs": runs,
            "process_start_floor_seconds": min(floor)}


def against_aim(seconds: float) -> dict[str, object]:
    """AIM's generation time at ε = 1 (bench/results/peers-synth.json) over ``seconds``."""
    peers = Path(__file__).resolve().parent / "results" / "peers-synth.json"
    if not peers.exists():
        return {"aim_seconds": None, "aim_note": f"{peers.name} not found: run bench/peers first"}
    runs = [g for g in json.loads(peers.read_text())["generations"] if g["generator"] == "aim" and g["epsilon"] == 1.0]
    if not runs:
        return {"aim_seconds": None, "aim_note": f"no AIM run at epsilon 1 in {peers.name}"}
    aim = min(g["seconds_generation"] for g in runs)
    return {"aim_seconds": aim, "aim_times_plan_and_publish": aim / seconds,
            "aim_note": f"AIM's fastest generation at epsilon 1 in {peers.name} (its own run, not timed here)"}


def bench(name: str, repeat: int, objective: str = DEFAULT) -> dict[str, object]:
    load_time, data = timed(lambda: load(name))
    target = "income" if objective == "classification" else None
    requested = None if objective == DEFAULT else objective
    best_rate.cache_clear()
    plan_time, plan = timed(lambda: plan_for_dataset(data, PlanRequest(1.0, 1e-6, objective=requested,
                                                                       target=target)))
    prepared, columns, _ = prepare_dataset(data)
    # warmed up: the publication's stages have all run before they are timed
    floor = floor_of(lambda: prepared.frame.group_by(columns).len(), max(repeat, FLOOR_REPEAT))
    fingerprint_time, _ = timed(data.fingerprint)
    randomness = Randomness(0)

    def sample():
        chosen = sample_of(prepared, plan.beta, randomness)
        chosen.fingerprint()
        return chosen

    sample_time, sampled = timed(sample)
    count_time, table = timed(lambda: count_sample(sampled, columns))
    choice_time, (scheme, _, choice) = timed(lambda: choose_recoding(table, columns, plan, None, randomness))
    apply_time, applied = timed(lambda: apply_recoding(table, scheme, plan.k))
    with tempfile.TemporaryDirectory() as folder:
        def fresh():  # untimed: the data as a run reads it (no cached fingerprint)
            return load(name) if name == "adult" else data.select(data.columns)

        published = []
        totals = timed_runs(fresh, lambda d: published.append(publish_dataset(
            d, plan, RunOptions(out=Path(folder) / f"{name}.csv"), randomness=Randomness(1))), repeat)
        publication = published[-1]
        total = min(totals)
        # the same run without the HTML report beside the release (--no-report)
        bare = timed_runs(fresh, lambda d: publish_dataset(
            d, plan, RunOptions(out=Path(folder) / f"{name}-bare.csv", report=False), randomness=Randomness(1)),
            repeat)

        def plan_and_publish(d):
            best_rate.cache_clear()  # a run plans once, from nothing
            fresh_plan = plan_for_dataset(d, PlanRequest(1.0, 1e-6, objective=requested, target=target))
            publish_dataset(d, fresh_plan, RunOptions(out=Path(folder) / f"{name}-e2e.csv"), randomness=Randomness(1))

        end_to_end = timed_runs(fresh, plan_and_publish, repeat)
        write_time, _ = timed(lambda: write_classes_csv(class_frame(applied, scheme, columns),
                                                        applied.published_class_sizes, Path(folder) / "again.csv"))
    return {
        "dataset": name,
        "rows": data.n_rows,
        "published_columns": columns,
        "plan": {"k": plan.k, "beta": plan.beta, "epsilon1": plan.epsilon1, "objective": plan.objective},
        "floor_group_by_seconds": floor,
        "stages_seconds": {
            "load": load_time, "plan": plan_time, "fingerprint": fingerprint_time,
            "sample_and_identity": sample_time, "count_sample": count_time, "epsilon1_safe_choice": choice_time,
            "apply": apply_time,
            "write_csv": write_time,
        },
        "lattice_nodes": choice.candidates,
        "nodes_scored": choice.scored,
        "publish_dataset_seconds": total,
        "publish_dataset_runs": totals,
        "publish_dataset_no_report_seconds": min(bare),
        "publish_dataset_no_report_runs": bare,
        "ratio_to_floor_no_report": min(bare) / floor,
        "plan_and_publish_seconds": min(end_to_end),
        "plan_and_publish_runs": end_to_end,
        "ratio_to_floor": total / floor,
        "rows_published": publication.release.rows_published,
        "suppression_rate": publication.custodian_report()["releases"][0]["suppression_rate"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="adult,1m,10m")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--objective", default=DEFAULT,
                        help=f"the selection's objective ('{DEFAULT}': the plan's default; classification: income)")
    args = parser.parse_args()
    results = []
    for name in args.sizes.split(","):
        entry = bench(name.strip(), args.repeat, args.objective)
        if name.strip() == "adult":
            entry.update(command_line(args.repeat, args.objective))
            if args.objective == "classification":
                entry.update(against_aim(entry["plan_and_publish_seconds"]))
        results.append(entry)
        print(json.dumps(entry), file=sys.stderr)
    print(json.dumps({
        "machine": {"python": platform.python_version(), "cpus": os.cpu_count(), "polars": pl.__version__},
        "results": results,
    }, indent=2))


if __name__ == "__main__":
    main()
