"""``crowdsafe --help`` and ``crowdsafe publish --help`` stay fast: building the command line
imports no heavy library (Polars, NumPy's linear algebra, SciPy, Spark, Matplotlib) and not the
library's API; a command imports them when it runs (:mod:`crowdsafe.cli.lazy`).

Each case runs a fresh interpreter (a module imported by another test would hide a regression).
The broken variant puts back the eager import the command modules had (``lazy_module`` replaced
by ``importlib.import_module``) and shows that the check catches it.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import crowdsafe

HEAVY = ("polars", "numpy.linalg", "scipy", "pyspark", "matplotlib", "crowdsafe.api")
SOURCE = str(Path(crowdsafe.__file__).resolve().parents[1])

# Runs the command line in-process and writes the names of the imported modules to a file.
# With CROWDSAFE_TEST_EAGER=1 the command modules import the library eagerly, as they used to.
PROBE = """
import importlib, json, os, sys, types
if os.environ.get("CROWDSAFE_TEST_EAGER"):  # stands in for crowdsafe.cli.lazy before the CLI imports it
    from rich.console import Console
    from rich.table import Table
    eager = types.ModuleType("crowdsafe.cli.lazy")
    from rich.text import Text
    eager.lazy_module, eager.Console, eager.Table = importlib.import_module, Console, Table
    eager.styled = lambda *parts: Text.assemble(*parts)
    sys.modules["crowdsafe.cli.lazy"] = eager
from crowdsafe.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def _env(**extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SOURCE, os.environ.get("PYTHONPATH", "")]), **extra}
    env.pop("CROWDSAFE_TEST_EAGER", None)
    env.update(extra)
    return env


