"""Bundled datasets and the synthetic generator.

``adult()`` returns UCI Adult with its schema and default hierarchies; ``synthetic(n, seed)``
scales it to any number of rows. Bundled names (usable wherever a DATA argument is taken):
``adult`` (training file), ``adult-test``, ``adult-all``, ``people`` (an invented
criminal-justice table with direct identifiers, :mod:`crowdsafe.datasets.people`) and
``german-customers`` (an invented German customer table, as read from its ``;``-separated file
with decimal commas: :mod:`crowdsafe.datasets.german_customers`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

from crowdsafe.data import Dataset, MissingPolicy
from crowdsafe.data.pipeline import load_source
from crowdsafe.data.sources import Source, register_named
from crowdsafe.datasets.german_customers import DEFAULT_ROWS as GERMAN_ROWS
from crowdsafe.datasets.german_customers import german_customers, german_customers_source, write_german_customers
from crowdsafe.datasets.people import DEFAULT_ROWS as PEOPLE_ROWS
from crowdsafe.datasets.people import people, people_source
from crowdsafe.datasets.synthetic import synthetic
from crowdsafe.datasets.uci_adult import CITATION, adult, adult_source
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
    "people": BundledDataset("people", PEOPLE_ROWS, "invented people with names, emails, dates and charges "
                             "(seeded, for trying the schema draft)", "synthetic (crowdsafe.datasets.people)"),
    "german-customers": BundledDataset(
        "german-customers", GERMAN_ROWS, "invented German customers with names, birth dates, PLZ, income and "
        "diagnoses (seeded; write_german_customers writes its ;-separated file)",
        "synthetic (crowdsafe.datasets.german_customers)"),
}


def names() -> list[str]:
    """Names of the bundled datasets."""
    return list(_BUNDLED)


def catalogue() -> list[dict[str, Any]]:
    """Name, rows, description and source of each bundled dataset."""
    return [vars(entry).copy() for entry in _BUNDLED.values()]


_SPLITS = {"adult": "train", "adult-test": "test", "adult-all": "all"}


def bundled_source(name: str) -> Source:
    """The bundled dataset ``name`` as read, for the data layer's load pipeline: the raw frame
    with its schema and default hierarchies (no missing-value policy applied yet)."""
    if name not in _BUNDLED:
        raise InputError(f"no bundled dataset named {name!r}; bundled: {', '.join(_BUNDLED)}")
    if name == "people":
        return people_source()
    if name == "german-customers":
        return german_customers_source()
    return adult_source(_SPLITS[name], name)


def load_bundled(name: str, *, missing: MissingPolicy | str = MissingPolicy.KEEP) -> Dataset:
    """The bundled dataset ``name`` as a Dataset, with the missing-value policy applied."""
    return load_source(bundled_source(name), missing=missing)


# Bundled names are read wherever a DATA argument is taken: crowdsafe.data.load reads them.
for _name in _BUNDLED:
    register_named(_name, partial(bundled_source, _name))


__all__ = ["adult", "bundled_source", "catalogue", "german_customers", "load_bundled", "names", "people", "synthetic",
           "write_german_customers"]
