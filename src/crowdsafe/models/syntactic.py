"""Table-level values of the syntactic privacy models, for any table.

Each function takes ``data`` (a Dataset, a path, a bundled name, a Polars or pandas frame, or
an :class:`EquivalenceClasses` already built), the quasi-identifiers ``qi`` (one name or a list; default: the
table's quasi-identifiers without the sensitive attribute; for an undeclared table, every
other column), and where needed the ``sensitive`` attribute. Definitions and sources are in
:mod:`~crowdsafe.models.diversity`, :mod:`~crowdsafe.models.closeness` and
:mod:`~crowdsafe.models.disclosure`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.arguments import names
from crowdsafe.data import Dataset
from crowdsafe.errors import ParameterError
from crowdsafe.models import closeness, disclosure, diversity
from crowdsafe.models.classes import EquivalenceClasses, SensitiveCounts, as_dataset


def _classes(
    data: Any, qi: Sequence[str] | None, sensitive: str | None, original: Dataset | None
) -> EquivalenceClasses:
    if isinstance(data, EquivalenceClasses):
        if qi is not None and list(names(qi, "qi") or ()) != data.quasi_identifiers:
            raise ParameterError("these classes were built on other quasi-identifiers")
        return data
    dataset = as_dataset(data)
    qi = names(qi, "qi")  # one name is the list of that name (qi="age" was split into characters)
    if qi is None:
        qi = [c for c in dataset.quasi_identifiers if c != sensitive]
    return EquivalenceClasses(dataset, qi, original=original)


def _sensitive(
    data: Any, sensitive: str, qi: Sequence[str] | None, original: Dataset | None
) -> tuple[EquivalenceClasses, SensitiveCounts]:
    classes = _classes(data, qi, sensitive, original)
    return classes, classes.sensitive(sensitive)


def k_anonymity(data: Any, qi: Sequence[str] | None = None, *, original: Dataset | None = None) -> int:
    """The table's k: the size of its smallest equivalence class (Sweeney 2002)."""
    return _classes(data, qi, None, original).k


def classes_below(
    data: Any, k: int, qi: Sequence[str] | None = None, *, original: Dataset | None = None
) -> pl.DataFrame:
    """The equivalence classes with fewer than ``k`` rows: their quasi-identifier values and ``count``."""
    return _classes(data, qi, None, original).below(k)


def l_diversity(data: Any, sensitive: str, qi: Sequence[str] | None = None, *, original: Dataset | None = None) -> int:
    """Distinct ℓ: the fewest distinct sensitive values in any class."""
    _, counts = _sensitive(data, sensitive, qi, original)
    return int(diversity.distinct_values(counts).min())


def entropy_l_diversity(
    data: Any, sensitive: str, qi: Sequence[str] | None = None, *, original: Dataset | None = None
) -> float:
    """Entropy ℓ: the smallest exp(H) over classes (a real number, never truncated)."""
    _, counts = _sensitive(data, sensitive, qi, original)
    return float(diversity.entropy_values(counts).min())


def recursive_cl_diversity(
    data: Any, sensitive: str, l: int, qi: Sequence[str] | None = None, *, original: Dataset | None = None
) -> float:
    """The c bound of recursive (c, ℓ)-diversity: the table satisfies (c, ℓ) for every c above
    it (inf when a class has fewer than ℓ distinct values)."""
    _, counts = _sensitive(data, sensitive, qi, original)
    return float(diversity.recursive_c_bounds(counts, l).max())


def t_closeness(
    data: Any, sensitive: str, qi: Sequence[str] | None = None, *, ground: str = "auto", original: Dataset | None = None
) -> float:
    """The table's t: the largest Earth Mover's Distance between a class and the table."""
    classes, counts = _sensitive(data, sensitive, qi, original)
    hierarchy = classes.dataset.hierarchies.get(sensitive)
    chosen = closeness.choose_ground(counts, ground, hierarchy)
    return float(closeness.emd_per_class(counts, chosen, hierarchy).max())


def delta_disclosure(
    data: Any, sensitive: str, qi: Sequence[str] | None = None, *, original: Dataset | None = None
) -> float:
    """The table's δ (inf when some class lacks a sensitive value of the table)."""
    _, counts = _sensitive(data, sensitive, qi, original)
    return float(disclosure.delta_values(counts).max())


def beta_likeness(
    data: Any, sensitive: str, qi: Sequence[str] | None = None, *, enhanced: bool = False,
    original: Dataset | None = None,
) -> float:
    """The table's β: basic (largest relative gain) or enhanced (inf when no β can hold)."""
    _, counts = _sensitive(data, sensitive, qi, original)
    values = disclosure.enhanced_beta_values(counts) if enhanced else disclosure.beta_values(counts)
    return float(values.max())


def effective_anonymity(
    data: Any, sensitive: str, qi: Sequence[str] | None = None, *, original: Dataset | None = None
) -> pl.DataFrame:
    """Per class: its quasi-identifier values, ``count`` (rows) and ``effective_anonymity``
    (the number of distinct sensitive values in it; Ganta et al. 2008)."""
    classes, counts = _sensitive(data, sensitive, qi, original)
    return classes.published().with_columns(
        pl.Series("effective_anonymity", diversity.distinct_values(counts).astype(np.int64))
    )
