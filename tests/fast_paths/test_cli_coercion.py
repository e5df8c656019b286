"""The command line's plain coercion of option values (crowdsafe.cli.coercion.plain_value, fast
path) against Typer's Pydantic adapter (reference twin): same type, same value, for every value
the fast path takes; the values it leaves to the reference are refused by it (NOT_PLAIN).

The threshold is the length of an integer's text (INT_TEXT: at most 18 digits): 17, 18 and 19
digits are run. Typer builds the reference only when a value needs it; through the command
line, a publish imports no Pydantic.
"""

from __future__ import annotations

import math
import os
import pathlib
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.cli import coercion

_adapters = pytest.importorskip("typer._adapters")
OptionInfo = pytest.importorskip("typer.models").OptionInfo


def reference(annotation, value):
    """Typer's coercion of ``value`` to ``annotation``, or None when it refuses it."""
    from pydantic import ValidationError

    adapter = _adapters.try_build_adapter(annotation, OptionInfo())
    try:
        return ("ok", adapter.validate_python(value))
    except ValidationError:
        return ("refused", None)


def same(annotation, value):
    fast = coercion.plain_value(annotation, value)
    if fast is coercion.NOT_PLAIN:
        return None  # left to the reference twin
    status, expected = reference(annotation, value)
    assert status == "ok", (annotation, value)
    assert type(fast) is type(expected), (annotation, value, fast, expected)
    if isinstance(fast, float):
        assert math.copysign(1.0, fast) == math.copysign(1.0, expected) and fast == expected, (value, fast, expected)
    else:
        assert fast == expected, (annotation, value, fast, expected)
    return fast


FLOAT_TEXTS = ["1", "0", "-0", "-0.0", "1.0", "1.", ".5", "-.5", "1e-6", "1E-6", "2.5e+3", "0.1", "0.30000000000000004",
               "1e308", "1e309", "4.9e-324", "1e-400", "123456789012345678901234567890", "007", "-1e-6"]
INT_TEXTS = ["0", "-0", "1", "-1", "007", "42", "9" * 17, "9" * 18, "-" + "9" * 18]
REFUSED = {int: ["9" * 19, "1_000", " 5", "5 ", "+5", "1.0", "1e3", "", "x", "0x10", "١٢"],
           float: ["inf", "nan", "-inf", "1_000.5", " 1", "1 ", "+1", "", "x", "1e", "e5", "0x1p3", "١.٥"],
           str: [b"bytes", 5, None], bool: ["true", 1, None]}


@pytest.mark.parametrize("text", FLOAT_TEXTS)
def test_float_texts(text):
    assert same(float, text) is not None


@pytest.mark.parametrize("text", INT_TEXTS)
def test_int_texts(text):
    assert same(int, text) is not None


@pytest.mark.parametrize("digits", [17, 18, 19])
def test_int_length_threshold(digits):
    text = "8" * digits
    fast = coercion.plain_value(int, text)
    if digits <= 18:
        assert fast == int(text) == reference(int, text)[1]
    else:
        assert fast is coercion.NOT_PLAIN
        assert reference(int, text) == ("ok", int(text))  # the reference takes it instead


@pytest.mark.parametrize(("annotation", "value"), [(a, v) for a, values in REFUSED.items() for v in values])
def test_left_to_the_reference(annotation, value):
    assert coercion.plain_value(annotation, value) is coercion.NOT_PLAIN


@pytest.mark.parametrize(("annotation", "value"), [(str, "adult"), (str, ""), (str, "é ,x"), (int, 3), (int, -2),
                                                   (float, 0.5), (float, -0.0), (float, math.inf), (bool, True),
                                                   (bool, False), (list[str], ("a", "b")), (list[str], ["x"]),
                                                   (list[str], ())])
def test_values_already_typed(annotation, value):
    assert same(annotation, value) is not None or annotation is float and math.isinf(value)


@settings(max_examples=300, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_repr_round_trip(number):
    for text in (repr(number), f"{number:e}", f"{number:.17g}"):
        same(float, text)


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="0123456789-+.eE_ x", max_size=8))
def test_any_short_text(text):
    """Whatever the fast path takes, the reference gives the same; the rest it leaves alone."""
    for annotation in (int, float):
        same(annotation, text)


def test_publish_imports_no_pydantic(tmp_path):
    """Through the command line the fast path serves every option of a publish."""
    probe = ("import sys\nfrom crowdsafe.cli import main\ncode = main(sys.argv[1:])\n"
             "print(code, 'pydantic' in sys.modules)")
    source = str(pathlib.Path(coercion.__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([source, os.environ.get("PYTHONPATH", "")])}
    done = subprocess.run([sys.executable, "-c", probe, "publish", "adult", "--plan-only", "--epsilon", "0.5",
                           "--delta", "1e-7", "--k", "40", "--columns", "age,sex", "--custodian-report",
                           str(tmp_path / "c.json")], env=env, capture_output=True, text=True, timeout=120)
    assert done.stdout.strip().splitlines()[-1] == "0 False", done.stdout + done.stderr


@pytest.mark.parametrize("annotation", [pathlib.Path, str, int, float, list[str]])
@pytest.mark.parametrize("value", ["release/adult.csv", "-", ".", "1e-6", "12", "inf", ("a", "b"), ""])
def test_installed_hook_against_typers_own(annotation, value, tmp_path):
    """Through the installed hook (typer.core.build_runtime_param) and Typer's own builder
    (typer._coercion.build_runtime_param): the same value, or the same error."""
    import typer.core
    from typer import _coercion

    import crowdsafe.cli  # noqa: F401  (installs the hook)

    assert getattr(typer.core.build_runtime_param, "fast_path", False)
    descriptor = _coercion.resolve_type_descriptor(annotation, OptionInfo())

    def outcome(build):
        try:
            return ("ok", build(descriptor)._coerce_value(value, param=None, ctx=None))
        except Exception as exc:  # the reference's error, compared by type and text
            return ("error", type(exc).__name__, str(exc))

    assert outcome(typer.core.build_runtime_param) == outcome(_coercion.build_runtime_param)
