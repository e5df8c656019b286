"""Numbers written as text (options, lists in options, scheme levels): one strict reading; and
numbers written for a reader (a loss rounded up, a budget left rounded down, a count with its noun).

A number is plain decimal or scientific notation in the ASCII digits 0-9: ``10``, ``-0.5``,
``.5``, ``1e-6``, ``+2E3``. Everything else Python's ``float`` or ``int`` would also take is
refused, because each is read as a value the writer most likely did not mean, and a privacy
parameter read wrong is spent wrong: ``1_0`` (10), ``' 1'``, ``0x10``, ``inf``, ``nan``,
``infinity``, ``1e400`` (infinity), ``1e-400`` (zero), full-width or other non-ASCII digits.
A whole number is written in digits (``16``) or as decimal or scientific notation of a whole
value (``1e6``, ``10.0``).

:func:`read_number` and :func:`read_whole` raise :class:`NotANumber` (a ``ValueError``) with the
problem and, where one exists, the spelling to use; :func:`parse_number` and :func:`parse_whole`
raise a
:class:`~crowdsafe.errors.ParameterError` naming what was read
(``--epsilon: '1_0' is not a number (write it as 10)``).
"""

from __future__ import annotations

import math
import re
import unicodedata
from decimal import Decimal

from crowdsafe.errors import ParameterError

_DECIMAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_DIGITS = re.compile(r"[+-]?[0-9]+")
_WORDS = {"inf", "infinity", "nan"}
# A whole number written with a point or an exponent must stay below this (int(Decimal) of
# '1e999999999' would build a billion-digit integer); plain digits are bounded by Python itself.
_WHOLE_NOTATION_LIMIT = 10**18


class NotANumber(ValueError):
    """A text that is not a number in the strict sense of this module; the message says why."""


def read_number(text: str) -> float:
    """``text`` as a finite float, or :class:`NotANumber`."""
    if not _DECIMAL.fullmatch(text):
        raise NotANumber(_not_a_number(text, whole=False))
    value = float(text)
    if math.isinf(value):
        raise NotANumber(f"{_shown(text)} is too large (beyond the largest floating-point number, about 1.8e308)")
    if value == 0.0 and re.search(r"[1-9]", re.split(r"[eE]", text)[0]):
        raise NotANumber(f"{_shown(text)} is too close to 0 to be represented (it would be read as 0)")
    return value


def read_whole(text: str) -> int:
    """``text`` as an int, or :class:`NotANumber`: digits, or a whole value in decimal or
    scientific notation (``1e6``) below 10**18."""
    if _DIGITS.fullmatch(text):
        try:
            return int(text)
        except ValueError:  # more digits than Python converts
            raise NotANumber(f"a whole number of {len(text)} digits is too large") from None
    if not _DECIMAL.fullmatch(text):
        raise NotANumber(_not_a_number(text, whole=True))
    exact = Decimal(text)
    if abs(exact) >= _WHOLE_NOTATION_LIMIT:
        raise NotANumber(f"{_shown(text)} is too large")
    if exact != exact.to_integral_value():
        raise NotANumber(f"{_shown(text)} is not a whole number")
    return int(exact)


def parse_number(text: str, name: str) -> float:
    """:func:`read_number`, its refusal a ParameterError that starts with ``name``."""
    try:
        return read_number(text)
    except NotANumber as exc:
        raise ParameterError(f"{name}: {exc}") from None


def parse_whole(text: str, name: str) -> int:
    """:func:`read_whole`, its refusal a ParameterError that starts with ``name``."""
    try:
        return read_whole(text)
    except NotANumber as exc:
        raise ParameterError(f"{name}: {exc}") from None


def _not_a_number(text: str, whole: bool) -> str:
    """Why ``text`` is refused, with the spelling to use when the intended value is clear."""
    kind = "a whole number" if whole else "a number"
    folded = unicodedata.normalize("NFKC", text).strip().lower()
    if folded.lstrip("+-") in _WORDS:
        return f"{_shown(text)} is not a finite number"
    meant = _meant(text)
    if meant is not None and whole:
        try:
            read_whole(meant)
        except NotANumber:
            return f"{_shown(text)} is not a whole number"
    if meant is not None:
        return f"{_shown(text)} is not {kind} (write it as {meant})"
    return f"{_shown(text)} is not {kind} (write it in the digits 0-9, e.g. 10, 0.5 or 1e-6)"


def _shown(text: str) -> str:
    """``text`` quoted for a one-line message, cut short if long."""
    return repr(text if len(text) <= 40 else text[:37] + "...")


def _meant(text: str) -> str | None:
    """The plain spelling of what ``text`` probably means, if that is clear: digits with spaces,
    underscores, a decimal comma (not followed by exactly three digits, which may group
    thousands) or non-ASCII digits; hexadecimal, octal or binary integers."""
    folded = unicodedata.normalize("NFKC", text)
    folded = "".join(str(unicodedata.decimal(c)) if unicodedata.decimal(c, None) is not None else c
                     for c in folded)
    candidate = folded.strip().replace("_", "")
    if re.fullmatch(r"[+-]?[0-9]*,[0-9]*(?<![0-9],[0-9]{3})(?:[eE][+-]?[0-9]+)?", candidate):
        candidate = candidate.replace(",", ".")
    if _DECIMAL.fullmatch(candidate):
        return candidate.lstrip("+")
    try:
        return str(int(candidate, 0))
    except ValueError:
        return None


