"""The attack driver: the composition (intersection) and linkage attacks on any engine.

An attack reads releases that are already public and charges nothing; the driver checks the
request, lets the engine read the targets and the releases, and runs the attack the engine
offers (:mod:`crowdsafe.attacks`).
"""

from __future__ import annotations

import os
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from crowdsafe.errors import InputError, ParameterError

if TYPE_CHECKING:
    from crowdsafe.attacks.intersection import IntersectionResult
    from crowdsafe.attacks.linkage import LinkageResult
    from crowdsafe.attacks.request import AttackRequest
    from crowdsafe.engines.protocol import Engine
    from crowdsafe.engines.spark.attacks import SparkIntersectionResult

KINDS = ("intersection", "linkage")


def check_kind(kind: str) -> None:
    """Refuse an attack crowdsafe does not run (before the engine is chosen)."""
    if kind not in KINDS:
        raise ParameterError(f"unknown attack {kind!r}; use 'intersection' or 'linkage'")


def attack(engine: Engine, releases: Sequence[Any], targets: Any, request: AttackRequest
           ) -> IntersectionResult | LinkageResult | SparkIntersectionResult:
    """:func:`crowdsafe.api.attack` on ``engine``: the attack ``request`` asks for, on
    ``releases`` and ``targets``."""
    check_kind(request.kind)
    engine.check_attack(request.kind, request.sensitive)
    table = engine.attack_targets(targets, schema=request.schema)
    if request.truth_id is not None and request.truth_id not in table.columns:
        raise InputError(f"the targets have no column {request.truth_id!r} to score the located classes by (the "
                         f"record id); their columns are: {', '.join(table.columns)}")
    attacked = distinct_names(engine.attack_releases(releases, table), releases)
    if request.suppressed:  # another tool's mark of a suppressed cell, read as '*'
        attacked = engine.mark_suppressed(attacked, request.qi, request.suppressed)
    if request.kind == "linkage":
        if len(attacked) != 1:
            raise ParameterError(f"the linkage attack takes one release, got {len(attacked)}")
        return engine.linkage_attack(attacked[0], table, request)
    if request.sensitive is None:
        raise ParameterError("the intersection attack needs the sensitive attribute (the sensitive parameter)",
                             parameter="sensitive")
    return engine.intersection_attack(attacked, table, request)


def distinct_names(attacked: Sequence[Any], given: Sequence[Any]) -> list[Any]:
    """``attacked`` with a name of its own each. A release file is named by its stem, so
    ``draft/patienten.csv`` and ``final/patienten.csv`` were both ``patienten``: the table and
    the notes could not tell them apart, and the per-target table kept one ``prior_patienten``
    column for the two (the second overwrote the first). Releases whose names collide are named
    by the path as given instead, then, if still alike (one file given twice), with ``_2``,
    ``_3``... in order, as column names are (:mod:`crowdsafe.data.column_names`)."""
    counts = Counter(r.name for r in attacked)
    if all(n == 1 for n in counts.values()):
        return list(attacked)
    taken = {name for name, n in counts.items() if n == 1}
    named = []
    for release, source in zip(attacked, given):
        name = release.name
        if counts[name] > 1:
            base = os.fspath(source) if isinstance(source, (str, os.PathLike)) else name
            name, suffix = base, 2
            while name in taken:
                name, suffix = f"{base}_{suffix}", suffix + 1
            release = replace(release, name=name)
        taken.add(name)
        named.append(release)
    return named
