"""Bundled datasets and the synthetic generator.

``adult()`` returns UCI Adult with its schema and default hierarchies; ``synthetic(n, seed)``
scales it to any number of rows. Bundled names (usable wherever a DATA argument is taken):
``adult`` (training file), ``adult-test``, ``adult-all``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crowdsafe.data.missing import MissingPolicy
from crowdsafe.datasets.uci_adult import CITATION, adult
from crowdsafe.datasets.synthetic import synthetic
from crowdsafe.errors import InputError


@dataclass(frozen=True)
class BundledDataset:
    name: str
    rows: int
    description: str
    source: str


_BUNDLED = {
    "adult": BundledDataset("adult", 32_561, "UCI Adult census extract, training file (adult.data)", CITATION),
    "adult-test": BundledDataset("adult-test", 16_281, "UCI Adult census extract, test file (adult.test)", CITATION),
    "adult-all": BundledDataset("adult-all", 48_842, "UCI Adult, training and test files together", CITATION),
}


def names() -> list[str]:
    """Names of the bundled datasets."""
    return list(_BUNDLED)


def catalogue() -> list[dict[str, Any]]:
    """Name, rows, description and source of each bundled dataset."""
    return [vars(entry).copy() for entry in _BUNDLED.values()]


def load_bundled(name: str, *, missing: MissingPolicy | str = MissingPolicy.KEEP):
    """The bundled dataset ``name`` as a Dataset, with the missing-value policy applied."""
    from crowdsafe.datasets.uci_adult import adult_frame, dataset_from_frame

    if name not in _BUNDLED:
        raise InputError(f"no bundled dataset named {name!r}; bundled: {', '.join(_BUNDLED)}")
    split = {"adult": "train", "adult-test": "test", "adult-all": "all"}[name]
    return dataset_from_frame(adult_frame(split).clone(), name, missing)


__all__ = ["adult", "catalogue", "load_bundled", "names", "synthetic"]
