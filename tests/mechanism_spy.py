"""A spy on what the safe pipeline builds its mechanisms from (issue 32).

:class:`MechanismSpy` wraps the functions and classes a real ``publish`` run goes through and
records the inputs they were given, as that run built them (nothing is recomputed here):

- the plan the driver runs (``drivers.publish.run_publication``): ε, δ, k, β, ε1, the number of
  candidates, the objective;
- the fixed scheme's levels, when one is given (``drivers.publish.choose_recoding``);
- the selection's arguments and its public description (``anonymize.publish.choose_scheme``):
  the columns, k, ε1, the objective, the candidates, Δq;
- every :class:`~crowdsafe.selection.tables.KeyedTables` built: each column's hierarchy
  (declared or observed, height, level names), the candidate heights, the score's units
  Δ_int and key denominator, k, and the penalty of every node, by its label (the table holds
  them by tree code, which moves when a leaf is added; the labels do not);
- every :class:`~crowdsafe.selection.entropy_score.EntropyScorer`: the leaf counts its
  sensitivity is computed from, Δ_int and the key denominator;
- the selection's noisy count step, when the plan has one (:mod:`crowdsafe.selection.candidates`):
  the possible tuples of every node and the mask's public arguments (the noisy count itself is a
  DP output, kept in ``custodian``);
- whether the run was refused before the charge, and the message.

:func:`input_differences` compares two records (D and D ± one row, the same seed) and lists what
differs: everything must be identical, except that an observed hierarchy has a node for a new
value on one side only, so its penalties are compared on the nodes both sides have, and every
node of one of its levels must cost the same (the penalty is the level's, never the node's).
The width of the tables' keys (running time only) is kept apart, in ``custodian``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from crowdsafe.anonymize import publish as anonymize_publish
from crowdsafe.drivers import publish as driver
from crowdsafe.errors import CrowdsafeError
from crowdsafe.selection import candidates, mechanism
from crowdsafe.selection.entropy_score import EntropyScorer
from crowdsafe.selection.tables import KeyedTables, _tree_order


@dataclass
class Inputs:
    """What one run built its mechanisms from (see the module docstring)."""

    plan: dict[str, Any] | None = None
    fixed_levels: dict[str, int] | None = None
    selections: list[dict[str, Any]] = field(default_factory=list)
    tables: list[dict[str, Any]] = field(default_factory=list)
    entropy: list[dict[str, Any]] = field(default_factory=list)
    #: the selection's noisy count step (selection/candidates.py): its public inputs
    counts: list[dict[str, Any]] = field(default_factory=list)
    refused: str | None = None
    charged: bool | None = None
    #: running time only, never compared: the key bits of each table and whether they passed an int64
    custodian: list[dict[str, Any]] = field(default_factory=list)
    #: what the call returned (a Publication), for the tests that compare its public part too
    returned: Any = None

    def compared(self) -> dict[str, Any]:
        """Everything that must be identical on neighbouring tables, penalties aside."""
        return {"plan": self.plan, "fixed_levels": self.fixed_levels, "selections": self.selections,
                "tables": [{k: v for k, v in t.items() if k != "penalties"} for t in self.tables],
                "entropy": self.entropy, "counts": self.counts, "refused": self.refused, "charged": self.charged}


def penalties_by_label(tables: KeyedTables) -> list[list[dict[str, int]]]:
    """Per column and level, {node label: the penalty units the table scores it with}: the
    table's ``penalties[j][level][tree code]`` read back through the hierarchy's own node codes
    (:func:`~crowdsafe.selection.tables._tree_order` is the renumbering the table made)."""
    found = []
    for hierarchy, penalties in zip(tables.hierarchies, tables.penalties):
        ranks = _tree_order(hierarchy)
        found.append([{label: int(penalties[level][ranks[level][code]])
                       for code, label in enumerate(hierarchy.labels[level])}
                      for level in range(hierarchy.height + 1)])
    return found


class MechanismSpy:
    """Install with :meth:`install` (a pytest ``monkeypatch``), then :meth:`run` a call once per
    table: it returns that run's :class:`Inputs`."""

    def __init__(self) -> None:
        self.current = Inputs()

    def install(self, monkeypatch: pytest.MonkeyPatch) -> MechanismSpy:
        spy = self
        run_publication = driver.run_publication
        choose_recoding = driver.choose_recoding
        choose_scheme = anonymize_publish.choose_scheme
        keyed_init = KeyedTables.__init__
        entropy_init = EntropyScorer.__init__

        def spied_run_publication(engine, table, publish_plan, *args, **kwargs):
            spy.current.plan = publish_plan.as_dict()
            return run_publication(engine, table, publish_plan, *args, **kwargs)

        def spied_choose_recoding(sample, columns, publish_plan, fixed, randomness, table=None):
            spy.current.fixed_levels = dict(fixed.levels) if fixed is not None else None
            return choose_recoding(sample, columns, publish_plan, fixed, randomness, table)

        def spied_choose_scheme(sample, columns, k, epsilon1, randomness, objective=None, count_share=0.0):
            choice = choose_scheme(sample, columns, k, epsilon1, randomness, objective, count_share)
            spy.current.selections.append({
                "columns": list(columns), "k": int(k), "epsilon1": float(epsilon1), "count_share": count_share,
                "objective": (objective.name, objective.target, dict(objective.fixed_levels)),
                "candidates": choice.candidates, "sensitivity": choice.sensitivity,
                "utility_loss_bound": choice.utility_loss_bound, "described": {
                    key: value for key, value in choice.describe().items() if key != "levels"},
            })
            return choice

        def spied_keyed_init(tables, sample, columns, objective=None, k=2):
            keyed_init(tables, sample, columns, objective, k)
            spy.current.tables.append({
                "columns": list(columns),
                "hierarchies": [(h.name, h.observed, h.height, tuple(h.level_names)) for h in tables.hierarchies],
                "heights": list(tables.heights),
                "objective": tables.objective.name,
                "k": tables.k,
                "sensitivity_units": tables.objective.sensitivity_units(tables.k)
                if tables.objective.name != "entropy" or tables.objective.leaves else None,
                "key_denominator": tables.objective.key_denominator(tables.k)
                if tables.objective.name != "entropy" or tables.objective.leaves else None,
                "penalties": penalties_by_label(tables),
            })
            spy.current.custodian.append({"key_bits": sum(tables.bits), "wide_keys": tables.wide_keys})

        def spied_entropy_init(scorer, sample, columns, k, objective):
            entropy_init(scorer, sample, columns, k, objective)
            spy.current.entropy.append({
                "columns": list(columns), "k": scorer.k, "leaves": list(scorer.objective.leaves),
                "sensitivity_units": scorer.objective.sensitivity_units(scorer.k),
                "key_denominator": scorer.objective.key_denominator(scorer.k),
            })

        def spied_possible_cells(columns, heights, hierarchies):
            cells = candidates.possible_cells(columns, heights, hierarchies)
            spy.current.counts.append({"columns": list(columns), "heights": list(heights),
                                       "possible_cells": cells.tolist()})
            return cells

        def spied_candidate_mask(cells, estimate, k, *args):
            # the noisy count is a DP output (it may differ): kept apart, in ``custodian``
            spy.current.custodian.append({"noisy_count": int(estimate)})
            spy.current.counts.append({"mask_k": int(k), "mask_arguments": list(args)})
            return candidates.candidate_mask(cells, estimate, k, *args)

        monkeypatch.setattr(driver, "run_publication", spied_run_publication)
        monkeypatch.setattr(mechanism, "possible_cells", spied_possible_cells)
        monkeypatch.setattr(mechanism, "candidate_mask", spied_candidate_mask)
        monkeypatch.setattr(driver, "choose_recoding", spied_choose_recoding)
        monkeypatch.setattr(anonymize_publish, "choose_scheme", spied_choose_scheme)
        monkeypatch.setattr(KeyedTables, "__init__", spied_keyed_init)
        monkeypatch.setattr(EntropyScorer, "__init__", spied_entropy_init)
        return self

    def run(self, call: Any, ledger: Path | None = None) -> Inputs:
        """``call()`` under the spy: its Inputs, with the refusal's message if it raised a
        :class:`~crowdsafe.errors.CrowdsafeError` or returned a text (a command line's error
        line), and whether ``ledger`` (when given) holds a charge afterwards."""
        from crowdsafe.privacy.ledger import Ledger

        self.current = inputs = Inputs()
        try:
            result = call()
        except CrowdsafeError as exc:
            inputs.refused = f"{type(exc).__name__}: {exc}"
        else:
            inputs.refused = result if isinstance(result, str) else None
            inputs.returned = None if isinstance(result, str) else result
        if ledger is not None:
            inputs.charged = ledger.exists() and bool(Ledger(ledger).entries())
        return inputs


