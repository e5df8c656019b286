"""Peer baseline: DP synthetic data (dpmm 0.1.9, AIM and MST) of UCI Adult, judged by a model.

dpmm's AIM (McKenna et al. 2022) and MST (McKenna, Miklau and Sheldon 2021) are
(epsilon, delta)-DP: they measure marginals with Gaussian noise under zCDP and convert the
budget to (epsilon, delta). They are fitted here on the nine columns (eight quasi-identifiers
and income) of adult.data, encoded on their PUBLIC domains (adult_public.py; age 17..90, one
value per year unless --age-bin is given), with dpmm's own data-dependent binning turned off
(every column is already a small integer domain) so the whole budget goes to the model and no
domain is read from the data. The synthetic table has the model's noisy total as its row count.

A scikit-learn logistic regression (one-hot features, as in dp_logistic.py) and a decision
tree (min_samples_leaf=20) are trained on the synthetic rows and tested on adult.test.

Each synthetic table is also judged on the marginal workload of issue 36 (marginal_tvd.py):
the total variation distance of every 1-way and 2-way marginal of the nine columns against
adult.data. The same is measured for two reference tables that need no peer library: a true
30% Bernoulli sample of adult.data (seeds 0-2) and a table of '*' (uniform over the domain).

Runs in its own virtual environment (requirements-synth.txt); single-threaded; run it under
``nice -n 10``. Prints one JSON object; progress goes to stderr.
"""

from __future__ import annotations

import os

for _var in (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMEXPR_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
):
    os.environ.setdefault(_var, "1")

import argparse
import json
import sys
import time
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path

import numpy as np
import pandas as pd
from dpmm.pipelines import AIMPipeline, MSTPipeline
from sklearn.linear_model import LogisticRegression
from sklearn.tree import DecisionTreeClassifier

sys.path.insert(0, str(Path(__file__).resolve().parent))
import adult_public
import marginal_tvd

PIPELINES = {"mst": MSTPipeline, "aim": AIMPipeline}
COLUMNS = adult_public.QUASI_IDENTIFIERS + (adult_public.TARGET,)


def encode(data: dict[str, np.ndarray], age_bin: int) -> pd.DataFrame:
    """The nine columns as small non-negative integers (dpmm's input); age as
    (age - 17) // age_bin."""
    frame = {name: data[name].astype(np.int64) for name in COLUMNS}
    frame["age"] = (data["age"] - adult_public.AGE_MIN) // age_bin
    return pd.DataFrame(frame, columns=list(COLUMNS))


def public_domain(age_bin: int) -> dict[str, int]:
    """Domain sizes from the public domains only."""
    sizes = {
        name: len(adult_public.CATEGORIES[name]) for name in COLUMNS if name != "age"
    }
    sizes["age"] = (adult_public.AGE_MAX - adult_public.AGE_MIN) // age_bin + 1
    return {name: sizes[name] for name in COLUMNS}


def decode(frame: pd.DataFrame, age_bin: int) -> dict[str, np.ndarray]:
    """Back to adult_public's encoding; a binned age becomes its bin's midpoint."""
    out = {name: frame[name].to_numpy(dtype=np.int64) for name in COLUMNS}
    mid = adult_public.AGE_MIN + out["age"] * age_bin + (age_bin - 1) / 2
    out["age"] = np.minimum(mid, adult_public.AGE_MAX)
    return out


def release_table(frame: pd.DataFrame, age_bin: int) -> dict:
    """A synthetic table (dpmm's integer encoding) for marginal_tvd: a binned age spread
    uniformly over the years of its bin."""
    table = {
        name: (frame[name].to_numpy(dtype=np.int64), np.eye(marginal_tvd.leaf_count(name)))
        for name in COLUMNS
        if name != "age"
    }
    table["age"] = marginal_tvd.age_bins(frame["age"].to_numpy(dtype=np.int64), age_bin)
    return table


def references(
    train: dict[str, np.ndarray], test: dict[str, np.ndarray], truth: dict, seeds: list[int]
) -> list[dict]:
    """The scale of the marginal workload: a true 30% Bernoulli sample of adult.data (TVD and
    the accuracy of the same classifiers trained on it) and a table of '*' in every column."""
    out = []
    n = len(train["age"])
    for seed in seeds:
        keep = np.random.default_rng(seed).random(n) < 0.3
        sample = {name: values[keep] for name, values in train.items()}
        acc = evaluate(sample, test, seed)
        out.append(
            {
                "reference": "sample 30%",
                "seed": seed,
                "rows": int(keep.sum()),
                "accuracy_logistic": round(acc["logistic"], 4),
                "accuracy_tree": round(acc["tree"], 4),
                **marginal_tvd.distances(truth, marginal_tvd.original(sample)),
            }
        )
        print(
            f"sample 30% seed={seed}: 2-way TVD {out[-1]['tvd_2way_mean']:.4f}",
            file=sys.stderr,
            flush=True,
        )
    out.append(
        {
            "reference": "all *",
            "seed": None,
            "rows": n,
            **marginal_tvd.distances(truth, marginal_tvd.all_star(train, n)),
        }
    )
    print(f"all *: 2-way TVD {out[-1]['tvd_2way_mean']:.4f}", file=sys.stderr, flush=True)
    return out


