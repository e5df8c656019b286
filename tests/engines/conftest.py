"""One local[2] Spark session per test process, shared by every Spark test (tests/engines/spark and
the conformance suite). Comparisons shared by these tests live in engine_helpers.py."""

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # engine_helpers, for tests/engines/spark too


@pytest.fixture(scope="session")
def spark():
    from crowdsafe.engines.spark.session import spark_session

    session = spark_session(
        "local[2]",
        config={
            "spark.sql.shuffle.partitions": "4",
            "spark.default.parallelism": "4",
            "spark.ui.enabled": "false",
            "spark.driver.memory": "1g",
            "spark.sql.session.timeZone": "UTC",
        },
    )
    yield session
    session.stop()
