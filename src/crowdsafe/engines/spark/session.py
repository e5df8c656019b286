"""The Spark session crowdsafe runs on.

Taken from the environment when one is active (``spark-submit``, a notebook, a test fixture);
otherwise built here, with ``master`` from the caller (``--spark-master``), else the
``CROWDSAFE_SPARK_MASTER`` environment variable, else Spark's own default configuration.
"""

from __future__ import annotations

import os
from typing import Any

from crowdsafe.engines.spark import require_pyspark

MASTER_ENV = "CROWDSAFE_SPARK_MASTER"


def spark_session(master: str | None = None, config: dict[str, Any] | None = None) -> Any:
    """The active SparkSession, or a new one on ``master``.

    An active session is reused as it is (its master is the user's choice); asking for a
    different master than the active session's is an error rather than a silent switch.
    """
    require_pyspark()
    from pyspark.sql import SparkSession

    from crowdsafe.errors import ParameterError

    active = SparkSession.getActiveSession()
    if active is not None:
        running = active.sparkContext.master
        if master is not None and master != running:
            raise ParameterError(
                f"a Spark session on {running!r} is already active; cannot switch to spark_master={master!r}",
                parameter="spark_master",
            )
        return active
    builder = SparkSession.builder.appName("crowdsafe")
    chosen = master or os.environ.get(MASTER_ENV)
    if chosen:
        builder = builder.master(chosen)
    builder = builder.config("spark.ui.showConsoleProgress", "false")
    for key, value in (config or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
