"""The "before" panels of a report (``crowdsafe report R --before DATA``) show noisy DP
histograms as what they are (sweep finding: at ε = 0.1 native-country's bars were chosen by their
noisy counts, a true count of 1 drawn 5th largest, "other" summed to −1,126 and drawn as 0%, and
no noise scale was given). The bars are chosen and ordered by public information only, each cell
is clipped at 0 before it is summed into a bar, the caption gives the answer's own 95% interval,
and a bar within that interval of 0 is hatched and named in the text alternative."""

from __future__ import annotations

import re
from html import unescape

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.report import plots
from crowdsafe.report.before_rows import BeforeBar, before_bars, interval_text
from crowdsafe.report.content import TOP_VALUES, BeforeDistribution, report_content
from crowdsafe.report.html import render_html
from report_tables import QI, publish_small, small_table, write_inputs

LABELS = [f"c{i:02d}" for i in range(30)]
FRAME = pl.DataFrame({"job": ["c03", "c03", "c07", "c29"] * 3})
CERTIFICATE = {"guarantee": "dps", "epsilon": 1.0, "delta": 1e-6, "theorem": "Theorem 6",
               "parameters": {"k": 3, "quasi_identifiers": ["job"]},
               "randomness": {"source": "os", "fit_for_release": True}, "fit_for_release": True,
               "unfit_reasons": []}


def before(counts, labels=LABELS, interval=(-270.0, 270.0)) -> BeforeDistribution:
    return BeforeDistribution(name="job", epsilon=0.01, delta=0.0, values=tuple(zip(labels, counts)),
                              interval=interval, mechanism="discrete Laplace (geometric)", noise_scale=90.0)


@settings(max_examples=40)
@given(st.lists(st.integers(-2_000, 30_000), min_size=len(LABELS), max_size=len(LABELS)),
       st.lists(st.integers(-2_000, 30_000), min_size=len(LABELS), max_size=len(LABELS)))
def test_the_noisy_counts_choose_no_bar(counts, other_counts):
    """Which bars are shown and in which order depends on the labels (the domain, the release's
    values) only: any two sets of noisy counts give the same bars in the same order."""
    published = ["c29", "nope", "c07", "c03"]  # the release's values in its panel's order
    one = [bar.label for bar in before_bars(before(counts), published)]
    two = [bar.label for bar in before_bars(before(other_counts), published)]
    assert one == two
    assert one == ["c29", "c07", "c03"] + [v for v in LABELS if v not in ("c29", "c07", "c03")][:TOP_VALUES - 3] \
        + [f"other ({len(LABELS) - TOP_VALUES} values)"]


@settings(max_examples=40)
@given(st.lists(st.integers(-2_000, 2_000), min_size=len(LABELS), max_size=len(LABELS)))
def test_each_cell_is_clipped_before_it_is_summed(counts):
    bars = before_bars(before(counts))
    assert all(bar.count >= 0 for bar in bars)
    other = bars[-1]
    assert other.label.startswith("other (") and other.cells == len(LABELS) - TOP_VALUES
    assert other.count == sum(c for c in counts[TOP_VALUES:] if c > 0)
    assert sum(bar.count for bar in bars) == sum(c for c in counts if c > 0)
    for bar, count in zip(bars[:TOP_VALUES], counts):
        assert bar.within_noise == (count <= 270) and bar.below_zero == (count < 0)


def test_the_sweeps_other_is_not_negative():
    """The shape of the sweep's native-country: the cells past the 20 shown are mostly below 0,
    their plain sum negative; clipped first, "other" is the sum of the positive ones."""
    counts = [29_000] + [150] * 19 + [-200, -150, 120, -90, 40, -300, -110, 10, -80, -70]
    other = before_bars(before(counts))[-1]
    assert sum(counts[TOP_VALUES:]) < 0
    assert other.count == 120 + 40 + 10 and not other.below_zero and other.within_noise


def test_a_negative_share_is_never_drawn_as_zero_silently():
    with pytest.raises(ValueError, match="negative count"):
        plots._shares([("a", 5.0), ("other (3 values)", -1126.0)])
    bars = before_bars(before([500.0, -40.0], ["a", "b"]))
    svg = plots.distribution_svg("job", [("a", 3)], bars, 0.01, before_note="b is within noise")
    assert ">&lt; 0</text>" in svg and "b is within noise" in svg and 'id="within-noise-0"' in svg