def summarize_references(refs: list[dict]) -> list[dict]:
    out = []
    for name in dict.fromkeys(r["reference"] for r in refs):
        sel = [r for r in refs if r["reference"] == name]
        row = {"reference": name, "runs": len(sel)}
        for key in ("tvd_2way_mean", "tvd_1way_mean", "accuracy_logistic", "accuracy_tree"):
            if all(key in r for r in sel):
                row[key] = round(float(np.mean([r[key] for r in sel])), 5)
        out.append(row)
    return out


def merge(paths: list[Path]) -> dict:
    """One result from several partial runs of this script (e.g. AIM and MST run apart):
    generations and runs concatenated, references from the first file that has them, the
    summary recomputed."""
    parts = [json.loads(p.read_text()) for p in paths]
    result = dict(parts[0])
    result["date"] = max(p["date"] for p in parts)
    result["parameters"] = dict(parts[0]["parameters"])
    result["parameters"]["methods"] = list(
        dict.fromkeys(m for p in parts for m in p["parameters"]["methods"])
    )
    grid: dict[str, dict[str, list]] = {}
    for part in parts:
        for method, cell in part["parameters"]["grid"].items():
            into = grid.setdefault(method, {"epsilons": [], "seeds": []})
            for key in ("epsilons", "seeds"):
                into[key] = sorted(set(into[key]) | set(cell[key]))
    result["parameters"]["grid"] = grid
    result["parameters"]["merged_from"] = [
        {"date": p["date"], "grid": p["parameters"]["grid"]} for p in parts
    ]
    result["generations"] = [g for p in parts for g in p["generations"]]
    result["runs"] = [r for p in parts for r in p["runs"]]
    result["summary"] = adult_public.summarize(result["runs"], 1)
    refs = next((p["references"] for p in parts if p.get("references")), [])
    result["references"] = refs
    result["references_summary"] = summarize_references(refs)
    return result


