"""Interval bands and their labels, exact in the decimal sense a person means.

A schema declares ``widths = [0.1, 1]`` and ``origin``, ``bottom``, ``top`` as decimals, and a value
read from text as ``6.6`` means the decimal 6.6 (a float's meaning is its shortest round-trip
``repr``). The band of a value ``v`` at width ``w`` is the ``b`` with ``o + b·w <= v < o + (b+1)·w``
in those decimals; ``floor((v - o) / w)`` in binary floating point puts 6.6 in ``[6.5, 6.6)``.

:func:`grid_floor` scales every value onto the grid of ``10**-k`` (``k`` the most decimals of the
origin and the widths), where origin and widths are whole numbers, so a band is an integer floor
division and nested widths (0.1, 0.2, 1, 2) nest exactly. Vectorised: a float product for all
values, trusted where it provably gives the exact integer (a value on the grid, or one far from
it), and Python's :class:`~decimal.Decimal` only for the few distinct values left (near a grid
point without being on it, or too large for the float product).

:func:`decimal_text` writes a bound as the exact decimal, shortest (``6.6``, ``1234567.25``,
``52.520001``; integers as integers), in exponent notation only outside ``1e-7 <= |x| < 1e21``,
which both cell readers read back (:mod:`crowdsafe.data.generalized`, :mod:`crowdsafe.data.cell_reader`).
"""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal
from typing import Any

import numpy as np
import polars as pl

_FAST_DIGITS = 22  # 10**22 is the largest power of ten a float holds exactly
_FLOAT_WHOLE = 2.0**52  # below this a float product is a whole number to within far less than 1
_INT_ROOM = 2**60  # origin and widths (scaled) that leave int64 room for the band arithmetic


def decimal_of(x: Any) -> Decimal:
    """The decimal a number stands for: an integer as itself, a float as its shortest
    round-trip ``repr`` (``0.1`` is 0.1, not the binary fraction nearest it)."""
    if isinstance(x, (int, np.integer)) and not isinstance(x, bool):
        return Decimal(int(x))
    return Decimal(repr(float(x)))


def decimal_text(d: Decimal) -> str:
    """``d`` written exactly and shortest: no trailing zeros, an integer without a point,
    positional for ``1e-7 <= |d| < 1e21``, else ``1.5e+22`` / ``1e-08`` (as Python writes floats)."""
    if not d.is_finite():
        return "nan" if d.is_nan() else "-inf" if d.is_signed() else "inf"
    sign, digit_tuple, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple)).lstrip("0")
    text = digits.rstrip("0")
    if not text:
        return "0"
    exponent += len(digits) - len(text)
    lead = len(text) + exponent - 1  # the power of ten of the first digit
    if -7 <= lead < 21:
        if exponent >= 0:
            body = text + "0" * exponent
        elif lead >= 0:
            body = f"{text[:lead + 1]}.{text[lead + 1:]}"
        else:
            body = "0." + "0" * (-lead - 1) + text
    else:
        body = text[0] + (f".{text[1:]}" if len(text) > 1 else "") + f"e{lead:+03d}"
    return ("-" if sign else "") + body


def number_text(x: Any) -> str:
    """A schema number or a value as :func:`decimal_text` writes its decimal."""
    return decimal_text(decimal_of(x))


def decimals(d: Decimal) -> int:
    """How many digits ``d`` has after the point (trailing zeros not counted)."""
    sign, digit_tuple, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    return max(0, -(exponent + len(digits) - len(digits.rstrip("0")))) if digits.strip("0") else 0


def scaled(d: Decimal, k: int) -> int:
    """``floor(d * 10**k)``, exactly."""
    sign, digit_tuple, exponent = d.as_tuple()
    assert isinstance(exponent, int)
    whole = int("".join(map(str, digit_tuple)) or "0") * (-1 if sign else 1)
    shift = exponent + k
    return whole * 10**shift if shift >= 0 else whole // 10**-shift


