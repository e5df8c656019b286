"""δ-disclosure privacy (Brickell and Shmatikov 2008) and β-likeness (Cao and Karras 2012).

With p the share of sensitive value s in the table and q its share in class E:

- **δ-disclosure**: the table is δ-disclosure private iff |ln(q / p)| < δ for every class and
  every value s of the table. A class that lacks a value of the table has q = 0, so
  |ln(q / p)| is infinite and no δ holds: :func:`delta_values` reports that honestly (``inf``),
  and :func:`delta_present_values` gives the largest |ln(q / p)| over the values a class does
  contain (what tools that skip q = 0 report), so both facts are visible.
- **basic β-likeness**: for every class and value with q > p, the relative gain
  (q − p) / p ≤ β; the table's β is the largest gain (0 when no class gains).
- **enhanced β-likeness**: (q − p) / p ≤ min(β, −ln p) for every q > p: frequent values get a
  tighter bound. The condition ``gain ≤ −ln p`` does not depend on β, so the smallest β for
  which a table is enhanced β-like is its basic β when every gain is within −ln p, and no β
  exists otherwise (``inf``; :func:`enhanced_beta_violations` counts the offending entries).
"""

from __future__ import annotations

import numpy as np

from crowdsafe.models.classes import SensitiveCounts


def delta_present_values(counts: SensitiveCounts) -> np.ndarray:
    """Per class, max |ln(q / p)| over the values present in the class."""
    return counts.per_class_max(np.abs(np.log(counts.share_in_class / counts.share_overall)))


def delta_values(counts: SensitiveCounts) -> np.ndarray:
    """Per class, max |ln(q / p)| over every value of the table (inf if the class lacks one)."""
    complete = counts.distinct_per_class == len(counts.observed)
    return np.where(complete, delta_present_values(counts), np.inf)


def _gains(counts: SensitiveCounts) -> tuple[np.ndarray, np.ndarray]:
    q, p = counts.share_in_class, counts.share_overall
    return (q - p) / p, p


def beta_values(counts: SensitiveCounts) -> np.ndarray:
    """Per class, the largest relative gain (q − p) / p over values with q > p (0 if none)."""
    gain, _ = _gains(counts)
    return counts.per_class_max(np.maximum(gain, 0.0))


def enhanced_beta_violations(counts: SensitiveCounts) -> np.ndarray:
    """Per class, the number of values whose gain exceeds −ln p (no β can cover them)."""
    gain, p = _gains(counts)
    disclosing = (gain > -np.log(p)) & (gain > 0)
    return np.bincount(counts.cls, weights=disclosing, minlength=counts.n_classes).astype(np.int64)


def enhanced_beta_values(counts: SensitiveCounts) -> np.ndarray:
    """Per class, the smallest β for which the class is enhanced β-like (inf if none)."""
    return np.where(enhanced_beta_violations(counts) > 0, np.inf, beta_values(counts))
