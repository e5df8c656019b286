"""Notebook views of the custodian's own objects: the check report (``crowdsafe.api.check``) and
the budget ledger (``crowdsafe.api.ledger_report``, an open :class:`~crowdsafe.privacy.ledger.Ledger`).

Every figure in them is an exact fact about the data or a record of what was charged: none is
covered by a guarantee. So each view opens with a banner that says "custodian only — do not
publish" and keeps it there, whatever else it shows. They are drawn with the same building blocks
and size bounds as the public views (:mod:`crowdsafe.report.views`: escaped tables, "… and N more",
under :data:`~crowdsafe.report.views.VIEW_LIMIT` bytes).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from html import escape
from typing import TYPE_CHECKING, Any

from crowdsafe.number_text import budget_words, quantity, rounded_up
from crowdsafe.report.views import SHOWN_LINES, box, fitted, more, note, short, table

if TYPE_CHECKING:
    from crowdsafe.models.check_report import CheckReport

CUSTODIAN_BANNER = "CUSTODIAN ONLY — exact facts, not covered by any privacy guarantee: do not publish"
#: Rows of a check report's attribute table, datasets and entries of a ledger, shown before "… and N more".
SHOWN_ROWS = 12
SHOWN_DATASETS = 4
SHOWN_ENTRIES = 6


def banner() -> str:
    return f'<div class="custodian">{escape(CUSTODIAN_BANNER)}</div>'


def _number(value: Any, digits: int = 3) -> str:
    if value is None:
        return "∞"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}g}"


# -- the check report -----------------------------------------------------------------------------


def check_html(report: CheckReport) -> str:
    """The view of a check report: the table's size, its attributes, k and the class sizes, the
    sensitive attributes' models and the re-identification risk; all custodian-only."""
    from crowdsafe.report.plots import compact_bars_svg

    def render() -> str:
        attributes = [(a["name"], a["role"], a["type"], f"{a['distinct']:,}", f"{a['missing']:,}",
                       "—" if a["hierarchy_levels"] is None else str(a["hierarchy_levels"]))
                      for a in report.attributes]
        shown = table(("attribute", "role", "type", "distinct", "missing", "levels"), attributes[:SHOWN_ROWS],
                      (3, 4, 5))
        if len(attributes) > SHOWN_ROWS:
            shown += note(more(len(attributes) - SHOWN_ROWS, "attributes"))
        classes = report.classes
        buckets = [b for b in classes["buckets"] if b["groups"]]
        chart = compact_bars_svg("records by class size", [(f"size {b['sizes']}", float(b["rows"])) for b in buckets],
                                 [f"{quantity(b['rows'], 'record')} in {quantity(b['groups'], 'class', 'classes')}"
                                  for b in buckets])
        qis = ", ".join(report.quasi_identifiers[:SHOWN_ROWS]) + (", …" if len(report.quasi_identifiers) > SHOWN_ROWS
                                                                 else "")
        k = f"{report.k:,}" if report.k is not None else "any (no rows)"
        summary = [("quasi-identifiers", qis), ("k (smallest class)", k),
                   ("distinct tuples", f"{classes['groups']:,}"), ("mean class size", f"{classes['mean']:.2f}"),
                   ("sample uniques", f"{report.sample_uniques:,} ({report.sample_uniques / max(report.rows, 1):.1%})"),
                   ("missing values", str(report.missing.get("description", "")))]
        sections = [banner(), table(("measure", "value"), summary, sentences=(1,)), chart, "<h4>Attributes</h4>", shown]
        if report.privacy is not None:
            sections.append(_privacy(report.privacy.to_dict()))
        return box(f"Check: {report.dataset}", f"{quantity(report.rows, 'row')}, "
                                               f"{quantity(len(report.attributes), 'attribute')} "
                                               f"(schema: {report.schema.source})", sections)

    return fitted(render)


