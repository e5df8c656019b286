"""One concept, one name: no class name is defined in two modules of crowdsafe.

A reader (or a traceback) that says ``Domain`` must mean one thing. A name may be shared only
when ALLOWED lists it with the reason.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

import crowdsafe

SRC = Path(crowdsafe.__file__).parent

# class name -> why two modules may define it (none today)
ALLOWED: dict[str, str] = {}


def class_modules(root: Path = SRC) -> dict[str, list[str]]:
    where: dict[str, list[str]] = defaultdict(list)
    for path in sorted(root.rglob("*.py")):
        module = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if isinstance(node, ast.ClassDef):
                where[node.name].append(module)
    return where


@pytest.mark.slow
def test_no_class_name_is_defined_in_two_modules():
    shared = {name: modules for name, modules in class_modules().items()
              if len(modules) > 1 and name not in ALLOWED}
    assert shared == {}, f"class names defined more than once (rename one, or allow it with a reason): {shared}"


@pytest.mark.slow
def test_the_allow_list_names_only_shared_classes():
    where = class_modules()
    assert [name for name in ALLOWED if len(where.get(name, [])) < 2] == []


def test_the_scan_finds_a_name_defined_twice(tmp_path):
    (tmp_path / "a.py").write_text("class Domain:\n    pass\n")
    (tmp_path / "b.py").write_text("def f():\n    class Domain:\n        pass\n")
    assert class_modules(tmp_path)["Domain"] == ["a.py", "b.py"]
