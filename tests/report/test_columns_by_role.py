"""The report's count of published columns by role: a column the schema declares sensitive is
counted as sensitive, not as a quasi-identifier, and the page says that the guarantee groups it
as one all the same (the certificate's parameters.sensitive, from the schema: public)."""

from __future__ import annotations

import json
import re
from html import unescape
from pathlib import Path

from crowdsafe import api
from crowdsafe.report import build_report
from crowdsafe.report.content import columns_words
from report_tables import QI, small_table

SENSITIVE = "sex"


def _subtitle(page: str) -> str:
    return unescape(re.search(r'<header><h1>.*?</h1><p class="note">(.*?)</p>', page).group(1))


def test_a_sensitive_column_is_counted_as_sensitive_and_grouped_all_the_same(tmp_path: Path):
    qis = [c for c in QI if c != SENSITIVE]
    small_table().write_parquet(tmp_path / "data.parquet")
    api.publish(str(tmp_path / "data.parquet"), epsilon=1.0, delta=1e-6, qi=qis, sensitive=[SENSITIVE], seed=7,
                ledger=None, out=str(tmp_path / "r.csv"))
    certificate = json.loads((tmp_path / "r.certificate.json").read_text(encoding="utf-8"))
    assert set(certificate["parameters"]["quasi_identifiers"]) == set(QI)  # the guarantee groups on every column
    assert certificate["parameters"]["sensitive"] == [SENSITIVE]
    subtitle = _subtitle(build_report(tmp_path / "r.csv"))
    assert (f"{len(QI)} columns: {len(qis)} quasi-identifiers and 1 sensitive, all {len(QI)} grouped as "
            "quasi-identifiers") in subtitle
    assert f"({len(QI)} quasi-identifiers)" not in subtitle


def test_columns_are_counted_by_role():
    assert columns_words(("a", "b"), ("a", "b")) == "2 columns, all quasi-identifiers"
    assert columns_words(("a",), ("a",)) == "1 column, a quasi-identifier"
    assert columns_words(("a", "b", "o"), ("a", "b")) == "3 columns: 2 quasi-identifiers and 1 other"
    assert columns_words(("a", "s"), ("a", "s"), ("s",)) == ("2 columns: 1 quasi-identifier and 1 sensitive, "
                                                             "all 2 grouped as quasi-identifiers")
    assert columns_words(("s",), ("s",), ("s",)) == "1 column: 1 sensitive, grouped as a quasi-identifier"
    assert columns_words(("a", "s", "o"), ("a",), ("s",)) == "3 columns: 1 quasi-identifier, 1 sensitive and 1 other"
    assert columns_words((), ()) == "0 columns"


def test_a_classic_release_counts_its_constraints_sensitive_attribute(tmp_path: Path):
    """A classic release's certificate names its ℓ-diversity attribute as one string (not a list):
    its report is built, and counts it as sensitive (refused as 'must be a list' on 2026-11-30)."""
    frame = small_table().head(400)
    qis = [c for c in QI if c != SENSITIVE]
    api.anonymize(frame, algorithm="mondrian", k=5, qi=qis, sensitive=SENSITIVE, l=1.2, out=str(tmp_path / "c.csv"))
    certificate = json.loads((tmp_path / "c.certificate.json").read_text(encoding="utf-8"))
    assert certificate["parameters"]["sensitive"] == SENSITIVE
    subtitle = _subtitle(build_report(tmp_path / "c.csv"))
    assert f"{len(QI)} columns: {len(qis)} quasi-identifiers and 1 sensitive" in subtitle
