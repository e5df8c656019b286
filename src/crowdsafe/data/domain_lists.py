"""The shape of a declared domain given in Python: the ``domain=`` of a DP query and the
``domains=`` of a perturbation, a mapping from a column to the list of its public values.

One check for both (:func:`domain_lists`), made from the parameter alone, before any table is
read or the ledger touched: a value that is not a mapping (a list, a column name), a key that
is not a text, a value that is a text (``{"sex": "Male"}`` was split into the cells ``M``, ``a``,
``l``, ``e``), None, a mapping or not a collection at all, and a list of no value are refused in
one line naming ``domain['sex']``. What each caller checks beyond the shape (which columns, the
values' types) stays with it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from crowdsafe.errors import ParameterError

__all__ = ["domain_lists"]


def domain_lists(domains: object, parameter: str) -> dict[str, list[Any]]:
    """``domains`` (None: none) as a dict from column name to the list of its values, or a
    ParameterError on ``parameter`` (``"domain"``, ``"domains"``) saying what is wrong. A value may
    be any collection (a list, a tuple, a set, a Series, an array); a text, bytes, a mapping and a
    one-pass iterator (which the check would use up) are not lists of values."""
    if domains is None:
        return {}
    if not isinstance(domains, Mapping):
        raise ParameterError(f"{parameter} must map each column to the list of its public values, e.g. "
                             f"{parameter}={{'sex': ['Female', 'Male']}}; got {_shown(domains)}", parameter=parameter)
    lists: dict[str, list[Any]] = {}
    for column, values in domains.items():
        if not isinstance(column, str):
            raise ParameterError(f"{parameter} must be keyed by column names (text), got the key {column!r}",
                                 parameter=parameter)
        where = f"{parameter}[{column!r}]"
        if isinstance(values, (str, bytes)):
            raise ParameterError(f"{where} must be a list of values, not the text {values!r} (a one-value domain "
                                 f"is written [{values!r}])", parameter=parameter)
        if isinstance(values, (Mapping, Iterator)) or not isinstance(values, Iterable):
            raise ParameterError(f"{where} must be a list of values, got {_shown(values)}", parameter=parameter)
        listed = list(values)
        if not listed:
            raise ParameterError(f"{where} lists no value: list every value the column can take",
                                 parameter=parameter)
        lists[column] = listed
    return lists


def _shown(value: object) -> str:
    """``value`` for a message: as written when short, else its type."""
    if isinstance(value, Iterator):
        return f"a one-pass {type(value).__name__} (give a list)"
    text = repr(value)
    return text if len(text) <= 60 else f"a {type(value).__name__}"
