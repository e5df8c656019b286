"""crowdsafe: publish microdata with a proven privacy guarantee.

Sampling followed by a safe k-anonymization is (ε, δ)-differentially private; crowdsafe plans,
runs and certifies such releases, and measures what an attacker could learn from any release.

The Python API is :mod:`crowdsafe.api` (``help(crowdsafe.api.publish)``, ...): ``publish`` and
``plan_publish`` (a release with an (ε, δ) guarantee), ``query`` (a DP answer), ``perturb``,
``plan_perturbation`` and ``estimate`` (an α-β view, (d, γ)-private), ``anonymize`` (classic
k-anonymity: no formal guarantee), ``check`` (``check_dataset`` for a loaded Dataset), ``compare``
and ``attack`` (custodian-only measures), ``set_budget``, ``change_budget`` and ``ledger_report``
(the budget ledger).
``crowdsafe.query``, ``crowdsafe.publish`` and ``crowdsafe.plan_publish`` are the same functions.
Randomness is secure by default; a ``seed`` makes a result reproducible and NOT fit for release.
"""

from __future__ import annotations

__version__ = "0.1.0"

from typing import TYPE_CHECKING  # noqa: E402

from crowdsafe.errors import CrowdsafeError  # noqa: E402

if TYPE_CHECKING:
    from crowdsafe.randomness import Randomness

__all__ = ["CrowdsafeError", "Randomness", "__version__"]

# Packages that register named tables (bundled datasets) for crowdsafe.data.load, imported the
# first time a name is looked up (crowdsafe.data.sources): the data layer imports none of them.
TABLE_PROVIDERS = ("crowdsafe.datasets",)

#: The typed requests the public functions build and pass down (``crowdsafe.PlanRequest``, ...),
#: and the modules that define them.
REQUESTS = {
    "PlanRequest": "crowdsafe.anonymize.plan",
    "RunOptions": "crowdsafe.anonymize.publish",
    "QueryRequest": "crowdsafe.mechanisms.query_plan",
    "PerturbRequest": "crowdsafe.perturb.alpha_beta",
    "AlphaBetaPlanRequest": "crowdsafe.privacy.dgamma",
    "ViewOutput": "crowdsafe.perturb.view",
}


def __getattr__(name: str) -> object:
    """``crowdsafe.api`` / ``crowdsafe.query`` / ``crowdsafe.publish`` / ``crowdsafe.Randomness``:
    the public API, imported on first use (``import crowdsafe`` and ``crowdsafe --help`` load neither Polars nor
    NumPy)."""
    if name == "Randomness":  # NumPy and the generators: imported when a caller asks for them
        from crowdsafe.randomness import Randomness

        return Randomness
    if name == "api":  # ``import crowdsafe`` then ``crowdsafe.api.anonymize(...)``, as the docs write
        import importlib

        return importlib.import_module("crowdsafe.api")
    if name in ("query", "publish", "plan_publish"):
        from crowdsafe import api

        return getattr(api, name)
    if name in REQUESTS:
        import importlib

        return getattr(importlib.import_module(REQUESTS[name]), name)
    raise AttributeError(f"module 'crowdsafe' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), "Randomness", "api", "query", "publish", "plan_publish", *REQUESTS})
