"""Every result a public function returns has ``.as_dict()``, as ``crowdsafe.api`` says (found by an
API sweep, 2026-11-30): a Publication and a Release had only ``summary()``, a Certificate
``to_dict()`` and a LedgerReport neither, so ``result.as_dict()`` raised an AttributeError on the
results of ``publish`` and ``anonymize``. Each is the object's public dict (its ``summary()`` /
``to_dict()``); the custodian's reports stay in ``custodian_report()``."""

from __future__ import annotations

import json

import polars as pl

from crowdsafe import api

FRAME = pl.DataFrame({"age": [30, 31, 32, 40, 41, 42, 50, 51] * 5, "sex": ["F", "M"] * 20})


def test_every_result_has_as_dict(tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    publication = api.publish(FRAME, epsilon=1.0, k=2, seed=1, ledger=ledger, budget=(5.0, 1e-5), report=False)
    release = api.anonymize(FRAME, k=2, report=False)
    results = {
        "Publication": (publication, publication.summary()),
        "Release (publish)": (publication.releases[0], publication.releases[0].summary()),
        "Release (anonymize)": (release, release.summary()),
        "Certificate": (release.certificate, release.certificate.to_dict()),
        "LedgerReport": (api.ledger_report(ledger), dict(api.ledger_report(ledger))),
    }
    for name, (result, public) in results.items():
        shown = result.as_dict()
        assert type(shown) is dict and shown == public, name
        json.dumps(shown, default=str)  # JSON-ready
