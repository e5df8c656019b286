"""The checks of a :class:`~crowdsafe.anonymize.plan.PlanRequest`'s inputs that name no
theorem: the number of candidate schemes and a fixed scheme's levels (:func:`check_plan_inputs`),
and the row count a plan is asked about (:func:`check_rows`). Decided from the parameters alone,
so ``plan_publish`` refuses what ``publish`` refuses (where ``candidates=0`` ended in "math domain
error", ``candidates=2.5`` was planned, and ``scheme={"age": -1}`` was planned and refused by
publish only after the read)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from crowdsafe.errors import ParameterError

if TYPE_CHECKING:
    from crowdsafe.anonymize.plan import PlanRequest


def _whole(value: Any) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def check_plan_inputs(request: PlanRequest) -> None:
    """Refuse ``candidates`` that is not a whole number >= 1, and a fixed scheme whose text does not
    parse or whose level is not a whole number >= 0 (a level above a hierarchy's height needs the
    hierarchy: refused once it is known)."""
    from crowdsafe.selection.mechanism import scheme_levels

    candidates = request.candidates
    if candidates is not None and not (_whole(candidates) and candidates >= 1):
        raise ParameterError(f"candidates (the number of candidate schemes, the lattice's size) must be a whole "
                             f"number >= 1, got {candidates!r}", parameter="candidates")
    if request.scheme is None:
        return
    for column, level in scheme_levels(request.scheme)[1].items():
        if not (_whole(level) and level >= 0):
            raise ParameterError(f"the level of '{column}' in the scheme must be a whole number >= 0 (0 publishes "
                                 f"the values as they are), got {level!r}", parameter="scheme")


def check_rows(rows: Any) -> int:
    """``rows``, a number of rows: a whole number >= 0."""
    if not (_whole(rows) and rows >= 0):
        raise ParameterError(f"rows must be a whole number >= 0 (the rows of a table), got {rows!r}",
                             parameter="rows")
    return int(rows)
