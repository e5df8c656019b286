"""Comparisons shared by the engine tests live in engine_helpers.py (the Spark session they share is
tests/conftest.py's ``spark`` fixture)."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))  # engine_helpers, for tests/engines/spark too
