"""crowdsafe: publish microdata with a proven privacy guarantee.

Sampling followed by a safe k-anonymization is (ε, δ)-differentially private; crowdsafe plans,
runs and certifies such releases, and measures what an attacker could learn from any release.
"""

from __future__ import annotations

__version__ = "0.1.0"

from crowdsafe.errors import CrowdsafeError  # noqa: E402
from crowdsafe.randomness import Randomness  # noqa: E402

__all__ = ["CrowdsafeError", "Randomness", "__version__"]


def __getattr__(name: str) -> object:
    """``crowdsafe.query``: the public API function, imported on first use."""
    if name == "query":
        from crowdsafe import api

        return api.query
    raise AttributeError(f"module 'crowdsafe' has no attribute {name!r}")
