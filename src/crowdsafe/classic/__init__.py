"""The classic k-anonymization algorithms: **uncertified, no differential-privacy guarantee**.

Every algorithm here fits its recoding to the data it releases, so what it publishes depends on
individual rows in ways no theorem bounds: a release made with any of them carries "no formal
guarantee", whatever k is (its certificate says so, through
:func:`crowdsafe.privacy.certify_k_anonymization` with an unsafe recoding profile). They are here
for comparison, for the attacks and experiments, and for custodians who need a classic
k-anonymous table; the certified pipeline (sampling, the ε1-safe or fixed scheme, suppression,
certificate: :mod:`crowdsafe.anonymize`) never imports this package.

- :func:`mondrian` (LeFevre et al. 2006): multidimensional partitioning (:mod:`.mondrian`,
  its cuts in :mod:`.mondrian_partition` and :mod:`.mondrian_cuts`);
- :func:`mdav` (Domingo-Ferrer and Torra 2005): microaggregation (:mod:`.mdav`);
- :func:`lattice_search`: optimal or greedy full-domain generalization chosen on the data
  (:mod:`.lattice_search`; the lattice itself is :class:`crowdsafe.anonymize.lattice.Lattice`);
- :func:`anonymize_dataset` (:mod:`.algorithms`; :func:`run_anonymization` takes an
  :class:`AnonymizeRequest`): choose with one of them, Apply, certify (no formal guarantee).

All of them return recodings applied by the shared :func:`crowdsafe.anonymize.apply`.
"""

from crowdsafe.classic.algorithms import ALGORITHMS, AnonymizeRequest, anonymize_dataset, run_anonymization
from crowdsafe.classic.lattice_search import LatticeResult, lattice_search
from crowdsafe.classic.mdav import mdav
from crowdsafe.classic.mondrian import mondrian

__all__ = ["ALGORITHMS", "AnonymizeRequest", "LatticeResult", "anonymize_dataset", "lattice_search", "mdav", "mondrian",
           "run_anonymization"]
