"""Engines by name: ``polars`` (the default, in this process) and ``spark`` (imported only when
asked for, so PySpark stays optional). A third engine is a module implementing
:class:`~crowdsafe.engines.protocol.Engine` and one entry in :data:`FACTORIES`."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, cast

from crowdsafe.errors import ParameterError

if TYPE_CHECKING:
    from crowdsafe.engines.protocol import Engine

#: name -> "module:class"; the class is called with ``master`` (a cluster address or None)
FACTORIES = {
    "polars": "crowdsafe.engines.polars_engine:PolarsEngine",
    "spark": "crowdsafe.engines.spark.engine:SparkEngine",
}
ENGINES = tuple(FACTORIES)
DEFAULT_ENGINE = "polars"


def check_engine(name: str | None) -> str:
    """The engine's canonical name; a clear error for an unknown one."""
    engine = DEFAULT_ENGINE if name is None else str(name).strip().lower()
    if engine not in ENGINES:
        raise ParameterError(f"unknown engine {name!r}; use one of {', '.join(ENGINES)}")
    return engine


def get_engine(name: str | None = None, *, master: str | None = None) -> Engine:
    """The engine called ``name`` (None: the default), on the cluster ``master`` when it runs on
    one (the Spark session: the active one, else ``master`` / ``$CROWDSAFE_SPARK_MASTER``).
    Raises ParameterError for an unknown name. Importing an engine imports nothing heavy: the
    Spark engine imports PySpark when it first runs."""
    module, _, attribute = FACTORIES[check_engine(name)].partition(":")
    return cast("Engine", getattr(importlib.import_module(module), attribute)(master=master))


__all__ = ["DEFAULT_ENGINE", "ENGINES", "FACTORIES", "check_engine", "get_engine"]
