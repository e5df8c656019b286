"""Attacks on releases: what an attacker learns (docs/attacks.md).

- :func:`intersection_attack` (:mod:`~crowdsafe.attacks.intersection`): the composition attack
  of Ganta, Kasiviswanathan and Smith (2008) over independent releases, with its metrics;
- :mod:`~crowdsafe.attacks.locate`: locating a target's class in a release from its
  quasi-identifiers (exactly, or by the nearest centroid for microaggregation).
"""

from crowdsafe.attacks.intersection import AttackedRelease, IntersectionResult, intersection_attack
from crowdsafe.attacks.locate import ClassTable, class_table

__all__ = ["AttackedRelease", "ClassTable", "IntersectionResult", "class_table", "intersection_attack"]
