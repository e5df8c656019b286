"""The attack driver: the composition (intersection) and linkage attacks on any engine.

An attack reads releases that are already public and charges nothing; the driver checks the
request, lets the engine read the targets and the releases, and runs the attack the engine
offers (:mod:`crowdsafe.attacks`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from crowdsafe.errors import InputError, ParameterError

if TYPE_CHECKING:
    from crowdsafe.attacks.request import AttackRequest
    from crowdsafe.engines.protocol import Engine

KINDS = ("intersection", "linkage")


def check_kind(kind: str) -> None:
    """Refuse an attack crowdsafe does not run (before the engine is chosen)."""
    if kind not in KINDS:
        raise ParameterError(f"unknown attack {kind!r}; use 'intersection' or 'linkage'")


def attack(engine: Engine, releases: Sequence[Any], targets: Any, request: AttackRequest) -> Any:
    """:func:`crowdsafe.api.attack` on ``engine``: the attack ``request`` asks for, on
    ``releases`` and ``targets``."""
    check_kind(request.kind)
    engine.check_attack(request.kind, request.sensitive)
    table = engine.attack_targets(targets, schema=request.schema)
    if request.truth_id is not None and request.truth_id not in table.columns:
        raise InputError(f"the targets have no column {request.truth_id!r} to score the located classes by (the "
                         f"record id); their columns are: {', '.join(table.columns)}")
    attacked = engine.attack_releases(releases, table)
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
