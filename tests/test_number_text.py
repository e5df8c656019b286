"""Numbers written as text: plain decimal or scientific notation only (crowdsafe.number_text)."""

from __future__ import annotations

import math

import mpmath
import pytest
from hypothesis import given
from hypothesis import strategies as st

from crowdsafe.errors import ParameterError
from crowdsafe.number_text import (
    NotANumber,
    odds_factor,
    parse_number,
    parse_whole,
    read_number,
    read_whole,
    rounded_up,
    write_number,
)


@pytest.mark.parametrize(("text", "value"), [
    ("10", 10.0), ("-0.5", -0.5), (".5", 0.5), ("1.", 1.0), ("+2E3", 2000.0), ("1e-6", 1e-6), ("0", 0.0),
    ("1.7976931348623157e308", 1.7976931348623157e308), ("5e-324", 5e-324),
])
def test_plain_numbers_are_read(text, value):
    assert read_number(text) == value


@pytest.mark.parametrize(("text", "message"), [
    ("1_0", "'1_0' is not a number (write it as 10)"),
    (" 1", "' 1' is not a number (write it as 1)"),
    ("1 ", "'1 ' is not a number (write it as 1)"),
    ("0x10", "'0x10' is not a number (write it as 16)"),
    ("0b11", "'0b11' is not a number (write it as 3)"),
    ("１２", "'１２' is not a number (write it as 12)"),  # full-width digits
    ("٣", "'٣' is not a number (write it as 3)"),  # Arabic-Indic digit
    ("0,5", "'0,5' is not a number (write it as 0.5)"),  # a decimal comma
    ("1,000", "'1,000' is not a number (write it in the digits 0-9"),  # or a thousands separator: no guess
    ("inf", "'inf' is not a finite number"),
    ("-Infinity", "'-Infinity' is not a finite number"),
    ("nan", "'nan' is not a finite number"),
    ("NaN", "'NaN' is not a finite number"),
    ("1e400", "'1e400' is too large"),
    ("1e-400", "'1e-400' is too close to 0"),
    ("", "'' is not a number"),
    ("abc", "'abc' is not a number (write it in the digits 0-9, e.g. 10, 0.5 or 1e-6)"),
    ("1e", "'1e' is not a number"),
    ("x" * 100, "'" + "x" * 37 + "...' is not a number"),
])
def test_everything_else_python_reads_is_refused_with_the_spelling_to_use(text, message):
    with pytest.raises(NotANumber) as refused:
        read_number(text)
    assert str(refused.value).startswith(message)


@pytest.mark.parametrize(("text", "value"), [("16", 16), ("-3", -3), ("1e6", 1_000_000), ("10.0", 10), ("+7", 7)])
def test_whole_numbers_are_digits_or_a_whole_value_in_notation(text, value):
    assert read_whole(text) == value and isinstance(read_whole(text), int)


@pytest.mark.parametrize(("text", "message"), [
    ("2.5", "'2.5' is not a whole number"),
    ("0x10", "'0x10' is not a whole number (write it as 16)"),
    ("1_000", "'1_000' is not a whole number (write it as 1000)"),
    ("0,5", "'0,5' is not a whole number"),
    ("1e400", "'1e400' is too large"),
    ("1e18", "'1e18' is too large"),
    ("9" * 5000, "a whole number of 5000 digits is too large"),
    ("nan", "'nan' is not a finite number"),
])
def test_whole_number_refusals(text, message):
    with pytest.raises(NotANumber, match=message.replace("(", r"\(").replace(")", r"\)")):
        read_whole(text)


def test_the_named_forms_raise_a_parameter_error_naming_what_was_read():
    with pytest.raises(ParameterError) as refused:
        parse_number("1_0", "--epsilon")
    assert str(refused.value) == "--epsilon: '1_0' is not a number (write it as 10)"
    with pytest.raises(ParameterError, match=r"^--k: '0x10' is not a whole number \(write it as 16\)$"):
        parse_whole("0x10", "--k")
    assert parse_number("1e1", "--epsilon") == 10.0 and parse_whole("12", "--k") == 12


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_every_finite_float_written_by_python_is_read_back_exactly(x):
    assert read_number(repr(x)) == x
    assert read_number(f"{x:e}") == float(f"{x:e}")


@given(st.text(alphabet=st.characters(codec="utf-8"), max_size=12))
def test_what_is_accepted_is_ascii_and_means_what_python_means(text):
    try:
        value = read_number(text)
    except NotANumber:
        return
    assert text.isascii() and "_" not in text and text == text.strip()
    assert math.isfinite(value) and value == float(text)


@given(st.integers(min_value=-(10**30), max_value=10**30))
def test_every_integer_in_digits_is_read_exactly(n):
    assert read_whole(str(n)) == n