def _privacy(privacy: Mapping[str, Any]) -> str:
    """The sensitive attributes' models (one column each, the first few) and the risk."""
    sensitive = list(privacy.get("sensitive") or ())
    parts = []
    if sensitive:
        shown = sensitive[:SHOWN_LINES]
        measures = (("distinct values", "distinct_values"), ("ℓ-diversity, distinct", "l_distinct"),
                    ("ℓ-diversity, entropy", "l_entropy"), ("t-closeness", "t"), ("δ-disclosure", "delta"),
                    ("β-likeness", "beta"), ("effective anonymity, min", "effective_anonymity_min"))
        rows = [(label, *(_number(s.get(key)) for s in shown)) for label, key in measures]
        parts.append("<h4>Sensitive attributes</h4>" + table(("model", *(s["attribute"] for s in shown)), rows,
                                                              tuple(range(1, len(shown) + 1))))
        if len(sensitive) > len(shown):
            parts.append(note(more(len(sensitive) - len(shown), "sensitive attributes")))
    risk = privacy.get("risk") or {}
    rows = []
    for attacker in ("prosecutor", "journalist"):
        figures = risk.get(attacker)
        if figures:
            rows.append((attacker, f"{figures['highest']:.3g}", f"{figures['average']:.3g}",
                         f"{figures['share_above_threshold']:.1%}"))
    if "marketer" in risk:
        rows.append(("marketer", "—", f"{risk['marketer']:.3g}", "—"))
    if rows:
        threshold = risk.get("threshold")
        parts.append("<h4>Re-identification risk</h4>" + table(
            ("attacker", "highest", "average", f"records above {_number(threshold)}"), rows, (1, 2, 3)))
    return "".join(parts)


# -- the ledger ----------------------------------------------------------------------------------


def ledger_html(report: Mapping[str, Any]) -> str:
    """The view of a ledger's export (:meth:`~crowdsafe.privacy.ledger.Ledger.export`): per dataset
    its budget, what is spent and left (a bar), and its latest entries; custodian-only."""
    from crowdsafe.report.plots import compact_bars_svg

    datasets: Sequence[Mapping[str, Any]] = report.get("datasets") or ()

    def dataset_section(dataset: Mapping[str, Any]) -> str:
        budget, spent, remaining = dataset["budget"], dataset["spent"], dataset["remaining"]
        share = spent["epsilon"] / budget["epsilon"] if budget["epsilon"] else 1.0
        chart = compact_bars_svg("ε spent of the budget", [("spent", min(share, 1.0)), ("budget", 1.0)],
                                 [f"ε {rounded_up(spent['epsilon'], 4)} ({share:.0%})", f"ε {budget['epsilon']:.4g}"],
                                 top=1.0)
        words = budget_words(budget, spent, remaining)
        entries = list(dataset.get("entries") or ())
        latest = entries[-SHOWN_ENTRIES:]
        rows = [(str(e["id"]), str(e["created_at"])[:19].replace("T", " "), e["kind"], rounded_up(e["epsilon"], 4),
                 rounded_up(e["delta"], 3), e["status"] + (" (seeded)" if e.get("seeded") else ""), e["description"])
                for e in reversed(latest)]
        listed = table(("#", "when (UTC)", "kind", "ε", "δ", "status", "what"), rows, (0, 3, 4), (6,)) if rows else ""
        older = note(more(len(entries) - len(latest), "older entries")) if len(entries) > len(latest) else ""
        counted = note(quantity(len(entries), 'entry', 'entries') + ', latest first:') if rows else ''
        return f"<h4>{escape(short(dataset['name']))}</h4><p>{escape(words)}</p>{chart}{counted}{listed}{older}"

    def render() -> str:
        sections = [banner()] + [dataset_section(d) for d in datasets[:SHOWN_DATASETS]]
        if len(datasets) > SHOWN_DATASETS:
            sections.append(note(more(len(datasets) - SHOWN_DATASETS, "datasets")))
        if not datasets:
            sections.append(note("No dataset has a budget yet: crowdsafe.api.set_budget(data, epsilon=..., "
                                 "delta=...)."))
        plural = "" if len(datasets) == 1 else "s"
        return box("Budget ledger", f"{report.get('ledger', '')}: {len(datasets):,} dataset{plural}", sections)

    return fitted(render)


def ledger_repr(report: Mapping[str, Any], kind: str = "LedgerReport") -> str:
    """A concise repr of a ledger's export: its path and, per dataset (the first few), what is
    spent of its budget; marked custodian-only."""
    datasets: Sequence[Mapping[str, Any]] = report.get("datasets") or ()
    parts = [f"{short(d['name'])!r}: ε {rounded_up(d['spent']['epsilon'], 4)} of {d['budget']['epsilon']:.4g} spent"
             for d in datasets[:SHOWN_DATASETS]]
    if len(datasets) > SHOWN_DATASETS:
        parts.append(more(len(datasets) - SHOWN_DATASETS, "datasets"))
    return f"{kind}({short(report.get('ledger', ''), 3)!r}, {'; '.join(parts) or 'no dataset'}; custodian only)"


__all__ = ["CUSTODIAN_BANNER", "check_html", "ledger_html", "ledger_repr"]
