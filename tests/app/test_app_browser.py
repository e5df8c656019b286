"""The app in a real browser: ``crowdsafe app --port 0 --no-browser`` run as a process, driven by
Debian's Chromium through Playwright (as tests/report/test_report_browser.py launches it).

The whole path, open -> schema -> plan -> publish -> report -> attack -> download, on the bundled
``people`` table (twice, so the attack reads an earlier release from the ledger) and on an
uploaded German table (``;``-separated, decimal commas). Every page loads without a console
error (a CSP violation is one), a screenshot of each step is not blank, the files downloaded are
the bytes written beside the release, and after Ctrl+C the private folder is gone and standard
error holds no value of the data. ``CROWDSAFE_APP_SCREENSHOTS=docs/app`` keeps the screenshots.
"""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import polars as pl
import pytest
from app_helpers import german_table

import crowdsafe
from report.test_report_browser import pixels

SCREENSHOT_ENV = "CROWDSAFE_APP_SCREENSHOTS"
#: the plan page's ledger panel, once htmx has loaded it
LEDGER_SHOWN = "table.budget, section.custodian p:has-text('ledger')"
SOURCE = str(Path(crowdsafe.__file__).resolve().parents[1])


class Server:
    """``crowdsafe app`` as a process: its URL (the first line it prints) and its folders."""

    def __init__(self, root: Path, *data: str, ctrl_c: Any = signal.SIG_DFL) -> None:
        """``ctrl_c``: SIGINT's disposition in the app's process (a shell starts a command with it
        at its default, whatever this test process inherited: pytest's workers may ignore it)."""
        self.root = root
        self.tmp = root / "tmp"
        self.tmp.mkdir(parents=True)
        self.out = root / "releases"
        env = {**os.environ, "TMPDIR": str(self.tmp), "PYTHONPATH": os.pathsep.join([SOURCE, os.environ.get(
            "PYTHONPATH", "")]), "CROWDSAFE_LEDGER": str(root / "ledger.sqlite3")}
        self.process = subprocess.Popen(
            [sys.executable, "-m", "crowdsafe", "app", *data, "--port", "0", "--no-browser", "--seed", "7",
             "--out-dir", str(self.out), "--max-upload", "5M"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=root,
            preexec_fn=lambda: signal.signal(signal.SIGINT, ctrl_c))
        assert self.process.stdout is not None
        ready, _, _ = select.select([self.process.stdout], [], [], 60)
        assert ready, "crowdsafe app printed no URL within 60 s"
        self.url = self.process.stdout.readline().strip()
        assert self.url.startswith("http://127.0.0.1:") and "?token=" in self.url, self.url
        self.base = "http://" + urlsplit(self.url).netloc

    def stop(self, signum: int = signal.SIGINT) -> tuple[int, str]:
        """Ctrl+C (or another signal); the exit status and what it printed on standard error."""
        self.process.send_signal(signum)
        try:
            _, err = self.process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, err = self.process.communicate()
        return self.process.returncode, err


class Walk:
    """One browser tab through the app: every console error collected, a screenshot per step."""

    def __init__(self, browser: Any, shots: Path, prefix: str) -> None:
        self.context = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        self.page = self.context.new_page()
        self.errors: list[str] = []
        self.page.on("console", lambda m: self.errors.append(f"console {m.type}: {m.text}")
                     if m.type in ("error", "warning") else None)
        self.page.on("pageerror", lambda e: self.errors.append(f"page error: {e}"))
        self.shots, self.prefix = shots, prefix

    def shot(self, name: str) -> Path:
        """A full-page screenshot, checked not blank, kept under ``shots`` (and in
        $CROWDSAFE_APP_SCREENSHOTS when set)."""
        self.page.wait_for_load_state("networkidle")
        png = self.page.screenshot(full_page=True)
        grey = pixels(png)
        assert grey.std() > 10 and (grey < 128).mean() > 0.005, f"{name}: the screenshot looks blank"
        path = self.shots / f"{self.prefix}-{name}.png"
        path.write_bytes(png)
        keep = os.environ.get(SCREENSHOT_ENV)
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            shutil.copyfile(path, Path(keep) / path.name)
        return path

    def role(self, column: str, role: str) -> None:
        self.page.locator(f'article[data-column="{column}"] select').select_option(role)

    def role_of(self, column: str) -> str:
        return self.page.locator(f'article[data-column="{column}"] select').input_value()

    def confirm_all(self) -> None:
        for box in self.page.locator(".marker input[type=checkbox]").all():
            box.check()

    def plan(self, epsilon: str, budget: tuple[str, str] | None = None) -> None:
        page = self.page
        page.wait_for_selector("#plan-k")
        # htmx must have processed the form before ε changes, or the change sends nothing (a busy
        # machine showed the race): it processes the page in document order, the form before the
        # ledger's panel, whose request it sends as it processes it, so once that panel is in, the
        # form listens (waiting for the network to be idle instead cost 0.5 s more each time)
        page.wait_for_selector(LEDGER_SHOWN)
        before = page.locator("#plan-k").inner_text()
        assert page.input_value("#epsilon") != epsilon, "the plan would not change"
        page.fill("#epsilon", epsilon)  # k, β and ε1 follow (htmx asks the planner)
        page.wait_for_function("b => document.querySelector('#plan-k') && "
                               "document.querySelector('#plan-k').innerText !== b", arg=before, timeout=60_000)
        if budget is not None:
            page.locator("summary", has_text="Total budget").click()
            page.fill("#budget_epsilon", budget[0])
            page.fill("#budget_delta", budget[1])
        page.wait_for_selector(LEDGER_SHOWN)

    def publish(self) -> None:
        self.page.get_by_role("button", name="Publish the release").click()
        self.page.wait_for_selector(".verdict", timeout=60_000)

    def report(self) -> None:
        self.page.get_by_role("link", name="See the report").click()
        frame = self.page.frame_locator("iframe.report")
        assert "Release report" in frame.locator("h1").inner_text(timeout=10_000)

    def attack(self, sensitive: str) -> str:
        self.page.get_by_role("link", name="Attack the release").click()
        self.page.select_option("#sensitive", sensitive)
        self.page.get_by_role("button", name="Run the attack").click()
        self.page.wait_for_selector("#bound-title")
        return self.page.locator("main").inner_text()

    def download(self, folder: Path) -> None:
        """Each file downloaded equals the file written beside the release, byte for byte."""
        self.page.get_by_role("link", name="Download the release").click()
        self.page.wait_for_selector(".downloads")
        written = {p.name: p for p in folder.rglob("*") if p.is_file()}
        for kind in ("release", "certificate", "report"):
            with self.page.expect_download() as info:
                self.page.locator(f'a[href$="/file/{kind}"]').click()
            download = info.value
            got = Path(download.path()).read_bytes()
            assert got == written[download.suggested_filename].read_bytes(), kind


def newest_release(out: Path) -> Path:
    return max((p for p in out.iterdir() if p.is_dir()), key=lambda p: p.stat().st_mtime_ns)


def check_stopped(server: Server, values: list[str]) -> None:
    code, err = server.stop()
    assert code in (0, 130), err
    assert not list(server.tmp.glob("crowdsafe-app-*")), "the private folder outlived the app"
    leaked = [v for v in values if v and v in err]
    assert not leaked, f"standard error holds values of the data: {leaked}"


@pytest.mark.slow
def test_the_whole_path_on_people(browser, tmp_path):
    server = Server(tmp_path)
    walk = Walk(browser, tmp_path, "people")
    try:
        walk.page.goto(server.url)
        assert walk.page.url == f"{server.base}/open"  # the token is spent and gone from the URL
        walk.shot("1-open")
        walk.page.get_by_role("button", name="Open this table").click()
        walk.page.wait_for_url("**/schema")
        walk.role("charge", "sensitive")
        walk.page.locator('article[data-column="zip"] summary').click()
        walk.shot("2-schema")
        walk.confirm_all()
        walk.page.get_by_role("button", name="Save the schema and plan the release").click()
        walk.page.wait_for_url("**/plan")
        walk.plan("2", budget=("10", "1e-5"))
        walk.shot("3-plan")
        walk.publish()
        assert "Fit for release" not in walk.page.locator(".verdict").inner_text()  # seeded: NOT fit
        walk.page.get_by_role("link", name="Plan").click()  # a second release: an earlier one for the attack
        walk.plan("1")
        walk.publish()
        walk.shot("4-publish")
        walk.report()
        walk.shot("5-report")
        text = walk.attack("charge")
        assert "earlier release people.csv" in text
        assert "Attacked: this release (people.csv), ledger entry #1 (people.csv)." in text
        walk.shot("6-attack")
        walk.download(newest_release(server.out))
        walk.shot("7-download")
        assert walk.errors == []
    finally:
        walk.context.close()
        from crowdsafe.datasets import people

        check_stopped(server, [str(v) for v in people(5).row(0) if len(str(v)) > 3])


@pytest.mark.slow
def test_the_whole_path_on_an_uploaded_german_table(browser, tmp_path):
    table = german_table(tmp_path / "kunden.csv")
    server = Server(tmp_path)
    walk = Walk(browser, tmp_path, "german")
    try:
        walk.page.goto(server.url)
        walk.page.set_input_files("#file", str(table))
        walk.page.get_by_role("button", name="Open this file").click()
        walk.page.wait_for_url("**/schema")
        # the draft, as a new user meets it: names, birth date, e-mail, phone, customer number and
        # street are identifiers; PLZ is a quasi-identifier with a mask hierarchy; Diagnose is
        # flagged as likely sensitive
        for column in ("Kundennummer", "Vorname", "Nachname", "Geburtsdatum", "E-Mail", "Telefon", "Straße"):
            assert walk.role_of(column) == "identifier", column
        assert walk.role_of("PLZ") == "quasi-identifier"
        assert "Hierarchy: mask" in walk.page.locator('article[data-column="PLZ"]').inner_text()
        assert "Likely sensitive" in walk.page.locator('article[data-column="Diagnose"]').inner_text()
        for column in ("PLZ", "Geschlecht", "Alter"):
            walk.role(column, "quasi-identifier")
        for column in ("Ort", "Beruf", "Einkommen"):
            walk.role(column, "insensitive")
        walk.role("Diagnose", "sensitive")
        walk.confirm_all()
        walk.page.get_by_role("button", name="Save only").click()
        walk.page.wait_for_url("**/schema?saved=1")
        walk.shot("2-schema")
        walk.page.get_by_role("button", name="Save the schema and plan the release").click()
        walk.plan("0.5")
        walk.shot("3-plan")
        walk.publish()
        walk.shot("4-publish")
        released = pl.read_csv(newest_release(server.out) / "kunden.csv", separator=",")
        assert set(released.columns) == {"PLZ", "Geschlecht", "Alter", "Diagnose"}
        walk.report()
        walk.shot("5-report")
        walk.attack("Diagnose")
        walk.shot("6-attack")
        walk.download(newest_release(server.out))
        assert walk.errors == []
    finally:
        walk.context.close()
        first = pl.read_csv(table, separator=";", infer_schema=False).row(0, named=True)
        check_stopped(server, [first[c] for c in ("Nachname", "E-Mail", "Telefon", "Straße")])


@pytest.mark.slow
def test_the_server_prints_its_url_first_and_cleans_up_on_ctrl_c(tmp_path):
    """With DATA the first line is the one-time URL of step 2; the private folder is there while
    it serves, mode 0700, and gone after SIGINT."""
    import httpx

    table = german_table(tmp_path / "kunden.csv")
    server = Server(tmp_path, str(table))
    started = time.monotonic()
    assert server.url.startswith(f"{server.base}/schema?token=")
    with httpx.Client(follow_redirects=True, timeout=30) as client:
        page = client.get(server.url)
        assert page.status_code == 200 and str(page.url) == f"{server.base}/schema"
        assert 'data-column="Diagnose"' in page.text
        assert httpx.get(f"{server.base}/schema", timeout=30).status_code == 403  # no cookie
    folders = list(server.tmp.glob("crowdsafe-app-*"))
    assert len(folders) == 1 and folders[0].stat().st_mode & 0o777 == 0o700
    code, err = server.stop()
    assert time.monotonic() - started < 30
    assert code == 130, err
    assert err.strip().splitlines()[-1].startswith("crowdsafe: interrupted; the app stopped"), err
    assert not folders[0].exists()


@pytest.mark.slow
def test_sigterm_stops_the_server_as_ctrl_c_does(tmp_path):
    """SIGTERM (docker stop, systemd) removes the private folder and says so in one line, status
    143 (uvicorn re-raised it once stopped, and the default action ended the process before the
    folder was removed)."""
    server = Server(tmp_path)
    folders = list(server.tmp.glob("crowdsafe-app-*"))
    assert len(folders) == 1
    code, err = server.stop(signal.SIGTERM)
    assert code == 143, err
    assert err.strip().splitlines()[-1].startswith("crowdsafe: stopped by SIGTERM;"), err
    assert "Traceback" not in err and "Exception ignored" not in err, err  # (test_app_signal_hold)
    assert not folders[0].exists()


@pytest.mark.slow
def test_an_app_started_with_ctrl_c_ignored_keeps_serving_through_it(tmp_path):
    """A background job of a script starts with SIGINT ignored: the app keeps it ignored (it used
    to stop on it, silently and with status 0: uvicorn's handler took it, then re-raised it to the
    ignored disposition), and SIGTERM still stops it with its line."""
    import httpx

    server = Server(tmp_path, ctrl_c=signal.SIG_IGN)
    with httpx.Client(follow_redirects=True, timeout=30) as client:
        assert client.get(server.url).status_code == 200  # serving: uvicorn's handlers are in place
        server.process.send_signal(signal.SIGINT)
        time.sleep(1.5)
        assert server.process.poll() is None
        assert client.get(f"{server.base}/").status_code == 200
    code, err = server.stop(signal.SIGTERM)
    assert code == 143, err
    assert err.strip().splitlines()[-1].startswith("crowdsafe: stopped by SIGTERM;"), err
