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


def planned_on_executors(frame: Any) -> Any:
    """``frame``, read by the executors' compiled code when it is a table held in the plan itself.

    A DataFrame made from driver-side rows (``createDataFrame``, and every table crowdsafe hands
    to Spark from memory) is a local relation, and Spark's optimiser evaluates a projection over
    one row by row on the driver, interpreted, before it folds constants (the rule
    ConvertToLocalRelation runs in its first batch). A leaf-code map written as one JSON literal
    (:func:`crowdsafe.engines.spark.sampling.code_expression`) was then parsed once per row: 10 s
    to count Adult's 32,561 rows, 1 s once the map is folded. A coalesce to as many partitions as
    the local scan has is a plan node between the two: the projection is folded and compiled,
    and the rows, their order and their partitions are unchanged. Any other frame is returned as
    it is.
    """
    if not frame.isLocal():
        return frame
    return frame.coalesce(max(1, frame.sparkSession.sparkContext.defaultParallelism))
