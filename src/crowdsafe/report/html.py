"""The report page: one self-contained HTML file (inline CSS and SVG, no script, no external
resource), rendered from a :class:`~crowdsafe.report.content.ReportContent`.

The page holds no generated-at time, path or host name: the same release and certificate give
the same bytes, whoever builds it and when (docs/report.md).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from html import escape

from crowdsafe.number_text import quantity
from crowdsafe.output_guard import REPORT_MARK
from crowdsafe.report.content import MISSING_NOTE, AttributeView, ReportContent, columns_words

STYLE = """
body { font-family: system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; margin: 0; color: #1a202c;
       background: #f7fafc; line-height: 1.45; }
main { max-width: 60rem; margin: 0 auto; padding: 1.5rem; background: #fff; }
h1 { font-size: 1.6rem; margin: 0 0 .3rem; } h2 { font-size: 1.2rem; margin-top: 2rem;
     border-bottom: 1px solid #e2e8f0; padding-bottom: .2rem; }
.verdict { padding: .8rem 1rem; border-radius: .4rem; margin: 1rem 0; }
.fit { background: #f0fff4; border: 1px solid #68d391; } .unfit { background: #fff5f5; border: 1px solid #fc8181; }
table { border-collapse: collapse; margin: .5rem 0; } th, td { text-align: left; padding: .25rem .7rem;
     border-bottom: 1px solid #edf2f7; vertical-align: top; } th { background: #f7fafc; }
td.number { text-align: right; font-variant-numeric: tabular-nums; }
figure { margin: 1rem 0; } figure svg { max-width: 100%; height: auto; }
figcaption, .note { color: #4a5568; font-size: .9rem; }
code { background: #edf2f7; padding: 0 .2rem; border-radius: .2rem; overflow-wrap: anywhere; }
.wide { overflow-x: auto; max-width: 100%; } p, li, h1, h2 { overflow-wrap: break-word; }
@media (max-width: 40rem) { main { padding: 1rem .8rem; } }
"""


class Markup(str):
    """A table cell already written as HTML (its text escaped), which :func:`_table` keeps."""


def _cell(text: str) -> str:
    return text if isinstance(text, Markup) else escape(text)


def isolated(values: Iterable[str]) -> Markup:
    """``values`` joined by commas, each in a ``<bdi>`` element: an Arabic or Hebrew value, or one
    holding a bidirectional override (U+202E), is laid out on its own, and the values after it
    keep their order and direction (a published value could reverse the rest of the list)."""
    return Markup(", ".join(f"<bdi>{escape(v)}</bdi>" for v in values))


def _table(header: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = ()) -> str:
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for row in rows:
        cells = "".join(f'<td class="number">{_cell(c)}</td>' if i in numeric else f"<td>{_cell(c)}</td>"
                        for i, c in enumerate(row))
        body.append(f"<tr>{cells}</tr>")
    # in a wrapper that scrolls sideways: a table wider than a phone's screen stays inside the page
    return f'<div class="wide"><table><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table></div>'


def _paragraphs(texts: Iterable[str]) -> str:
    return "".join(f"<p>{escape(t)}</p>" for t in texts)


def guarantee_section(fit_for_release: bool, unfit_reasons: Sequence[str], guarantee: Sequence[str],
                      assumptions: Sequence[str]) -> str:
    """The "guarantee" section: the verdict, the guarantee in words, its assumptions."""
    if fit_for_release:
        verdict = '<div class="verdict fit"><strong>Fit for release.</strong></div>'
    else:
        reasons = "".join(f"<li>{escape(r)}</li>" for r in unfit_reasons)
        verdict = f'<div class="verdict unfit"><strong>NOT fit for release:</strong><ul>{reasons}</ul></div>'
    listed = ""
    if assumptions:
        items = "".join(f"<li>{escape(a)}</li>" for a in assumptions)
        listed = f"<p>The guarantee holds under these assumptions:</p><ul>{items}</ul>"
    return f'<section id="guarantee"><h2>The guarantee</h2>{verdict}{_paragraphs(guarantee)}{listed}</section>'


def plan_section(intro: str, plan: Sequence[tuple[str, str]], mechanisms: Sequence[tuple[str, str, str]],
                 middle: str = "") -> str:
    """The "plan" section: a note, the parameter table, ``middle`` (HTML), the mechanisms that ran."""
    steps = ""
    if mechanisms:
        steps = "<p>What ran, step by step:</p>" + _table(("step", "mechanism", "parameters"), mechanisms)
    return (f'<section id="plan"><h2>The plan</h2><p class="note">{escape(intro)}</p>'
            f"{_table(('parameter', 'value'), plan)}{middle}{steps}</section>")


def _guarantee(content: ReportContent) -> str:
    return guarantee_section(content.fit_for_release, content.unfit_reasons, content.guarantee, content.assumptions)


def _plan(content: ReportContent) -> str:
    intro = ("Fixed before the data was read, except the scheme when the exponential mechanism chose it (a "
             "differentially private choice)." if content.certificate.get("guarantee") != "none" else
             "The algorithm's parameters; its generalization was fitted to the data (no formal guarantee).")
    return plan_section(intro, content.plan, content.mechanisms)


def generalized_rows(attributes: Sequence[AttributeView]) -> list[tuple[str, ...]]:
    """One row per published attribute: its level, the level in words, how many distinct values it
    publishes and which (all, or the first few and how many more), and its share of '*'."""
    return [(view.name, "—" if view.level is None else str(view.level), view.description or view.level_name or "—",
             f"{view.distinct:,}", view.values_text, f"{view.star_share:.1%}" if view.distinct else "—")
            for view in attributes]


GENERALIZED_HEADER = ("attribute", "level", "what the level does", "distinct values", "published values",
                      "shown as *")


def _generalized(content: ReportContent) -> str:
    rows = [(*row[:4], _published(view), *row[5:]) for row, view in zip(generalized_rows(content.attributes),
                                                                       content.attributes)]
    k = f"{content.k:,}" if content.k else "k"
    suppressed = (f"Records whose generalized tuple would be shared by fewer than {k} records were suppressed: by "
                  "construction no such class appears in the release. How many records were sampled or suppressed "
                  "is a fact about the original data, not covered by the guarantee, so this report does not show it.")
    missing = (f'<p class="note">{escape(MISSING_NOTE)}.</p>'
               if any(view.has_missing for view in content.attributes) else "")
    return ('<section id="generalized"><h2>What was generalized and suppressed</h2>'
            f"{_table(GENERALIZED_HEADER, rows, (1, 3, 5))}{missing}"
            f"<p>{escape(suppressed)}</p>{_as_they_are(content)}</section>")


def _published(view: AttributeView) -> Markup:
    """:attr:`AttributeView.values_text` with each value isolated (:func:`isolated`)."""
    more = view.distinct - len(view.examples)
    return Markup(isolated(view.examples) + (f", … and {more:,} more" if more > 0 else ""))


def _as_they_are(content: ReportContent) -> str:
    """The columns a release publishes outside its quasi-identifiers (a classic release keeps
    them; a certified one has none), named: the table above lists the generalized ones only, and
    read alone it let a reader take a column shown as * for hidden when another column published
    as it is restates it (a lattice release of Adult: education all *, education-num exact)."""
    others = [c for c in content.columns if c not in content.quasi_identifiers]
    if not others:
        return ""
    return (f"<p><strong>Published as they are</strong> (not generalized, and outside the classes that k counts): "
            f"{isolated(others)}. A value of these columns can set a record apart, or restate what a "
            "generalized column hides.</p>")


def _class_sizes(content: ReportContent) -> str:
    from crowdsafe.report.plots import class_size_svg

    return ('<section id="class-sizes"><h2>Class sizes</h2>'
            f'<figure class="plot" id="plot-class-sizes">{class_size_svg(content.class_sizes, content.k)}'
            "<figcaption>Each class is a set of published records sharing one quasi-identifier tuple; "
            "counted on the release.</figcaption></figure></section>")


def _distributions(content: ReportContent) -> str:
    from crowdsafe.report.before_rows import before_bars, before_total_words, noise_note, noise_words
    from crowdsafe.report.plots import distribution_svg

    before = {b.name: b for b in content.before}
    figures = []
    for i, view in enumerate(content.attributes):
        noisy = before.get(view.name)
        bars = before_bars(noisy, [v for v, _ in view.values]) if noisy else None
        svg = distribution_svg(view.name, view.values, bars, noisy.epsilon if noisy else None,
                               MISSING_NOTE if view.has_missing else None, i,
                               f"before: {noise_note(bars)}" if bars and noise_note(bars) else "")
        caption = "Published values, counted on the release."
        if view.has_missing:
            caption += f" {MISSING_NOTE[0].upper()}{MISSING_NOTE[1:]}."
        if noisy and bars is not None:
            caption += " " + noise_words(noisy, bars)
        figures.append(f'<figure class="plot distribution" id="plot-distribution-{i}">{svg}'
                       f"<figcaption>{escape(caption)}</figcaption></figure>")
    if content.before:
        how = f'<p class="note">{escape(before_total_words(content.before))}</p>'
    else:
        how = ('<p class="note">Only the published ("after") distributions are shown. The original data\'s '
               "distributions are not public; to add noisy, differentially private ones, charged to the data's "
               "budget, rebuild this report with <code>crowdsafe report RELEASE --before DATA --before-epsilon E"
               "</code>.</p>")
    return f'<section id="distributions"><h2>Distributions</h2>{how}{"".join(figures)}</section>'


def _metrics(section: str, title: str, rows: Sequence[tuple[str, str, str]], intro: str) -> str:
    return (f'<section id="{section}"><h2>{escape(title)}</h2><p class="note">{escape(intro)}</p>'
            f"{_table(('measure', 'value', 'meaning'), rows, (1,))}</section>")


def _serves(content: ReportContent) -> str:
    from crowdsafe.report.content import empty_release_words, serves_words

    if content.rows == 0:  # nothing published: say so, not what the (absent) records would serve
        return (f'<section id="serves"><h2>What this table serves</h2>'
                f"{_paragraphs(empty_release_words(content.certificate))}</section>")
    words = serves_words(content.certificate)
    if not words:
        return ""
    return f'<section id="serves"><h2>What this table serves</h2>{_paragraphs(words)}</section>'


def _sources() -> str:
    return ('<section id="sources"><h2>Where these numbers come from</h2><p>Everything on this page is computed '
            "from the published table and the public fields of its certificate, or is a labelled differentially "
            "private answer: nothing here reads the original data, the sample or the custodian's records. The page "
            "can be rebuilt with <code>crowdsafe report RELEASE</code>, which gives the same file.</p></section>")


def render_html(content: ReportContent) -> str:
    """The complete page."""
    title = f"Release report: {content.title}"
    subtitle = (f"{quantity(content.rows, 'record')}, "
                f"{columns_words(content.columns, content.quasi_identifiers, content.sensitive)}")
    return page(title, subtitle, (
        _guarantee(content), _plan(content), _generalized(content), _class_sizes(content), _distributions(content),
        _metrics("utility", "Utility", content.utility, "Measured on the release alone."),
        _metrics("risk", "Risk", content.risk, "Read from the release alone, and the bound the guarantee gives."),
        _serves(content), _sources(),
    ))


def page(title: str, subtitle: str, sections: Sequence[str]) -> str:
    """A complete, self-contained HTML page: the title and subtitle, then ``sections`` (HTML)."""
    header = f"<header><h1>{escape(title)}</h1><p class=\"note\">{escape(subtitle)}</p></header>"
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"{REPORT_MARK}<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{escape(title)}</title><style>{STYLE}</style></head><body><main>{header}{''.join(sections)}"
            "</main></body></html>\n")


__all__ = ["render_html"]
