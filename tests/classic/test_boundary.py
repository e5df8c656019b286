"""The certified pipeline never imports the classic (uncertified) algorithms."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

import crowdsafe

PACKAGE = Path(crowdsafe.__file__).parent


def _imported_modules(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_no_module_of_the_certified_pipeline_imports_classic():
    offenders = {}
    for path in sorted((PACKAGE / "anonymize").glob("*.py")):
        if path.name == "__init__.py":  # offers the classic names lazily, for the public API
            continue
        found = sorted(m for m in _imported_modules(path)
                       if m == "crowdsafe.classic" or m.startswith("crowdsafe.classic."))
        if found:
            offenders[path.name] = found
    assert offenders == {}


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_importing_the_certified_pipeline_loads_no_classic_module():
    code = ("import sys, crowdsafe.anonymize, crowdsafe.anonymize.publish, crowdsafe.selection.mechanism; "
            "print(sorted(m for m in sys.modules if m.startswith('crowdsafe.classic')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_the_classic_names_are_still_offered_by_crowdsafe_anonymize():
    import crowdsafe.anonymize as anonymize
    import crowdsafe.classic as classic

    for name in anonymize.CLASSIC_NAMES:
        assert getattr(anonymize, name) is getattr(classic, name)
