"""The privacy calculus: pure functions from mechanism parameters to (ε, δ) guarantees.

Nothing here touches a table. See docs/privacy-calculus.md for the theorems and their
conditions.
"""

from __future__ import annotations

from crowdsafe.privacy.composition import (
    BoundCandidate,
    ComposedLoss,
    compose_homogeneous,
    drv_epsilon,
    kov_epsilon,
    parallel,
    sequential,
)
from crowdsafe.privacy.loss import PrivacyLoss

__all__ = [
    "BoundCandidate",
    "ComposedLoss",
    "PrivacyLoss",
    "compose_homogeneous",
    "drv_epsilon",
    "kov_epsilon",
    "parallel",
    "sequential",
]
