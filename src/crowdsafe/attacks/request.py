"""The request of an attack on releases: which attack, what the attacker knows, how it is scored.

An attack reads releases that are already public and charges no budget; its results (the
per-target metrics, the summary) measure what an attacker learns and are scored against truth
the custodian holds, so they are for the custodian (docs/attacks.md).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from crowdsafe.attacks.intersection import DEFAULT_LEVELS, Location
from crowdsafe.data import Schema


@dataclass(frozen=True, slots=True)
class AttackRequest:
    """One attack, as :func:`crowdsafe.api.attack` asks for it; the engine, the releases and the
    targets are passed beside it.

    - ``kind``: ``"intersection"`` (the composition attack of Ganta, Kasiviswanathan and Smith
      2008, :func:`~crowdsafe.attacks.intersection_attack`) or ``"linkage"`` (Sweeney's linkage,
      :func:`~crowdsafe.attacks.linkage_attack`);
    - ``qi``: the quasi-identifiers the attacker knows of each target;
    - ``sensitive``: the attribute the intersection attack infers (None: refused for that kind);
    - ``location``: how a target's class is located, ``"exact"``, ``"nearest"`` or ``"auto"``
      (one value or one per release; intersection only);
    - ``levels``: the confidence levels the intersection attack reports breaches at;
    - ``truth_id``: a record id held by the targets and the releases, used only to score;
    - ``schema``: the schema the targets are read with (None: inferred);
    - ``suppressed``: cells of the releases' quasi-identifiers that mark a suppressed cell in
      another tool's output (sdcMicro writes ``NA``; ``""`` for an empty cell), read as ``*``.
    """

    kind: str
    qi: tuple[str, ...]
    sensitive: str | None = None
    location: Location | tuple[Location, ...] = "auto"
    levels: tuple[float, ...] = DEFAULT_LEVELS
    truth_id: str | None = None
    schema: Schema | str | os.PathLike[str] | None = None
    suppressed: tuple[str, ...] = ()
