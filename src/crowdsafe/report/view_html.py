"""The page of a view's report: one self-contained HTML file (inline CSS and SVG, no script),
rendered from a :class:`~crowdsafe.report.view_content.ViewReportContent` with the release
report's style and building blocks (:mod:`crowdsafe.report.html`). No date, path or host name:
the same view and certificate give the same bytes.
"""

from __future__ import annotations

from html import escape

from crowdsafe.number_text import quantity
from crowdsafe.report.html import _paragraphs, _table, guarantee_section, page, plan_section
from crowdsafe.report.view_content import CONFIDENCE, AttributeEstimates, ViewReportContent


def _guarantee(content: ViewReportContent) -> str:
    return guarantee_section(content.fit_for_release, content.unfit_reasons, content.guarantee, content.assumptions)


def _plan(content: ViewReportContent) -> str:
    intro = ("Fixed before the data was read: the parameters, the public domains and the public bound N on the "
             "rows (used wherever n would be)." if content.certificate.get("guarantee") == "d-gamma" else
             "The run's parameters; some were taken from the data (no formal guarantee).")
    domains = _table(("attribute", "domain values", "where the domain came from"),
                     [(a.name, f"{a.domain_size:,}", a.source) for a in content.attributes], (1,))
    return plan_section(intro, content.plan, content.mechanisms, f"<p>The public domains:</p>{domains}")


def _view(content: ViewReportContent) -> str:
    words = [
        f"The view has {quantity(content.rows, 'row')}. That number is computed from the view, the mechanism's "
        "output, so "
        "the guarantee covers it.",
        "Each row is either a true tuple of the data, kept with probability α, or a tuple of the public domain "
        "that was not in the data, inserted with probability β; nothing tells them apart. Raw counts of the view "
        "are therefore NOT counts of the data: the estimates below correct for the insertions.",
        "Duplicate rows of the data were collapsed to one tuple before perturbing (the view is a set), so the "
        "estimates count distinct tuples over the published attributes, not rows.",
    ]
    if content.theorem_bound:
        words.append(content.theorem_bound)
    return f'<section id="view"><h2>What the view holds</h2>{_paragraphs(words)}</section>'


def _attribute(index: int, attribute: AttributeEstimates) -> str:
    from crowdsafe.report.view_plots import estimates_svg

    values = attribute.values
    svg = estimates_svg(attribute.name, [v.label for v in values], [v.n_view for v in values],
                        [v.estimate for v in values], [v.error for v in values], CONFIDENCE)
    caption = ("Left: rows of the view with each value (true and inserted tuples together). Right: the unbiased "
               "estimate of the data's count, (n_V − β·n_D)/(α − β), with its error bar; small counts can come out "
               "far off, even negative: that is the privacy at work.")
    rows = [(v.label, f"{v.n_view:,}", f"{v.n_domain:,.0f}", f"{v.estimate:,.1f}", f"± {v.error:,.1f}")
            for v in values]
    header = ("value", "rows in the view", "domain tuples (n_D)", "estimated count in the data",
              f"error bar ({CONFIDENCE:.0%})")
    note = f'<p class="note">{escape(attribute.grouped)}</p>' if attribute.grouped else ""
    return (f'<h3>{escape(attribute.name)}</h3>{note}<figure class="plot distribution" id="plot-distribution-{index}">'
            f"{svg}<figcaption>{escape(caption)}</figcaption></figure>{_table(header, rows, (1, 2, 3, 4))}")


def _distributions(content: ViewReportContent) -> str:
    how = ('<p class="note">Per attribute, the view\'s rows per value of the public domain and the unbiased '
           "estimates of the data's counts, computed from the view alone (post-processing of the DP output, the "
           "estimator of <code>crowdsafe estimate</code>). No other statistic of the original data is shown.</p>")
    parts = "".join(_attribute(i, a) for i, a in enumerate(content.attributes))
    return f'<section id="distributions"><h2>Distributions</h2>{how}{parts}</section>'


def _sources() -> str:
    return ('<section id="sources"><h2>Where these numbers come from</h2><p>Everything on this page is computed '
            "from the view and the public fields of its certificate: nothing here reads the original data, the "
            "ledger or the custodian's records (exact rows, distinct tuples, duplicates). The page can be rebuilt "
            "with <code>crowdsafe report VIEW</code>, which gives the same file.</p></section>")


def render_view_html(content: ViewReportContent) -> str:
    """The complete page."""
    title = f"View report: {content.title}"
    subtitle = (f"A perturbed (α-β) view: {quantity(content.rows, 'row')}, "
                f"{quantity(len(content.attributes), 'attribute')}; true tuples mixed with inserted ones")
    return page(title, subtitle, (_guarantee(content), _plan(content), _view(content), _distributions(content),
                                  _sources()))


__all__ = ["render_view_html"]
