"""Where the per-row stages run.

``polars`` (the default) runs everything in this process. ``spark`` runs the per-row stages
(reading, sampling, encoding, recoding, counting, suppression, writing, DP aggregates, α-β,
the attack's joins) on Apache Spark through PySpark, and everything after the reduction to
frequency tables (lattice search, exponential mechanism, calculus, certificate) on the driver.
The algorithms are not forked: both engines feed the same driver-side code.
"""

from __future__ import annotations

from crowdsafe.errors import ParameterError

ENGINES = ("polars", "spark")
DEFAULT_ENGINE = "polars"


def check_engine(name: str | None) -> str:
    """The engine's canonical name; a clear error for an unknown one."""
    engine = DEFAULT_ENGINE if name is None else str(name).strip().lower()
    if engine not in ENGINES:
        raise ParameterError(f"unknown engine {name!r}; use one of {', '.join(ENGINES)}")
    return engine
