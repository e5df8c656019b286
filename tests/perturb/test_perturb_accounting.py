"""An α-β view's certificate records the ledger's charge as publish's does: ``accounting`` is
``{"ledger": true}`` when a ledger charged the view (and that ledger holds the charge: one release
entry of the certificate's ε and δ, the entry the run reported), null when no ledger was used."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import api
from crowdsafe.errors import BudgetExceeded

SCHEMA = ('[attributes.age]\ntype = "integer"\n[attributes.sex]\ntype = "categorical"\n'
          '[attributes.band]\ntype = "integer"\n')
DOMAINS = {"age": list(range(18, 60)), "sex": ["Female", "Male"], "band": list(range(50))}


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("perturb-accounting")
    rng = np.random.default_rng(2)
    pl.DataFrame({"age": rng.integers(18, 60, 200), "sex": rng.choice(["Female", "Male"], 200),
                  "band": rng.integers(0, 50, 200)}).write_csv(folder / "people.csv")
    (folder / "domains.json").write_text(json.dumps(DOMAINS))
    (folder / "schema.toml").write_text(SCHEMA)
    return folder


def _perturb(capsys, files, out, *more: str) -> dict:
    code, printed, err = run_command(capsys, "perturb", str(files / "people.csv"), "--c", "2", "--gamma", "0.3",
                                     "--max-rows", "300", "--domains", str(files / "domains.json"), "--schema",
                                     str(files / "schema.toml"), "--missing", "drop", "--no-report",
                                     "--out", str(out), "--json", *more)
    assert code == 0, err
    return json.loads(printed)


def test_a_charged_view_records_its_ledger_entry_and_a_free_one_none(capsys, files, tmp_path):
    ledger = tmp_path / "ledger.sqlite3"
    payload = _perturb(capsys, files, tmp_path / "view.csv", "--ledger", str(ledger), "--budget", "10,0")
    certificate = json.loads((tmp_path / "view.certificate.json").read_text())
    assert certificate["accounting"] == {"ledger": True}  # publish's field, publish's meaning
    assert certificate["fit_for_release"] is True and certificate["unfit_reasons"] == []
    code, shown, err = run_command(capsys, "ledger", "show", "--ledger", str(ledger), "--json")
    assert code == 0, err
    (dataset,) = json.loads(shown)["datasets"]
    (entry,) = dataset["entries"]  # the ledger, read on its own, holds this run's charge
    assert entry["id"] == payload["ledger"]["entry"] and entry["kind"] == "release"
    assert entry["status"] == "completed" and entry["seeded"] is certificate["seeded"]
    assert (entry["epsilon"], entry["delta"]) == (certificate["epsilon"], certificate["delta"])
    assert entry["details"]["beta"] == certificate["parameters"]["beta"]
    # the same run without a ledger: nothing charged, and the certificate's accounting is null
    payload = _perturb(capsys, files, tmp_path / "free.csv", "--no-ledger")
    certificate = json.loads((tmp_path / "free.certificate.json").read_text())
    assert "ledger" not in payload and certificate["accounting"] is None


def test_the_api_view_of_a_ledger_run_records_it(files, tmp_path):
    result = api.perturb(files / "people.csv", schema=files / "schema.toml", domains=DOMAINS, max_rows=300,
                         missing="drop", c=2, gamma=0.3, ledger=tmp_path / "ledger.sqlite3", budget=(10, 0))
    assert result.ledger is not None and result.view.certificate.accounting == {"ledger": True}
    unrecorded = api.perturb(files / "people.csv", schema=files / "schema.toml", domains=DOMAINS, max_rows=300,
                             missing="drop", c=2, gamma=0.3, ledger=None)
    assert unrecorded.ledger is None and unrecorded.view.certificate.accounting is None



def test_the_api_charges_the_default_ledger_as_publish_and_query_do(files, private_ledger):
    """``api.perturb`` with no ``ledger`` uses ``$CROWDSAFE_LEDGER`` (here the test's own file),
    as the command line does: a script that sets it has every view counted. A table without a
    budget there is refused before anything is drawn."""
    options = {"schema": files / "schema.toml", "domains": DOMAINS, "max_rows": 300, "missing": "drop", "c": 2,
               "gamma": 0.3}
    with pytest.raises(BudgetExceeded, match="no privacy budget is set"):
        api.perturb(files / "people.csv", **options)
    assert not private_ledger.exists() or not api.ledger_report(ledger=private_ledger)["datasets"]
    result = api.perturb(files / "people.csv", budget=(10, 0), **options)
    assert result.ledger is not None and result.view.certificate.accounting == {"ledger": True}
    (dataset,) = api.ledger_report(ledger=private_ledger)["datasets"]
    assert [entry["epsilon"] for entry in dataset["entries"]] == [result.view.certificate.epsilon]
