"""Peer baseline: a differentially private logistic regression (IBM diffprivlib) on UCI Adult.

Features are the eight quasi-identifiers one-hot encoded on their public domains (age scaled
by its public range 17..90 to [0, 1]); the target is income. diffprivlib's
LogisticRegression is epsilon-DP (objective perturbation, Chaudhuri, Monteleoni and Sarwate
2011) provided every training row has L2 norm at most ``data_norm``: that bound is set from
the public encoding (sqrt(8)), never from the data. Test accuracy is measured on adult.test.
The non-private scikit-learn LogisticRegression on the same features and the majority rate
are reported beside it.

Runs in its own virtual environment (requirements-dplr.txt): diffprivlib does not import with
scikit-learn 1.6 or newer, so it is no crowdsafe dependency. Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings
from datetime import UTC, datetime
from pathlib import Path

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import diffprivlib
import numpy as np
import scipy
import sklearn
from diffprivlib.models import LogisticRegression as DPLogisticRegression
from diffprivlib.utils import PrivacyLeakWarning
from sklearn.linear_model import LogisticRegression

sys.path.insert(0, str(Path(__file__).resolve().parent))
import adult_public

#: lbfgs iterations: objective perturbation's guarantee is stated for the exact minimiser, so
#: the solver is given enough iterations to converge (diffprivlib's default of 100 does not).
MAX_ITER = 1000


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", type=float, nargs="+", default=[0.5, 1.0, 2.0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--data-dir", type=Path, default=adult_public.DEFAULT_DATA_DIR)
    args = parser.parse_args(argv)
    # A bound taken from the data would void the guarantee: make diffprivlib's warning fatal.
    warnings.simplefilter("error", PrivacyLeakWarning)

    train = adult_public.load(args.data_dir / "adult.data.gz")
    test = adult_public.load(args.data_dir / "adult.test.gz")
    x_train, y_train = adult_public.one_hot(train), train[adult_public.TARGET]
    x_test, y_test = adult_public.one_hot(test), test[adult_public.TARGET]

    runs: list[dict] = []
    for eps in args.epsilons:
        for seed in args.seeds:
            start = time.perf_counter()
            model = DPLogisticRegression(
                epsilon=eps,
                data_norm=adult_public.FEATURE_NORM,
                max_iter=MAX_ITER,
                random_state=seed,
            )
            model.fit(x_train, y_train)
            seconds = time.perf_counter() - start
            runs.append(
                {
                    "method": "diffprivlib-logistic",
                    "epsilon": eps,
                    "seed": seed,
                    "accuracy": round(float(model.score(x_test, y_test)), 4),
                    "seconds": round(seconds, 3),
                }
            )

    start = time.perf_counter()
    plain = LogisticRegression(max_iter=2000).fit(x_train, y_train)
    runs.append(
        {
            "method": "sklearn-logistic (non-private)",
            "epsilon": None,
            "seed": None,
            "accuracy": round(float(plain.score(x_test, y_test)), 4),
            "seconds": round(time.perf_counter() - start, 3),
        }
    )
    runs.append(
        {
            "method": "majority rate",
            "epsilon": None,
            "seed": None,
            "accuracy": round(adult_public.majority_rate(y_train, y_test), 4),
            "seconds": 0.0,
        }
    )

    result = {
        "benchmark": "peers-dplr",
        "description": (
            "Test accuracy on adult.test of a logistic regression predicting income from the "
            "eight quasi-identifiers, trained on adult.data: diffprivlib's epsilon-DP "
            "LogisticRegression (data_norm from the public encoding), the non-private "
            "scikit-learn one, and the majority rate."
        ),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": adult_public.machine(),
        "versions": {
            "diffprivlib": diffprivlib.__version__,
            "scikit-learn": sklearn.__version__,
            "numpy": np.__version__,
            "scipy": scipy.__version__,
        },
        "data": {
            "train": "adult.data",
            "test": "adult.test",
            "features": list(adult_public.QUASI_IDENTIFIERS),
            "target": adult_public.TARGET,
            "encoding": "age (x-17)/73 in [0,1]; one-hot on the public categories, '?' its own",
            "data_norm": adult_public.FEATURE_NORM,
            "train_rows": len(y_train),
            "test_rows": len(y_test),
        },
        "parameters": {
            "epsilons": args.epsilons,
            "seeds": args.seeds,
            "dp_model": f"diffprivlib defaults (C=1.0, intercept), max_iter={MAX_ITER}",
        },
        "runs": runs,
        "summary": adult_public.summarize(runs),
    }
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
