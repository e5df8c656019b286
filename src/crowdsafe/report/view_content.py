"""What the report of a perturbed (α-β) view says, computed from the view file and its certificate only.

An α-β view is public, like a release, and so is its report (docs/privacy-boundary.md). Every
number in it is either (a) fixed before the data was read (the certificate's guarantee, theorem,
assumptions and plan: d, γ, α, β, the public bound N, the public domains and their size m, the
theorem's error bound computed with N) or (b) computed from the view, the output of the α-β
mechanism (its number of rows, the view's counts per value, and the unbiased estimates of the
data's counts, EST(Q, V) = (n_V − β·n_D)/(α − β), with their error bars: post-processing of the
view by :mod:`crowdsafe.perturb.estimator`). Nothing reads the input table, the ledger or the
custodian-only report (exact rows, distinct tuples, duplicates collapsed): only the certificate
fields in :data:`VIEW_PUBLIC_FIELDS` and the parameters in :data:`VIEW_PARAMETERS` are read, and
the view is rebuilt from them (:func:`public_view`).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import polars as pl

from crowdsafe.errors import InputError, ParameterError
from crowdsafe.number_text import quantity, rounded_down, rounded_up
from crowdsafe.report.content import _mechanism_rows, _number, claim_text, is_view_certificate, loss_text

if TYPE_CHECKING:  # a release's report reads no view: the perturbation package is imported for views only
    from crowdsafe.perturb.view import View
    from crowdsafe.report.view_scan import ViewCounts

#: The certificate fields a view's report reads (each class (a), or the view's size, class (b)).
VIEW_PUBLIC_FIELDS = ("guarantee", "epsilon", "delta", "theorem", "reason", "assumptions", "mechanisms",
                      "neighbours", "parameters", "randomness", "unfit_reasons", "fit_for_release", "format_notes",
                      "crowdsafe_version")

#: The certificate parameters a view's report reads (what :func:`crowdsafe.perturb.alpha_beta.certify` writes).
VIEW_PARAMETERS = ("d", "gamma", "c", "alpha", "beta", "max_rows", "max_rows_source", "n", "m", "attributes",
                   "domain_kind", "domain_sources", "domain", "duplicates", "view_rows", "expected_view_rows_at_most",
                   "posterior_present_max", "posterior_absent_ratio_min", "exclusive_correlations", "estimator",
                   "utility")

#: The confidence of every error bar in the report.
CONFIDENCE = 0.95

#: An attribute with at most this many domain values shows each; a larger one is grouped.
ALL_VALUES = 40

#: Groups shown for a larger attribute: consecutive ranges of an ordered domain, else the values
#: with the largest estimates and one "other" group.
GROUPS = 20

MISSING_LABEL = "(missing)"


def public_view_certificate(certificate: Mapping[str, Any]) -> dict[str, Any]:
    """The view certificate's public fields and parameters; everything else is left out."""
    public = {key: certificate[key] for key in VIEW_PUBLIC_FIELDS if key in certificate}
    parameters = certificate.get("parameters") or {}
    public["parameters"] = {key: parameters[key] for key in VIEW_PARAMETERS if key in parameters}
    return public


def public_view(path: str | os.PathLike[str], public: Mapping[str, Any]) -> View:
    """The view at ``path`` read with the public certificate fields only (α, β, N, the domain,
    how CSV cells are written): what the estimator needs, and nothing else."""
    from crowdsafe.perturb.view import view_with_certificate

    try:
        certificate = _certificate(public)
    except ParameterError as exc:
        raise InputError(f"the certificate of {Path(path).name} is not a valid view certificate: {exc}") from None
    return view_with_certificate(path, certificate, f"the certificate of {Path(path).name}")


def scanned_view(path: str | os.PathLike[str], public: Mapping[str, Any]) -> ViewCounts:
    """The counts the report reads from the view at ``path``, scanned lazily with the public
    certificate fields only (:mod:`crowdsafe.report.view_scan`; :func:`public_view` is its
    reference twin, reading the view whole)."""
    from crowdsafe.report.view_scan import scan_view_counts

    try:
        certificate = _certificate(public)
    except ParameterError as exc:
        raise InputError(f"the certificate of {Path(path).name} is not a valid view certificate: {exc}") from None
    return scan_view_counts(path, certificate, f"the certificate of {Path(path).name}")


