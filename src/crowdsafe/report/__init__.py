"""The release report: a self-contained HTML page beside every release (``<stem>.report.html``).

It says, for a board or a reader of the release, what guarantee the table carries in plain
words, the plan, what was generalized, the class sizes and the published distributions, utility
and risk measured on the release. It is public like the release, so it is computed from the
release file and the public fields of its certificate only (:mod:`crowdsafe.report.content`),
plus, when asked, noisy DP histograms of the original data charged to the ledger
(:mod:`crowdsafe.report.before`). ``crowdsafe report RELEASE`` rebuilds it byte for byte.

An α-β view written by ``perturb`` gets its own report (:mod:`crowdsafe.report.view_content`):
the (d, γ) guarantee in words, the plan, and per attribute the view's counts and the unbiased
estimates of the data's counts, computed from the view and its certificate's public fields only.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from crowdsafe.report.build import (
        BEFORE_REPORT_SUFFIX,
        REPORT_SUFFIX,
        ReportWarning,
        build_report,
        read_release,
        report_path,
        write_report,
        write_reports,
    )

__all__ = ["BEFORE_REPORT_SUFFIX", "REPORT_SUFFIX", "ReportWarning", "build_report", "read_release", "report_path",
           "write_report", "write_reports"]


def __getattr__(name: str) -> object:
    """The names of :mod:`crowdsafe.report.build`, imported on first use (Polars and NumPy come with
    it), so that importing the package costs nothing."""
    if name in __all__:
        from crowdsafe.report import build

        return getattr(build, name)
    raise AttributeError(f"module 'crowdsafe.report' has no attribute {name!r}")
