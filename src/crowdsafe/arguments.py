"""The checks of the arguments the public functions share (:mod:`crowdsafe.api`,
:mod:`crowdsafe.measures`), made before anything is read, in one line naming the parameter:

- :func:`names`: a list of column names (``qi``, ``sensitive``, ``columns``, ``attributes``);
  one name given as a string is the list of that one name (``qi="sex"`` is ``qi=["sex"]``, where
  it was split into ``'s'``, ``'e'``, ``'x'``);
- :func:`one_name`: one column name, given as a string or a list of one (``attack(sensitive=[...])``
  crashed on an unhashable list where check and publish took one);
- :func:`either`: one parameter under two names, the one the other functions and the command line
  use and the function's older one (``check(k=)`` / ``target_k=``, ``query(seed=)`` /
  ``randomness=``);
- :func:`flag`: True or False (``force="no"`` was true, as every non-empty text is, and replaced a
  file crowdsafe did not write; ``change_budget(allow_raise="no")`` raised a budget);
- :func:`budget_with_ledger`: a ``budget`` with ``ledger=None`` (ignored, where the command line
  refuses it);
- :func:`whole`: a whole number (``check(k="5")`` raised a TypeError from a comparison inside);
- :func:`items`: a list of things (``releases``); one thing is the list of that one;
- :func:`text`: one text (a query); :func:`label`: one text or None (``name=5`` raised "'int'
  object has no attribute 'strip'" from inside the ledger);
- :func:`path`: a file path or None (``out=5`` raised pathlib's "expected str, bytes or
  os.PathLike object, not int");
- :func:`strings`: a list of texts that are not column names (``load(missing_tokens=)``); one
  text is the list of that one, where ``missing_tokens="NA"`` read every cell ``N`` or ``A`` as
  missing;
- :func:`schema`: a Schema, a schema file or None (a dict of types raised an AttributeError
  from inside the reader);
- :func:`keywords`: the ``**options`` a function passes to a request class: an unknown keyword
  is named with the ones it takes, a missing required one is named (where Python named the
  internal class: ``AnonymizeRequest.__init__() got an unexpected keyword argument``).
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from crowdsafe.errors import ParameterError


def kind(value: Any) -> str:
    """A value's class for an error: ``the int 5``, ``a pandas.DataFrame``."""
    kind = type(value)
    package = kind.__module__.split(".")[0]
    if package == "builtins":
        plain = isinstance(value, (int, float, bytes))
        return f"the {kind.__qualname__} {value!r}" if plain else f"a {kind.__qualname__}"
    return f"a {package}.{kind.__qualname__}"


def names(value: Any, parameter: str) -> tuple[str, ...] | None:
    """``value`` as a tuple of column names: None stays None, a string is one name, a list or
    tuple of strings is those names; anything else (a number, a set, a name that is not a
    string) is refused naming ``parameter``."""
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, (list, tuple)):
        raise ParameterError(f"{parameter} must be a list of column names, got {kind(value)}", parameter=parameter)
    for name in value:
        if not isinstance(name, str):
            raise ParameterError(f"{parameter} must be a list of column names (strings), but it holds "
                                 f"{kind(name)}", parameter=parameter)
    return tuple(value)


def one_name(value: Any, parameter: str, what: str) -> str | None:
    """``value`` as one column name: None stays None, a string is that name, a list or tuple of
    one name is that name; several names, or anything else, are refused naming ``parameter``
    (``what`` says why only one)."""
    listed = names(value, parameter)
    if listed is None:
        return None
    if len(listed) != 1:
        raise ParameterError(f"{parameter} must be one column name: {what}; got {len(listed)} names "
                             f"({', '.join(listed) or 'none'})", parameter=parameter)
    return listed[0]


def either(value: Any, older: Any, name: str, older_name: str) -> Any:
    """The value of one parameter given as ``name`` (the name the other public functions and the
    command line give it) or as ``older_name`` (this function's older name, still taken): the one
    given, None if neither; both, with different values, are refused naming both."""
    if value is not None and older is not None and value is not older and value != older:
        raise ParameterError(f"{name} and {older_name} are one parameter: give {name} only", parameter=name)
    return value if value is not None else older


def alias(value: Any, other: Any, name: str, other_name: str) -> Any:
    """The value of one parameter given as ``name`` (this function's documented name) or as
    ``other_name`` (the sibling functions' spelling of the same idea, taken with the same meaning:
    ``query(domains=)`` as ``perturb`` spells it, ``perturb(domain=)`` as ``query`` does): the one
    given, None if neither; both given at once are refused in one line, even when equal."""
    if value is not None and other is not None:
        raise ParameterError(f"{name} and {other_name} are two spellings of one parameter: give {name} only",
                             parameter=name)
    return value if value is not None else other


def flag(value: Any, parameter: str, *, none: bool = False) -> bool | None:
    """``value`` as a boolean: True or False (a NumPy boolean too; None too when ``none``);
    anything else (``"no"``, true as every non-empty text is; a number) is refused naming
    ``parameter``."""
    if isinstance(value, bool) or (none and value is None):
        return value
    if type(value).__module__ == "numpy" and isinstance(getattr(value, "item", lambda: None)(), bool):
        return bool(value)
    allowed = "True, False or None" if none else "True or False"
    raise ParameterError(f"{parameter} must be {allowed}, got {value!r}", parameter=parameter)


