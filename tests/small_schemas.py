"""Schema texts of the small tables several tests write (an ``age``, ``sex``, ``zip``, ``edu``
table); each test adds what it needs."""

from __future__ import annotations

#: age (integer, widths 10 and 20 over [0, 120]) and sex (F, M), both quasi-identifiers
AGE_SEX = """[attributes.age]
role = "quasi-identifier"
type = "integer"
hierarchy = { widths = [10, 20], bottom = 0, top = 120 }
[attributes.sex]
role = "quasi-identifier"
type = "categorical"
order = ["F", "M"]
"""

#: zip (masked to 4 characters), a quasi-identifier
ZIP = """[attributes.zip]
role = "quasi-identifier"
type = "categorical"
hierarchy = { mask = 4 }
"""

#: edu (HS, BSc), the sensitive column
EDU = """[attributes.edu]
role = "sensitive"
type = "categorical"
order = ["HS", "BSc"]
"""
