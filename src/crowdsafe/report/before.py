"""The report's "before" distributions: DP histograms of the original data, charged to the ledger.

The original table's distributions are exact facts about the data, so the report never shows
them as they are. When the custodian asks (``crowdsafe report RELEASE --before DATA
--before-epsilon E``), each published attribute's distribution is answered by a DP histogram
query through :func:`crowdsafe.api.query`: the same machinery, checks and ledger as
``crowdsafe query`` (a public domain per column, or δ > 0 for the thresholded histogram), each
charged ε = E / (number of attributes) to the data's budget, so the whole costs E (sequential
composition). Only the noisy cells reach the report, each figure labelled with its ε and δ;
nothing custodian-only (clamps, rows outside the domain) is read. An answer that is not fit for
release (seeded noise, no ledger, an unreviewed schema choice read from the data) makes the
report's verdict "NOT fit for release", with its reasons.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from typing import Any

import polars as pl

from crowdsafe.errors import ParameterError
from crowdsafe.privacy.ledger import Ledger, ledger_for
from crowdsafe.report.content import BeforeDistribution, shown_label


def _quoted(name: str) -> str:
    """A column name as the query language reads it: backticks unless it is a plain name, one
    the language reads bare (ASCII letters, digits, ``_``, ``-``, ``.``, not a keyword). A name
    such as ``Größe`` went bare once, and the query refused it (``unexpected 'ö'``)."""
    from crowdsafe.mechanisms.query_language import KEYWORDS

    plain = re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]*", name) is not None and name.lower() not in KEYWORDS
    return name if plain else f"`{name}`"


def noisy_values(answer: pl.DataFrame, name: str) -> tuple[tuple[str, float], ...]:
    """The cells of a one-column noisy histogram as (value, noisy count), in the answer's order
    (the declared domain's, or by value: public either way), every cell as drawn. Which of them
    the report shows, and in which order, is chosen from public information only when the
    report is drawn (:func:`crowdsafe.report.before_rows.before_bars`), never by the counts."""
    merged: dict[str, float] = {}
    for v, c in zip(answer.get_column(name).to_list(), answer.get_column("count").to_list()):
        label = shown_label(v)  # None and '?' are both the missing value: one cell
        merged[label] = merged.get(label, 0.0) + float(c)
    return tuple(merged.items())


def before_distributions(data: Any, columns: Sequence[str], epsilon: float, *, delta: float = 0.0,
                         schema: str | os.PathLike[str] | None = None, ledger: Any = "default",
                         name: str | None = None, seed: int | None = None,
                         decimal_comma: bool | None = None) -> list[BeforeDistribution]:
    """One DP histogram per column of ``data`` (the table the release was published from),
    ``epsilon`` split evenly between them, each charged to ``ledger`` under ``name``. Every query
    is checked first (a column without a public domain needs ``delta`` > 0), and so is the whole
    cost against the dataset's remaining budget, so a refusal charges nothing; each charge then
    goes through the ledger's own budget check. ``decimal_comma``:
    how a CSV ``data`` writes its numbers (:func:`crowdsafe.data.load`)."""
    from crowdsafe import api

    if not columns:
        raise ParameterError("the release has no quasi-identifiers to show before-distributions of")
    if not epsilon > 0:
        raise ParameterError(f"the before-epsilon must be positive, got {epsilon:g}", parameter="before_epsilon")
    from crowdsafe.data import Schema
    from crowdsafe.mechanisms.query_plan import QueryRequest

    each = epsilon / len(columns)
    texts = {column: f"histogram {_quoted(column)}" for column in columns}
    reading = Schema.reading(schema, decimal_comma=decimal_comma)
    dataset = api.load(data, schema=reading)
    # every query's refusals (a column without a public domain) before any charge; each histogram
    # is given the δ only if it spends it (one over public values refuses a δ it would not use)
    deltas = {column: _check_before(dataset, column, QueryRequest(text, epsilon=each, delta=delta))
              for column, text in texts.items()}
    result = []
    with ledger_for(ledger) as book:
        if book is not None:  # the whole cost against the budget before the first charge
            _check_total(book, dataset, name or dataset.name or "data", epsilon, delta * len(columns))
        for column, text in texts.items():
            # the table read once, above (each histogram read it again: its notes printed once per column)
            answer = api.query(dataset, text, epsilon=each, delta=deltas[column], ledger=book, name=name,
                               randomness=seed)
            frame = answer.value
            if not isinstance(frame, pl.DataFrame):  # a histogram answers with a table of cells
                raise ParameterError(f"the histogram of {column} did not answer with cells")
            result.append(BeforeDistribution(name=column, epsilon=answer.epsilon, delta=answer.delta,
                                             values=noisy_values(frame, column),
                                             unfit_reasons=answer_unfit_reasons(answer, recorded=book is not None),
                                             interval=(float(answer.error_interval[0]),
                                                       float(answer.error_interval[1])),
                                             mechanism=answer.mechanism, noise_scale=float(answer.noise_scale),
                                             ledger=answer.ledger))
    return result


def _check_before(dataset: Any, column: str, request: Any) -> float:
    """:func:`~crowdsafe.mechanisms.queries.check_query` on one before-histogram; returns the δ it
    spends: 0 for a column with public values (its histogram is ε-DP and refuses a δ it would not
    use), else the request's. Its refusal of a column with no public values at δ = 0 tells a
    query's author to give bins or values in the query, which ``report`` writes itself: that
    refusal (the same request passes with a δ above 0) is told in the report's own terms instead,
    with the fix it offers. From the schema and the parameters only, before any charge."""
    from dataclasses import replace

    from crowdsafe.mechanisms.queries import check_query

    try:
        check_query(dataset, replace(request, delta=0.0))
        return 0.0
    except ParameterError:
        if request.delta > 0:
            check_query(dataset, request)
            return float(request.delta)
        try:
            check_query(dataset, replace(request, delta=1e-7))
        except ParameterError:
            pass
        else:
            raise ParameterError(
                f"the before-distribution of '{column}' needs the column's public values, and the schema declares "
                "none (a hierarchy built over the data's values, such as intervals, a mask or dates, lists none): "
                "give a before-delta above 0 (e.g. 1e-7: the histogram then shows only the cells whose noisy count "
                "passes a threshold), or declare the values in the schema (docs/report.md, \"Before and after\"; "
                "nothing was charged)") from None
        raise


def answer_unfit_reasons(answer: Any, *, recorded: bool) -> tuple[str, ...]:
    """Why a DP answer shown beside a release is not fit for release: a schema choice read from
    the data left unreviewed, seeded noise, no ledger recording its charge (``recorded``)."""
    reasons = list(answer.unreviewed_reasons)
    if not answer.randomness.get("fit_for_release", False):
        reasons.append("its noise was seeded (reproducible), not drawn from a secure source")
    if not recorded:
        reasons.append("its charge was not recorded in a budget ledger")
    return tuple(reasons)


def _check_total(book: Ledger, dataset: Any, label: str, epsilon: float, delta: float) -> None:
    """Refuse, before any histogram is charged, when the remaining budget of ``dataset`` (the
    table as loaded for the checks: the identity each query is charged under) cannot hold them
    all (ε and δ summed: the ledger composes the separate charges sequentially); raises as the
    ledger's own check does, a table without a budget named by ``label``. Each query is still
    checked again when it is charged."""
    from crowdsafe.drivers.query import no_budget_for
    from crowdsafe.engines import get_engine

    identity = get_engine("polars").source_identity(dataset, book)
    if book.budget(identity) is None:  # named by its label, never by its identity (a digest of the data)
        raise no_budget_for(book, label, budget_parameter=False)  # report takes no budget to register
    book.check(identity, epsilon=epsilon, delta=delta, description="the report's before-distributions (all of them)",
               mechanism="DP histograms")


__all__ = ["answer_unfit_reasons", "before_distributions", "noisy_values"]
