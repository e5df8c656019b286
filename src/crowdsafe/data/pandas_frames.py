"""A pandas DataFrame as a Polars frame (:func:`from_pandas`), for every function that takes one.

Polars' ``from_pandas`` (through Arrow) refuses an ``object`` column that mixes kinds of values
(``13053`` and ``"99999"`` after a ``concat``, numbers and text read from a spreadsheet) with
Arrow's own words, which name a value but not its column: ``Could not convert '99999' with type
str: tried to convert to int64``. The refusal here names the first such column and how to give it
one type. It depends on the rows (which column mixes kinds, and the value Arrow quotes), so it
ends with :data:`~crowdsafe.errors.CUSTODIAN_REFUSAL`; it comes before anything is charged.
"""

from __future__ import annotations

from typing import Any

import polars as pl

from crowdsafe.errors import CUSTODIAN_REFUSAL, InputError, first_line


def from_pandas(frame: Any) -> pl.DataFrame:
    """``frame`` (a pandas DataFrame) as a Polars frame, or an InputError in one line naming the
    column that cannot be converted (or the frame, when no one column is to blame: repeated
    column names)."""
    try:
        return pl.from_pandas(frame)
    except Exception as exc:  # pyarrow / polars conversion problems
        problem = first_line(exc)
    for position, name in enumerate(frame.columns):
        try:
            pl.from_pandas(frame.iloc[:, [position]])
        except Exception as exc:
            raise InputError(f"cannot convert column {str(name)!r} of the pandas DataFrame: {first_line(exc)}; "
                             f"give it one type (df[{str(name)!r}].astype(str), or pandas.to_numeric)"
                             f"{CUSTODIAN_REFUSAL}") from None
    raise InputError(f"cannot convert the pandas DataFrame: {problem}") from None
