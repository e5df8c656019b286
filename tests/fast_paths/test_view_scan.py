"""The view report's counts scanned lazily (crowdsafe.report.view_scan, fast path) against the
view read whole and swept by the estimator (view_content.public_view + equality_estimates,
reference twin): the same report content and the same page, byte for byte.

The threshold is the report's ALL_VALUES (40): an attribute of at most 40 domain values shows
each value, a larger one is grouped; attributes of 39, 40 and 41 domain values are run, as an
ordered (integer) domain and as text, in CSV and Parquet views. Refusals (a value outside the
domain, a row count other than the certificate's, a missing column) are the twin's.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import InputError
from crowdsafe.report import view_content, view_html
from crowdsafe.report.view_content import ALL_VALUES


def perturbed(folder: Path, size: int, suffix: str, seed: int = 3) -> Path:
    rng = np.random.default_rng(seed + size)
    labels = [f"v{i:02d}" for i in range(size)]
    frame = pl.DataFrame({"level": rng.integers(0, size, 300), "label": rng.choice(labels, 300),
                          "sex": rng.choice(["F", "M"], 300)})
    out = folder / f"view-{size}{suffix}"
    api.perturb(frame, domains={"level": list(range(size)), "label": labels, "sex": ["F", "M"]}, max_rows=1000,
                c=0.2, gamma=0.3, out=str(out), seed=seed, report=False, missing="drop", ledger=None)  # sizes as listed
    return out


def both_pages(view: Path) -> tuple[str, str, object, object]:
    certificate = json.loads(view.with_name(view.name.split(".")[0] + ".certificate.json").read_text("utf-8"))
    public = view_content.public_view_certificate(certificate)
    scanned = view_content.view_report_content(view_content.scanned_view(view, public), public, view.name)
    whole = view_content.view_report_content(view_content.public_view(view, public), public, view.name)
    return view_html.render_view_html(scanned), view_html.render_view_html(whole), scanned, whole


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
@pytest.mark.parametrize("size", [ALL_VALUES - 1, ALL_VALUES, ALL_VALUES + 1])
def test_scanned_and_whole_give_the_same_page(tmp_path, size, suffix):
    scanned_page, whole_page, scanned, whole = both_pages(perturbed(tmp_path, size, suffix))
    assert scanned == whole
    assert scanned_page == whole_page
    grouped = {a.name: a.grouped for a in scanned.attributes}
    assert (grouped["level"] is None) == (size <= ALL_VALUES)
    assert (grouped["label"] is None) == (size <= ALL_VALUES)


def test_refusals_are_the_twins(tmp_path):
    view = perturbed(tmp_path, 12, ".csv")
    certificate = json.loads(view.with_name("view-12.certificate.json").read_text("utf-8"))
    public = view_content.public_view_certificate(certificate)
    text = view.read_text("utf-8").splitlines()
    cases = {
        "outside": "\n".join([text[0], *text[1:-1], text[-1].replace("F", "X").replace("M", "X")]) + "\n",
        "rows": "\n".join(text[:-1]) + "\n",
        "column": "\n".join(",".join(line.split(",")[:-1]) for line in text) + "\n",
    }
    for name, body in cases.items():
        broken = tmp_path / f"{name}.csv"
        broken.write_text(body, encoding="utf-8")
        with pytest.raises(InputError) as fast:
            view_content.scanned_view(broken, public)
        with pytest.raises(InputError) as reference:
            view_content.public_view(broken, public)
        assert str(fast.value) == str(reference.value), name
    with pytest.raises(InputError) as fast:
        view_content.scanned_view(tmp_path / "absent.csv", public)
    with pytest.raises(InputError) as reference:
        view_content.public_view(tmp_path / "absent.csv", public)
    assert str(fast.value) == str(reference.value)
