"""Anonymization in the two-step form ``release = Apply(g, D, k)`` (docs/architecture.md).

- recodings g (:mod:`~crowdsafe.anonymize.recoding`): a global full-domain
  :class:`GeneralizationScheme`, or a :class:`LocalRecoding` fitted per class;
- :func:`apply` (:mod:`~crowdsafe.anonymize.apply`): map rows through g, suppress output tuples
  held by fewer than k rows (and classes failing ℓ / t), under an optional suppression limit;
- classic choosers, all fitted to the data and so without formal guarantee:
  :func:`mondrian` (LeFevre et al. 2006), :func:`mdav` (Domingo-Ferrer and Torra 2005),
  :func:`lattice_search` (optimal or greedy full-domain generalization);
- :func:`anonymize_dataset`: choose, apply and certify, returning a :class:`Release`.
"""

from crowdsafe.anonymize.apply import Applied, Classified, apply, check_k, check_suppression_limit, classify
from crowdsafe.anonymize.cells import CellTable, cell_table
from crowdsafe.anonymize.classic import ALGORITHMS, anonymize_dataset
from crowdsafe.anonymize.constraints import SensitiveConstraints, sensitive_constraints
from crowdsafe.anonymize.lattice import Lattice, LatticeResult, lattice_search
from crowdsafe.anonymize.mdav import mdav
from crowdsafe.anonymize.mondrian import mondrian
from crowdsafe.anonymize.recoding import GeneralizationScheme, LocalRecoding, RecodedColumns, Recoding
from crowdsafe.anonymize.release import Release, certificate_path, write_table_and_certificate

__all__ = [
    "ALGORITHMS",
    "Applied",
    "CellTable",
    "Classified",
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
