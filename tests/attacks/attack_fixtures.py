"""Hand-built releases shared by the attack tests."""

from __future__ import annotations

import polars as pl

from crowdsafe.attacks import AttackedRelease


def tiny():
    r1 = pl.DataFrame({"age": ["[20, 29]"] * 3 + ["[30, 39]"] * 3, "zip": ["*"] * 6,
                       "dis": ["flu", "hiv", "cold", "cancer", "flu", "flu"]})
    r2 = pl.DataFrame({"age": ["[20, 24]"] * 2 + ["[25, 34]"] * 3, "zip": ["1300", "1300", "*", "*", "*"],
                       "dis": ["hiv", "flu", "cancer", "hiv", "cold"]})
    targets = pl.DataFrame({"age": [22, 27, 33, 33], "zip": ["1300", "1400", "1400", "1400"],
                            "dis": ["hiv", "cold", "cancer", "flu"]})
    return [AttackedRelease(r1, "a", 3), AttackedRelease(r2, "b", 2)], targets


def covers(cell, value):
    """Brute-force reading of one release cell: does it cover ``value``?"""
    if cell == "*":
        return True
    if cell.startswith("["):
        lo, hi = (float(x) for x in cell[1:-1].split(","))
        return lo <= value <= hi
    if cell.startswith("{"):
        return str(value) in [m.strip() for m in cell[1:-1].split(",")]
    return str(cell) == str(value)
