"""The one exception hierarchy of crowdsafe.

Every error a user can cause is a :class:`CrowdsafeError`. The command line prints its message
as one line and exits with status 2 (3 for a refusal of the privacy ledger,
:class:`BudgetExceeded`, so that a script can tell "try again with a larger budget, or not at
all" from "fix the input"); the Python API raises it. Messages name the problem and,
where one exists, the fix.

A library message speaks of parameters as a Python caller writes them, never of command-line
flags: ``the columns parameter``, ``qi=[...]``, ``objective='classification'``. The error lists
the parameters it names (``parameter=``), and a front end may name them its own way: the
command line prints the flags its user typed (``crowdsafe.cli.flags``).
"""

from __future__ import annotations

from collections.abc import Sequence

#: The end of the refusal of a table with no rows: a refusal before the charge that depends on the
#: data (docs/privacy-boundary.md lists them all), so its message says whose fact it is.
EMPTY_TABLE = " (a custodian-only fact about the data: an empty table is refused before anything is charged)"
#: the end of a refusal that depends on one row in a custodian's own command (``check DATA``, classic
#: ``anonymize``: a value outside its declared domain, a missing numeric quasi-identifier; docs/privacy-boundary.md)
CUSTODIAN_REFUSAL = " (a custodian-only fact about the data: keep this message to the custodian)"
#: the end of a refusal by the ledger of a table's spent budget or a consumed sample: the ledger
#: finds them by the table's rows (its keyed digest), so D is refused where D plus a row is not
LEDGER_REFUSAL = (" (a custodian-only fact about the data: the ledger knows this table by its rows; keep this "
                  "message to the custodian)")


class CrowdsafeError(Exception):
    """Base class of every error crowdsafe raises on purpose.

    ``parameter``: the name, or names, of the parameters the message speaks of (as in the
    Python API), in :attr:`parameters`; none by default.
    """

    exit_code = 2

    def __init__(self, *args: object, parameter: str | Sequence[str] | None = None) -> None:
        super().__init__(*args)
        self.parameters: tuple[str, ...] = (
            (parameter,) if isinstance(parameter, str) else tuple(parameter or ())
        )

    @property
    def parameter(self) -> str | None:
        """The first parameter the message speaks of, or None."""
        return self.parameters[0] if self.parameters else None


class InputError(CrowdsafeError):
    """The input data cannot be read: missing, empty, not UTF-8, malformed."""


class SchemaError(CrowdsafeError):
    """The schema does not fit the data: unknown column, wrong type, bad role."""


class HierarchyError(SchemaError):
    """A generalization hierarchy is invalid or does not cover a value in the data."""


class ParameterError(CrowdsafeError):
    """A parameter is outside what the method or its theorem admits."""


class BudgetExceeded(CrowdsafeError):
    """A query or release would exceed the privacy budget recorded in the ledger (or the table has
    no budget there). The command line exits with status 3 for it, not 2."""

    exit_code = 3


class SampleReuseError(BudgetExceeded):
    """A sample already consumed by a DP-under-sampling release would be used again."""


class QuerySyntaxError(CrowdsafeError):
    """A query string does not parse."""


def first_line(exc: BaseException) -> str:
    """The first line of ``exc``'s message (its type's name when it has none): how a library's
    multi-line error is quoted in one line."""
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__

