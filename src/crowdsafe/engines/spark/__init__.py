"""The Apache Spark engine (``pip install 'crowdsafe[spark]'``).

Importing this package does not import PySpark; :func:`require_pyspark` does, with a clear
error when it or Java is missing.
"""

from __future__ import annotations

import importlib
import shutil
from types import ModuleType

from crowdsafe.errors import ParameterError

INSTALL_HINT = "pip install 'crowdsafe[spark]'"


def require_pyspark() -> ModuleType:
    """Import PySpark, or raise one line that says how to install it (and Java)."""
    try:
        pyspark = importlib.import_module("pyspark")
    except ImportError:
        raise ParameterError(f"the spark engine needs PySpark, which is not installed: {INSTALL_HINT}") from None
    if shutil.which("java") is None and not _java_home_set():
        raise ParameterError("the spark engine needs a Java runtime (17 or newer) on PATH or in JAVA_HOME")
    return pyspark


def _java_home_set() -> bool:
    import os

    home = os.environ.get("JAVA_HOME")
    if not home:
        return False
    return shutil.which("java", path=os.path.join(home, "bin")) is not None
