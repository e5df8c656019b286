"""The ε1-safe selection: the exponential mechanism over the generalization lattice, sampled exactly.

This is step ``Am`` of the safe pipeline (Li, Qardaji and Su 2012, Theorem 6): one full-domain
generalization scheme is chosen on the *sample* with probability ∝ exp(ε1 · q(S, g) / (m · Δq)),
so the choice is ε1-DP and the release after it is (β, ε, δ)-DPS. The strongly safe alternative,
a scheme fixed without reading the data (Theorem 5), is here too. The package has four parts, each
with one job, and its proof beside them in ``PROOF.md``:

- **score** (:mod:`.score`, :mod:`.entropy_score`, :mod:`.marginal_score` and its tables
  :mod:`.marginal_tables`, with the exact group
  sums of :mod:`.sums`): the objectives q, each an exact integer q_int = D · q with a proved
  sensitivity Δq and monotonicity (or, ``entropy``, a float with a rigorous error bound and an
  interval enclosure); ``marginals`` has its own branch and bound beside its score;
- **bound** (:mod:`.bound`, over the keyed frequency tables of :mod:`.tables`): for a block of
  lattice nodes, an integer at least the score of every node in it;
- **exact search** (:mod:`.search`, :mod:`.gumbel`): the argmax of the exact keys
  ε1 · q_int / D + G_g over every candidate node, G_g exact Gumbels refined lazily, with a branch
  and bound that skips a block only when no node in it can win;
- **mechanism** (:mod:`.mechanism`): :func:`choose_scheme` (the ε1-safe choice),
  :func:`fixed_scheme` and :data:`PRESETS` (strongly safe), :class:`SchemeChoice` (what is
  published of a choice); at small ε, :mod:`.candidates` (a noisy count of the sample, charged
  inside ε1, that sizes the candidate set).

Every mechanism input (the candidate set, the penalties, Δq, the key denominators) comes from
the hierarchies, k and ε1 alone, or, for the candidates at small ε, from the noisy count, itself
a DP output charged to ε1 (PROOF.md §6); only the running time and the random bits drawn depend
on the sample. The search's output has exactly the exponential mechanism's distribution; its speed is
free to change, its distribution is not (the twins in tests/fast_paths and tests/anonymize hold
it there).
"""

from crowdsafe.selection.mechanism import PRESETS, SchemeChoice, choose_scheme, fixed_scheme
from crowdsafe.selection.score import DEFAULT_OBJECTIVE, OBJECTIVES, Objective, make_objective, node_penalties
from crowdsafe.selection.search import gumbel_max_full, gumbel_max_over_lattice, lattice_scores

__all__ = [
    "DEFAULT_OBJECTIVE",
    "OBJECTIVES",
    "PRESETS",
    "Objective",
    "SchemeChoice",
    "choose_scheme",
    "fixed_scheme",
    "gumbel_max_full",
    "gumbel_max_over_lattice",
    "lattice_scores",
    "make_objective",
    "node_penalties",
]
