"""The planner's plans, pinned: computed by main before the planner was made cheaper (issue 34:
:func:`~crowdsafe.privacy.planning.least_k` in the rate grid, the early check of the command line),
so that a change in how the plan is searched cannot change the plan itself. Three β moved down
by one ulp on 2026-11-30, when the rate grid's top, 1 − e^−(ε − ε1), came to be rounded down to
a rate whose sampling floor admits ε exactly (the doubles above it were a hair past the floor)."""

from __future__ import annotations

import pytest

from crowdsafe.anonymize.plan import PlanRequest, best_rate, plan_publication

# (request, (k, beta, epsilon1, delta, total_epsilon, total_delta)), the floats as repr() printed them
PINNED = [
    (dict(epsilon=1.0, delta=1e-6),
     (27, 0.3456749055721687, 0.1, 9.99999995762391e-07, 1.0, 9.99999995762391e-07)),
    (dict(epsilon=1.0, delta=1e-6, candidates=1015),
     (23, 0.29641275219716445, 0.1396954389440828, 9.999999850520182e-07, 1.0, 9.999999850520182e-07)),
    (dict(epsilon=0.5, delta=1e-5, candidates=40),
     (29, 0.20856328594892948, 0.13642064750342708, 9.999999990056468e-06, 0.5, 9.999999990056468e-06)),
    (dict(epsilon=2.0, delta=1e-6, candidates=5000, objective="loss"),
     (19, 0.42415447064481226, 0.09756716495737482, 9.99999985523353e-07, 2.0, 9.99999985523353e-07)),
    (dict(epsilon=4.0, delta=1e-7),
     (22, 0.48063808601855873, 0.4, 9.99999987823997e-08, 4.0, 9.99999987823997e-08)),
    (dict(epsilon=1.0, delta=1e-6, releases=3, candidates=300),
     (28, 0.34567490549554436, 0.12252837673535481, 9.999999906560598e-07, 3.0, 2.999999971968179e-06)),
]


@pytest.mark.parametrize(("request_", "expected"), PINNED)
def test_the_plan_is_the_pinned_one(request_, expected):
    best_rate.cache_clear()  # computed afresh, not read from an earlier test's call
    plan = plan_publication(PlanRequest(**request_))
    assert (plan.k, plan.beta, plan.epsilon1, plan.delta, plan.total_epsilon, plan.total_delta) == expected
