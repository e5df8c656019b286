"""Which options of a classic k-anonymization each algorithm reads, and their defaults.

An option given to an algorithm that does not read it (``mode`` to MDAV, ``aggregate`` to
Mondrian, ``loss`` to anything but the lattice search) is refused in one line naming the option
and what it applies to, before anything is read: accepted and ignored, it let its user believe
it had an effect (an ARX user who set the loss of a Mondrian run). So the options of
:class:`~crowdsafe.classic.algorithms.AnonymizeRequest` are None when not given and take their
documented default here (:func:`resolved`), where the algorithm reads them.
"""

from __future__ import annotations

from typing import Any

from crowdsafe.classic.lattice_search import DEFAULT_TIME_BUDGET
from crowdsafe.errors import ParameterError

#: The default of each option, used when it is not given (the documented ones).
DEFAULTS: dict[str, Any] = {
    "mode": "strict", "categorical": "node", "aggregate": "mean", "loss": "gcp", "search": "auto",
    "time_budget": DEFAULT_TIME_BUDGET,
}
#: The algorithm that reads each option (no other does).
READ_BY: dict[str, str] = {
    "mode": "mondrian", "categorical": "mondrian", "aggregate": "mdav", "loss": "lattice", "search": "lattice",
    "time_budget": "lattice",
}


def refuse_unused(request: Any) -> None:
    """Refuse, in one line naming the option, an option of ``request`` (an AnonymizeRequest) that
    its algorithm would not read: an option of another algorithm, ``time_budget`` with the optimal
    search (only a greedy search has a time budget), ``distance`` without ``t`` (it is
    t-closeness's ground distance). An unknown algorithm is left to the run's own refusal."""
    algorithm = request.algorithm
    if algorithm not in set(READ_BY.values()):
        return
    for option, reader in READ_BY.items():
        if getattr(request, option) is not None and algorithm != reader:
            raise ParameterError(f"the {option} parameter applies to algorithm='{reader}' only "
                                 f"(algorithm='{algorithm}' does not read it)", parameter=(option, "algorithm"))
    if request.time_budget is not None and request.search == "optimal":
        raise ParameterError("the time_budget parameter applies to search='greedy' or search='auto' only "
                             "(the optimal search has no time limit)", parameter=("time_budget", "search"))
    if request.distance is not None and request.t is None:
        raise ParameterError("the distance parameter applies to t-closeness only (give t=T too)",
                             parameter=("distance", "t"))


def resolved(request: Any, option: str) -> Any:
    """``request``'s ``option``, or its default when not given."""
    value = getattr(request, option)
    return DEFAULTS[option] if value is None else value