def grid_floor(leaves: np.ndarray, k: int) -> np.ndarray:
    """``floor(v * 10**k)`` of each finite float ``v`` of ``leaves``, ``v`` read as its shortest
    decimal: int64 when every one fits, else Python integers (an object array).

    A float product ``y = v * 10**k`` is trusted where it provably gives the exact floor: ``v``
    on the grid (``rint(y) / 10**k`` is ``v`` and a float step of ``v`` is below ``10**-k``, so
    the shortest decimal of ``v`` is that grid point), or ``y`` farther from every whole number
    than the float error of ``v`` and of the product. The others (near a grid point without being
    on it, or too large) are computed with :class:`Decimal`, once per distinct value."""
    out = np.zeros(len(leaves), dtype=np.int64)
    exact = np.ones(len(leaves), dtype=bool)
    if k <= _FAST_DIGITS:
        scale = 10.0**k
        with np.errstate(over="ignore", invalid="ignore"):
            product = leaves * scale
            nearest = np.rint(product)
            small = np.abs(product) < _FLOAT_WHOLE
            on_grid = small & (nearest / scale == leaves) & (np.spacing(np.abs(leaves)) * scale < 0.5)
            tolerance = 2.0 * (np.spacing(np.abs(leaves)) * scale + np.spacing(np.abs(product)))
            off_grid = small & ~on_grid & (np.abs(product - nearest) > tolerance)
        out[on_grid] = nearest[on_grid].astype(np.int64)
        out[off_grid] = np.floor(product[off_grid]).astype(np.int64)
        exact = ~(on_grid | off_grid)
    if not exact.any():
        return out
    slow = [scaled(decimal_of(v), k) for v in leaves[exact].tolist()]
    if all(-(2**62) < n < 2**62 for n in slow):
        out[exact] = slow
        return out
    wide = out.astype(object)
    wide[np.flatnonzero(exact)] = slow
    return wide


def band_bounds(leaves: np.ndarray, origin: Any, widths: Sequence[Any]) -> tuple[int, list[np.ndarray], list[int]]:
    """Each finite leaf's band at each width, on the grid of ``10**-k``: returns ``k``, the band's
    low end per level (``origin + b·width`` times ``10**k``, an integer per leaf) and each width
    times ``10**k``. A level's high end is its low end plus its width; nested widths nest exactly."""
    o = decimal_of(origin)
    ws = [decimal_of(w) for w in widths]
    k = max(decimals(d) for d in [o, *ws])
    grid_origin, grid_widths = scaled(o, k), [scaled(w, k) for w in ws]
    floors = grid_floor(leaves, k)
    if floors.dtype != object and (abs(grid_origin) >= _INT_ROOM or max(grid_widths) >= _INT_ROOM):
        floors = floors.astype(object)
    lows = [grid_origin + (floors - grid_origin) // w * w for w in grid_widths]
    return k, lows, grid_widths


def grid_texts(grid: np.ndarray, k: int) -> list[str]:
    """:func:`decimal_text` of each ``n * 10**-k`` for whole numbers ``grid``: positional digits
    written by column operations where they fit int64 and ``1e-7 <= |n * 10**-k|``, else one
    :class:`Decimal` at a time."""
    fast = np.zeros(len(grid), dtype=bool)
    if grid.dtype != object and k <= 18:
        magnitude = np.abs(grid)
        fast = (magnitude < 2**62) & ((grid == 0) | (magnitude >= 10 ** max(k - 7, 0)))
    texts = np.empty(len(grid), dtype=object)
    if fast.any():
        whole = pl.Series(np.abs(grid[fast]), dtype=pl.Int64)
        unit = 10**k
        frac = (whole % unit).cast(pl.String).str.zfill(k).str.strip_chars_end("0") if k else None
        sign = pl.Series(np.where(grid[fast] < 0, "-", ""), dtype=pl.String)
        frame = pl.DataFrame({"sign": sign, "whole": (whole // unit).cast(pl.String),
                              "frac": frac if frac is not None else pl.Series([""] * len(whole), dtype=pl.String)})
        written = frame.select(pl.concat_str(
            pl.col("sign"), pl.col("whole"),
            pl.when(pl.col("frac") != "").then(pl.lit(".") + pl.col("frac")).otherwise(pl.lit(""))))
        texts[fast] = written.to_series().to_list()
    for at in np.flatnonzero(~fast).tolist():
        texts[at] = decimal_text(Decimal(f"{int(grid[at])}e-{k}"))
    return texts.tolist()


def nests(finer: Any, coarser: Any) -> bool:
    """Whether the decimal ``coarser`` is a whole multiple (at least 1) of the decimal ``finer``."""
    f, c = decimal_of(finer), decimal_of(coarser)
    k = max(decimals(f), decimals(c))
    small, large = scaled(f, k), scaled(c, k)
    return large >= small and large % small == 0
