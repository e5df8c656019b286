"""Random deletion and insertion: the α-β algorithm and its estimator (Rastogi, Suciu, Hong 2007).

- :mod:`~crowdsafe.perturb.alpha_beta` — the algorithm: :func:`perturb`, :func:`prepare`,
  :func:`plan_public`, :func:`run`, the certificate; a certified run needs a public domain and
  a public bound ``max_rows`` on n (else ``exploratory=True``: no formal guarantee);
- :mod:`~crowdsafe.perturb.stages` — its per-row stages as engine-agnostic functions;
- :mod:`~crowdsafe.perturb.domain` — the domain D, never materialized, and where a public
  domain comes from (:func:`public_values`); tuples as codes and mixed-radix indices;
- :mod:`~crowdsafe.perturb.view` — the published view with its certificate (write / read);
- :mod:`~crowdsafe.perturb.query` — counting queries (conjunctions of per-attribute conditions);
- :mod:`~crowdsafe.perturb.estimator` — EST(Q, V) with error bars, one query or every equality
  query over small attribute sets at once.

The (d, γ) calculus (conditions, posteriors, equivalent ε, planner, utility bounds) is pure math
and lives in :mod:`crowdsafe.privacy.dgamma`. See docs/alpha-beta.md.
"""

from crowdsafe.perturb.alpha_beta import (
    Perturbation,
    PerturbRequest,
    Table,
    perturb,
    plan_for,
    plan_public,
    prepare,
    run,
)
from crowdsafe.perturb.domain import TupleDomain, public_values
from crowdsafe.perturb.estimator import (
    EqualitySweep,
    Estimate,
    equality_estimates,
    est,
    estimate,
    theorem_bound,
)
from crowdsafe.perturb.query import Condition, CountQuery, parse_count
from crowdsafe.perturb.view import View, ViewOutput, certificate_path, check_view_path, read_view
from crowdsafe.privacy.dgamma import AlphaBetaPlan

__all__ = [
    "AlphaBetaPlan",
    "Condition",
    "CountQuery",
    "TupleDomain",
    "EqualitySweep",
    "Estimate",
    "PerturbRequest",
    "Perturbation",
    "Table",
    "View",
    "ViewOutput",
    "certificate_path",
    "check_view_path",
    "equality_estimates",
    "estimate",
    "est",
    "parse_count",
    "perturb",
    "plan_for",
    "plan_public",
    "prepare",
    "public_values",
    "read_view",
    "run",
    "theorem_bound",
]
