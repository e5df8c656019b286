"""Every number on the command line is read by one strict parser that names the option."""

from __future__ import annotations

import typing

import pytest
from typer.models import ParameterInfo

from cli_helpers import run_command
from crowdsafe import cli
from crowdsafe.cli.options import StrictNumber


def _commands(app, prefix=()):
    for command in app.registered_commands:
        yield (*prefix, command.name or command.callback.__name__), command.callback
    for group in app.registered_groups:
        yield from _commands(group.typer_instance, (*prefix, group.name or group.typer_instance.info.name))


def _numeric_parameters():
    for path, callback in _commands(cli.app):
        for name, hint in typing.get_type_hints(callback, include_extras=True).items():
            if typing.get_origin(hint) is not typing.Annotated:
                continue
            base, *extras = typing.get_args(hint)
            types = [t for t in (typing.get_args(base) or (base,)) if t is not type(None)]
            if int in types or float in types:
                info = next(e for e in extras if isinstance(e, ParameterInfo))
                yield " ".join(path), name, types, info


def test_every_numeric_option_and_argument_uses_the_strict_parser():
    found = list(_numeric_parameters())
    assert len(found) > 50  # every command's numbers, not a few
    for command, name, types, info in found:
        assert isinstance(info.parser, StrictNumber), f"{command}: {name} is read by Python's lenient float/int"
        assert info.parser.whole == (int in types), f"{command}: {name}"
        declared = (info.default, *(getattr(info, "param_decls", None) or ()))
        assert info.parser.name in declared or info.parser.name == name.upper(), f"{command}: {name}"


@pytest.mark.parametrize(("argv", "line"), [
    (["publish", "adult", "--epsilon", "1_0"], "--epsilon: '1_0' is not a number (write it as 10)"),
    (["publish", "adult", "-e", "1_0"], "--epsilon: '1_0' is not a number (write it as 10)"),
    (["publish", "adult", "--k", "0x10"], "--k: '0x10' is not a whole number (write it as 16)"),
    (["publish", "adult", "--delta", "nan"], "--delta: 'nan' is not a finite number"),
    (["publish", "adult", "--beta", "inf"], "--beta: 'inf' is not a finite number"),
    (["publish", "adult", "--releases", "1e400"], "--releases: '1e400' is too large"),
    (["publish", "adult", "--out", "r.csv", "--budget", "3,1_0"], "--budget: '1_0' is not a number (write it as 10)"),
    (["publish", "adult", "--out", "r.csv", "--budget", "3"], "--budget 3 has no delta: write EPSILON,DELTA"),
    # a budget written with a semicolon (a German or French list separator) got the example "3;1e-5,1e-6"
    (["publish", "adult", "--out", "r.csv", "--budget", "3;1e-5"],
     "--budget expects EPSILON,DELTA separated by a comma, got '3;1e-5': write 3,1e-5"),
    (["publish", "adult", "--out", "r.csv", "--budget", "3 1e-5"],
     "--budget expects EPSILON,DELTA separated by a comma, got '3 1e-5'"),
    (["publish", "adult", "--out", "r.csv", "--no-ledger", "--scheme", "age=１"],
     "the level of 'age' in the scheme: '１' is not a whole number (write it as 1)"),
    (["query", "adult", "count", "--epsilon", "infinity"], "--epsilon: 'infinity' is not a finite number"),
    (["query", "adult", "count", "--epsilon", "0.1", "--max-rows-per-person", "2.5"],
     "--max-rows-per-person: '2.5' is not a whole number"),
    (["perturb", "adult", "--gamma", "0,5", "--c", "2"], "--gamma: '0,5' is not a number (write it as 0.5)"),
    (["perturb", "adult", "--gamma", "0.5", "--c", " 2"], "--c: ' 2' is not a number (write it as 2)"),
    (["anonymize", "adult", "--k", "１０"], "--k: '１０' is not a whole number (write it as 10)"),
    (["check", "adult", "--k", "1_0"], "--k: '1_0' is not a whole number (write it as 10)"),
    (["ledger", "init", "adult", "--epsilon", "1e-400", "--delta", "0"], "--epsilon: '1e-400' is too close to 0"),
    (["calc", "compose", "--epsilon", "0x1", "--times", "2"], "--epsilon: '0x1' is not a number (write it as 1)"),
    (["calc", "amplify", "--epsilon", "1", "--beta", "0.5,1_0"], "--beta: '1_0' is not a number"),
    (["calc", "compose", "0.1:nan"], "the loss '0.1:nan' (EPS or EPS:DELTA): 'nan' is not a finite number"),
    (["attack", "intersection", "a.csv", "b.csv", "--targets", "t.csv", "--qi", "age",
      "--sensitive", "disease", "--levels", "0.9,1_0"],
     "--levels: '1_0' is not a number"),
    (["datasets", "synthetic", "1_000", "x.csv"], "ROWS: '1_000' is not a whole number (write it as 1000)"),
    (["experiment", "utility", "-O", "seeds=0x2"], "option seeds: '0x2' is not a whole number (write it as 2)"),
])
def test_a_lenient_number_is_refused_in_one_line_naming_the_option(capsys, tmp_path, monkeypatch, argv, line):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CROWDSAFE_LEDGER", str(tmp_path / "private" / "ledger.sqlite3"))
    code, out, err = run_command(capsys, *argv)
    assert code == 2, err
    assert err.startswith(f"crowdsafe: error: {line}") and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == []  # nothing read, nothing written, no ledger made


def test_plain_notation_still_works(capsys):
    code, out, err = run_command(capsys, "calc", "compose", "--epsilon", "1e-1", "--times", "1e1", "--json")
    assert code == 0, err
    assert '"epsilon": 1.0' in out or '"epsilon": 1.0000000000000002' in out