def evaluate(
    synth: dict[str, np.ndarray], test: dict[str, np.ndarray], seed: int
) -> dict:
    """Test accuracy of a logistic regression and a decision tree trained on ``synth``."""
    x_train, y_train = adult_public.one_hot(synth), synth[adult_public.TARGET]
    x_test, y_test = adult_public.one_hot(test), test[adult_public.TARGET]
    if len(np.unique(y_train)) < 2:  # one class only: every model predicts it
        acc = float(np.mean(y_test == y_train[0]))
        return {"logistic": acc, "tree": acc}
    logistic = LogisticRegression(max_iter=2000).fit(x_train, y_train)
    tree = DecisionTreeClassifier(min_samples_leaf=20, random_state=seed).fit(
        x_train, y_train
    )
    return {
        "logistic": float(logistic.score(x_test, y_test)),
        "tree": float(tree.score(x_test, y_test)),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--methods", nargs="+", choices=sorted(PIPELINES), default=["mst", "aim"]
    )
    parser.add_argument(
        "--mst-epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0]
    )
    parser.add_argument("--mst-seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--aim-epsilons", type=float, nargs="+", default=[1.0])
    parser.add_argument("--aim-seeds", type=int, nargs="+", default=[0])
    parser.add_argument("--delta", type=float, default=1e-6)
    parser.add_argument(
        "--age-bin",
        type=int,
        default=1,
        help="width in years of an age bin (1 = every age its own value)",
    )
    parser.add_argument("--n-jobs", type=int, default=1, help="dpmm worker processes")
    parser.add_argument("--data-dir", type=Path, default=adult_public.DEFAULT_DATA_DIR)
    parser.add_argument(
        "--reference-seeds",
        type=int,
        nargs="*",
        default=[0, 1, 2],
        help="seeds of the 30%% samples ('--reference-seeds' alone: no reference rows)",
    )
    parser.add_argument(
        "--save-tables",
        type=Path,
        default=None,
        help="also write each synthetic table (integer codes) to DIR as CSV",
    )
    parser.add_argument(
        "--merge",
        type=Path,
        nargs="+",
        default=None,
        help="print one result combining these result files of partial runs; run nothing",
    )
    args = parser.parse_args(argv)
    if args.merge:
        json.dump(merge(args.merge), sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0

    train = adult_public.load(args.data_dir / "adult.data.gz")
    test = adult_public.load(args.data_dir / "adult.test.gz")
    frame = encode(train, args.age_bin)
    domain = public_domain(args.age_bin)
    grid = {
        "mst": (args.mst_epsilons, args.mst_seeds),
        "aim": (args.aim_epsilons, args.aim_seeds),
    }

    truth = marginal_tvd.original(train)
    refs = (
        references(train, test, truth, args.reference_seeds)
        if args.reference_seeds
        else []
    )
    runs: list[dict] = []
    details: list[dict] = []
    for name in args.methods:
        epsilons, seeds = grid[name]
        for eps in epsilons:
            for seed in seeds:
                print(f"{name} eps={eps} seed={seed} ...", file=sys.stderr, flush=True)
                start = time.perf_counter()
                pipe = PIPELINES[name](
                    epsilon=eps,
                    delta=args.delta,
                    disable_processing=True,
                    n_jobs=args.n_jobs,
                )
                pipe.fit(frame, domain=domain, random_state=seed)
                synth = pipe.gen.generate(
                    n_records=None
                )  # rows: the model's noisy total
                seconds = time.perf_counter() - start
                if args.save_tables is not None:
                    args.save_tables.mkdir(parents=True, exist_ok=True)
                    synth.to_csv(
                        args.save_tables / f"{name}-eps{eps}-seed{seed}.csv", index=False
                    )
                tvd = marginal_tvd.distances(truth, release_table(synth, args.age_bin))
                acc = evaluate(decode(synth, args.age_bin), test, seed)
                print(
                    f"  {seconds:.1f} s, logistic {acc['logistic']:.4f}, "
                    f"tree {acc['tree']:.4f}, 2-way TVD {tvd['tvd_2way_mean']:.4f}",
                    file=sys.stderr,
                    flush=True,
                )
                details.append(
                    {
                        "generator": name,
                        "epsilon": eps,
                        "seed": seed,
                        "synthetic_rows": len(synth),
                        "seconds_generation": round(seconds, 1),
                        **tvd,
                    }
                )
                for clf, value in acc.items():
                    runs.append(
                        {
                            "method": f"{name} + {clf}",
                            "epsilon": eps,
                            "seed": seed,
                            "accuracy": round(value, 4),
                            "seconds": round(seconds, 1),
                            "tvd_2way_mean": tvd["tvd_2way_mean"],
                            "tvd_1way_mean": tvd["tvd_1way_mean"],
                        }
                    )

    result = {
        "benchmark": "peers-synth",
        "description": (
            "Test accuracy on adult.test of classifiers predicting income from the eight "
            "quasi-identifiers, trained on dpmm DP synthetic data of adult.data (9 columns); "
            "'seconds' is the generation time (fit + sample) of the synthetic table. "
            "tvd_2way_mean / tvd_1way_mean: mean total variation distance over the 36 2-way "
            "(9 1-way) marginals of the nine columns against adult.data (issue 36's workload; "
            "marginal_tvd.py); references: a true 30% sample of adult.data and a table of '*'."
        ),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": adult_public.machine(dpmm_n_jobs=args.n_jobs),
        "versions": {
            pkg: version(pkg)
            for pkg in ("dpmm", "opendp", "scikit-learn", "numpy", "scipy", "pandas")
        },
        "data": {
            "train": "adult.data",
            "test": "adult.test",
            "columns": list(COLUMNS),
            "features": list(adult_public.QUASI_IDENTIFIERS),
            "target": adult_public.TARGET,
            "age": (
                "exact years 17..90 (74 values)"
                if args.age_bin == 1
                else f"{args.age_bin}-year bins from 17 (midpoint used by the classifiers)"
            ),
            "domains": "public (adult.names categories, '?' its own category)",
            "domain_sizes": domain,
        },
        "parameters": {
            "delta": args.delta,
            "methods": args.methods,
            "grid": {
                name: {"epsilons": grid[name][0], "seeds": grid[name][1]}
                for name in args.methods
            },
            "dpmm": "pipeline defaults (compress=True, no model-size cap), "
            "disable_processing=True (no DP binning: domains are public)",
            "classifiers": "LogisticRegression(max_iter=2000) on one-hot features; "
            "DecisionTreeClassifier(min_samples_leaf=20)",
            "marginals": "TVD = 1/2 sum |p - q| of each normalized 1- and 2-way marginal of "
            "the nine columns against adult.data, over leaves (age per year 17..90, public "
            "categories, '?' its own value); a binned age or '*' spread uniformly over the "
            "leaves it covers ('*': '?' only where adult.data has one)",
            "seeds": "seed numpy's RandomState of dpmm; dpmm draws its Gaussian noise from "
            "OpenDP's own sampler, so a seed does not reproduce a run exactly",
        },
        "generations": details,
        "runs": runs,
        "summary": adult_public.summarize(runs, 1),
        "references": refs,
        "references_summary": summarize_references(refs),
    }
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
