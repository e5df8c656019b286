"""A kept missing value is a value of its own; sdcMicro's frequency counts read a missing key value
as matching every value instead, so its k and crowdsafe's differ on the same table. What check
prints about the missing values says which reading its numbers use."""

from __future__ import annotations

from cli_helpers import run_command


def test_check_says_a_missing_value_is_no_wildcard(capsys, tmp_path):
    data = tmp_path / "suppressed.csv"  # a release locally suppressed the sdcMicro way: NA in a key variable
    data.write_text("zip;sex\n13053;F\n13053;F\nNA;F\n")
    code, out, _ = run_command(capsys, "check", str(data), "--qi", "zip,sex")
    assert code == 0
    assert "k = 1" in out  # the NA row is a class of its own (sdcMicro would count fk = 3 for every row)
    assert "not a wildcard" in " ".join(out.split())