def _certificate(public: Mapping[str, Any]) -> Any:
    """A :class:`~crowdsafe.privacy.certificate.Certificate` holding the public fields only."""
    from crowdsafe.privacy.certificate import Certificate

    return Certificate(
        guarantee=public.get("guarantee", "none"), epsilon=public.get("epsilon"), delta=public.get("delta"),
        theorem=public.get("theorem"), mechanisms=tuple(public.get("mechanisms") or ()),
        parameters=dict(public.get("parameters") or {}), assumptions=tuple(public.get("assumptions") or ()),
        neighbours=public.get("neighbours", "add-remove"), reason=public.get("reason"),
        randomness=public.get("randomness"), format_notes=tuple(public.get("format_notes") or ()),
        crowdsafe_version=str(public.get("crowdsafe_version", "?")),
    )


@dataclass(frozen=True)
class ValueEstimate:
    """One value (or group of values) of an attribute: its rows in the view, the number of domain
    tuples it matches, the unbiased estimate of its count in the data and the error bar."""

    label: str
    n_view: int
    n_domain: float
    estimate: float
    error: float


@dataclass(frozen=True)
class AttributeEstimates:
    """An attribute of the view: its public domain's size and where it came from, and its values."""

    name: str
    domain_size: int
    source: str
    grouped: str | None
    values: tuple[ValueEstimate, ...]


@dataclass(frozen=True)
class ViewReportContent:
    """Everything the report of a view shows."""

    title: str
    rows: int
    attributes: tuple[AttributeEstimates, ...]
    certificate: dict[str, Any]
    guarantee: tuple[str, ...]
    fit_for_release: bool
    unfit_reasons: tuple[str, ...]
    assumptions: tuple[str, ...]
    plan: tuple[tuple[str, str], ...]
    mechanisms: tuple[tuple[str, str, str], ...]
    theorem_bound: str | None


def view_guarantee_words(certificate: Mapping[str, Any]) -> tuple[str, ...]:
    """The view's guarantee in plain words, one paragraph per entry, from the certificate alone."""
    parameters = certificate.get("parameters") or {}
    if certificate.get("guarantee") != "d-gamma":
        return (f"This view carries NO formal privacy guarantee: {certificate.get('reason') or 'no reason given'}.",
                "Its rows still mix kept true tuples with inserted ones, but its parameters or domain were taken "
                "from the data, so nothing bounds what it reveals. Do not publish it.")
    d, gamma = parameters.get("d"), parameters.get("gamma")
    alpha, beta = parameters.get("alpha"), parameters.get("beta")
    epsilon = certificate.get("epsilon")
    factor = math.exp(epsilon) if isinstance(epsilon, (int, float)) and epsilon < 700 else math.inf
    ratio = d / gamma if isinstance(d, (int, float)) and isinstance(gamma, (int, float)) and gamma else None
    words = [
        f"This view is (d, γ)-private with d = {claim_text(d)} and γ = {loss_text(gamma)}, proven by "
        f"{certificate.get('theorem') or 'the theorem named in the certificate'}.",
        f"In plain words: take an attacker who, before seeing the view, believes each possible tuple (one "
        f"combination of the published attributes' values) is in the data with probability at most d = "
        f"{claim_text(d)}, independently of the other tuples. After seeing the view, their belief that any tuple is "
        f"in the data is at most γ = {loss_text(gamma)}, and never falls below d/γ = {claim_text(ratio)} times what it "
        "was. Tuples they already know for certain stay known; the promise is about every other tuple.",
        f"Each true tuple was kept with probability α = {_number(alpha)} and each other tuple of the public domain "
        f"was inserted with probability β = {_number(beta)}; kept and inserted tuples are listed together in the "
        "domain's order and cannot be told apart.",
        f"As unbounded differential privacy (one tuple added or removed, within the same domain) the view is "
        f"ε-differentially private with ε = max(ln(α/β), ln((1−β)/(1−α))) = {loss_text(epsilon)} (δ = "
        f"{loss_text(certificate.get('delta'), 3)}): the probability of any outcome changes by at most a factor "
        f"e^ε = {loss_text(factor, 3)}. That ε is large; the (d, γ) promise above is the useful one, and it rests on "
        "the assumption about the attacker.",
        "It covers the view and anything computed from it, this report included, for this one view: a second "
        "view of the same data gives the attacker a second chance at every tuple, and the ε of the views add up.",
    ]
    return tuple(words)


