"""UCI Adult for the peer baselines: loading and the PUBLIC domains of the eight
quasi-identifiers and the target.

Both peer scripts import this module from their own virtual environments (crowdsafe is not
installed there), so it uses the standard library and NumPy only.

The category lists are the ones documented in the data set's description (adult.names), plus
'?' (a missing value, kept as its own category); age is bounded by the public range 17..90.
They are fixed before any row is read, so an encoding built from them leaks nothing. A value
outside them is an error, never a silently added category.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np

COLUMNS = (
    "age",
    "workclass",
    "fnlwgt",
    "education",
    "education-num",
    "marital-status",
    "occupation",
    "relationship",
    "race",
    "sex",
    "capital-gain",
    "capital-loss",
    "hours-per-week",
    "native-country",
    "income",
)
QUASI_IDENTIFIERS = (
    "age",
    "workclass",
    "education",
    "marital-status",
    "occupation",
    "race",
    "sex",
    "native-country",
)
TARGET = "income"
AGE_MIN, AGE_MAX = 17, 90

CATEGORIES: dict[str, tuple[str, ...]] = {
    "workclass": (
        "Private",
        "Self-emp-not-inc",
        "Self-emp-inc",
        "Federal-gov",
        "Local-gov",
        "State-gov",
        "Without-pay",
        "Never-worked",
        "?",
    ),
    "education": (
        "Bachelors",
        "Some-college",
        "11th",
        "HS-grad",
        "Prof-school",
        "Assoc-acdm",
        "Assoc-voc",
        "9th",
        "7th-8th",
        "12th",
        "Masters",
        "1st-4th",
        "10th",
        "Doctorate",
        "5th-6th",
        "Preschool",
        "?",
    ),
    "marital-status": (
        "Married-civ-spouse",
        "Divorced",
        "Never-married",
        "Separated",
        "Widowed",
        "Married-spouse-absent",
        "Married-AF-spouse",
        "?",
    ),
    "occupation": (
        "Tech-support",
        "Craft-repair",
        "Other-service",
        "Sales",
        "Exec-managerial",
        "Prof-specialty",
        "Handlers-cleaners",
        "Machine-op-inspct",
        "Adm-clerical",
        "Farming-fishing",
        "Transport-moving",
        "Priv-house-serv",
        "Protective-serv",
        "Armed-Forces",
        "?",
    ),
    "race": (
        "White",
        "Asian-Pac-Islander",
        "Amer-Indian-Eskimo",
        "Other",
        "Black",
        "?",
    ),
    "sex": ("Female", "Male", "?"),
    "native-country": (
        "United-States",
        "Cambodia",
        "England",
        "Puerto-Rico",
        "Canada",
        "Germany",
        "Outlying-US(Guam-USVI-etc)",
        "India",
        "Japan",
        "Greece",
        "South",
        "China",
        "Cuba",
        "Iran",
        "Honduras",
        "Philippines",
        "Italy",
        "Poland",
        "Jamaica",
        "Vietnam",
        "Mexico",
        "Portugal",
        "Ireland",
        "France",
        "Dominican-Republic",
        "Laos",
        "Ecuador",
        "Taiwan",
        "Haiti",
        "Columbia",
        "Hungary",
        "Guatemala",
        "Nicaragua",
        "Scotland",
        "Thailand",
        "Yugoslavia",
        "El-Salvador",
        "Trinadad&Tobago",
        "Peru",
        "Hong",
        "Holand-Netherlands",
        "?",
    ),
    "income": ("<=50K", ">50K"),
}

DEFAULT_DATA_DIR = (
    Path(__file__).resolve().parents[2] / "src" / "crowdsafe" / "datasets" / "files"
)


def _read(path: Path) -> list[list[str]]:
    with gzip.open(path, "rt", encoding="ascii") as handle:
        lines = handle.read().splitlines()
    rows = [
        line.split(", ") for line in lines if line.strip() and not line.startswith("|")
    ]
    bad = [i for i, row in enumerate(rows) if len(row) != len(COLUMNS)]
    if bad:
        raise ValueError(f"{path}: row {bad[0]} does not have {len(COLUMNS)} fields")
    return rows


def load(path: Path) -> dict[str, np.ndarray]:
    """The 8 quasi-identifiers and the target of one Adult file, encoded on the public
    domains: age as int (17..90), every other column as int codes into CATEGORIES."""
    rows = _read(path)
    raw = {name: np.array([row[i] for row in rows]) for i, name in enumerate(COLUMNS)}
    raw["income"] = np.char.rstrip(raw["income"], ".")
    out: dict[str, np.ndarray] = {}
    age = raw["age"].astype(np.int64)
    if age.min() < AGE_MIN or age.max() > AGE_MAX:
        raise ValueError(
            f"{path}: an age outside the public range {AGE_MIN}..{AGE_MAX}"
        )
    out["age"] = age
    for name in QUASI_IDENTIFIERS[1:] + (TARGET,):
        cats = np.array(CATEGORIES[name])
        order = np.argsort(cats)
        pos = np.searchsorted(cats[order], raw[name]).clip(0, len(cats) - 1)
        found = cats[order][pos] == raw[name]
        if not found.all():
            value = raw[name][~found][0]
            raise ValueError(
                f"{path}: {name} value {value!r} is not in the public domain"
            )
        out[name] = order[pos]
    return out


def one_hot(data: dict[str, np.ndarray]) -> np.ndarray:
    """Features for a linear model: age scaled by its public domain to [0, 1], then one
    indicator per public category of each other quasi-identifier. Each row has exactly one
    indicator per categorical column, so its L2 norm is at most sqrt(1 + 7) whatever the data."""
    n = len(data["age"])
    blocks = [((data["age"] - AGE_MIN) / (AGE_MAX - AGE_MIN)).reshape(n, 1)]
    for name in QUASI_IDENTIFIERS[1:]:
        block = np.zeros((n, len(CATEGORIES[name])))
        block[np.arange(n), data[name]] = 1.0
        blocks.append(block)
    return np.hstack(blocks)


#: The public bound on a feature row's L2 norm (age in [0, 1] plus 7 one-hot blocks).
FEATURE_NORM = float(np.sqrt(1 + len(QUASI_IDENTIFIERS) - 1))


def majority_rate(train_y: np.ndarray, test_y: np.ndarray) -> float:
    """Test accuracy of always predicting the training set's most frequent class."""
    return float(np.mean(test_y == np.bincount(train_y).argmax()))