def flags(**given: Any) -> None:
    """:func:`flag` of each keyword (parameter name to value), before anything is read."""
    for parameter, value in given.items():
        flag(value, parameter)


def budget_with_ledger(budget: Any, ledger: Any) -> None:
    """Refuse a ``budget`` given with ``ledger=None``: it registers a budget in a ledger, and the
    run has none, so it would not be read (it was ignored, where the command line refuses
    ``--no-ledger --budget`` and ``perturb --budget`` without ``--ledger``)."""
    if budget is not None and ledger is None:
        raise ParameterError("budget registers the dataset's budget in a ledger, and ledger=None runs without one: "
                             "give a ledger (ledger='default' or a path), or leave budget out",
                             parameter=("budget", "ledger"))


def whole(value: Any, parameter: str, minimum: int) -> int:
    """``value`` as a whole number >= ``minimum`` (an int, not a bool, a float or a text: ``"5"`` made
    a comparison fail inside, ``2.5`` was taken), refused naming ``parameter`` otherwise."""
    if isinstance(value, bool) or not hasattr(value, "__index__") or value < minimum:
        raise ParameterError(f"{parameter} must be a whole number >= {minimum}, got {value!r}", parameter=parameter)
    return int(value)


def items(value: Any, parameter: str) -> tuple[Any, ...]:
    """``value`` as a tuple: a list or tuple is its items, anything else (a path, a frame, a
    Release) is the one item."""
    if isinstance(value, (list, tuple)):
        return tuple(value)
    if isinstance(value, (str, bytes, os.PathLike)) or not isinstance(value, Sequence):
        return (value,)
    return tuple(value)


def text(value: Any, parameter: str, what: str) -> str:
    """``value``, which must be one string (``what`` says what it is)."""
    if not isinstance(value, str):
        raise ParameterError(f"{parameter} must be {what} (a string), got {kind(value)}", parameter=parameter)
    return value


def label(value: Any, parameter: str, what: str) -> str | None:
    """``value``: None or one string (``what`` says what it is: a dataset's name in the ledger)."""
    return None if value is None else text(value, parameter, what)


def path(value: Any, parameter: str) -> Any:
    """``value``: None, or a file path (a string or a path object); anything else refused naming
    ``parameter``."""
    if value is None or isinstance(value, (str, os.PathLike)):
        return value
    raise ParameterError(f"{parameter} must be a file path (a string or a pathlib.Path), got {kind(value)}",
                         parameter=parameter)


def strings(value: Any, parameter: str, what: str) -> tuple[str, ...]:
    """``value`` as a tuple of strings (``what`` says what each is): one string is the tuple of
    that one string, not of its characters; a list or tuple of strings is those; anything else is
    refused naming ``parameter``."""
    if isinstance(value, str):
        return (value,)
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ParameterError(f"{parameter} must be {what} (a string) or a list of them, got {kind(value)}",
                             parameter=parameter)
    return tuple(value)


def texts(value: Any, parameter: str, what: str) -> str | list[str]:
    """``value``: one string or a list of strings (``what`` says what each is)."""
    if isinstance(value, str):
        return value
    if not isinstance(value, (list, tuple)) or not all(isinstance(v, str) for v in value):
        raise ParameterError(f"{parameter} must be {what} (a string) or a list of them, got {kind(value)}",
                             parameter=parameter)
    return list(value)


def schema(value: Any) -> Any:
    """``value`` as the ``schema`` argument: a :class:`~crowdsafe.data.Schema`, the path of a schema
    file, or None; anything else (a dict of column types) is refused naming the parameter."""
    from crowdsafe.data.schema import Schema

    if value is None or isinstance(value, (Schema, str, os.PathLike)):
        return value
    hint = " (declare one in Python with Schema.of({'age': 'numeric', ...}))" if isinstance(value, Mapping) else ""
    raise ParameterError(f"schema must be a crowdsafe Schema, the path of a schema file, or None; got "
                         f"{kind(value)}{hint}", parameter="schema")


def keywords(function: str, given: Mapping[str, Any], taken: Iterable[str], *, required: Iterable[str] = (),
             instead: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``given`` (a function's ``**options``), checked against the keywords ``taken``: an unknown
    one is refused naming it (with the nearest taken one, or the parameter to give ``instead``)
    and listing those taken; a ``required`` one missing is named."""
    taken = tuple(taken)
    for key in given:
        if key in taken:
            continue
        if instead and key in instead:
            raise ParameterError(f"{function}() takes no keyword {key!r}: give {instead[key]}", parameter=key)
        near = difflib.get_close_matches(key, taken, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise ParameterError(f"{function}() got an unknown keyword {key!r}{hint}; beside its named parameters it "
                             f"takes: {', '.join(taken)}", parameter=key)
    for key in required:
        if key not in given:
            raise ParameterError(f"{function}() needs the keyword {key!r}", parameter=key)
    return dict(given)