def test_numbers_are_written_in_the_short_form_read_back():

    assert [write_number(x) for x in (1e-6, 1e-06, 2.5e7, 0.41573, 10.0, 1e-300, 123456.0)] == [
        "1e-6", "1e-6", "2.5e7", "0.4157", "10", "1e-300", "1.235e5"]
    assert write_number(1e-5, 3) == "1e-5" and write_number(-1.25e-12, 3) == "-1.25e-12"


@given(st.floats(allow_nan=False, allow_infinity=False, min_value=-1e300, max_value=1e300), st.integers(1, 17))
def test_a_written_number_reads_back_as_its_rounded_value(x, digits):

    text = write_number(x, digits)
    assert "e+" not in text and "e-0" not in text and "e0" not in text
    if x == 0 or abs(x) >= 1e-300:
        assert read_number(text) == float(f"{x:.{digits}g}")


@pytest.mark.parametrize(("epsilon", "shown"), [(1.0, "2.72"), (0.1, "1.11"), (0.004, "1.005"), (0.001, "1.002"),
                                                (1.5, "4.49"), (1e-6, "1.000002"), (1e-17, "1 + 1e-17"),
                                                (0.0, "1"), (800.0, "inf")])
def test_the_odds_factor_is_never_shown_as_1_for_a_positive_epsilon(epsilon, shown):
    """Found by the app sweep: ε = 0.001 was shown as "×1" (three digits of e^ε), claiming no change at all.
    Rounded up since the auditor's sweep (2026-11-30): e^1.5 = 4.4817 read "4.48", e^0.001 = 1.0010005 "1.001"."""
    assert odds_factor(epsilon) == shown


@given(st.floats(min_value=1e-15, max_value=700))
def test_the_odds_factor_is_above_1_and_close_to_e_to_the_epsilon(epsilon):
    shown = odds_factor(epsilon)
    with mpmath.workdps(40):  # e^ε at 40 digits: the text must never read below it
        assert float(shown) > 1.0 and mpmath.mpf(shown) >= mpmath.exp(mpmath.mpf(epsilon))
    assert float(shown) <= 1.01 * math.exp(epsilon)  # up by at most one unit of the third digit


@pytest.mark.parametrize(("x", "digits", "text"), [
    (12.000610571481, 6, "12.0007"), (12.000610571481, 4, "12.01"), (12.0, 6, "12"), (5e-7, 3, "5e-07"),
    (4.224e-7, 3, "4.23e-07"), (9.999991, 6, "10"), (0.1, 6, "0.1"), (1.0000000000000002, 6, "1.00001"),
    (math.inf, 6, "inf"), (0.0, 6, "0"),
])
def test_rounded_up_never_shows_a_smaller_number(x, digits, text):
    assert rounded_up(x, digits) == text


@given(st.floats(min_value=1e-300, max_value=1e300), st.integers(min_value=1, max_value=15))
def test_rounded_up_is_the_least_text_of_its_digits_not_below_x(x, digits):
    from decimal import Decimal

    shown = rounded_up(x, digits)
    assert float(shown) >= x
    nearest = f"{x:.{digits}g}"
    assert shown == nearest or float(nearest) < x  # it only moves when the nearest reads back below x
    assert len(Decimal(shown).normalize().as_tuple().digits) <= digits


@given(st.floats(min_value=1e-300, max_value=1e300), st.integers(min_value=1, max_value=15))
def test_rounded_down_is_the_greatest_text_of_its_digits_not_above_x(x, digits):
    from decimal import Decimal

    from crowdsafe.number_text import rounded_down

    shown = rounded_down(x, digits)
    assert float(shown) <= x
    nearest = f"{x:.{digits}g}"
    assert shown == nearest or float(nearest) > x  # it only moves when the nearest reads back above x
    assert len(Decimal(shown).normalize().as_tuple().digits) <= digits


def test_the_guarantee_line_never_states_a_loss_smaller_than_proven():
    from crowdsafe.privacy.certificate import Certificate

    cert = Certificate(guarantee="dp", epsilon=12.000610571, delta=1.2345e-6, theorem="T", mechanisms=(),
                       parameters={}, assumptions=())
    assert cert.headline() == "(12.0007, 1.24e-06)-DP"  # .6g and .3g gave 12.0006 and 1.23e-06
    assert cert.summary().startswith("(12.0007, 1.24e-06)-DP [T]")
    dg = Certificate(guarantee="d-gamma", epsilon=6.4501, delta=0.0, theorem="T", mechanisms=(),
                     parameters={"d": 0.12366, "gamma": 0.20012}, assumptions=())
    assert dg.headline() == "(0.123, 0.201)-private"  # d down (the prior assumed), γ up (the posterior bound)
