"""The command line imports Matplotlib without its ``set()`` help text
(crowdsafe.report.matplotlib_import): the report's bytes are those of a plain import, only
docstrings differ, ``kwdoc`` is put back, and a library caller gets Matplotlib as it ships.

Each build runs in a fresh interpreter (Matplotlib is imported once per process)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import crowdsafe

SOURCE = str(Path(crowdsafe.__file__).resolve().parents[1])

PROBE = """
import hashlib, json, sys
from crowdsafe.report import matplotlib_import
matplotlib_import.LEAN_HELP_TEXT = sys.argv[2] == "lean"
from crowdsafe.report.build import build_report
page = build_report(sys.argv[1])
import matplotlib.artist, matplotlib.lines
print(json.dumps({"sha": hashlib.sha256(page.encode()).hexdigest(),
                  "kwdoc_back": matplotlib.artist.kwdoc.__module__ == "matplotlib.artist",
                  "line_doc": matplotlib.lines.Line2D.set.__doc__}))
"""


def build(release: Path, mode: str) -> dict:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SOURCE, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", PROBE, str(release), mode], env=env, check=True,
                          capture_output=True, text=True, timeout=300)
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_lean_import_gives_the_same_report(published):
    plain, lean = build(published, "plain"), build(published, "lean")
    assert plain["sha"] == lean["sha"]
    assert plain["kwdoc_back"] and lean["kwdoc_back"]
    assert "markeredgecolor" in plain["line_doc"]  # the library caller's Matplotlib is untouched
    assert "markeredgecolor" not in lean["line_doc"] and "left out" in lean["line_doc"]


def test_the_command_line_turns_it_on(tmp_path):
    probe = ("import sys\nfrom crowdsafe.report import matplotlib_import\nimport crowdsafe.cli as cli\n"
             "sys.exit = lambda code=0: print(matplotlib_import.LEAN_HELP_TEXT, code)\n"
             "sys.argv = ['crowdsafe', '--version']\n"
             "cli.run()\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([SOURCE, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "True 0", done.stdout + done.stderr
