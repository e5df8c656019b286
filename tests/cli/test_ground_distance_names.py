"""check calls the t-closeness ground distance ``--ground`` and anonymize ``--distance``: each takes
the other's name too, so a user who measured with one finds it on the other."""

from __future__ import annotations

import json

from cli_helpers import run_command


def test_check_takes_distance_and_anonymize_takes_ground(capsys, tmp_path):
    base = ["check", "adult", "--qi", "age,sex", "--sensitive", "education", "--json"]
    code, out, _ = run_command(capsys, *base, "--ground", "equal")
    assert code == 0
    by_ground = json.loads(out)
    code, out, _ = run_command(capsys, *base, "--distance", "equal")
    assert code == 0 and json.loads(out) == by_ground
    argv = ["anonymize", "adult", "--qi", "age,sex", "--sensitive", "education", "--k", "20", "--t", "0.5"]
    code, out, _ = run_command(capsys, *argv, "--distance", "equal", "--json")
    assert code == 0
    by_distance = json.loads(out)
    code, out, _ = run_command(capsys, *argv, "--ground", "equal", "--json")
    assert code == 0 and json.loads(out)["parameters"] == by_distance["parameters"]
    assert by_distance["parameters"]["t_closeness_distance"] == "equal"  # not education's default, ordered
