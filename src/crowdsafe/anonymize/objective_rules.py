"""The default objective's rules in the plan's words, and the resolution of the ``marginals``
choice they cite (:func:`crowdsafe.anonymize.plan.default_objective` applies them; public
quantities only)."""

from __future__ import annotations

import math

from crowdsafe.defaults import MARGINALS_RESOLUTION_ROWS

#: Why the default objective is what it is (:func:`crowdsafe.anonymize.plan.default_objective`), in the plan's words.
DEFAULT_MARGINALS_RULE = ("default: marginals (the error of every 1- and 2-way marginal: the analyses nobody "
                          "planned), since at this epsilon the planner does not hold its epsilon1 at the cap, "
                          "its choice resolves scores finely enough and every published column has a declared "
                          "hierarchy")
DEFAULT_TABLE_RULE = ("default: marginals (the error of every 1- and 2-way marginal: the analyses nobody planned), "
                      "chosen on the whole table, since at this epsilon the sample is too small to choose on, "
                      "the choice on the table resolves scores finely enough and every published column has a "
                      "declared hierarchy")
DEFAULT_CAPPED_RULE = ("default: retained, since at this epsilon marginals would want more than half of epsilon "
                       "for its choice on the sample (epsilon1 held at the cap) and the engine chooses on the sample; "
                       "docs/publish.md compares the two at each epsilon")
DEFAULT_BLUNT_RULE = ("default: retained, since at this epsilon the choice for marginals resolves scores only to "
                      "about {rows:,.0f} rows per marginal (its 95% bound 2 dq (ln L + ln 20) / epsilon1 at "
                      "epsilon1 = {epsilon1:.4g}, dq < 3 rows per marginal), above the "
                      f"{MARGINALS_RESOLUTION_ROWS:,} rows at which it chose empty releases on Adult; "
                      "docs/publish.md compares the two at each epsilon")
DEFAULT_UNDECLARED_RULE = ("default: retained, since marginals needs a declared hierarchy for every published "
                           "column")
DEFAULT_UNPLANNED_RULE = ("default: retained, since the default is chosen with the planner's epsilon1 and the "
                          "lattice's size, and here {why}")


def marginals_resolution(epsilon1: float, candidates: int) -> float:
    """The rows per marginal to which the ``marginals`` choice at ``epsilon1`` among ``candidates``
    nodes resolves scores: its 95% utility bound (m Δq / ε1)(ln L + ln 20) (Dwork and Roth 2014,
    Theorem 3.11) divided by the P marginals, m = 2, Δq < 3·P (selection/marginal_score.py). Public:
    ε1 and L only."""
    return 2.0 * 3.0 * (math.log(candidates) + math.log(20.0)) / epsilon1