def test_the_caption_gives_the_interval_and_the_text_alternative_names_the_noisy_bars():
    counts = [5_000, 40, -12] + [400] * (len(LABELS) - 3)
    page = render_html(report_content(FRAME, CERTIFICATE, "r.csv", before=[before(counts)]))
    caption = unescape(re.search(r"<figcaption>(.*?)</figcaption>", page.split('id="plot-distribution-0"')[1])[1])
    assert "Each noisy count is within ±270 of the true count with 95% probability" in caption
    assert "discrete Laplace (geometric), scale 90" in caption
    assert "Hatched: every cell of the bar is at most 270" in caption
    label = unescape(re.search(r'<svg role="img" aria-label="([^"]*)"', page.split('id="plot-distribution-0"')[1])[1])
    assert "within the noise of an empty cell (hatched): c01, c02" in label
    assert "noisy count below 0, drawn empty: c02" in label
    assert interval_text((-12.0, 15.0)) == "−12 to +15"


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_interval_is_the_query_answers_own():
    """The sweep's case: native-country at ε = 0.1 / 9 through the report's own path; the
    interval in the caption is the one `crowdsafe query` gives the same histogram (±270)."""
    from crowdsafe import api
    from crowdsafe.report.before import before_distributions

    epsilon = 0.1 / 9
    answer = api.query("adult", "histogram `native-country`", epsilon=epsilon, ledger=None, randomness=3)
    found = before_distributions("adult", ["native-country"], epsilon, ledger=None, seed=3)[0]
    assert found.interval == tuple(answer.error_interval) == (-270.0, 270.0)
    assert [v for v, _ in found.values][:3] == ["United-States", "Canada", "Outlying-US(Guam-USVI-etc)"]  # domain
    shown = before_bars(found, ["United-States"])
    assert [bar.label for bar in shown][:TOP_VALUES] == [v for v, _ in found.values][:TOP_VALUES]
    assert shown[-1].label == "other (22 values)" and shown[-1].count >= 0


def _before_labels(page: str, figure: int) -> list[str]:
    """The row labels of a figure's before panel (its first panel: drawn first, left)."""
    svg = page.split(f'id="plot-distribution-{figure}"')[1].split("</svg>")[0]
    panel = svg.split("published (after)")[0]
    return [unescape(t) for t in re.findall(r'text-anchor="end"[^>]*>([^<]*)</text>', panel)]


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_the_shown_values_do_not_depend_on_one_row(tmp_path):
    """Neighbouring tables, the same seed and an ε so large that the noise is 0: the before
    panels show the same values in the same order with one row of the data removed. (Ranked by
    noisy count, two education values of equal count swapped places when one row went.)"""
    from crowdsafe.report.before import before_distributions
    from crowdsafe.report.build import build_report

    table = small_table()
    counts = table.group_by("education").len().sort("len", "education", descending=[True, False])
    (a, count_a), (b, count_b) = counts.row(2), counts.row(3)
    extra = table.with_row_index("_i").filter(pl.col("education") == a).get_column("_i").to_list()[: count_a - count_b]
    equal = table.with_row_index("_i").filter(~pl.col("_i").is_in(extra)).drop("_i")  # a and b tied
    first = min(a, b)
    row = equal.with_row_index("_i").filter(pl.col("education") == first).get_column("_i")[0]
    neighbour = pl.concat([equal.head(row), equal.slice(row + 1)])
    publish_small(tmp_path / "release", equal)
    release = tmp_path / "release" / "out" / "r.csv"
    pages = []
    for name, frame in (("D", equal), ("D-1", neighbour)):
        data, schema = write_inputs(tmp_path / name, frame)
        found = before_distributions(str(data), QI, 300.0, delta=1e-7, schema=str(schema), ledger=None, seed=5)
        pages.append(build_report(release, found))
    education = QI.index("education")
    assert _before_labels(pages[0], education) == _before_labels(pages[1], education)
    for figure in range(len(QI)):
        assert _before_labels(pages[0], figure) == _before_labels(pages[1], figure), QI[figure]


def test_an_empty_release_says_it_holds_no_records():
    page = render_html(report_content(FRAME.head(0), CERTIFICATE, "r.csv"))
    serves = unescape(re.search(r'<section id="serves">(.*?)</section>', page)[1])
    assert "This release holds no records, so it serves no analysis" in serves
    assert "shared by fewer than 3 records" in serves and "ε = 1, δ = 1e-06" in serves
    assert "serves best" not in serves
    assert "no records: the release is empty" in page and "no cell passed" not in page
    assert "0.0%" not in page.split('id="generalized"')[1].split("</table>")[0]  # no share of no records
    full = render_html(report_content(FRAME, CERTIFICATE, "r.csv"))
    assert "serves best" in full and "holds no records" not in full


def test_bars_are_drawn_with_their_marks():
    bars = [BeforeBar("a", 900.0, 1, False, False), BeforeBar("b", 100.0, 1, True, False),
            BeforeBar("c", 0.0, 1, True, True)]
    svg = plots.distribution_svg("job", [("a", 1)], bars, 0.5, figure=4)
    assert svg.count('id="within-noise-4"') == 1 and svg.count('fill="url(#within-noise-4)"') == 1
    assert "hatched: within noise of 0" in svg
