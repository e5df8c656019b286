"""The release report: a self-contained HTML page beside every release (``<stem>.report.html``).

It says, for a board or a reader of the release, what guarantee the table carries in plain
words, the plan, what was generalized, the class sizes and the published distributions, utility
and risk measured on the release. It is public like the release, so it is computed from the
release file and the public fields of its certificate only (:mod:`crowdsafe.report.content`),
plus, when asked, noisy DP histograms of the original data charged to the ledger
(:mod:`crowdsafe.report.before`). ``crowdsafe report RELEASE`` rebuilds it byte for byte.
"""

from crowdsafe.report.build import REPORT_SUFFIX, build_report, read_release, report_path, write_report, write_reports

__all__ = ["REPORT_SUFFIX", "build_report", "read_release", "report_path", "write_report", "write_reports"]
