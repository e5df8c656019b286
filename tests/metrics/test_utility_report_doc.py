"""``help()`` of what ``compare`` returns says what it is and that it is custodian-only (found by an
API sweep, 2026-11-30: ``UtilityReport`` had no docstring, so ``help(report)`` showed the
dataclass's generated signature alone, with no word that its figures are exact facts about the
data)."""

from __future__ import annotations

from crowdsafe.metrics.report import UtilityReport


def test_the_utility_report_says_it_is_custodian_only():
    doc = UtilityReport.__doc__ or ""
    assert not doc.startswith("UtilityReport(")  # the dataclass's generated text
    assert "CUSTODIAN ONLY" in doc and "compare" in doc