def _interrupt_default() -> None:
    """In the child: SIGINT as an interactive shell leaves it. A caller that ignores SIGINT (a
    background job: the test run started with ``&``) makes ``python -m crowdsafe`` import Polars at
    start-up on purpose (crowdsafe.console.keep_ignored_interrupt), which is not what this checks."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def heavy_modules(modules: list[str]) -> list[str]:
    """The modules of ``modules`` that are, or lie under, one of :data:`HEAVY`."""
    return sorted(m for m in modules if any(m == h or m.startswith(h + ".") for h in HEAVY))


def probe(tmp_path: Path, *args: str, eager: bool = False) -> tuple[int, list[str]]:
    """Exit status and imported modules of ``crowdsafe ARGS`` run in a fresh interpreter."""
    out = tmp_path / "modules.json"
    env = _env(CROWDSAFE_TEST_EAGER="1") if eager else _env()
    subprocess.run([sys.executable, "-c", PROBE, str(out), *args], env=env, check=True,
                   capture_output=True, text=True, timeout=120, preexec_fn=_interrupt_default)
    found = json.loads(out.read_text())
    return found["code"], found["modules"]


def imported_by_entry_point(*args: str) -> tuple[str, list[str]]:
    """``python -X importtime -m crowdsafe ARGS``: its standard output and the modules it imported
    (the names -X importtime lists on standard error)."""
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "crowdsafe", *args], env=_env(),
                          capture_output=True, text=True, timeout=120, preexec_fn=_interrupt_default)
    assert done.returncode == 0, done.stderr[-2000:]
    names = re.findall(r"^import time:\s+\d+ \|\s+\d+ \| +(\S+)$", done.stderr, flags=re.MULTILINE)
    assert names, "no -X importtime output"
    return done.stdout, names


@pytest.mark.parametrize("args", [("--help",), ("publish", "--help")])
def test_help_imports_no_heavy_library(args):
    shown, modules = imported_by_entry_point(*args)
    assert "--help" in shown or "Usage" in shown
    assert heavy_modules(modules) == []


@pytest.mark.parametrize("args", [("--help",), ("publish", "--help"), ("calc", "--help"),
                                  ("datasets", "export", "--help"), ("perturb", "--help"), ("query", "--help"),
                                  ("--version",)])
def test_building_the_app_imports_no_heavy_library(tmp_path, args):
    code, modules = probe(tmp_path, *args)
    assert code == 0
    assert heavy_modules(modules) == []


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_an_eager_import_is_caught(tmp_path):
    """The broken variant: command modules importing the library when the app is built."""
    code, modules = probe(tmp_path, "--help", eager=True)
    assert code == 0
    caught = heavy_modules(modules)
    assert "crowdsafe.api" in caught and "polars" in caught and "numpy.linalg" in caught


def test_help_lists_every_command():
    shown, _ = imported_by_entry_point("--help")
    for command in ("check", "compare", "datasets", "calc", "experiment", "query", "ledger", "perturb",
                    "estimate", "anonymize", "publish", "attack", "schema", "report"):
        assert re.search(rf"^\W*{command}\b", shown, flags=re.MULTILINE), command


def test_bundled_names_in_help_are_the_bundled_datasets():
    from crowdsafe import datasets
    from crowdsafe.cli.datasets import BUNDLED_NAMES

    assert list(BUNDLED_NAMES) == datasets.names()


def test_the_lazy_exports_still_work():
    code = ("import sys, crowdsafe; assert 'numpy' not in sys.modules and 'polars' not in sys.modules; "
            "from crowdsafe import Randomness, publish, query, plan_publish, PlanRequest; "
            "from crowdsafe.randomness import Randomness as R; assert Randomness is R; "
            "from crowdsafe.api import publish as p; assert publish is p")
    subprocess.run([sys.executable, "-c", code], env=_env(), check=True, timeout=120)


def test_crowdsafe_dot_api_after_a_bare_import():
    """The README and docs write ``import crowdsafe`` then ``crowdsafe.api.anonymize(...)``: the
    package hands out its ``api`` submodule on first use, and ``import crowdsafe`` still loads
    neither the API nor Polars."""
    code = ("import sys, crowdsafe; assert 'crowdsafe.api' not in sys.modules and 'polars' not in sys.modules; "
            "assert 'api' in dir(crowdsafe); "
            "f = crowdsafe.api.ledger_report; import crowdsafe.api as a; "
            "assert crowdsafe.api is a and f is a.ledger_report and callable(crowdsafe.api.anonymize)")
    subprocess.run([sys.executable, "-c", code], env=_env(), check=True, timeout=120)


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_publish_does_not_import_pydantic(tmp_path):
    """Typer is pinned below 0.29, whose option coercion imports Pydantic and builds an adapter
    per option (issue 34: about 0.06-0.08 s of a publish). A Typer that does so again fails here."""
    code, modules = probe(tmp_path, "publish", "adult", "--plan-only")
    assert code == 0
    assert not [m for m in modules if m == "pydantic" or m.startswith("pydantic.")]


def test_the_api_imports_only_what_its_signatures_need():
    """``import crowdsafe.api`` loads the data layer (every command reads a table) and not the
    layers of the other commands: the privacy models (check), the utility metrics (compare), the
    ledger (publish, query) or the random generators (issue 34)."""
    code = ("import sys, crowdsafe.api; "
            "loaded = [m for m in ('crowdsafe.models', 'crowdsafe.metrics', 'crowdsafe.privacy.ledger', "
            "'crowdsafe.randomness', 'randomgen') if m in sys.modules]; "
            "assert not loaded, loaded; "
            "from crowdsafe import api, defaults; from crowdsafe.models import DEFAULT_THRESHOLD; "
            "from crowdsafe.privacy.ledger import DEFAULT; "
            "assert api.DEFAULT_LEDGER == DEFAULT == defaults.DEFAULT_LEDGER; "
            "assert api.DEFAULT_THRESHOLD == DEFAULT_THRESHOLD == defaults.DEFAULT_THRESHOLD; "
            "assert callable(api.set_budget) and callable(api.ledger_report) and callable(api.change_budget)")
    subprocess.run([sys.executable, "-c", code], env=_env(), check=True, timeout=120)


@pytest.mark.slow
def test_a_classic_anonymization_opens_no_ledger_and_draws_nothing(tmp_path):
    """``crowdsafe anonymize`` (Mondrian: deterministic, no guarantee, nothing charged) imports
    neither the ledger nor the random generators, nor Pydantic, nor the utility measures it does
    not print (the classifier's is slow to import)."""
    code, modules = probe(tmp_path, "anonymize", "adult", "--algorithm", "mondrian", "--k", "10", "--no-report",
                          "--out", str(tmp_path / "release.csv"))
    assert code == 0
    unwanted = ("crowdsafe.privacy.ledger", "crowdsafe.randomness", "randomgen", "pydantic",
                "crowdsafe.metrics.classifier", "crowdsafe.metrics.marginals", "crowdsafe.metrics.workload")
    assert not [m for m in modules if m in unwanted]
