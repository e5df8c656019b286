"""Fixtures of the report tests: the small table (tests/report_tables.py), published once."""

from __future__ import annotations

from pathlib import Path

import pytest

from report_tables import publish_small, small_table


@pytest.fixture(scope="session")
def published(tmp_path_factory) -> Path:
    """A release of the small table with its certificate and report: the table's path."""
    directory = tmp_path_factory.mktemp("published")
    publish_small(directory, small_table())
    return directory / "out" / "r.csv"
