"""The console script's process: the collector tuned for start-up, and nothing else changed."""

from __future__ import annotations

import gc
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import crowdsafe.cli
from crowdsafe import console


def test_the_command_line_runs_with_the_raised_thresholds(monkeypatch):
    seen = []
    monkeypatch.setattr(crowdsafe.cli, "run", lambda: seen.append(gc.get_threshold()))
    before = gc.get_threshold()
    try:
        console.run()
    finally:
        gc.set_threshold(*before)
    assert seen == [console.GC_THRESHOLDS]
    assert gc.isenabled()


@pytest.mark.parametrize("module", ["crowdsafe", "crowdsafe.cli", "crowdsafe.api"])
def test_importing_the_library_leaves_the_collector_alone(module):
    code = f"import gc; before = gc.get_threshold(); import {module}; print(gc.get_threshold() == before)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"


def test_python_dash_m_and_the_console_script_go_through_the_console_entry():
    code = ("import gc, runpy, sys\ncalls = []\nreal = gc.set_threshold\n"
            "gc.set_threshold = lambda *a: (calls.append(a), real(*a))\nsys.argv = ['crowdsafe', '--version']\n"
            "try:\n    runpy.run_module('crowdsafe', run_name='__main__')\nexcept SystemExit:\n    pass\n"
            "print(calls)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip().splitlines()[-1] == str([console.GC_THRESHOLDS])
    project = tomllib.loads((Path(__file__).parents[2] / "pyproject.toml").read_text())
    assert project["project"]["scripts"]["crowdsafe"] == "crowdsafe.console:run"
