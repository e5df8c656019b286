"""The plan's rules in its own words: the default objective's, and the resolution of the
``marginals`` choice they cite (:func:`crowdsafe.anonymize.plan.default_objective` applies them),
and where the choice of the scheme reads (:func:`crowdsafe.anonymize.plan.sample_too_small`);
public quantities only."""

from __future__ import annotations

import math

from crowdsafe.defaults import CELLS_PER_CLASS, COUNT_SHARE, MARGINALS_RESOLUTION_ROWS

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
#: (It said "needs a declared hierarchy" alone, which read as wrong to a custodian whose schema gives every column
#: one: intervals, a mask and dates are declared, but built over the data's values, so they list no domain.)
DEFAULT_UNDECLARED_RULE = ("default: retained, since marginals needs, for every published column, a declared "
                           "hierarchy that lists its values (groups or a hierarchy file), and a column here has none "
                           "or one built over the data's values (intervals, a mask, dates)")
DEFAULT_UNPLANNED_RULE = ("default: retained, since the default is chosen with the planner's epsilon1 and the "
                          "lattice's size, and here {why}")

#: What the noisy count inside Am does, and why the planner adds it (:mod:`crowdsafe.selection.candidates`).
#: Why the selection reads the whole table where the planner caps ε1 (selection/PROOF.md §8).
TABLE_RULE = ("on the sample the choice would need epsilon1 at the top of its range (the sample is too small to "
              "choose on), so the exponential mechanism scores the schemes on the whole table instead (classes of at "
              "least k/beta rows, what a sample keeps k of on average), an epsilon1-DP choice with epsilon1 planned "
              "for those classes; the release of the chosen scheme is then strongly safe, and the two compose to "
              "the same (epsilon, delta)")
#: :data:`TABLE_RULE` for a given ε1 (:func:`sample_too_small`): the same choice, at the ε1 given.
TABLE_RULE_GIVEN = ("the planner's own epsilon1 for a choice on the sample would be held at the top of its range at "
                    "this epsilon (the sample is too small to choose on), so the exponential mechanism scores the "
                    "schemes on the whole table instead (classes of at least k/beta rows, what a sample keeps k of "
                    "on average), an epsilon1-DP choice with the epsilon1 given; the release of the chosen scheme "
                    "is then strongly safe, and the two compose to the same (epsilon, delta)")
COUNT_RULE = (f"{COUNT_SHARE:.0%} of epsilon1 pays for a noisy count of the sample (discrete Laplace, not "
              "published); the exponential mechanism then chooses, with the rest, only among the schemes with at "
              f"most {CELLS_PER_CLASS} * count / k possible tuples (and the coarsest), those a sample of that size "
              "can fill with classes of k rows. Added because the planner's epsilon1 for the sample is at the "
              "top of its range: among all the "
              "schemes the selection would be too blunt, and fine schemes that suppress most of a small sample "
              "would outweigh the few good ones")


def marginals_resolution(epsilon1: float, candidates: int) -> float:
    """The rows per marginal to which the ``marginals`` choice at ``epsilon1`` among ``candidates``
    nodes resolves scores: its 95% utility bound (m Δq / ε1)(ln L + ln 20) (Dwork and Roth 2014,
    Theorem 3.11) divided by the P marginals, m = 2, Δq < 3·P (selection/marginal_score.py). Public:
    ε1 and L only."""
    return 2.0 * 3.0 * (math.log(candidates) + math.log(20.0)) / epsilon1