def odds_factor(epsilon: float, digits: int = 3) -> str:
    """e^ε, the factor by which ε-differential privacy lets an attacker's odds change, to ``digits``
    significant digits, or as many more as it takes to show it above 1, rounded up (a bound, never
    stated below e^ε: ``4.49`` for ε = 1.5, where e^ε = 4.4817; nearest rounding read ``4.48``
    until 2026-11-30): ``2.72`` for ε = 1, ``1.002`` for ε = 0.001 (e^ε = 1.0010005), never ``1``
    for ε > 0 (which would claim no change at all). For ε so small that e^ε is 1 in floating
    point, ``1 + 1e-17``; ``inf`` past e^709. The app's pages and the report write it with this
    one function."""
    if not epsilon > 0 or math.isinf(epsilon):
        return write_number(math.exp(epsilon) if not math.isnan(epsilon) else epsilon, digits)
    if epsilon > 709:  # e^ε overflows a float
        return write_number(math.inf, digits)
    factor = math.exp(epsilon)
    upper = math.nextafter(factor, math.inf)  # math.exp is within an ulp: this is never below e^ε
    for shown in range(digits, 18):
        if factor > 1.0 and float(write_number(factor, shown)) > 1.0:  # the digits it takes to show it above 1
            return write_number(upper, shown, rounding="up")
    return f"1 + {write_number(math.expm1(epsilon), digits, rounding='up')}"


def write_number(x: float, digits: int = 4, rounding: str = "nearest") -> str:
    """``x`` to ``digits`` significant digits in the short form a person writes and
    :func:`read_number` reads: ``1e-6`` (not Python's ``1e-06``), ``2.5e7``, ``0.4157``, ``10``.
    ``rounding``: ``"nearest"``, ``"up"`` (:func:`rounded_up`: a privacy loss spent or proven) or
    ``"down"`` (:func:`rounded_down`: a budget left)."""
    text = (rounded_up(x, digits) if rounding == "up" else rounded_down(x, digits) if rounding == "down"
            else f"{x:.{digits}g}")
    mantissa, e, exponent = text.partition("e")
    if not e:
        return text
    return f"{mantissa}e{int(exponent)}"


def rounded_up(x: float, digits: int = 6) -> str:
    """``x`` as Python's ``g`` format to ``digits`` significant digits, rounded up instead of to
    nearest: the text reads back as a float never below ``x``, so a privacy loss printed with it is
    never stated smaller than the one proven: 12.000610571 is ``12.0007``, not ``12.0006``; 12 is
    ``12``, and 0.1 is ``0.1`` (the text of the float 0.1)."""
    return _rounded(x, digits, 1)


def rounded_down(x: float, digits: int = 6) -> str:
    """:func:`rounded_up`'s mirror: the text reads back as a float never above ``x`` (for a bound
    whose larger value states a stronger claim, such as the prior d of (d, γ)-privacy)."""
    return _rounded(x, digits, -1)


def _rounded(x: float, digits: int, direction: int) -> str:
    """The nearest ``g`` text unless it reads back on the wrong side of ``x`` (``direction`` 1:
    below it, -1: above it); then the next text of ``digits`` digits that way."""
    text = f"{x:.{digits}g}"
    if not math.isfinite(x) or (float(text) - x) * direction >= 0:
        return text
    shown = Decimal(text)
    return f"{float(shown + direction * Decimal(1).scaleb(shown.adjusted() - digits + 1)):.{digits}g}"


def budget_words(budget: dict, spent: dict, remaining: dict) -> str:
    """A ledger budget in words: the budget as set, what was spent rounded up and what remains
    rounded down (neither stated more favourably than it is); each a mapping of ``epsilon`` and
    ``delta``."""
    return (f"budget (ε {budget['epsilon']:g}, δ {budget['delta']:g}); spent (ε {rounded_up(spent['epsilon'])}, "
            f"δ {rounded_up(spent['delta'], 3)}); remaining (ε {rounded_down(remaining['epsilon'])}, "
            f"δ {rounded_down(remaining['delta'], 3)})")


def quantity(count: int, noun: str, plural: str | None = None) -> str:
    """``count`` and its noun, singular for exactly 1 and plural otherwise, the count with thousands
    separators: ``1 row``, ``0 rows``, ``1,234 classes`` (``plural``: when not ``noun + "s"``,
    e.g. ``quantity(n, "class", "classes")``). Every message that counts something writes it with
    this one function, so that none says "the table has 1 rows"."""
    many = plural if plural is not None else f"{noun}s"
    return f"{count:,} {noun if count == 1 else many}"


def large_count(count: int) -> str:
    """A count as a person reads it: with thousands separators up to 30 digits (``36,864``, 2^64),
    past that its first two digits, cut, and its power of ten (``at least 2.3 × 10^1228``: a
    lattice of 3,000 columns counts its candidates in a number of 1,229 digits, which a message
    printed whole)."""
    digits = str(abs(int(count)))
    if len(digits) <= 30:
        return f"{int(count):,}"
    return f"at least {digits[0]}.{digits[1]} × 10^{len(digits) - 1}"
