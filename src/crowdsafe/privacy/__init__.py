"""The privacy calculus: pure functions from mechanism parameters to (ε, δ) guarantees.

Nothing here touches a table. Modules, each named after its concept:

- :mod:`~crowdsafe.privacy.loss` — :class:`PrivacyLoss`, an (ε, δ) pair;
- :mod:`~crowdsafe.privacy.composition` — sequential, parallel and k-fold composition;
- :mod:`~crowdsafe.privacy.amplification` — amplification by sampling, the sampling floor;
- :mod:`~crowdsafe.privacy.dps` — d(k, β, ε) for k-anonymization after sampling;
- :mod:`~crowdsafe.privacy.planning` — solvers for k, β and ε, and the release planner;
- :mod:`~crowdsafe.privacy.profiles` — the privacy profiles pipeline pieces declare;
- :mod:`~crowdsafe.privacy.certificate` / :mod:`~crowdsafe.privacy.certify` — certificates.

See docs/privacy-calculus.md for the theorems and their conditions.
"""

from __future__ import annotations

from crowdsafe.privacy.amplification import (
    admits,
    amplify,
    largest_inner_loss,
    largest_rate,
    largest_rate_for_epsilon,
    sampling_floor,
)
from crowdsafe.privacy.certificate import Certificate
from crowdsafe.privacy.certify import (
    certify_chain,
    certify_k_anonymization,
    certify_mechanism,
    check_sample_independence,
    compose_certificates,
    no_guarantee,
    to_change_neighbours,
)
from crowdsafe.privacy.composition import (
    BoundCandidate,
    ComposedLoss,
    compose_homogeneous,
    drv_epsilon,
    kov_epsilon,
    parallel,
    sequential,
)
from crowdsafe.privacy.dps import DeltaBound, delta_bound, dps_delta, dps_delta_at_most
from crowdsafe.privacy.loss import PrivacyLoss
from crowdsafe.privacy.planning import Plan, largest_beta, plan, smallest_epsilon, smallest_k
from crowdsafe.privacy.profiles import (
    MechanismProfile,
    RecodingProfile,
    SamplingProfile,
    SuppressionProfile,
    new_sample_id,
)

__all__ = [
    "BoundCandidate",
    "Certificate",
    "ComposedLoss",
    "DeltaBound",
    "MechanismProfile",
    "Plan",
    "PrivacyLoss",
    "RecodingProfile",
    "SamplingProfile",
    "SuppressionProfile",
    "admits",
    "amplify",
    "certify_chain",
    "certify_k_anonymization",
    "certify_mechanism",
    "check_sample_independence",
    "compose_certificates",
    "compose_homogeneous",
    "delta_bound",
    "dps_delta",
    "dps_delta_at_most",
    "drv_epsilon",
    "kov_epsilon",
    "largest_beta",
    "largest_inner_loss",
    "largest_rate",
    "largest_rate_for_epsilon",
    "new_sample_id",
    "no_guarantee",
    "parallel",
    "plan",
    "sampling_floor",
    "sequential",
    "smallest_epsilon",
    "smallest_k",
    "to_change_neighbours",
]
