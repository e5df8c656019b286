"""The app's package files and its place in the command line: the templates, the stylesheet and
the vendored htmx are package data (found through importlib.resources, not ignored by git, so
hatch puts them in the wheel); no template holds an inline script or style (the CSP forbids
them); ``crowdsafe app`` is registered, and no other command imports the app's libraries."""

from __future__ import annotations

import hashlib
import json
import re
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import pytest
from app_helpers import make_client

import crowdsafe
from crowdsafe.cli.webapp import parse_size

HTMX_VERSION = "2.0.11"
HTMX_SHA256 = "d6fdc75f204e6bdefa99b69bf1e6d4ac69b8a364f77929f45c13476b4000f717"
SOURCE = Path(crowdsafe.__file__).resolve().parents[1]
# The repository's own source tree: the installed package may sit in site-packages (CI installs a
# wheel), where git has nothing to say.
REPOSITORY_SOURCE = Path(__file__).resolve().parents[2] / "src"
APP_LIBRARIES = ("starlette", "uvicorn", "jinja2", "python_multipart", "crowdsafe.app")


def test_templates_and_static_files_are_package_data():
    package = files("crowdsafe.app")
    names = {"templates": {"base.html", "open.html", "schema.html", "plan.html", "release.html", "report.html",
                           "attack.html", "download.html"},
             "static": {"app.css", "htmx.min.js", "htmx.LICENSE", "htmx.VERSION", "favicon.svg"}}
    for folder, wanted in names.items():
        present = {entry.name for entry in (package / folder).iterdir()}
        assert wanted <= present, folder
    tracked = [str(p) for p in (REPOSITORY_SOURCE / "crowdsafe" / "app").rglob("*")
               if p.is_file() and "__pycache__" not in p.parts]
    assert len(tracked) >= sum(len(wanted) for wanted in names.values())
    ignored = subprocess.run(["git", "check-ignore", "--no-index", *tracked], cwd=REPOSITORY_SOURCE,
                             capture_output=True, text=True)
    assert ignored.returncode == 1, f"git ignores package files hatch would leave out: {ignored.stdout}"


def test_the_vendored_htmx_is_the_version_it_says():
    static = files("crowdsafe.app") / "static"
    script = (static / "htmx.min.js").read_bytes()
    assert hashlib.sha256(script).hexdigest() == HTMX_SHA256
    assert f'version:"{HTMX_VERSION}"' in script.decode()
    note = (static / "htmx.VERSION").read_text(encoding="utf-8")
    assert f"htmx {HTMX_VERSION}" in note and HTMX_SHA256 in note
    assert "Zero-Clause BSD" in (static / "htmx.LICENSE").read_text(encoding="utf-8")


def test_no_template_holds_an_inline_script_or_style():
    templates = files("crowdsafe.app") / "templates"
    for entry in templates.iterdir():
        text = entry.read_text(encoding="utf-8")
        assert not re.search(r"<script(?![^>]*\bsrc=)", text), entry.name
        assert "<style" not in text and not re.search(r"\sstyle=", text), entry.name
        assert not re.search(r"\son[a-z]+=|hx-on", text), entry.name
        assert "http://" not in text and "https://" not in text, entry.name  # no CDN, no other origin


def test_pages_load_no_other_origin(tmp_path):
    client, _ = make_client(tmp_path)
    client.get("/?token=test-token")
    page = client.get("/open").text
    for url in re.findall(r'(?:src|href)="([^"]+)"', page):
        assert url.startswith(("/", "#")) and not url.startswith("//"), url


@pytest.mark.parametrize("text, size", [("500M", 500 << 20), ("2G", 2 << 30), ("1.5GiB", 3 << 29), ("1024", 1024),
                                        ("10k", 10240)])
def test_upload_sizes(text, size):
    assert parse_size(text) == size


def test_a_bad_upload_size_is_refused():
    from crowdsafe.errors import ParameterError

    for text in ("lots", "-1", "0", "5X"):
        with pytest.raises(ParameterError):
            parse_size(text)


PROBE = """
import json, sys
from crowdsafe.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""


def _modules(tmp_path: Path, *args: str) -> tuple[int, list[str]]:
    out = tmp_path / "modules.json"
    subprocess.run([sys.executable, "-c", PROBE, str(out), *args], check=True, capture_output=True, text=True,
                   timeout=120, env={"PYTHONPATH": str(SOURCE), "PATH": "/usr/bin:/bin",
                                     "CROWDSAFE_LEDGER": str(tmp_path / "ledger.sqlite3")})
    found = json.loads(out.read_text())
    return found["code"], found["modules"]


@pytest.mark.parametrize("args", [("--help",), ("app", "--help"), ("publish", "adult", "--plan-only")])
@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_no_other_command_imports_the_app(tmp_path, args):
    code, modules = _modules(tmp_path, *args)
    assert code == 0
    assert not [m for m in modules if any(m == lib or m.startswith(lib + ".") for lib in APP_LIBRARIES)]


def test_the_app_command_is_registered():
    done = subprocess.run([sys.executable, "-m", "crowdsafe", "app", "--help"], capture_output=True, text=True,
                          timeout=120, env={"PYTHONPATH": str(SOURCE), "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0
    for option in ("--port", "--no-browser", "--max-upload", "--ledger", "--out-dir", "--seed"):
        assert option in done.stdout


def test_a_missing_file_is_named_as_a_file_not_a_bundled_name(tmp_path, capsys):
    """``crowdsafe app PATH`` with no file there: one line naming the file, exit 2, nothing served
    (it was read as an unknown bundled name)."""
    from crowdsafe.cli import main

    assert main(["app", str(tmp_path / "kunden.csv"), "--no-browser", "--port", "0"]) == 2
    err = capsys.readouterr().err
    assert err.strip().splitlines() == [f"crowdsafe: error: no file at {tmp_path / 'kunden.csv'}"]
