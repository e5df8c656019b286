"""Notebook views of what a run returns: ``_repr_html_`` of the plan, the certificate, a release
and a publication, drawn with the report's own building blocks (:mod:`crowdsafe.report.html`
tables, :mod:`crowdsafe.report.plots` charts, :func:`html.escape` on every text).

Each view follows the privacy boundary (docs/privacy-boundary.md) as the report does: it shows
what was fixed before the data was read (the plan, the certificate's parameters and theorem) and
outputs of the charged DP mechanism (the chosen scheme, the released classes and what is counted
on them). A publication's custodian-only facts (sample sizes, suppression, utility against the
sample, the ledger entry) are left out, with a line saying where they are; the release's
classes are read from what it keeps (its published classes), never from its source.

Each view stays under :data:`VIEW_LIMIT` bytes whatever the input: long lists end in "… and N
more", long texts in "…", and a chart has a fixed number of bars; a view that would still be
larger (hundreds of long column names, say) is drawn again with shorter texts (:func:`fitted`).
The custodian's own objects
(the check report, the ledger) have their views in :mod:`crowdsafe.report.custodian_views`.
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterable, Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from crowdsafe.number_text import quantity, rounded_down, rounded_up

if TYPE_CHECKING:
    import polars as pl

    from crowdsafe.anonymize.plan import PublishPlan
    from crowdsafe.anonymize.publish import Publication
    from crowdsafe.anonymize.release import Release
    from crowdsafe.privacy.certificate import Certificate
    from crowdsafe.report.content import ReportContent

#: The most bytes one view may take (a notebook stores every output in the file).
VIEW_LIMIT = 20_000
#: How many of each list a view shows before "… and N more".
SHOWN_ATTRIBUTES = 10
SHOWN_CLASSES = 8
SHOWN_COLUMNS = 6
SHOWN_RELEASES = 5
SHOWN_LINES = 6
#: The longest text of one cell (a column name, a value) before it is cut with "…"; a sentence
#: (a rule, a reason, an assumption) may be :data:`SENTENCE` times as long. :func:`fitted` tries
#: these limits in turn until the view fits :data:`VIEW_LIMIT`.
TEXT_LIMITS = (40, 24, 12)
SENTENCE = 6
_TEXT_LIMIT = contextvars.ContextVar("text_limit", default=TEXT_LIMITS[0])

STYLE = ("<style>.crowdsafe-view{font-family:system-ui,sans-serif;font-size:13px;line-height:1.4;max-width:62rem}"
         ".crowdsafe-view h3{margin:.2rem 0}.crowdsafe-view h4{margin:.8rem 0 .2rem}"
         ".crowdsafe-view table{border-collapse:collapse;margin:.2rem 0}.crowdsafe-view th,.crowdsafe-view td"
         "{text-align:left;padding:1px 8px;border-bottom:1px solid #e2e8f0;vertical-align:top}"
         ".crowdsafe-view td.number{text-align:right;white-space:nowrap}.crowdsafe-view .note{color:#4a5568}"
         ".crowdsafe-view .verdict{padding:3px 8px;border-radius:4px;margin:.3rem 0}"
         ".crowdsafe-view .fit{background:#f0fff4;border:1px solid #68d391}"
         ".crowdsafe-view .unfit,.crowdsafe-view .custodian{background:#fff5f5;border:1px solid #fc8181}"
         ".crowdsafe-view .custodian{padding:3px 8px;font-weight:bold}</style>")


def short(text: object, times: int = 1) -> str:
    """``text`` as a string, cut to ``times`` the current text limit with "…" (escaped where it is
    placed)."""
    value, limit = str(text), _TEXT_LIMIT.get() * times
    return value if len(value) <= limit else value[: limit - 1] + "…"


def fitted(render: Callable[[], str]) -> str:
    """``render()`` under the first text limit of :data:`TEXT_LIMITS` that keeps it under
    :data:`VIEW_LIMIT` bytes (the last one otherwise: every list it draws is bounded too)."""
    drawn = ""
    for limit in TEXT_LIMITS:
        token = _TEXT_LIMIT.set(limit)
        try:
            drawn = render()
        finally:
            _TEXT_LIMIT.reset(token)
        if len(drawn.encode("utf-8")) < VIEW_LIMIT:
            break
    return drawn


def more(count: int, what: str) -> str:
    return f"… and {count:,} more {what}"


def table(header: Sequence[str], rows: Iterable[Sequence[str]], numeric: Sequence[int] = (),
          sentences: Sequence[int] = ()) -> str:
    """The report's table (:func:`crowdsafe.report.html._table`: every cell escaped), cells cut
    short (the columns ``sentences`` hold sentences: :data:`SENTENCE` times longer)."""
    from crowdsafe.report.html import _table

    return _table([short(h) for h in header],
                  [[short(c, SENTENCE if i in sentences else 1) for i, c in enumerate(row)] for row in rows], numeric)


def listed(items: Sequence[str], limit: int, what: str, times: int = 1) -> list[str]:
    """At most ``limit`` of ``items``, then "… and N more ``what``"."""
    shown = [short(i, times) for i in items[:limit]]
    return shown + ([more(len(items) - limit, what)] if len(items) > limit else [])


def bullets(items: Sequence[str], limit: int = SHOWN_LINES, what: str = "") -> str:
    """A list of sentences, at most ``limit``."""
    return "<ul>" + "".join(f"<li>{escape(i)}</li>" for i in listed(items, limit, what, SENTENCE)) + "</ul>"


def note(text: str) -> str:
    return f'<p class="note">{escape(short(text, SENTENCE))}</p>'


def box(title: str, subtitle: str, sections: Iterable[str]) -> str:
    """A view: its title, a line under it, then ``sections`` (HTML)."""
    return (f'<div class="crowdsafe-view">{STYLE}<h3>{escape(short(title, 3))}</h3>'
            f'{note(subtitle)}{"".join(sections)}</div>')


def verdict(certificate: Mapping[str, Any]) -> str:
    """Fit for release, or why not (the certificate's own reasons)."""
    reasons = [str(r) for r in certificate.get("unfit_reasons") or ()]
    if certificate.get("fit_for_release") and not reasons:
        return '<div class="verdict fit"><strong>Fit for release.</strong></div>'
    return ('<div class="verdict unfit"><strong>NOT fit for release:</strong>'
            f"{bullets(reasons, SHOWN_LINES, 'reasons')}</div>")


# -- the plan ---------------------------------------------------------------------------------


def plan_rows(plan: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The plan (``PublishPlan.as_dict()``), fixed before the data was read, as (parameter, value)."""
    rows = [("target per release", f"ε = {plan['epsilon']:.6g}, δ = {plan['delta_target']:.3g}"),
            ("k (smallest class published)", f"{plan['k']:,}"),
            ("β (sampling rate)", rounded_down(plan['beta'], 4) + ("" if plan.get("beta_rule") in (None, "given")
                                                           else f": {plan['beta_rule']}"))]
    if plan.get("scheme") is None:
        rule = plan.get("epsilon1_rule") or "given"
        rows.append(("ε1 (choosing the scheme)", f"{rounded_up(plan['epsilon1'], 4)}: {rule}"))  # a loss: up
        target = f" of {plan['target']}" if plan.get("target") else ""
        among = f" among {plan['candidates']:,} candidate schemes" if plan.get("candidates") else ""
        rows.append(("scheme chosen by",
                     f"the exponential mechanism, objective {plan.get('objective')}{target}{among}"))
        if plan.get("objective_rule") not in (None, "given"):
            rows.append(("objective chosen by", str(plan["objective_rule"])))
        if plan.get("count_rule"):
            rows.append(("candidates sized by", plan["count_rule"]))
        if plan.get("selection_rule"):
            rows.append(("scored on", f"the whole table: {plan['selection_rule']}"))
    else:
        rows.append(("scheme", f"fixed in advance: {plan['scheme']} (strongly safe, ε1 = 0)"))
    rows.append(("ε − ε1 (the anonymization)", rounded_up(plan["epsilon_anon"], 4)))  # losses: up
    rows.append(("δ achieved at k", rounded_up(plan["delta"], 3)))
    if plan.get("columns"):
        rows.append(("columns", ", ".join(listed(list(plan["columns"]), SHOWN_COLUMNS, "columns"))))
    if plan["releases"] > 1:
        rows.append(("releases", f"{plan['releases']:,} on fresh samples: ε = {rounded_up(plan['total_epsilon'])}, "
                                 f"δ = {rounded_up(plan['total_delta'], 3)} in total ({plan['composition']})"))
    return rows


def plan_section(plan: PublishPlan) -> str:
    return ("<h4>Plan</h4>" + note("Fixed before the data is read: public.")
            + table(("parameter", "value"), plan_rows(plan.as_dict()), sentences=(1,)))


def plan_html(plan: PublishPlan) -> str:
    """The view of a :class:`~crowdsafe.anonymize.plan.PublishPlan`."""
    subtitle = (f"(ε = {plan.epsilon:.6g}, δ = {plan.delta_target:.3g}) per release, k = {plan.k:,}, "
                f"β = {rounded_down(plan.beta, 4)}")  # rounded down: typed back with k, it is taken
    return fitted(lambda: box("Publish plan", subtitle, [plan_section(plan)]))


# -- the certificate --------------------------------------------------------------------------


def certificate_section(certificate: Certificate, heading: str = "Certificate", parameters: bool = True) -> str:
    """The verdict, the guarantee in words, the plan's parameters (unless ``parameters`` is
    False: a view that shows the plan already), the mechanisms and the assumptions: the
    certificate's public fields (:data:`crowdsafe.report.content.PUBLIC_FIELDS`)."""
    from crowdsafe.report.content import _mechanism_rows, guarantee_words, public_certificate
    from crowdsafe.report.content import plan_rows as certificate_plan

    public = public_certificate(certificate.to_dict())
    words = "".join(f"<p>{escape(short(w, 3 * SENTENCE))}</p>" for w in guarantee_words(public)[:2])
    mechanisms = _mechanism_rows(public)
    steps = table(("step", "mechanism", "parameters"), mechanisms[:SHOWN_LINES], sentences=(1, 2))
    if len(mechanisms) > SHOWN_LINES:
        steps += note(more(len(mechanisms) - SHOWN_LINES, "steps"))
    rows = certificate_plan(public)
    shown = table(("parameter", "value"), rows[:12], sentences=(1,)) if parameters else ""
    assumptions = [str(a) for a in public.get("assumptions") or ()]
    listed_assumptions = f"<p>Assumptions:</p>{bullets(assumptions, SHOWN_LINES, 'assumptions')}" \
        if assumptions else ""
    components = certificate.components
    composed = note(f"Composed of {len(components):,} release certificates.") if components else ""
    return (f"<h4>{escape(heading)}</h4>{verdict(public)}{words}{composed}{shown}{steps if mechanisms else ''}"
            f"{listed_assumptions}")


def certificate_html(certificate: Certificate) -> str:
    """The view of a :class:`~crowdsafe.privacy.certificate.Certificate`."""
    return fitted(lambda: box("Certificate", certificate.summary(),
                              [certificate_section(certificate, "The guarantee")]))


# -- a release ----------------------------------------------------------------------------------


def release_classes(release: Release) -> pl.DataFrame:
    """The release's classes: one row per distinct published quasi-identifier tuple (as text) and
    its records (:data:`crowdsafe.report.content.ROWS`), largest first. From what the release
    keeps (its published classes, or its rows): a DP output, like the release."""
    import numpy as np
    import polars as pl

    from crowdsafe.report.classes import written_classes
    from crowdsafe.report.content import ROWS, tuple_table

    columns = list(release.quasi_identifiers)
    kept = written_classes(release, escape_formulas=False)
    if kept is not None:
        classes = kept.frame.with_columns(pl.Series(ROWS, np.asarray(kept.sizes, dtype=np.int64)))
    elif columns:
        classes = tuple_table(release.frame.select(columns), columns)
    else:
        classes = pl.DataFrame({ROWS: [release.rows_published]}, schema={ROWS: pl.Int64})
    text = classes.with_columns([pl.col(c).cast(pl.String) for c in columns])
    return text.sort([ROWS, *columns], descending=[True, *([False] * len(columns))], nulls_last=True)


def release_content(release: Release) -> tuple[ReportContent, pl.DataFrame]:
    """The report's content of ``release`` (:func:`crowdsafe.report.content.report_content` on its
    classes and its certificate) and its classes (:func:`release_classes`)."""
    from crowdsafe.report.content import report_content

    classes = release_classes(release)
    certificate = release.certificate.to_dict()
    parameters = certificate.setdefault("parameters", {})
    parameters.setdefault("quasi_identifiers", list(release.quasi_identifiers))
    parameters.setdefault("k", release.k)
    return report_content(classes, certificate, "release", weighted=True), classes


def _classes_table(classes: pl.DataFrame, columns: Sequence[str]) -> str:
    from crowdsafe.report.content import ROWS, shown_label

    shown = list(columns[:SHOWN_COLUMNS])
    hidden = len(columns) - len(shown)
    header = [*shown, *([more(hidden, "columns")] if hidden else []), "records"]
    rows = [[*(shown_label(row[c]) for c in shown), *(["…"] if hidden else []), f"{row[ROWS]:,}"]
            for row in classes.head(SHOWN_CLASSES).iter_rows(named=True)]
    rest = classes.height - SHOWN_CLASSES
    return table(header, rows, (len(header) - 1,)) + (note(more(rest, "classes")) if rest > 0 else "")


def release_section(release: Release, heading: str = "Release") -> str:
    """The release's classes (DP output): what each published column shows, the class sizes,
    the largest classes."""
    from crowdsafe.report.content import MISSING_NOTE
    from crowdsafe.report.html import GENERALIZED_HEADER, generalized_rows
    from crowdsafe.report.plots import compact_histogram_svg

    content, classes = release_content(release)
    attributes = content.attributes
    generalized = table(GENERALIZED_HEADER, generalized_rows(attributes[:SHOWN_ATTRIBUTES]), (1, 3, 5), (2, 4))
    if len(attributes) > SHOWN_ATTRIBUTES:
        generalized += note(more(len(attributes) - SHOWN_ATTRIBUTES, "columns"))
    if any(view.has_missing for view in attributes):
        generalized += note(f"{MISSING_NOTE}.")
    counted = (f"{quantity(content.rows, 'record')} in {quantity(len(content.class_sizes), 'class', 'classes')} "
               f"of at least "
               f"{release.k:,} (counted on the release).")
    return (f"<h4>{escape(heading)}</h4><p>{escape(counted)}</p>{generalized}"
            f"{compact_histogram_svg(content.class_sizes, content.k)}"
            f"<p>The largest classes:</p>{_classes_table(classes, content.quasi_identifiers)}")


def release_html(release: Release) -> str:
    """The view of a :class:`~crowdsafe.anonymize.release.Release`: its guarantee and its classes."""
    subtitle = f"{release.algorithm}, k = {release.k:,}: {release.certificate.headline()}"
    withheld = note("Made from a secret sample: its size and what was suppressed are custodian-only "
                    "(Publication.custodian_report()), not shown here.") if release.sample_withheld else ""
    return fitted(lambda: box("Release", subtitle, [verdict(release.certificate.to_dict()), withheld,
                                                    release_section(release)]))


# -- a publication --------------------------------------------------------------------------------


def _scheme_text(release: Release) -> str:
    levels = dict(getattr(release.recoding, "levels", {}) or {})
    pairs = [f"{c}={v}" for c, v in levels.items()]
    return ", ".join(listed(pairs, SHOWN_COLUMNS, "columns")) if pairs else release.recoding.name


def publication_html(publication: Publication) -> str:
    """The view of a :class:`~crowdsafe.anonymize.publish.Publication`: the plan, the certificate
    of all its releases, the first release's classes and one line per other release. Its
    custodian-only facts are not shown."""
    releases = publication.releases

    def render() -> str:
        sections = [plan_section(publication.plan), certificate_section(publication.certificate, parameters=False)]
        if len(releases) > 1:
            lines = [(f"{i + 1}", _scheme_text(r), f"{r.rows_published:,}", f"{r.classes:,}")
                     for i, r in enumerate(releases[:SHOWN_RELEASES])]
            sections.append("<h4>Releases</h4>" + table(("release", "scheme", "records", "classes"), lines,
                                                        (0, 2, 3), (1,)))
            if len(releases) > SHOWN_RELEASES:
                sections.append(note(more(len(releases) - SHOWN_RELEASES, "releases")))
        if releases:
            sections.append(release_section(releases[0], "Release 1" if len(releases) > 1 else "Release"))
        sections.append(note("Custodian-only facts (sample sizes, suppression, utility against the sample, the "
                             "ledger entry) are not shown: publication.custodian_report()."))
        plural = "s" if len(releases) != 1 else ""
        return box("Publication", f"{len(releases):,} release{plural}: {publication.certificate.headline()}",
                   sections)

    return fitted(render)


__all__ = ["VIEW_LIMIT", "certificate_html", "fitted", "plan_html", "publication_html", "release_html"]
