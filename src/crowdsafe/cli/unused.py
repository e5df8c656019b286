"""The refusal of a command-line option given where the run does not read it.

An option accepted and not read lets its user believe it had an effect (``--no-report`` or
``--force`` without ``--out``, ``--max-queries`` without ``--equality``). Such an option is
refused in one line naming it and what it applies to, before anything is read or charged. An
option counts as given when it is neither None nor False (a flag's default). ``--plan-only`` is
left alone: it is the dry run of the full command line, whose output options it shows unused.
"""

from __future__ import annotations

from collections.abc import Mapping

from crowdsafe.errors import ParameterError


def refuse_unused(given: Mapping[str, object], applies: str) -> None:
    """Refuse the first option of ``given`` (flag -> its value) that was given: ``<flag> applies
    to <applies>``."""
    for flag, value in given.items():
        if value is not None and value is not False:
            raise ParameterError(f"{flag} applies to {applies}")
