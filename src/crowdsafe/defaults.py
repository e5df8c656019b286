"""Default values of public keywords, in a module that imports nothing.

A signature that names one (:mod:`crowdsafe.api`, :mod:`crowdsafe.budgets`) then does not import
the layer that reads it: ``crowdsafe anonymize`` never opens the ledger, and only ``crowdsafe
check`` needs the privacy models. The layers take their constants from here.
"""

from __future__ import annotations

#: The ledger spec that means ``$CROWDSAFE_LEDGER``, else the per-user ledger file
#: (:func:`crowdsafe.privacy.ledger.ledger_for`; ``crowdsafe.privacy.ledger.DEFAULT``).
DEFAULT_LEDGER = "default"
#: Re-identification risk above which a record counts as at risk: 1/5, records in classes smaller
#: than 5 (:mod:`crowdsafe.models.risk`; ``crowdsafe.models.DEFAULT_THRESHOLD``).
DEFAULT_THRESHOLD = 0.2
#: δ of one release when none is given (``crowdsafe publish --delta``, ``crowdsafe.api.publish``):
#: each person's record may break ε-DP with probability at most 10⁻⁶ (docs/publish.md).
DEFAULT_DELTA = 1e-6

# The planner's split of ε (crowdsafe.anonymize.plan.planned_epsilon1), here so that the command
# line's help states them without importing the planner.
#: ε1 = m (ln L + ln 20) / (EPSILON1_LOSS_CLASSES · k): the exponential mechanism's 95% utility
#: bound held to this many classes of k rows (L candidate schemes; m = 1 for a monotone score, else 2).
EPSILON1_LOSS_CLASSES = 1
#: The default objective (crowdsafe.anonymize.plan.default_objective) is ``marginals`` only where
#: its choice resolves scores to at most this many rows per marginal: the exponential mechanism's
#: 95% bound 2 · 3 · (ln L + ln 20) / ε1 (Δq < 3 rows per marginal, m = 2). A public constant,
#: calibrated on Adult (docs/publish.md, "The default objective"): above it, ``marginals`` picked
#: empty releases (everything suppressed) in some seeds, ``retained`` in none.
MARGINALS_RESOLUTION_ROWS = 6000
#: The planned ε1 stays within these shares of ε.
EPSILON1_SHARE_RANGE = (0.01, 0.5)
#: ε1's share of ε when the number of candidate schemes is not known to the planner (the Spark
#: engine plans before it sizes the lattice; ``plan_publish`` without ``candidates``).
EPSILON1_SHARE_UNSIZED = 0.10
#: The planner's rate: the largest β whose β/k is within this share of the best β/k.
RATE_TOLERANCE = 0.10

# The selection's noisy count (crowdsafe.selection.candidates), here so that the plan's text and
# the command line's help state them without importing the selection.
#: The share of ε1 spent on a noisy count of the sample, which sizes the candidate schemes.
COUNT_SHARE = 0.10
#: ρ: a candidate scheme has at most ρ · n̂ / k possible tuples (n̂ the noisy count of the sample).
CELLS_PER_CLASS = 8
#: The most candidate schemes (lattice nodes) the exact selection chooses among: a larger plan is
#: refused by the planner, before anything is charged (crowdsafe.anonymize.plan.check_candidates).
#: The search (crowdsafe.selection.search) holds a few arrays and lists of one entry per candidate
#: (its Gumbel cell, key bounds, block maxima), about 300 bytes a candidate. Measured with
#: ``crowdsafe publish`` on 200 rows of N two-valued columns without a schema (every column a
#: quasi-identifier of height 1, L = 2^N, the default objective), 2 cores: 2^20 candidates 1.1 s and
#: 0.39 GB peak, 2^22 3.2 s and 1.26 GB, 2^24 9.5 s and 4.9 GB, 2^30 past 23 GB. The objectives that
#: score every node take longer (entropy, discernibility: about 45 s and 60 s at 2^20; entropy about
#: 13 minutes at 2^22 beside another run). 2^22 keeps the peak near 1.3 GB, well inside a machine of
#: 8 GiB beside the table (docs/publish.md, "How many candidate schemes").
MAX_CANDIDATES = 1 << 22
#: The most queries an equality sweep of an α-β view writes unless its caller allows more (about
#: 1 GB of CSV; ``crowdsafe estimate --equality``, ``--max-queries``).
MAX_EQUALITY_QUERIES = 10_000_000
#: An α-β view expected to hold more rows than this is flagged by its plan as impractically large
#: and refused by a run in memory unless allowed (``crowdsafe perturb --max-view-rows``;
#: :func:`crowdsafe.privacy.dgamma.check_view_size`).
LARGE_VIEW_ROWS = 50_000_000
