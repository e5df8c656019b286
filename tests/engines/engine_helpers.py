"""Comparisons shared by the engine tests (conformance, Spark publish, Spark attacks): what two
engines' outputs must agree on."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import polars as pl

IDENTITY_FIELDS = ("sample", "randomness")  # name the release and its randomness: differ by run


def same(a, b) -> bool:
    """Equal, floats to 1e-12 relative (sums of the same terms in another order); NaN equals NaN."""
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return isinstance(b, (list, tuple)) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (float, int)):
        return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12) or (math.isnan(a) and math.isnan(b))
    return a == b


def comparable(certificate) -> dict:
    """A certificate without what names the release and its randomness, and the engine's tag."""
    data = json.loads(certificate.to_json())
    for key in IDENTITY_FIELDS:
        data.pop(key, None)
    data.get("parameters", {}).pop("engine", None)
    return data


def text_rows(frame: pl.DataFrame) -> pl.DataFrame:
    """A table's rows as text, sorted: equal when two engines wrote the same rows in any order."""
    return frame.with_columns(pl.all().cast(pl.String)).sort(frame.columns, nulls_last=True)


def public_part(publication: Any, directory: Path) -> dict:
    """A publication's summary and certificate without the DP outputs (the chosen scheme and what
    restates it, the rows and classes counted on the release), ``directory`` (where it was read
    and written) shown as ``<dir>``: what a same-seed run on a neighbouring table must repeat."""
    summary = json.loads(json.dumps(publication.summary(), default=str).replace(str(directory), "<dir>"))
    for release in summary["releases"]:
        release.pop("dp_output")
        if isinstance(release["chooser"], dict):
            release["chooser"].pop("levels")
    certificate = publication.certificate.to_dict()
    for key in ("scheme", "scheme_level_names", "scheme_level_descriptions"):
        certificate["parameters"].pop(key)
    certificate["parameters"].get("selection", {}).pop("levels", None)
    return {"summary": summary, "certificate": certificate}
