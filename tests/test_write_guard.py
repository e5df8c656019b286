"""``Release.write`` and ``View.write``, documented for Python (docs/report.md), check what they
write as ``anonymize(out=...)`` and ``perturb(out=...)`` do (found by an API sweep, 2026-11-30):
``api.anonymize("people.csv", k=5).write("people.csv")`` replaced the data the release was made
from, silently; any file crowdsafe did not write was replaced. Now such a file is replaced only
with ``force=True``, and a file crowdsafe wrote is replaced as before."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError

FRAME = pl.DataFrame({"age": [30, 31, 32, 40, 41, 42, 50, 51] * 3, "sex": ["F", "M"] * 12})


def test_a_release_is_not_written_over_its_data(tmp_path):
    data = tmp_path / "people.csv"
    FRAME.write_csv(data)
    before = data.read_bytes()
    release = api.anonymize(data, k=2, report=False)
    with pytest.raises(ParameterError, match="exists and crowdsafe did not write it: give force=True"):
        release.write(data, report=False)
    assert data.read_bytes() == before and not (tmp_path / "people.certificate.json").exists()
    out = tmp_path / "release.csv"
    release.write(out, report=False)
    release.write(out, report=False)  # crowdsafe's own file: replaced without force
    release.write(data, report=False, force=True)
    assert data.read_bytes() != before


def test_a_view_is_not_written_over_a_foreign_file(tmp_path):
    foreign = tmp_path / "mine.csv"
    foreign.write_text("x\n1\n", encoding="utf-8")
    view = api.perturb(FRAME, gamma=0.5, d=0.1, exploratory=True, seed=1, ledger=None).view
    with pytest.raises(ParameterError, match="exists and crowdsafe did not write it"):
        view.write(foreign)
    assert foreign.read_text(encoding="utf-8") == "x\n1\n"
    view.write(foreign, force=True)
    assert foreign.read_text(encoding="utf-8") != "x\n1\n"


def test_the_functions_that_write_still_honour_force(tmp_path):
    for name in ("release.csv", "view.csv"):
        (tmp_path / name).write_text("x\n1\n", encoding="utf-8")
    api.anonymize(FRAME, k=2, out=tmp_path / "release.csv", force=True, report=False)
    api.perturb(FRAME, gamma=0.5, d=0.1, exploratory=True, seed=1, out=tmp_path / "view.csv", force=True,
                report=False, ledger=None)
    for name in ("release.csv", "view.csv"):
        assert (tmp_path / name).read_text(encoding="utf-8") != "x\n1\n"
