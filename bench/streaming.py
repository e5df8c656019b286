"""Benchmark the Polars engine's frequency table of a table larger than memory; print JSON.

A synthetic Adult of ``--rows`` rows is written as Parquet parts
(``crowdsafe.datasets.synthetic.write_synthetic_parts``, never whole in memory), outside the
timing. In a child process (its peak RSS measured alone, VmHWM), optionally under an
address-space limit (``--limit 3g``: ``prlimit --as``, a memory limit smaller than the table),
``PolarsEngine().frequency_table`` counts the distinct tuples of the nine published columns by
scanning the parts lazily and reducing them with Polars' streaming engine
(``crowdsafe.data.streaming``). Reported: the time, the child's peak RSS, the table's size in
memory (one part read whole, ``estimated_size``, times the parts), the distinct tuples, and a
floor: the same group-by of one part read whole, times the parts.

Usage: python bench/streaming.py [--rows 60M] [--limit 3g]
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


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(child(sys.argv[2])))
        return
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="60M")
    parser.add_argument("--limit", default=None, help="address-space limit of the child (prlimit --as), e.g. 3g")
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
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(Path(__file__).resolve().parents[1] / "src"),
                                                             str(Path(__file__).resolve().parent)])}
        command = [sys.executable, __file__, "--child", str(folder)]
        if args.limit:
            command = ["prlimit", f"--as={_bytes(args.limit)}", *command]
        done = subprocess.run(command, env=env, capture_output=True, text=True)
        result = (json.loads(done.stdout.strip().splitlines()[-1]) if done.returncode == 0
                  else {"failed": True, "error": done.stderr.strip().splitlines()[-3:]})
        print(json.dumps({
            "rows": rows, "parts": len(parts), "part_rows": PART_ROWS,
            "parquet_bytes": sum(p.stat().st_size for p in parts), "generate_and_write_seconds": generate,
            "table_in_memory_mb": in_memory_mb, "address_space_limit": args.limit,
            "floor_group_by_seconds_scaled": floor, **result,
            "ratio_to_floor": result.get("frequency_table_seconds", float("nan")) / floor,
            "load_average": [round(x, 2) for x in os.getloadavg()], "cpus": os.cpu_count(),
        }, indent=2))
    finally:
        shutil.rmtree(folder.parent, ignore_errors=True)


def _bytes(size: str) -> int:
    size = size.strip().lower()
    factor = {"k": 2**10, "m": 2**20, "g": 2**30}.get(size[-1], 1)
    return int(float(size.rstrip("kmg")) * factor)


if __name__ == "__main__":
    main()
