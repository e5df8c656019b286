"""Where the per-row stages run.

``polars`` (the default) runs everything in this process. ``spark`` runs the per-row stages
(reading, sampling, encoding, recoding, counting, suppression, writing, DP aggregates, α-β,
the attack's joins) on Apache Spark through PySpark, and everything after the reduction to
frequency tables (lattice search, exponential mechanism, calculus, certificate) on the driver.
The algorithms are not forked: both engines feed the same driver-side code. The operations an
engine offers are :class:`~crowdsafe.engines.protocol.Engine`; :func:`get_engine` (the registry)
returns one by name; the drivers (:mod:`crowdsafe.drivers`) run them.
"""

from __future__ import annotations

from crowdsafe.engines.protocol import Engine, PublicationTable
from crowdsafe.engines.registry import DEFAULT_ENGINE, ENGINES, check_engine, get_engine

__all__ = ["DEFAULT_ENGINE", "ENGINES", "Engine", "PublicationTable", "check_engine", "get_engine"]
