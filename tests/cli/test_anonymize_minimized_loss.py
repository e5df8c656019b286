"""The lattice search's custodian lines name the loss it minimized (``--loss``) with its value, as
the JSON's ``custodian_only.search.loss`` holds it: an ARX user who optimized non-uniform entropy
finds it, not only the GCP printed for every algorithm."""

from __future__ import annotations

import json

import pytest

from cli_helpers import run_command


@pytest.mark.parametrize(("loss", "name"), [("entropy", "non-uniform entropy"), ("gcp", "GCP")])
def test_the_minimized_loss_is_printed_with_its_value(capsys, loss, name):
    argv = ["anonymize", "adult", "--algorithm", "lattice", "--k", "5", "--qi", "age,sex,race", "--loss", loss]
    code, out, _ = run_command(capsys, *argv, "--json")
    assert code == 0
    value = json.loads(out)["custodian_only"]["search"]["loss"]
    code, out, _ = run_command(capsys, *argv)
    line = next(line for line in out.splitlines() if line.strip().startswith("minimized"))
    assert code == 0 and name in line and f"{value:.4g}" in line and f"--loss {loss}" in line
    code, out, _ = run_command(capsys, "anonymize", "adult", "--k", "5", "--qi", "age,sex,race")  # Mondrian
    assert code == 0 and "minimized" not in out  # minimizes no loss
