"""Fixtures of the neighbouring-input tests (the table itself: boundary_data.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import polars as pl
import pytest

sys.path.insert(0, str(Path(__file__).parent))

from boundary_data import base_table  # noqa: E402


@pytest.fixture(scope="session")
def base_frame() -> pl.DataFrame:
    """The first rows of Adult (train) without missing values, a few columns."""
    return base_table()


@pytest.fixture(autouse=True)
def _restore_cwd():
    """Cases run in their own working directory; give the next test the one it started in."""
    here = os.getcwd()
    yield
    os.chdir(here)