def view_plan_rows(certificate: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The plan, fixed before the data was read (class (a)), from the certificate's parameters."""
    p = certificate.get("parameters") or {}

    def number(key: str, rounded: Callable[[float, int], str] = _number, digits: int = 6) -> str:
        value = p.get(key)
        return rounded(value, digits) if isinstance(value, (int, float)) and not isinstance(value, bool) else "—"

    bound = p.get("max_rows", p.get("n"))
    m = p.get("m")
    rows = [
        ("d (largest prior of the attacker)" + (f" = c·N/m, c = {_number(p['c'])}" if p.get("c") is not None else ""),
         number("d", claim_text)),  # a larger d claims more: down
        ("γ (largest posterior)", number("gamma", loss_text)),  # a bound on the posterior: up
        ("α (keep a true tuple)", number("alpha", rounded_down)),  # rates as the planner prints them
        ("β (insert a domain tuple)", number("beta", rounded_up)),
        ("N (public bound on the rows, used in place of n)" if p.get("max_rows_source", "declared") == "declared"
         else "N (read from the data, used in place of n: custodian-only)",
         (f"{bound:,}" if isinstance(bound, int) else "—") + (f" ({p['max_rows_source']})"
                                                               if p.get("max_rows_source") else "")),
        ("m (tuples in the domain read from the data: custodian-only)" if p.get("domain_kind") == "active"
         else "m (tuples in the public domain)",
         (f"{m:,}" if m < 10**15 else f"{m:.4e}") if isinstance(m, int) else "—"),
        ("attributes", ", ".join(str(a) for a in p.get("attributes") or ())),
        ("domain", "declared before the data was read" if p.get("domain_kind") == "declared"
         else "the data's own values (active domain)"),
        ("duplicate rows", str(p.get("duplicates", "—"))),
        ("expected view rows, at most", f"{p['expected_view_rows_at_most']:,.0f}"
         if isinstance(p.get("expected_view_rows_at_most"), (int, float)) else "—"),
        ("largest posterior of a tuple seen in the view", number("posterior_present_max", loss_text)),
        ("smallest posterior / prior of a tuple not seen", number("posterior_absent_ratio_min", claim_text)),
        ("planned for 'exactly one of a set' correlations", "yes" if p.get("exclusive_correlations") else "no"),
        ("neighbouring tables", str(certificate.get("neighbours", "add-remove"))),
        ("randomness", str((certificate.get("randomness") or {}).get("source", "none"))),
        ("estimator", str(p.get("estimator", "—"))),
        ("crowdsafe version", str(certificate.get("crowdsafe_version", "?"))),
    ]
    return tuple(rows)


def theorem_bound_words(certificate: Mapping[str, Any]) -> str | None:
    """The theorem's per-query error bound (computed with N, in the certificate), in words: it
    holds for each query fixed before the view is seen, not for all queries at once."""
    utility = (certificate.get("parameters") or {}).get("utility")
    if not isinstance(utility, Mapping):
        return None
    if utility.get("applies") and isinstance(utility.get("error"), (int, float)):
        confidence = 1 - float(utility.get("failure_probability") or 0.05)
        return (f"The theorem's bound for one counting query: the estimate of a query chosen before "
                f"looking at the view is within ± {utility['error']:,.0f} of the true count with "
                f"probability at least {confidence:.0%}. This holds for each such query on its own, "
                "not for many queries together, and not for a query chosen after looking at the view.")
    return f"The theorem's error bound does not apply here: {utility.get('reason') or 'no reason given'}."


def _label(value: Any) -> str:
    return MISSING_LABEL if value is None else str(value)


def _grouped(sweep: pl.DataFrame, values: pl.Series) -> tuple[str | None, list[tuple[str, np.ndarray]]]:
    """How the values of ``name`` are shown: (a note, [(label, row indices into ``sweep``)])."""
    size = len(values)
    labels = [_label(v) for v in values.to_list()]
    if size <= ALL_VALUES:
        return None, [(label, np.array([i])) for i, label in enumerate(labels)]
    if values.dtype.is_numeric() or values.dtype.is_temporal():  # ordered: ranges of about equal numbers of values
        present = np.flatnonzero(values.is_not_null().to_numpy())  # a missing value is a group of its own
        edges = np.linspace(0, len(present), GROUPS + 1).round().astype(int)
        groups = [(f"{labels[present[a]]} – {labels[present[b - 1]]}", present[a:b])
                  for a, b in zip(edges[:-1], edges[1:]) if b > a]
        groups += [(MISSING_LABEL, np.array([i])) for i in np.flatnonzero(values.is_null().to_numpy())]
        return (f"{size:,} domain values, shown as {len(groups)} consecutive ranges (each range's estimate is the "
                "estimate of the range query)"), groups
    order = np.lexsort((np.arange(size), -sweep.get_column("estimate").to_numpy()))
    top, rest = order[:GROUPS], order[GROUPS:]
    groups = [(labels[i], np.array([i])) for i in sorted(top)]
    groups.append((f"other ({quantity(len(rest), 'value')})", np.sort(rest)))
    return (f"{size:,} domain values: the {GROUPS} with the largest estimates, the rest as one group (its estimate "
            "is the estimate of the query for all of them)"), groups


def attribute_estimates(view: View | ViewCounts, name: str, source: str) -> AttributeEstimates:
    """Per value of ``name``'s public domain: the view's rows and the unbiased estimate of the
    data's count (:func:`crowdsafe.perturb.equality_estimates`, one attribute at a time); groups
    of values add their counts, and their estimate is EST of the group's query. ``view``: the
    view's counts, scanned (:func:`crowdsafe.report.view_scan.scan_view_counts`), or the view
    read whole (:func:`public_view`, the reference twin): the same numbers."""
    from crowdsafe.perturb.estimator import equality_estimates, est
    from crowdsafe.privacy.dgamma import bernstein_error_bound, failure_of
    from crowdsafe.report.view_scan import ViewCounts, attribute_sweep

    if isinstance(view, ViewCounts):
        sweep = attribute_sweep(view, name, CONFIDENCE)
    else:
        sweep = equality_estimates(view, max_attributes=1, attributes=[name], confidence=CONFIDENCE).frame
    values = view.domain.values[name]
    if sweep.height != len(values):  # one row per domain value, in domain order (a dense count)
        raise ParameterError(f"the attribute {name} has too many domain values ({len(values):,}) to report")
    note, groups = _grouped(sweep, values)
    n_view = sweep.get_column("n_view").to_numpy().astype(np.int64)
    n_domain = sweep.get_column("n_domain").to_numpy().astype(np.float64)
    shown = []
    for label, rows in groups:
        if len(rows) == 1:  # one value: the estimator's own numbers
            i = int(rows[0])
            shown.append(ValueEstimate(label, int(n_view[i]), float(n_domain[i]), float(sweep["estimate"][i]),
                                       float(sweep["error"][i])))
            continue
        counted, matching = int(n_view[rows].sum()), float(n_domain[rows].sum())
        shown.append(ValueEstimate(label, counted, matching, float(est(counted, matching, view.alpha, view.beta)),
                                   float(bernstein_error_bound(view.alpha, view.beta, view.n_bound, matching,
                                                               failure_of(CONFIDENCE)))))
    return AttributeEstimates(name=name, domain_size=len(values), source=source, grouped=note, values=tuple(shown))


def view_report_content(view: View | ViewCounts, public: Mapping[str, Any], title: str) -> ViewReportContent:
    """The report of ``view`` (its counts, :func:`scanned_view`, or the view read whole,
    :func:`public_view`) and its public certificate fields (:func:`public_view_certificate`);
    ``title``: the view's file name."""
    parameters = public.get("parameters") or {}
    sources = parameters.get("domain_sources") or {}
    attributes = tuple(attribute_estimates(view, a, str(sources.get(a, "—"))) for a in view.attributes)
    unfit = tuple(str(r) for r in public.get("unfit_reasons") or ())
    return ViewReportContent(
        title=title, rows=view.rows, attributes=attributes, certificate=dict(public),
        guarantee=view_guarantee_words(public),
        fit_for_release=bool(public.get("fit_for_release")) and not unfit and public.get("guarantee") == "d-gamma",
        unfit_reasons=unfit, assumptions=tuple(str(a) for a in public.get("assumptions") or ()),
        plan=view_plan_rows(public), mechanisms=_mechanism_rows(public), theorem_bound=theorem_bound_words(public),
    )


def build_view_report(path: str | os.PathLike[str], certificate: Mapping[str, Any]) -> str:
    """The report page of the view at ``path`` whose certificate (its JSON, as a dict) is given:
    only its public fields are read."""
    from crowdsafe.report.view_html import render_view_html

    public = public_view_certificate(certificate)
    return render_view_html(view_report_content(scanned_view(path, public), public, Path(path).name))


__all__ = ["AttributeEstimates", "VIEW_PARAMETERS", "VIEW_PUBLIC_FIELDS", "ValueEstimate", "ViewReportContent",
           "attribute_estimates", "build_view_report", "is_view_certificate", "public_view",
           "public_view_certificate", "scanned_view", "theorem_bound_words", "view_guarantee_words", "view_plan_rows",
           "view_report_content"]