def input_differences(a: Inputs, b: Inputs) -> list[str]:
    """What differs between two runs' inputs (empty: identical; see the module docstring)."""
    found = []
    left, right = a.compared(), b.compared()
    for key in left:
        if left[key] != right[key]:
            found.append(f"{key}: {left[key]!r} != {right[key]!r}")
    for t, (table_a, table_b) in enumerate(zip(a.tables, b.tables)):
        for j, (name, observed, *_rest) in enumerate(table_a["hierarchies"]):
            for side, table in (("D", table_a), ("D'", table_b)):
                if not observed:
                    continue
                for level, by_label in enumerate(table["penalties"][j]):
                    if len(set(by_label.values())) > 1:
                        found.append(f"table {t}, observed '{name}' level {level} on {side}: nodes cost "
                                     f"{sorted(set(by_label.values()))} (a level's nodes must cost the same)")
            for level, (by_a, by_b) in enumerate(zip(table_a["penalties"][j], table_b["penalties"][j])):
                if not observed and by_a.keys() != by_b.keys():
                    found.append(f"table {t}, declared '{name}' level {level}: nodes {sorted(by_a)} != {sorted(by_b)}")
                for label in by_a.keys() & by_b.keys():
                    if by_a[label] != by_b[label]:
                        found.append(f"table {t}, '{name}' level {level}: node {label!r} costs "
                                     f"{by_a[label]} != {by_b[label]}")
    return found