def summarize(runs: list[dict], seconds_digits: int = 3) -> list[dict]:
    """Mean, min and max accuracy (and mean seconds) per (method, epsilon); non-private rows have
    epsilon None and sort first."""
    keys = sorted({(r["method"], r["epsilon"]) for r in runs}, key=lambda k: (k[0], k[1] or 0))
    out = []
    for method, eps in keys:
        sel = [r for r in runs if r["method"] == method and r["epsilon"] == eps]
        acc = np.array([r["accuracy"] for r in sel])
        out.append(
            {
                "method": method,
                "epsilon": eps,
                "runs": len(sel),
                "accuracy_mean": round(float(acc.mean()), 4),
                "accuracy_min": round(float(acc.min()), 4),
                "accuracy_max": round(float(acc.max()), 4),
                "seconds_mean": round(float(np.mean([r["seconds"] for r in sel])), seconds_digits),
            }
        )
        for key in ("tvd_2way_mean", "tvd_1way_mean"):  # synthetic.py's marginal workload
            if all(key in r for r in sel):
                out[-1][key] = round(float(np.mean([r[key] for r in sel])), 5)
    return out


def machine(**extra: object) -> dict:
    """Where a run ran: cores, platform, Python, one thread (the scripts set it), and ``extra``."""
    import os
    import platform

    return {"cores": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
            "threads": 1, **extra}
