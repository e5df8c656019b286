"""Fuzzed CSV bytes into check and publish: a result or a crowdsafe error, nothing else.

Random bytes and mutations of a valid CSV (bytes inserted, cut, lines doubled, separators,
quotes and line breaks sprinkled in, truncation) are written to a file named .csv and given to
``api.check``, ``api.publish`` and the command line's ``check``. The only outcomes allowed: a
result, or a :class:`~crowdsafe.errors.CrowdsafeError` (at the command line: exit 2 and one
line on standard error). Bounded: a few dozen examples each, about ten seconds in all.
"""

from __future__ import annotations

import contextlib
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from crowdsafe import api, cli
from crowdsafe.errors import CrowdsafeError

VALID = (
    "age,zip,sex,disease\n"
    + "".join(f"{20 + (i * 7) % 50},{2130 + i % 9:05d},{'FM'[i % 2]},{('flu', 'cold', 'none')[i % 3]}\n"
              for i in range(60))
).encode()

SPRINKLES = [b",", b";", b"\t", b"\"", b"\n", b"\r\n", b"\x00", b"\xff", b"=", b"\xe9", b"", b" ", b"NA", b"-1e308"]


@st.composite
def mutated_csv(draw) -> bytes:
    data = bytearray(VALID)
    for _ in range(draw(st.integers(1, 6))):
        at = draw(st.integers(0, len(data)))
        kind = draw(st.sampled_from(["insert", "cut", "double", "sprinkle", "truncate"]))
        if kind == "insert":
            data[at:at] = draw(st.binary(min_size=1, max_size=16))
        elif kind == "cut":
            del data[at: at + draw(st.integers(1, 40))]
        elif kind == "double":
            end = data.find(b"\n", at)
            data[at:at] = data[at: end if end >= 0 else len(data)]
        elif kind == "sprinkle":
            data[at:at] = draw(st.sampled_from(SPRINKLES))
        else:
            del data[at:]
    return bytes(data)


CSV_BYTES = st.one_of(st.binary(max_size=600), mutated_csv())
FUZZ = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@contextlib.contextmanager
def _file(content: bytes):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "fuzz.csv"
        path.write_bytes(content)
        yield path, Path(folder)


@FUZZ
@given(CSV_BYTES)
def test_check_gives_a_report_or_a_crowdsafe_error(content):
    with _file(content) as (path, _):
        try:
            api.check(path, target_k=2)
        except CrowdsafeError as exc:
            assert str(exc).strip()


@FUZZ
@given(CSV_BYTES)
def test_publish_gives_a_release_or_a_crowdsafe_error(content):
    with _file(content) as (path, folder):
        out = folder / "out" / "release.csv"
        try:
            api.publish(path, epsilon=1.0, delta=1e-6, seed=1, ledger=None, out=out)
        except CrowdsafeError as exc:
            assert str(exc).strip()
            assert not (folder / "out").exists() or not any((folder / "out").iterdir())
        else:
            assert out.exists()


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                  HealthCheck.function_scoped_fixture])
@pytest.mark.slow
@given(CSV_BYTES)
def test_the_command_line_exits_0_or_2_with_one_line(capsys, content):
    with _file(content) as (path, _):
        capsys.readouterr()
        code = cli.main(["check", str(path), "--k", "2", "--json"])
        err = capsys.readouterr().err
        assert code in (0, 2), err
        if code == 2:
            lines = err.splitlines()
            assert len(lines) == 1 and lines[0].startswith("crowdsafe: error: "), err
