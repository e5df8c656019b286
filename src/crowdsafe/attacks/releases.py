"""Reading releases for an attack: a :class:`~crowdsafe.anonymize.Release`, a frame, or a file.

A release file is read with every column as text (so that a cell such as ``[25, 34]`` or
``017`` is read exactly as published), its separator and line breaks found as the loader finds
them (:mod:`crowdsafe.data.text_csv`: another tool's ``;``-separated release reads too); its
presumed k is taken from the certificate written beside it (``<name>.certificate.json``), when there is one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import polars as pl

from crowdsafe.attacks.intersection import AttackedRelease
from crowdsafe.csv_safety import certificate_beside, escaped_by, unescape_frame
from crowdsafe.data.text_csv import read_text_csv
from crowdsafe.errors import InputError


def certificate_k(path: Path) -> int | None:
    """The k a release claims: ``parameters.k`` of the certificate written beside ``path``
    (``<name>.certificate.json``), or None when there is none or it names no whole k (a
    hand-edited certificate whose parameters are not an object names none)."""
    parameters = certificate_beside(path).get("parameters")
    k = parameters.get("k") if isinstance(parameters, dict) else None
    return int(k) if isinstance(k, int) and not isinstance(k, bool) else None


def read_release(path: str | os.PathLike[str], name: str | None = None) -> AttackedRelease:
    """Read a release file (CSV or Parquet) for an attack. A CSV release's formula-safe cells
    (``'=1+1``, :mod:`crowdsafe.csv_safety`) are read back as published (``=1+1``), unless the
    certificate beside it says its cells were written raw (``--no-escape-formulas``)."""
    from crowdsafe.files import check_input

    path = check_input(path, "release")  # a FIFO would block the read
    if not path.exists():
        raise InputError(f"no such release file: {path}")
    suffix = path.suffix.lower()
    if path.is_file():
        from crowdsafe.data.io import PARQUET, sniff_format

        kind, _ = sniff_format(path)  # an Excel, archive or binary file is named in one line
        suffix = ".parquet" if kind == PARQUET else ".csv" if suffix not in (".parquet", ".pq") else suffix
    try:
        if suffix == ".csv":
            frame = read_text_csv(path, "release")
            if escaped_by(certificate_beside(path).get("format_notes") or ()):
                frame = unescape_frame(frame)
        elif suffix in (".parquet", ".pq"):
            frame = pl.read_parquet(path, glob=False)
        else:
            raise InputError(f"cannot read the release {path}: use a .csv or .parquet file")
    except (pl.exceptions.PolarsError, OSError) as exc:
        raise InputError(f"cannot read the release {path}: {str(exc).splitlines()[0]}") from None
    return AttackedRelease(frame, name or path.stem, certificate_k(path))


def mark_suppressed(release: AttackedRelease, qi: Sequence[str], tokens: Sequence[str]) -> AttackedRelease:
    """``release`` with every quasi-identifier cell equal to one of ``tokens`` written ``*``: the
    mark another tool gives a suppressed cell (sdcMicro writes ``NA``, some write ``?``; ``""``
    stands for an empty cell), which the attack would otherwise read as a value covering nothing."""
    columns = [c for c in qi if c in release.frame.columns]
    if not columns or not tokens:
        return release
    values = list(tokens)  # ("": an empty cell, read as missing, or quoted "" and read as the empty text)
    marked = [pl.when(pl.col(c).cast(pl.String).is_in(values) | (pl.col(c).is_null() & pl.lit("" in tokens)))
              .then(pl.lit("*")).otherwise(pl.col(c).cast(pl.String)).alias(c) for c in columns]
    return replace(release, frame=release.frame.with_columns(marked))


def as_attacked(release: Any, name: str) -> AttackedRelease:
    """An :class:`AttackedRelease` from a Release, an AttackedRelease, a frame (Polars, eager or
    lazy, or pandas: ``anonymize(pandas_frame).table``) or a path."""
    from crowdsafe.data.io import as_frame

    if isinstance(release, AttackedRelease):
        return release
    if isinstance(release, (str, os.PathLike)):
        return read_release(release)
    frame = as_frame(release)
    if frame is not None:
        return AttackedRelease(frame, name)
    frame = getattr(release, "frame", None)
    if isinstance(frame, pl.DataFrame):  # an anonymize.Release
        return AttackedRelease(frame, name, getattr(release, "k", None))
    raise InputError(f"cannot attack {class_name(release)}: give a crowdsafe Release, a Polars or pandas "
                     "DataFrame, or the path of a release file")


def class_name(value: Any) -> str:
    """A value's class named in full, with an article ("a pandas.Series", "a dict"), for an error."""
    kind = type(value)
    package = kind.__module__.split(".")[0]
    named = kind.__qualname__ if package == "builtins" else f"{package}.{kind.__qualname__}"
    return f"{'an' if named[0].lower() in 'aeiou' else 'a'} {named}"
