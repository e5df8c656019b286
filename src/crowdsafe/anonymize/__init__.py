"""Anonymization in the two-step form ``release = Apply(g, D, k)`` (docs/architecture.md).

This package is the certified pipeline's: recodings, Apply with suppression and the publication
that certifies them (:mod:`.publish`). The ε1-safe scheme selection it calls is its own package,
:mod:`crowdsafe.selection`.

- recodings g (:mod:`~crowdsafe.anonymize.recoding`): a global full-domain
  :class:`GeneralizationScheme`, or a :class:`LocalRecoding` fitted per class;
- :func:`apply` (:mod:`~crowdsafe.anonymize.apply`): map rows through g, suppress output tuples
  held by fewer than k rows (and classes failing ℓ / t), under an optional suppression limit;
- :class:`Lattice` (:mod:`~crowdsafe.anonymize.lattice`): the generalization lattice whose nodes
  the selection chooses among.

The classic choosers, all fitted to the data and so without formal guarantee, live in
:mod:`crowdsafe.classic` (:func:`mondrian`, :func:`mdav`, :func:`lattice_search`,
:func:`anonymize_dataset`); their names are still offered here, loaded only when asked for, so
importing the certified pipeline never loads them.
"""

from typing import Any

from crowdsafe.anonymize.apply import Applied, Classified, apply, check_k, check_suppression_limit, classify
from crowdsafe.anonymize.cells import EncodedCells, cell_table
from crowdsafe.anonymize.constraints import SensitiveConstraints, sensitive_constraints
from crowdsafe.anonymize.lattice import Lattice
from crowdsafe.anonymize.recoding import GeneralizationScheme, LocalRecoding, RecodedColumns, Recoding
from crowdsafe.anonymize.release import Release, certificate_path, write_table_and_certificate

#: Names of :mod:`crowdsafe.classic` offered here too (imported on first use).
CLASSIC_NAMES = ("ALGORITHMS", "LatticeResult", "anonymize_dataset", "lattice_search", "mdav", "mondrian")

__all__ = [
    "ALGORITHMS",
    "Applied",
    "Classified",
    "EncodedCells",
    "GeneralizationScheme",
    "Lattice",
    "LatticeResult",
    "LocalRecoding",
    "RecodedColumns",
    "Recoding",
    "Release",
    "SensitiveConstraints",
    "anonymize_dataset",
    "apply",
    "cell_table",
    "certificate_path",
    "check_k",
    "check_suppression_limit",
    "classify",
    "lattice_search",
    "mdav",
    "mondrian",
    "sensitive_constraints",
    "write_table_and_certificate",
]


def __getattr__(name: str) -> Any:
    if name in CLASSIC_NAMES:
        import crowdsafe.classic

        return getattr(crowdsafe.classic, name)
    raise AttributeError(f"module 'crowdsafe.anonymize' has no attribute {name!r}")
