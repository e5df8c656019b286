"""Fixtures shared by the whole suite."""

from __future__ import annotations

import os
import sys

import pytest
from hypothesis import settings

# This machine (and CI) runs with PYTHONDONTWRITEBYTECODE=1. In a fresh clone, that made each of the
# two test processes compile the package and rewrite every test module's asserts again, and each
# command a test starts (``python -m crowdsafe ...``) compile the package again: collection took
# 18 s instead of 7 s in each process. The test run writes its bytecode (``__pycache__``, ignored
# by git): the package's once, before the test processes start (pytest_configure below), the test
# modules' in each process; a command started later reads it, as it reads the standard library's.
sys.dont_write_bytecode = False

from crowdsafe.privacy.ledger import LEDGER_ENV  # noqa: E402 (after the setting above)

# Property tests are reproducible by default (the same examples on every run, so CI cannot turn
# red by chance); HYPOTHESIS_PROFILE=explore draws fresh random examples on every run. Neither
# has a deadline: tests assert correctness, never time (Hypothesis's 200 ms per example failed a
# cheap property once on a machine loaded by other runs).
settings.register_profile("reproducible", derandomize=True, print_blob=True, deadline=None)
settings.register_profile("explore", derandomize=False, print_blob=True, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "reproducible"))


@pytest.fixture(autouse=True)
def private_ledger(tmp_path, monkeypatch):
    """Every test gets its own ledger file, so no test reads or charges the user's ledger."""
    path = tmp_path / "ledger.sqlite3"
    monkeypatch.setenv(LEDGER_ENV, str(path))
    return path


@pytest.fixture
def mechanism_spy(monkeypatch):
    """A :class:`mechanism_spy.MechanismSpy` installed for this test (tests/mechanism_spy.py)."""
    from mechanism_spy import MechanismSpy

    return MechanismSpy().install(monkeypatch)


def pytest_configure(config):  # noqa: ANN001 (pytest's hook)
    """The package's bytecode, written once by the first process (see above; quick when current)."""
    if not hasattr(config, "workerinput"):
        import compileall
        from pathlib import Path

        import crowdsafe

        compileall.compile_dir(Path(crowdsafe.__file__).parent, quiet=1)


def pytest_collection_modifyitems(items):  # noqa: ANN001 (pytest's hook)
    """A test marked ``spark`` (a local Spark session: a JVM) is also ``slow``, so the quick loop
    ``-m "not slow"`` leaves it out; CI runs everything. It also starts the shared session below
    first, so a command-line run inside it (``--engine spark``, which would start a session on
    ``local[*]``) reuses that one, and no later test of the process asks for another master. Its
    id must name Spark: that is how the scheduler below sends every Spark test to one process."""
    for item in items:
        if item.get_closest_marker("spark") is not None:
            if "spark" not in item.nodeid.lower():
                raise pytest.UsageError(f"{item.nodeid} is marked spark but its id does not say 'spark': "
                                        "name the test or its parameter after Spark (tests/conftest.py)")
            if item.get_closest_marker("slow") is None:
                item.add_marker(pytest.mark.slow)
            names = getattr(item, "fixturenames", None)
            if names is not None and "spark" not in names:
                # a new list: the parametrizations of one function share theirs, and the others
                # (a test's Polars case) would start a session too
                item.fixturenames = ["spark", *names]  # type: ignore[attr-defined]


def pytest_xdist_make_scheduler(config, log):  # noqa: ANN001, ANN201 (pytest-xdist's hook)
    """Under ``-n``, every test whose id names Spark runs in one test process, the rest spread as
    ``--dist load`` spreads them: one JVM starts, not one per process (the Spark tests took 293 s
    in one process against 2 × 191 s in two, each warming its own JVM). Done in the scheduler,
    from the ids the workers report, because ``--dist loadgroup`` with an ``xdist_group`` mark
    does not group under pytest 9.2 (pytest-xdist issue 1386). A few cheap tests that only name
    Spark (a parameter ``engines/spark/...``) go along."""
    if config.getvalue("dist") != "load":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class SparkTogether(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return "spark" if "spark" in nodeid.lower() else nodeid

    return SparkTogether(config, log)


# One local[2] Spark session per test process, shared by every Spark test (tests/engines/spark, the
# conformance suite and the Spark fast paths).
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
            # A test session lives minutes and runs hundreds of small jobs beside the other test
            # worker: the JVM's optimising compiler and parallel collector spent more CPU than the
            # jobs (134 s against 88 s for four attacks on 600 rows). Runtime flags only: the same
            # plans, the same results.
            "spark.driver.extraJavaOptions": "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
        },
    )
    yield session
    session.stop()
