"""A certificate read from a file states what its own fields give (:func:`check_stated`).

A certificate's JSON repeats, for people, what its fields imply: the verdict
(``fit_for_release``, ``unfit_reasons``, ``seeded``, derived by
:class:`~crowdsafe.privacy.certificate.Certificate` from the randomness, the accounting, the
guarantee and the schema notes) and, for a DPS release, a δ the theorem gives from its own k, β,
ε and ε1. Until 2026-11-30 the readers took both as written, so a seeded release's certificate
edited to say ``"fit_for_release": true`` read "Fit for release" in its report, and a δ lowered by
hand was stated and composed (an officer's sweep). Every certificate crowdsafe writes passes; one
that does not was edited. (An edit that keeps the fields consistent is not caught here:
``crowdsafe ledger verify`` compares the file with the ledger's record of the run.)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from crowdsafe.errors import InputError, ParameterError

if TYPE_CHECKING:
    from crowdsafe.privacy.certificate import Certificate


def check_stated(found: Mapping[str, Any], certificate: Certificate) -> None:
    """Refuse (:class:`InputError`, one line) the certificate ``found`` (its JSON, as a dict;
    ``certificate``: it read) when a verdict field it writes is not the one its fields give, or
    when it is a DPS release (add-remove neighbours) stating a δ below d(k, β, ε − ε1) of its own
    parameters (Li, Qardaji, Su 2012, Theorems 5 and 6), or parameters that give no guarantee."""
    from crowdsafe.privacy.dps import dps_delta

    if found.get("version", 0) < 2:  # an old file states no verdict
        return
    derived = {"fit_for_release": certificate.fit_for_release, "unfit_reasons": list(certificate.unfit_reasons),
               "seeded": certificate.seeded}
    for key, value in derived.items():  # each as written, when written
        if key in found and found[key] != value:
            raise InputError(f"it states {key} = {json.dumps(found[key])}, but its randomness, accounting, guarantee "
                             f"and schema notes give {json.dumps(value)}: it was edited")
    parameters = found.get("parameters") or {}
    k, beta, epsilon = parameters.get("k"), parameters.get("beta"), found.get("epsilon")
    if found.get("guarantee") != "dps" or found.get("neighbours") != "add-remove" or not isinstance(k, int) \
            or not isinstance(beta, float) or not isinstance(epsilon, (int, float)):
        return
    epsilon1 = parameters.get("epsilon1") or 0.0
    try:
        least = dps_delta(k, beta, float(epsilon), float(epsilon1))
    except ParameterError as exc:  # e.g. epsilon below the sampling floor: the theorem gives nothing
        raise InputError(f"its parameters give no guarantee ({exc}): it was edited") from None
    if found["delta"] < least:
        raise InputError(f"it states delta = {found['delta']:.6g}, below d(k, beta, epsilon - epsilon1) = "
                         f"{least:.6g} of its own k = {k}, beta = {beta:.6g}, epsilon = {epsilon:g}, epsilon1 = "
                         f"{epsilon1:.6g}: it was edited")


__all__ = ["check_stated"]
