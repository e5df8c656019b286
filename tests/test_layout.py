"""The layout gates of issue 17, checked on the source tree (and shown to fail on a bad one).

- no source file over 600 lines;
- fewer than 15 ``# type: ignore``, each with its reason in a comment after it;
- no engine name tested outside ``crowdsafe/engines`` (an engine is chosen by the registry);
- no import circle between files: the graph of the imports run when a module is loaded (those at
  module level, outside ``if TYPE_CHECKING:``) has no cycle. Imports inside functions are not in
  the graph (a few still break a circle that way; they are not counted here).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

SOURCE = Path(__file__).resolve().parents[1] / "src" / "crowdsafe"
MAX_LINES = 600
MAX_IGNORES = 14
ENGINE_TEST = re.compile(r"""(==|!=)\s*["'](spark|polars)["']|["'](spark|polars)["']\s*(==|!=)""")
IGNORE = re.compile(r"#\s*type:\s*ignore(\[[^\]]*\])?(?P<rest>.*)$")


def long_files(root: Path) -> list[str]:
    return [f"{p.relative_to(root)}: {n} lines" for p in sorted(root.rglob("*.py"))
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES]


def ignores(root: Path) -> tuple[int, list[str]]:
    """(how many ``# type: ignore``, those without a reason after them)."""
    count, bare = 0, []
    for p in sorted(root.rglob("*.py")):
        for number, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            found = IGNORE.search(line)
            if found:
                count += 1
                if not found.group("rest").strip().startswith("#"):
                    bare.append(f"{p.relative_to(root)}:{number}")
    return count, bare


def engine_name_tests(root: Path) -> list[str]:
    return [f"{p.relative_to(root)}:{number}" for p in sorted(root.rglob("*.py"))
            if "engines" not in p.relative_to(root).parts
            for number, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if ENGINE_TEST.search(line.split("#", 1)[0])]


def _module_name(root: Path, path: Path) -> tuple[str, bool]:
    parts = list(path.relative_to(root.parent).with_suffix("").parts)
    package = parts[-1] == "__init__"
    return ".".join(parts[:-1] if package else parts), package


def _load_time_imports(tree: ast.Module) -> list[ast.Import | ast.ImportFrom]:
    """The import statements run when the module is loaded: module level, and inside ``if`` /
    ``try`` blocks there, except under ``if TYPE_CHECKING:``."""
    found: list[ast.Import | ast.ImportFrom] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If):
            if not (isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"):
                pending.extend(node.body)
            pending.extend(node.orelse)
        elif isinstance(node, ast.Try):
            pending.extend([*node.body, *node.orelse, *node.finalbody])
            for handler in node.handlers:
                pending.extend(handler.body)
    return found


def import_cycles(root: Path) -> list[list[str]]:
    """The cycles (strongly connected sets of more than one module, or a module importing itself)
    of the load-time import graph of the package at ``root``."""
    modules = {_module_name(root, p): p for p in sorted(root.rglob("*.py"))}
    names = {name for name, _ in modules}
    graph: dict[str, set[str]] = {}
    for (name, package), path in modules.items():
        targets: set[str] = set()
        for node in _load_time_imports(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
                continue
            base = node.module or ""
            if node.level:
                here = name.split(".") if package else name.split(".")[:-1]
                here = here[:len(here) - (node.level - 1)]
                base = ".".join([*here, *([node.module] if node.module else [])])
            targets.update(f"{base}.{a.name}" if f"{base}.{a.name}" in names else base for a in node.names)
        graph[name] = {t for t in targets if t in names}
    cycles, index, low, stack, on_stack = [], {}, {}, [], set()

    def connect(v: str) -> None:  # Tarjan's strongly connected components
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                cycles.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return cycles


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_no_import_circle_between_files():
    assert import_cycles(SOURCE) == []


def test_the_import_check_catches_a_circle(tmp_path):
    package = tmp_path / "pkg"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "inner" / "__init__.py").write_text("")
    (package / "a.py").write_text("from pkg.inner import b\n")
    (package / "inner" / "b.py").write_text("from .. import c\n")
    (package / "c.py").write_text("import pkg.a\n")
    (package / "typed.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import pkg.d\n")
    (package / "d.py").write_text("import pkg.typed\n")  # a type-only import closes no circle
    assert import_cycles(package) == [["pkg.a", "pkg.c", "pkg.inner.b"]]


def test_no_source_file_is_over_600_lines():
    assert long_files(SOURCE) == []


def test_few_type_ignores_each_with_its_reason():
    count, bare = ignores(SOURCE)
    assert count <= MAX_IGNORES and bare == []


def test_no_engine_name_is_tested_outside_the_engines():
    assert engine_name_tests(SOURCE) == []


def test_the_gates_catch_a_bad_tree(tmp_path):
    (tmp_path / "engines").mkdir()
    (tmp_path / "engines" / "registry.py").write_text('if name == "spark":\n    pass\n')  # allowed there
    (tmp_path / "api.py").write_text('if engine == "spark":\n    pass\n' + "x = 1\n" * MAX_LINES)
    (tmp_path / "typed.py").write_text("a: int = None  # type: ignore[assignment]\n"
                                       "b: int = None  # type: ignore[assignment]  # set later\n")
    assert long_files(tmp_path) == [f"api.py: {MAX_LINES + 2} lines"]
    assert ignores(tmp_path) == (2, ["typed.py:1"])
    assert engine_name_tests(tmp_path) == ["api.py:1"]
