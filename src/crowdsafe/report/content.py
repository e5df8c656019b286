"""What the release report says, computed from the release file and its certificate only.

The report is public, like the release beside it, so it follows the privacy boundary
(docs/privacy-boundary.md): every number in it is either (a) fixed before the data was read (the
certificate's guarantee, theorem, assumptions and plan: k, β, ε1) or (b) computed from the
published rows, a DP output (class sizes, distributions of published values, the scheme the
exponential mechanism chose, utility and risk measured on the release), or (b) again: noisy
answers of charged DP queries ("before" distributions, :mod:`crowdsafe.report.before`), each
labelled with its ε. Nothing here reads the input table, the sample, the ledger or the custodian
report: no input or sample size, suppression count, score, timing or fingerprint can reach it.
:func:`report_content` takes the release's rows and the certificate's JSON and nothing else,
and only the public fields of the certificate listed in :data:`PUBLIC_FIELDS` are read.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.data.level_words import by_level_name
from crowdsafe.errors import InputError
from crowdsafe.number_text import odds_factor, quantity, rounded_down, rounded_up
from crowdsafe.privacy.certificate import shown_value

#: The certificate fields the report reads (every one is class (a), or the chosen scheme, (b)).
PUBLIC_FIELDS = ("guarantee", "epsilon", "delta", "theorem", "reason", "assumptions", "mechanisms", "neighbours",
                 "parameters", "randomness", "accounting", "unfit_reasons", "fit_for_release", "components",
                 "format_notes", "crowdsafe_version")

#: The plan parameters the report shows, with their labels.
PLAN_PARAMETERS = (("k", "k (smallest class published)"), ("beta", "β (sampling rate)"),
                   ("epsilon1", "ε1 (spent choosing the scheme)"), ("epsilon_anon", "ε − ε1 (the anonymization)"),
                   ("delta_target", "δ target"), ("algorithm", "algorithm"))

#: Values shown per attribute before the rest are grouped as "other".
TOP_VALUES = 20
#: Published values named per attribute in the table of what was generalized: all of them when
#: there are at most one more than this, else this many and how many more.
EXAMPLE_VALUES = 5
#: How a missing value is shown: a release writes it ``?`` (an empty cell where the column is
#: published as it is, which reads as missing).
MISSING_SHOWN = "missing (?)"
MISSING_NOTE = ("missing (?): records whose value is missing, or lies outside the column's declared hierarchy; "
                "the release writes them as ? (or an empty cell where the column is published as it is)")
#: Values kept apart from the others, in this order, at the end: suppressed, then missing.
APART = ("*", MISSING_SHOWN)
#: the count column of a release's tuple table (:func:`tuple_table`); no column name holds a NUL
ROWS = "\x00records"

#: Class-size bands (as multiples of k) for the risk table.
SIZE_BANDS = ((1, 2), (2, 5), (5, 10), (10, math.inf))

_NUM = r"([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)"
#: A published number, interval ``[a, b)`` or open end ``>=a`` (the forms hierarchies and Mondrian write).
_NUMERIC_FORMS = (re.compile(rf"^\s*{_NUM}\s*$"), re.compile(rf"^\s*[\[(\]]\s*{_NUM}\s*[,;]\s*{_NUM}\s*[\])\[]\s*$"),
                  re.compile(rf"^\s*(?:<=|>=|<|>)\s*{_NUM}\s*$"))


@dataclass(frozen=True)
class AttributeView:
    """One published attribute: its level in the scheme, that level in words (``description``,
    from the certificate: :meth:`~crowdsafe.data.hierarchy.Hierarchy.describe_level`), and the
    distribution of its published values (``values``: (value, rows) in display order, at most
    :data:`TOP_VALUES` and one "other" entry; a missing value shown as :data:`MISSING_SHOWN`).
    ``examples``: the ``distinct`` values, most records first: all of them, or the first
    :data:`EXAMPLE_VALUES` (:attr:`values_text` says how many more)."""

    name: str
    level: int | None
    level_name: str | None
    distinct: int
    star_share: float
    values: tuple[tuple[str, int], ...]
    examples: tuple[str, ...]
    description: str | None = None

    @property
    def values_text(self) -> str:
        """The published values in words, consistent with ``distinct``: all of them, or the
        first few and how many more."""
        more = self.distinct - len(self.examples)
        return ", ".join(self.examples) + (f", … and {more:,} more" if more > 0 else "")

    @property
    def has_missing(self) -> bool:
        return any(v == MISSING_SHOWN for v, _ in self.values)


@dataclass(frozen=True)
class BeforeDistribution:
    """A noisy histogram of one attribute of the original data: the answer of a charged DP
    query (ε, δ), shown as "before" with its ε. ``values``: every cell of the answer as (value,
    noisy count), in the answer's order (the declared domain's, or by value), the counts as
    drawn (possibly negative); the panel's bars are chosen from them by public information only
    (:func:`crowdsafe.report.before_rows.before_bars`). ``interval``: the answer's 95% error
    interval of one cell, ``mechanism`` and ``noise_scale`` its noise. ``unfit_reasons``: why
    that answer is not fit for release (seeded noise, no ledger, a schema choice read from the
    data), which the report's verdict then states beside the release's own. ``ledger``: its
    charge (ledger path, entry, the budget spent: custodian-only, for the command line; never in
    the report)."""

    name: str
    epsilon: float
    delta: float
    values: tuple[tuple[str, float], ...]
    unfit_reasons: tuple[str, ...] = ()
    interval: tuple[float, float] | None = None
    mechanism: str = ""
    noise_scale: float = 0.0
    ledger: Any = field(default=None, compare=False, repr=False)


@dataclass(frozen=True)
class ReportContent:
    """Everything the report shows. ``class_sizes``: the size of every class of the release
    (rows sharing one quasi-identifier tuple), sorted."""

    title: str
    rows: int
    columns: tuple[str, ...]
    quasi_identifiers: tuple[str, ...]
    class_sizes: np.ndarray
    k: int | None
    certificate: dict[str, Any]
    guarantee: tuple[str, ...]
    fit_for_release: bool
    unfit_reasons: tuple[str, ...]
    assumptions: tuple[str, ...]
    plan: tuple[tuple[str, str], ...]
    mechanisms: tuple[tuple[str, str, str], ...]
    attributes: tuple[AttributeView, ...]
    utility: tuple[tuple[str, str, str], ...]
    risk: tuple[tuple[str, str, str], ...]
    before: tuple[BeforeDistribution, ...] = field(default=())
    sensitive: tuple[str, ...] = ()


def is_view_certificate(certificate: Mapping[str, Any]) -> bool:
    """Whether the certificate (its JSON, as a dict) is that of an α-β view (whose report is
    :mod:`crowdsafe.report.view_content`'s; here so that a release's report need not import it)."""
    parameters = certificate.get("parameters")
    return (certificate.get("guarantee") in ("d-gamma", "none") and isinstance(parameters, Mapping)
            and {"alpha", "beta", "domain"} <= set(parameters))

def public_certificate(certificate: Mapping[str, Any]) -> dict[str, Any]:
    """The certificate's public fields (:data:`PUBLIC_FIELDS`); the release id and anything
    else are left out (the release id names the sample; the report has no use for it)."""
    return {key: certificate[key] for key in PUBLIC_FIELDS if key in certificate}


#: The certificate's parameters the report reads inside (beyond :meth:`Certificate.from_dict`'s
#: checks, which leave the parameters free): each an object, or null or absent.
SHOWN_OBJECTS = ("selection", "scheme", "scheme_level_names", "scheme_level_descriptions")


def check_shown_fields(certificate: Mapping[str, Any]) -> None:
    """Refuse (:class:`InputError`, naming the field) a certificate whose parameters the report
    reads inside are not what it reads: :data:`SHOWN_OBJECTS`, each mechanism's parameters, and
    the quasi-identifiers (a list of strings). The rest is checked by
    :meth:`crowdsafe.privacy.certificate.Certificate.from_dict`, called first."""
    parameters = certificate.get("parameters") or {}
    shown: list[tuple[str, Any, str]] = [(f"parameters.{key}", parameters.get(key), "an object or null")
                                         for key in SHOWN_OBJECTS]
    shown += [(f"mechanisms[{i}].parameters", m.get("parameters"), "an object or null")
              for i, m in enumerate(certificate.get("mechanisms") or ())]
    for name, value, expected in shown:
        if value is not None and not isinstance(value, Mapping):
            raise InputError(f"certificate field {name!r} must be {expected}, got {shown_value(value)}")
    for key in ("quasi_identifiers", "sensitive"):  # a classic release's sensitive: one name (its constraint's)
        named = parameters.get(key)
        if key == "sensitive" and isinstance(named, str):
            continue
        if named is not None and not (isinstance(named, list) and all(isinstance(c, str) for c in named)):
            raise InputError(f"certificate field 'parameters.{key}' must be a list of strings or null, "
                             f"got {shown_value(named)}")


def _number(value: float | None, digits: int = 4) -> str:
    if value is None:
        return "—"
    return f"{value:.{digits}g}"


#: Plan and mechanism parameters that are privacy losses: stated rounded up, as every loss is.
LOSS_PARAMETERS = frozenset({"epsilon", "epsilon1", "epsilon_anon", "delta", "delta_target"})


def parameter_text(key: str, value: float, alpha_beta: bool = False) -> str:
    """A plan or mechanism parameter as the report shows it: a privacy loss rounded up (never
    below the one spent); a rate rounded toward what a user may type back and be granted, as
    the command line prints it (the sampling β and the α-β α are bounded above: down; the α-β
    β, the insertion rate, is bounded below: up); anything else to nearest."""
    if key in LOSS_PARAMETERS:
        return loss_text(value)
    if key == "alpha" or (key == "beta" and not alpha_beta):
        return rounded_down(value, 4)
    if key == "beta":
        return rounded_up(value, 4)
    return _number(value)


def loss_text(value: float | None, digits: int = 4) -> str:
    """A privacy loss (ε or δ) as the report states it: rounded up, never below the one proven
    (nearest rounding stated d = 4.0725e-14 as 4.07e-14 until 2026-11-30)."""
    return "—" if value is None else rounded_up(value, digits)


def claim_text(value: float | None, digits: int = 4) -> str:
    """A bound whose larger value is the stronger claim (the prior d of (d, γ)-privacy, the ratio
    d/γ below which a belief never falls), rounded down."""
    return "—" if value is None else rounded_down(value, digits)


def guarantee_words(certificate: Mapping[str, Any]) -> tuple[str, ...]:
    """The guarantee in plain words, one paragraph per entry, from the certificate alone."""
    kind = certificate.get("guarantee")
    if kind == "none":
        return (
            f"This table carries NO formal privacy guarantee: {certificate.get('reason') or 'no reason given'}.",
            "Its generalization was fitted to the data, so even though every class holds at least k records, "
            "nothing bounds what the table reveals about a person, alone or combined with other releases "
            "(composition attacks). Do not treat it as anonymous.",
        )
    epsilon, delta = certificate.get("epsilon"), certificate.get("delta")
    factor = odds_factor(epsilon) if isinstance(epsilon, (int, float)) else "inf"
    name = {"dps": "differential privacy under sampling", "dp": "differential privacy",
            "d-gamma": "(d, γ)-privacy"}.get(str(kind), str(kind))
    words = [
        f"This table satisfies ({loss_text(epsilon)}, {loss_text(delta, 3)})-{name}, proven by "
        f"{certificate.get('theorem') or 'the theorem named in the certificate'}.",
        f"In plain words: adding or removing any one person's record in the original data changes the "
        f"probability of every possible outcome (this table, and anything anyone computes from it) by at most a "
        f"factor of e^ε = {factor}, except with probability at most δ = {loss_text(delta, 3)}. "
        "This holds whatever else an attacker knows.",
    ]
    if kind == "dps":
        words.append("The guarantee rests on a secret random sample of the data: who was sampled is never "
                     "published, and the sample is used for this release only.")
    together = (certificate.get("parameters") or {}).get("published_together")
    if isinstance(together, Mapping) and isinstance(together.get("releases"), int):
        words.append(f"This table is one of {together['releases']:,} releases published together from the same data, "
                     f"each from a fresh sample: together they are ({loss_text(together.get('epsilon'))}, "
                     f"{loss_text(together.get('delta'), 3)})-differential privacy "
                     f"({together.get('composition') or 'composition'}). The guarantee above is this table's "
                     f"alone; whoever holds all {together['releases']:,} learns what that total allows.")
    return tuple(words)


def serves_words(certificate: Mapping[str, Any]) -> tuple[str, ...]:
    """Which analyses the release serves well and where other DP outputs serve better, one
    paragraph per entry, from the certificate's public fields alone (its guarantee and the
    objective that chose the scheme); empty for a table without a guarantee. The measurements
    behind it are in docs/publish.md ("Which analyses a certified release serves")."""
    if certificate.get("guarantee") in (None, "none"):
        return ()
    parameters = certificate.get("parameters") or {}
    selection = parameters.get("selection") or {}
    objective, target = selection.get("objective"), selection.get("target")
    chosen_for = {
        "classification": f"predicting {target} from the quasi-identifiers (its scheme keeps {target} as it is "
                          "and the detail a majority classifier needs)" if target else "a classification",
        "marginals": "all 1- and 2-way marginals of the published columns at once",
    }.get(str(objective), "keeping the most records at the finest levels (the retained information)"
          if objective else "")
    words = [
        "Every row is a true record, generalized: counts, cross-tabulations and models computed on this table are "
        "about real people, and nothing in it was invented. It serves best the analyses that need a few columns "
        "jointly, at the detail the table keeps"
        + (f"; its scheme was chosen for {chosen_for}." if chosen_for else "."),
        "It serves less well the analyses that need every column at fine detail at once, and rare combinations: one "
        "generalization applies to every analysis, and the classes under k were suppressed. Where the analyses "
        "are known low-order marginals, DP marginals answered directly, or DP synthetic data (such as MST or AIM), "
        "fit them better at the same ε.",
    ]
    if isinstance(parameters.get("beta"), (int, float)):
        words.append("The table is a random sample of the original data: a count on it estimates the original count "
                     "times the sampling rate β in the plan above, less what suppression removed.")
    return tuple(words)


def empty_release_words(certificate: Mapping[str, Any]) -> tuple[str, ...]:
    """What a release with no records means, one paragraph per entry, from the certificate's
    public fields alone (the release's own row count, 0, is what chose these words)."""
    parameters = certificate.get("parameters") or {}
    k = parameters.get("k")
    under = f"fewer than {k:,} records" if isinstance(k, int) else "fewer than k records"
    words = ["This release holds no records, so it serves no analysis: every record was suppressed (each "
             f"generalized tuple would have been shared by {under}), or there was none to publish."]
    if certificate.get("guarantee") not in (None, "none"):
        epsilon, delta = certificate.get("epsilon"), certificate.get("delta")
        words.append(f"The run spent its privacy budget all the same: ε = {loss_text(epsilon)}, "
                     f"δ = {loss_text(delta, 3)} count against the data whether or not a record is published, "
                     "and publishing again from the same data spends more. A larger ε, a smaller k or coarser "
                     "hierarchies let more classes reach k records.")
    return tuple(words)


def plan_rows(certificate: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    """The plan, fixed before the data was read (class (a)), and the scheme: its levels per
    attribute are a DP output of the exponential mechanism, or fixed when the scheme was given."""
    parameters = certificate.get("parameters") or {}
    alpha_beta = "alpha" in parameters
    rows = [(label, parameter_text(key, parameters[key], alpha_beta) if isinstance(parameters[key], float)
             else str(parameters[key]))
            for key, label in PLAN_PARAMETERS if key in parameters and parameters[key] is not None]
    selection = parameters.get("selection") or {}
    if selection.get("objective"):
        rows.append(("scheme chosen by", f"the exponential mechanism (objective: {selection['objective']}), "
                                         f"among {selection.get('candidates', '?'):,} candidate schemes"
                     if isinstance(selection.get("candidates"), int) else "the exponential mechanism"))
        if selection.get("objective_rule") not in (None, "given"):
            rows.append(("objective chosen by", f"the plan, from public facts only: {selection['objective_rule']}"))
        chosen_on = [m for m in certificate.get("mechanisms") or () if m.get("step") == "recode"]
        if chosen_on and (chosen_on[0].get("parameters") or {}).get("chosen_on") == "table":
            rows.append(("scheme scored on", "the whole table (at this small ε the sample is too small to choose "
                                             "on; the choice composes with the release: see the guarantee)"))
    elif "scheme" in parameters and certificate.get("guarantee") != "none":
        rows.append(("scheme chosen by", "fixed in advance (strongly safe: no data was used to choose it)"))
    rows.append(("neighbouring tables", str(certificate.get("neighbours", "add-remove"))))
    rows.append(("randomness", str((certificate.get("randomness") or {}).get("source", "none"))))
    ledger = (certificate.get("accounting") or {}).get("ledger")
    if ledger is not None:
        rows.append(("budget ledger", "recorded" if ledger else "none"))
    rows.append(("crowdsafe version", str(certificate.get("crowdsafe_version", "?"))))
    return tuple(rows)


def _mechanism_rows(certificate: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    rows = []
    alpha_beta = "alpha" in (certificate.get("parameters") or {})
    for mechanism in certificate.get("mechanisms") or ():
        parameters = ", ".join(f"{k} = {parameter_text(k, v, alpha_beta) if isinstance(v, float) else v}"
                               for k, v in sorted((mechanism.get("parameters") or {}).items()))
        rows.append((str(mechanism.get("step", "")), str(mechanism.get("name", "")), parameters))
    return tuple(rows)


def numeric_ends(value: str) -> tuple[float, float] | None:
    """(low, high) of a published number, interval or open end; None for any other value."""
    for form in _NUMERIC_FORMS:
        match = form.match(value)
        if match:
            ends = [float(g) for g in match.groups()]
            return ends[0], ends[-1]
    return None


def shown_label(value: object) -> str:
    """A published value as the report shows it: a missing value (None, an empty cell, ``?``) as
    :data:`MISSING_SHOWN`."""
    return MISSING_SHOWN if value is None or value in ("", "?") else str(value)


def _sort_key(value: str) -> tuple[int, float, str]:
    """Published values in a natural order: numbers and intervals by their lower end, then '*'
    and missing values."""
    if value in APART:
        return (2 + APART.index(value), 0.0, value)
    ends = numeric_ends(value)
    if ends is not None:
        return (0, ends[0], value)
    return (1, 0.0, value)


def _binned(values: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """Many numeric values or intervals: counts in :data:`TOP_VALUES` equal bins of their
    midpoints (labelled "a – b"), '*' and missing values kept apart."""
    stars = sorted(((v, c) for v, c in values if v in APART), key=lambda item: _sort_key(item[0]))
    points = np.array([sum(numeric_ends(v) or (0.0, 0.0)) / 2 for v, _ in values if v not in APART])
    counts = np.array([c for v, c in values if v not in APART], dtype=np.float64)
    edges = np.linspace(points.min(), points.max(), TOP_VALUES + 1)
    totals, _ = np.histogram(points, bins=edges, weights=counts)
    binned = [(f"{_number(float(a), 4)} – {_number(float(b), 4)}", float(t))
              for a, b, t in zip(edges[:-1], edges[1:], totals)]
    return binned + stars


def shown_values(values: Sequence[tuple[str, float]]) -> list[tuple[str, float]]:
    """At most :data:`TOP_VALUES` (value, count) pairs, the largest, then one "other" entry for the
    rest; numbers and intervals in their order, other values by count (ties by value, so the
    order does not depend on the order of the rows)."""
    ordered = sorted(values, key=lambda item: (-item[1], item[0]))
    numeric = all(v in APART or numeric_ends(v) is not None for v, _ in ordered)
    if numeric and len(ordered) > TOP_VALUES + 1 and any(v not in APART for v, _ in ordered):
        return _binned(ordered)
    top, rest = ordered[:TOP_VALUES], ordered[TOP_VALUES:]
    if all(_sort_key(v)[0] != 1 for v, _ in top):  # numbers or intervals: in their order
        top.sort(key=lambda item: _sort_key(item[0]))
    if rest:
        top.append((f"other ({quantity(len(rest), 'value')})", sum(c for _, c in rest)))
    return top


def attribute_views(tuples: pl.DataFrame, names: Sequence[str], parameters: Mapping[str, Any]
                    ) -> tuple[AttributeView, ...]:
    """:func:`attribute_view` of each of ``names``, their values counted in one query (the
    tuple table unpivoted, then grouped by column and value)."""
    if not names:
        return ()
    column, value = "column", "value"  # names no published column has
    while column in names or column == ROWS:
        column = "_" + column
    while value in names or value in (ROWS, column):
        value = "_" + value
    long = tuples.select(*(pl.col(n).cast(pl.String).fill_null("") for n in names), ROWS) \
        .unpivot(index=ROWS, on=list(names), variable_name=column, value_name=value) \
        .group_by(column, value).agg(pl.col(ROWS).sum())
    counted: dict[str, list[tuple[str, int]]] = {n: [] for n in names}
    for name, shown, rows in long.select(column, value, ROWS).iter_rows():
        counted[name].append((shown, int(rows)))
    return tuple(attribute_view(tuples, n, parameters, counted[n]) for n in names)


def attribute_view(tuples: pl.DataFrame, name: str, parameters: Mapping[str, Any],
                   counts: Sequence[tuple[str, int]] | None = None) -> AttributeView:
    """The published distribution of ``name`` and its level in the scheme, from the release's
    tuple table (:func:`tuple_table`). ``counts``: each value's records (every value as text, a
    missing one as ""), when counted already (:func:`attribute_views`)."""
    if counts is None:
        grouped = tuples.group_by(pl.col(name).cast(pl.String).fill_null("")).agg(pl.col(ROWS).sum())
        counts = list(zip(grouped.get_column(name).to_list(), grouped.get_column(ROWS).to_list()))
    merged: dict[str, int] = {}
    for v, c in counts:
        label = shown_label(v)  # an empty cell and '?' are both the missing value
        merged[label] = merged.get(label, 0) + int(c)
    values = sorted(merged.items(), key=lambda item: (-item[1], item[0]))
    shown = [(v, int(c)) for v, c in shown_values(values)]
    stars = merged.get("*", 0)
    total = sum(merged.values())
    scheme = parameters.get("scheme") or {}
    level_names = parameters.get("scheme_level_names") or {}
    level, level_name = scheme.get(name), level_names.get(name)
    description = (parameters.get("scheme_level_descriptions") or {}).get(name)
    if description is None and isinstance(level, int) and level_name:  # a certificate written before they existed
        description = by_level_name(name, str(level_name), level)
    examples = tuple(v for v, _ in (values if len(values) <= EXAMPLE_VALUES + 1 else values[:EXAMPLE_VALUES]))
    return AttributeView(name=name, level=level, level_name=level_name, distinct=len(values),
                         star_share=stars / total if total else 0.0, values=tuple(shown),
                         examples=examples, description=description)


def tuple_table(frame: pl.DataFrame | pl.LazyFrame, quasi_identifiers: Sequence[str], weighted: bool = False
                ) -> pl.DataFrame:
    """The release reduced to one row per distinct quasi-identifier tuple with its number of
    records (column :data:`ROWS`). A LazyFrame (a release scanned from its files) is reduced by
    Polars' streaming engine, so a release larger than memory is never held whole. ``weighted``:
    the frame holds the release's rows weighted, one row per class line with its records in
    :data:`ROWS` (:func:`crowdsafe.report.classes.class_rows`): the weights are summed instead of
    the rows counted."""
    count = pl.col(ROWS).sum() if weighted else pl.len()
    return (frame.lazy().group_by(list(quasi_identifiers)).agg(count.cast(pl.Int64).alias(ROWS))
            .collect(engine="streaming"))


def class_sizes_of(tuples: pl.DataFrame) -> np.ndarray:
    """The size of every class (records with one quasi-identifier tuple), sorted ascending, from
    the release's tuple table (:func:`tuple_table`)."""
    return np.sort(tuples.get_column(ROWS).to_numpy().astype(np.int64))


def utility_rows(records: int, sizes: np.ndarray, attributes: Sequence[AttributeView], k: int | None
                 ) -> tuple[tuple[str, str, str], ...]:
    """Utility measured on the release alone (no comparison with the input, which is custodian-only)."""
    cells = records * len(attributes)
    stars = sum(a.star_share * records for a in attributes)
    generalized = sum(records for a in attributes if a.level)
    rows = [
        ("records published", f"{records:,}", "rows of the release"),
        ("classes", f"{len(sizes):,}", "distinct quasi-identifier tuples in the release"),
        ("average class size", _number(float(sizes.mean()) if len(sizes) else None),
         "records per class: larger means coarser"),
    ]
    if k and len(sizes):
        rows.append(("normalized average class size (C_avg)", _number(float(sizes.mean()) / k),
                     "average class size / k: 1 is the finest k allows"))
    rows.append(("discernibility of the release", f"{int(np.sum(sizes.astype(np.float64) ** 2)):,}",
                 "sum of squared class sizes over the published records"))
    if cells:
        rows.append(("cells shown as '*'", f"{stars / cells:.1%}", "quasi-identifier cells fully suppressed"))
        if any(a.level is not None for a in attributes):
            rows.append(("cells generalized", f"{generalized / cells:.1%}",
                         "quasi-identifier cells above the finest level of their hierarchy"))
    return tuple(rows)


def risk_rows(sizes: np.ndarray, k: int | None, certificate: Mapping[str, Any]) -> tuple[tuple[str, str, str], ...]:
    """Re-identification risk read from the release alone, and the DP bound in words."""
    total = int(sizes.sum())
    rows: list[tuple[str, str, str]] = []
    if len(sizes):
        smallest = int(sizes[0])
        rows.append(("smallest class", f"{smallest:,}", "no published tuple is shared by fewer records"))
        rows.append(("highest linkage risk", f"{1 / smallest:.2%}",
                     "1 / smallest class: the chance of picking the right record within a class"))
        rows.append(("average linkage risk", f"{len(sizes) / total:.2%}", "classes / records"))
        if k:
            for low, high in SIZE_BANDS:
                inside = (sizes >= low * k) & (sizes < high * k)
                band = f"{low * k:,}+" if math.isinf(high) else f"{low * k:,} – {int(high * k) - 1:,}"
                rows.append((f"records in classes of {band}", f"{int(sizes[inside].sum()) / total:.1%}",
                             quantity(int(inside.sum()), "class", "classes")))
    if certificate.get("guarantee") == "none":
        rows.append(("differential privacy", "none", "class sizes are the only protection, and they do not "
                                                   "compose: an attacker with two releases can do better"))
    else:
        epsilon = certificate.get("epsilon")
        rows.append(("differential privacy", f"ε = {loss_text(epsilon)}, δ = {loss_text(certificate.get('delta'), 3)}",
                     "whatever an attacker knows, this table changes their odds about any one person by at most "
                     "a factor e^ε (except with probability δ); it also bounds what several releases reveal "
                     "together (their ε add up)"))
    return tuple(rows)


def report_content(frame: pl.DataFrame | pl.LazyFrame, certificate: Mapping[str, Any], title: str,
                   before: Sequence[BeforeDistribution] = (), weighted: bool = False) -> ReportContent:
    """The report of the release ``frame`` (every column as text, as read from the file; a
    LazyFrame is reduced without being held whole, :func:`tuple_table`; ``weighted``: one row
    per class line, its records in :data:`ROWS`) carrying ``certificate`` (its JSON,
    as a dict). ``title``: the release's file name. ``before``: noisy histograms of the original
    data from charged DP queries."""
    public = public_certificate(certificate)
    parameters = public.get("parameters") or {}
    columns = tuple(c for c in frame.collect_schema().names() if not (weighted and c == ROWS))
    listed = list(parameters.get("quasi_identifiers") or ())
    absent = [c for c in listed if c not in columns]
    if absent:  # the certificate of another table (or a table cut after it was written)
        raise InputError(f"the certificate names the quasi-identifier '{absent[0]}', which {title} does not hold; "
                         "put the certificate written with this table beside it")
    quasi_identifiers = tuple(listed) if listed else columns
    declared = parameters.get("sensitive") or ()
    sensitive = tuple(c for c in ((declared,) if isinstance(declared, str) else declared) if c in columns)
    k = parameters.get("k") if isinstance(parameters.get("k"), int) else None
    if quasi_identifiers:
        tuples = tuple_table(frame, quasi_identifiers, weighted)
        sizes = class_sizes_of(tuples)
        records = int(sizes.sum())
    else:  # a release without columns
        tuples, sizes = pl.DataFrame(), np.zeros(0, dtype=np.int64)
        records = int(frame.lazy().select(pl.col(ROWS).sum() if weighted else pl.len()).collect().item())
    attributes = attribute_views(tuples, quasi_identifiers, parameters)
    unfit = tuple(str(r) for r in public.get("unfit_reasons") or ()) + tuple(
        f"the before-distribution of {b.name}: {reason}" for b in before for reason in b.unfit_reasons)
    return ReportContent(
        title=title, rows=records, columns=columns, quasi_identifiers=quasi_identifiers,
        class_sizes=sizes, k=k, certificate=public, guarantee=guarantee_words(public),
        fit_for_release=bool(public.get("fit_for_release")) and not unfit, unfit_reasons=unfit,
        assumptions=tuple(str(a) for a in public.get("assumptions") or ()), plan=plan_rows(public),
        mechanisms=_mechanism_rows(public), attributes=attributes,
        utility=utility_rows(records, sizes, attributes, k), risk=risk_rows(sizes, k, public), before=tuple(before),
        sensitive=sensitive,
    )


def columns_words(columns: Sequence[str], quasi_identifiers: Sequence[str], sensitive: Sequence[str] = ()) -> str:
    """The release's columns counted by role, from the certificate's lists (the plan's, from the
    schema: public), never from the data: ``8 columns: 7 quasi-identifiers and 1 sensitive, all 8
    grouped as quasi-identifiers``. A certified release generalizes and groups every published
    column, a sensitive one included (Theorems 5 and 6 count classes over all of them), so its
    declared sensitive columns are counted apart and said to be grouped all the same; a classic
    release's sensitive attribute (its ℓ-diversity or t-closeness constraint's) is counted as
    sensitive, its other columns outside the quasi-identifiers as other."""
    n, grouped, declared = len(columns), set(quasi_identifiers), set(sensitive)
    roles = [(quantity(sum(c in grouped and c not in declared for c in columns), "quasi-identifier"), True),
             (f"{sum(c in declared for c in columns):,} sensitive", any(c in declared for c in columns)),
             (quantity(sum(c not in grouped and c not in declared for c in columns), "other"),
              any(c not in grouped and c not in declared for c in columns))]
    parts = [text for text, shown in roles if shown and not text.startswith("0 ")]
    if not n or not parts:
        return quantity(n, "column")
    if all(c in grouped and c not in declared for c in columns):
        return f"{quantity(n, 'column')}, {'a quasi-identifier' if n == 1 else 'all quasi-identifiers'}"
    listed = parts[0] if len(parts) == 1 else f"{', '.join(parts[:-1])} and {parts[-1]}"
    if not all(c in grouped for c in columns):
        return f"{quantity(n, 'column')}: {listed}"
    together = "grouped as a quasi-identifier" if n == 1 else f"all {n:,} grouped as quasi-identifiers"
    return f"{quantity(n, 'column')}: {listed}, {together}"


__all__ = ["MISSING_SHOWN", "AttributeView", "BeforeDistribution", "PUBLIC_FIELDS", "ReportContent", "attribute_view",
           "attribute_views", "check_shown_fields", "columns_words", "empty_release_words",
           "class_sizes_of", "guarantee_words", "plan_rows", "public_certificate", "report_content", "risk_rows",
           "shown_label", "shown_values", "tuple_table", "utility_rows"]
