"""Coercing plain option values without a Pydantic adapter per option: a fast path of Typer's own.

Typer (0.2x) turns each option's text into its annotated type with a Pydantic ``TypeAdapter``,
built the first time the option is processed, for every option of the command that runs, given
or not. ``crowdsafe publish`` has about thirty options: importing Pydantic and building thirty
adapters cost about 0.2 s of processor time before the command did anything.

**Fast path** (:func:`plain_value`): for the plain types our options use, the value is coerced as
the adapter would coerce it, without Pydantic:

- ``str``: a ``str`` is returned as it is;
- ``int``: an ``int`` (not a ``bool``), or a ``str`` of at most 18 decimal digits with an optional
  leading minus, read by :class:`int`;
- ``float``: a ``float``, or a ``str`` in plain decimal or scientific notation (``1``, ``-0.5``,
  ``1e-6``, ``.5``), read by :class:`float` (correctly rounded, as Pydantic's reader);
- ``bool``: a ``bool``;
- ``list[str]``: a list or tuple of ``str``, as a list;
- ``pathlib.Path``: a non-empty ``str`` or a ``Path``, then Typer's own path checks.

**Reference twin**: Typer's adapter (:data:`REFERENCE`, built only when needed). Every other
value (text that is not a plain number, bytes, an empty path, ``inf``, ``1_000``, ...) and every
option with a parser, a choice, bounds, a click type or path flags goes to it, so the errors a
user sees are Typer's. ``tests/fast_paths/test_cli_coercion.py`` runs both twins on the same
values. :func:`install` hooks the fast path into Typer when the Typer in use has the hook (it
checks), and leaves Typer as it is otherwise.
"""

from __future__ import annotations

import pathlib
import re
from dataclasses import dataclass, field
from typing import Any, get_args, get_origin

#: Text :func:`int` reads exactly as Pydantic's lax int does (no sign but minus, no underscores,
#: no spaces, short enough for a machine integer).
INT_TEXT = re.compile(r"-?[0-9]{1,18}")
#: Text :func:`float` reads exactly as Pydantic's lax float does (no ``inf``/``nan``, no
#: underscores, no spaces).
FLOAT_TEXT = re.compile(r"-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")

#: Returned by :func:`plain_value` when the value is for the reference twin.
NOT_PLAIN = object()

#: The reference twin's name (Typer's coercion through a Pydantic adapter).
REFERENCE = "typer._coercion.build_runtime_param"


def plain_value(annotation: Any, value: Any) -> Any:
    """``value`` coerced to ``annotation`` by the fast path, or :data:`NOT_PLAIN`."""
    kind = type(value)
    if annotation is str:
        return value if kind is str else NOT_PLAIN
    if annotation is bool:
        return value if kind is bool else NOT_PLAIN
    if annotation is int:
        if kind is int:
            return value
        return int(value) if kind is str and INT_TEXT.fullmatch(value) else NOT_PLAIN
    if annotation is float:
        if kind is float:
            return value
        return float(value) if kind is str and FLOAT_TEXT.fullmatch(value) else NOT_PLAIN
    if get_origin(annotation) is list and get_args(annotation) == (str,):
        if kind in (list, tuple) and all(type(item) is str for item in value):
            return list(value)
        return NOT_PLAIN
    return NOT_PLAIN


#: Typer's path flags at their defaults: a ``Path`` option with these takes the fast path.
PATH_DEFAULTS = {"exists": False, "file_okay": True, "dir_okay": True, "writable": False, "readable": True,
                 "resolve_path": False, "allow_dash": False, "path_type": None}


def _plain_path_option(info: Any) -> bool:
    """True when a ``Path`` option asks for none of Typer's path flags beyond the defaults."""
    flags = {name: getattr(info, name, None) for name in PATH_DEFAULTS}
    return flags == PATH_DEFAULTS


def handles(descriptor: Any) -> bool:
    """True when the option of ``descriptor`` (Typer's type descriptor) may take the fast path."""
    info = descriptor.parameter_info
    if (descriptor.file_annotation is not None or getattr(info, "parser", None) is not None
            or getattr(info, "click_type", None) is not None):
        return False
    if getattr(info, "min", None) is not None or getattr(info, "max", None) is not None or getattr(info, "clamp", False):
        return False
    annotation = descriptor.annotation
    if annotation is pathlib.Path:
        return _plain_path_option(info)
    if descriptor.choices is not None:
        return False
    return annotation in (str, int, float, bool) or (get_origin(annotation) is list and get_args(annotation) == (str,))


def install() -> bool:
    """Hook the fast path into Typer's option processing; False (Typer untouched) when this Typer
    does not coerce through ``typer.core.build_runtime_param`` and ``typer._coercion.RuntimeParam``."""
    try:
        from typer import _coercion, _param_types, core
    except ImportError:
        return False
    reference: Any = getattr(core, "build_runtime_param", None)
    runtime_param: Any = getattr(_coercion, "RuntimeParam", None)
    check_path: Any = getattr(_param_types, "coerce_cli_path", None)
    if reference is None or runtime_param is None or check_path is None or getattr(reference, "fast_path", False):
        return False

    @dataclass(frozen=True)
    class PlainRuntimeParam(runtime_param):  # Typer's class, found at run time
        descriptor: Any = None
        built: list[Any] = field(default_factory=list)  # the reference twin, built on first need

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if self.annotation is pathlib.Path:
                path = pathlib.Path(value) if type(value) is str and value else value
                if isinstance(path, pathlib.Path):
                    return check_path(path, self.parameter_info, path_type=pathlib.Path, param=param, ctx=ctx)
            else:
                coerced = plain_value(self.annotation, value)
                if coerced is not NOT_PLAIN:
                    return coerced
            if not self.built:
                self.built.append(reference(self.descriptor))
            return self.built[0]._coerce_value(value, param=param, ctx=ctx)

    def build_runtime_param(descriptor: Any) -> Any:
        if handles(descriptor):
            return PlainRuntimeParam(parameter_info=descriptor.parameter_info, annotation=descriptor.annotation,
                                     descriptor=descriptor)
        return reference(descriptor)

    build_runtime_param.fast_path = True  # type: ignore[attr-defined]  # a mark on the function: installed once
    core.build_runtime_param = build_runtime_param
    return True


__all__ = ["FLOAT_TEXT", "INT_TEXT", "NOT_PLAIN", "REFERENCE", "handles", "install", "plain_value"]
