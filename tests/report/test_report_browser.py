"""The report in a real browser: Debian's Chromium, headless, driven by Playwright.

It loads the report file with no console error and no page error, the class-size plot and the
distribution plots are SVG elements with a non-zero size, and a screenshot of each plot region is
not blank (its pixels vary). The browser is the system's (``.ci/run`` installs Debian's chromium
package when it is missing); Playwright never downloads one. A missing browser or Playwright is
a failure, not a skip: an unchecked report is a defect.
"""

from __future__ import annotations

import io
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from crowdsafe.report import report_path

#: Set to a folder to keep the full-page screenshot of the published report there.
SCREENSHOT_DIR_ENV = "CROWDSAFE_REPORT_SCREENSHOTS"


def chromium_path() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.fail("Chromium is not installed: the report's browser tests need Debian's chromium package "
                "(apt-get install -y chromium; .ci/run installs it when missing)", pytrace=False)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("Playwright is not installed: pip install '.[test]' brings it (no browser download needed)",
                    pytrace=False)
    executable = chromium_path()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, headless=True,
                                              args=["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"])
        try:
            yield launched
        finally:
            launched.close()


def load(browser: Any, page_file: Path) -> tuple[Any, list[str]]:
    """Open ``page_file``; return the page and every console error and page error."""
    errors: list[str] = []
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    page.on("console", lambda message: errors.append(f"console {message.type}: {message.text}")
            if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: errors.append(f"page error: {error}"))
    page.on("requestfailed", lambda request: errors.append(f"request failed: {request.url}"))
    requests: list[str] = []
    page.on("request", lambda request: requests.append(request.url))
    page.goto(page_file.resolve().as_uri(), wait_until="load")
    outside = [url for url in requests if not url.startswith(("file:", "data:"))]
    errors.extend(f"external request: {url}" for url in outside)
    return page, errors


def pixels(png: bytes) -> np.ndarray:
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(png)).convert("L"), dtype=np.float64)


def check_plot(page: Any, selector: str) -> np.ndarray:
    """The plot at ``selector`` is an SVG with a non-zero box whose screenshot is not blank."""
    svg = page.locator(f"{selector} svg")
    assert svg.count() == 1, f"no SVG plot in {selector}"
    box = svg.bounding_box()
    assert box is not None and box["width"] > 100 and box["height"] > 50, f"{selector} is not drawn: {box}"
    drawn = svg.evaluate("e => e.querySelectorAll('path, rect, line, use, text').length")
    assert drawn > 10, f"{selector} holds {drawn} shapes"
    shot = pixels(svg.screenshot())
    assert shot.std() > 10, f"{selector} looks blank (pixel std {shot.std():.1f})"
    assert (shot < 128).mean() > 0.005, f"{selector} has almost no dark pixels"
    return shot


@pytest.mark.slow
def test_the_published_report_renders_without_errors(browser, published):
    page, errors = load(browser, report_path(published))
    try:
        assert errors == []
        assert page.title() == "Release report: r.csv"
        check_plot(page, "#plot-class-sizes")
        distributions = page.locator("figure.distribution")
        assert distributions.count() >= 1
        for i in range(distributions.count()):
            check_plot(page, f"#plot-distribution-{i}")
        assert page.locator("#guarantee").inner_text().count("NOT fit for release") == 1
        full = page.screenshot(full_page=True)
        assert pixels(full).std() > 10
        keep = os.environ.get(SCREENSHOT_DIR_ENV)
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / "report-screenshot.png").write_bytes(full)
    finally:
        page.close()


@pytest.mark.slow
def test_a_classic_report_renders_without_errors(browser, tmp_path):
    from crowdsafe import api
    from report_tables import small_table

    api.anonymize(small_table(600), algorithm="mondrian", k=5, out=tmp_path / "a.csv")
    page, errors = load(browser, tmp_path / "a.report.html")
    try:
        assert errors == []
        assert "NO formal privacy guarantee" in page.locator("#guarantee").inner_text()
        check_plot(page, "#plot-class-sizes")
        check_plot(page, "#plot-distribution-0")
    finally:
        page.close()


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_check_fails_on_a_blank_plot(browser, tmp_path):
    """The pixel check can fail: an empty SVG of the same size is caught."""
    blank = tmp_path / "blank.html"
    blank.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title></head><body>'
                     '<figure id="plot-class-sizes"><svg width="500" height="300"></svg></figure></body></html>',
                     encoding="utf-8")
    page, errors = load(browser, blank)
    try:
        assert errors == []
        with pytest.raises(AssertionError):
            check_plot(page, "#plot-class-sizes")
    finally:
        page.close()


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_a_page_error_is_seen(browser, tmp_path):
    """The error collection works: a page with a failing script reports it."""
    broken = tmp_path / "broken.html"
    broken.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><title>x</title></head><body>'
                      "<script>undefinedFunction()</script></body></html>", encoding="utf-8")
    page, errors = load(browser, broken)
    page.close()
    assert any("undefinedFunction" in e for e in errors)


@pytest.mark.slow
def test_a_view_report_renders_without_errors(browser, tmp_path):
    """The report of an α-β view: no error, every attribute's plot drawn, the guarantee in words."""
    from test_view_report import perturb_to

    out = tmp_path / "view.csv"
    perturb_to(out)
    page, errors = load(browser, report_path(out))
    try:
        assert errors == []
        assert page.title() == "View report: view.csv"
        guarantee = page.locator("#guarantee").inner_text()
        assert "(d, γ)-private" in guarantee and "NOT fit for release" in guarantee
        assert "NOT counts of the data" in page.locator("#view").inner_text()
        distributions = page.locator("figure.distribution")
        assert distributions.count() == 4
        for i in range(distributions.count()):
            check_plot(page, f"#plot-distribution-{i}")
        assert page.locator("#distributions table").count() == 4
    finally:
        page.close()


@pytest.mark.slow
def test_a_report_with_before_distributions_renders_its_noise_marks(browser, tmp_path):
    """The before panels of Adult at ε = 0.1 (the declared domains, so some bars are within the
    noise of 0): no error, every plot drawn, the hatch painted, the interval in the caption."""
    from crowdsafe import api
    from crowdsafe.report.before import before_distributions
    from crowdsafe.report.build import build_report, release_content

    published = tmp_path / "adult.csv"
    api.publish("adult", epsilon=0.5, delta=1e-6, seed=1, ledger=None, out=str(published))
    columns = release_content(published).quasi_identifiers
    found = before_distributions("adult", columns, 0.1, ledger=None, seed=3)
    page_file = tmp_path / "before.html"
    page_file.write_text(build_report(published, found), encoding="utf-8")
    page, errors = load(browser, page_file)
    try:
        assert errors == []
        figures = page.locator("figure.distribution")
        assert figures.count() == len(columns)
        for i in range(figures.count()):
            check_plot(page, f"#plot-distribution-{i}")
        hatched = page.locator("figure.distribution svg rect[fill^='url(#within-noise-']")
        assert hatched.count() >= 1 and hatched.first.bounding_box() is not None
        assert "with 95% probability" in page.locator("#plot-distribution-0 figcaption").inner_text()
        keep = os.environ.get(SCREENSHOT_DIR_ENV)
        if keep:
            Path(keep).mkdir(parents=True, exist_ok=True)
            (Path(keep) / "report-before-screenshot.png").write_bytes(page.screenshot(full_page=True))
    finally:
        page.close()
