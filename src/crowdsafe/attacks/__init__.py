"""Attacks on releases: what an attacker learns (docs/attacks.md).

- :func:`intersection_attack` (:mod:`~crowdsafe.attacks.intersection`): the composition attack
  of Ganta, Kasiviswanathan and Smith (2008) over independent releases, with its metrics;
- :func:`linkage_attack` (:mod:`~crowdsafe.attacks.linkage`): Sweeney's linkage of a release
  with an identified external table;
- :mod:`~crowdsafe.attacks.noncomposition`: the counter-example showing that DP under sampling
  does not compose on one sample (Li, Qardaji and Su 2012);
- :mod:`~crowdsafe.attacks.contrast`: DP contingency tables read by the same attack;
- :mod:`~crowdsafe.attacks.locate`: locating a target's class in a release from its
  quasi-identifiers (exactly, or by the nearest centroid for microaggregation);
- :class:`AttackRequest` (:mod:`~crowdsafe.attacks.request`): one attack as
  :func:`crowdsafe.api.attack` asks for it, taken by :mod:`crowdsafe.drivers.attack` and the
  engines.
"""

from crowdsafe.attacks.intersection import AttackedRelease, IntersectionResult, intersection_attack
from crowdsafe.attacks.linkage import LinkageResult, linkage_attack
from crowdsafe.attacks.locate import ClassTable, class_table
from crowdsafe.attacks.request import AttackRequest

__all__ = ["AttackRequest", "AttackedRelease", "ClassTable", "IntersectionResult", "LinkageResult", "class_table",
           "intersection_attack", "linkage_attack"]
