"""The one exception hierarchy of crowdsafe.

Every error a user can cause is a :class:`CrowdsafeError`. The command line prints its message
as one line and exits with status 2; the Python API raises it. Messages name the problem and,
where one exists, the fix.
"""

from __future__ import annotations


class CrowdsafeError(Exception):
    """Base class of every error crowdsafe raises on purpose."""

    exit_code = 2


class InputError(CrowdsafeError):
    """The input data cannot be read: missing, empty, not UTF-8, malformed."""


class SchemaError(CrowdsafeError):
    """The schema does not fit the data: unknown column, wrong type, bad role."""


class HierarchyError(SchemaError):
    """A generalization hierarchy is invalid or does not cover a value in the data."""


class ParameterError(CrowdsafeError):
    """A parameter is outside what the method or its theorem admits."""


class BudgetExceeded(CrowdsafeError):
    """A query or release would exceed the privacy budget recorded in the ledger."""


class SampleReuseError(BudgetExceeded):
    """A sample already consumed by a DP-under-sampling release would be used again."""


class QuerySyntaxError(CrowdsafeError):
    """A query string does not parse."""
