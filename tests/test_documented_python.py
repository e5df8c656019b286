"""Every ```python block of README.md and docs/*.md runs as written, and what its comments say a
line gives is what it gives: readers paste them. The blocks of one document run in order in one
namespace (a later block may use an earlier one's names), in a scratch folder with HOME and the
ledger inside it. The companion of tests/cli/test_documented_commands.py, which runs the shell
commands.

A block may name what its reader has (a table, releases of it, a random source): :data:`FIXTURES`
makes files and :data:`GIVEN` names, one reason each, and the test checks that each is named by
its document, so neither outlives the text it serves.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from documented import enter_scratch_folder

ROOT = Path(__file__).resolve().parents[1]
DOCUMENTS = ["README.md", *sorted(f"docs/{p.name}" for p in (ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"^```python\n(.*?)^```", re.MULTILINE | re.DOTALL)


def python_blocks(document: str) -> list[tuple[int, str]]:
    """(first line, source) of each ```python block of ``document``, in order."""
    text = (ROOT / document).read_text(encoding="utf-8")
    return [(text[:m.start()].count("\n") + 2, m.group(1)) for m in _BLOCK.finditer(text)]


def _people_csv(path: Path, duplicate_header: bool = False) -> None:
    from crowdsafe.datasets.people import write_people_csv

    write_people_csv(path, duplicate_header=duplicate_header)


def _hospital(path: Path, rows: slice) -> None:
    """Rows of a hospital table (age, sex, zip, disease): the bundled people, charge as the disease."""
    from crowdsafe.datasets.people import people

    people().rename({"charge": "disease"}).select("age", "sex", "zip", "disease")[rows].write_csv(path)


def _release(path: Path, rows: slice) -> None:
    """A Mondrian release (k = 5) of those rows, as the reader's earlier release."""
    from crowdsafe.api import anonymize

    source = path.with_name(f"source-{path.name}")
    _hospital(source, rows)
    anonymize(str(source), algorithm="mondrian", k=5, qi=["age", "sex", "zip"], sensitive="disease", out=str(path))


def _voters(path: Path) -> None:
    """An identified list of half of those people (a name beside age, sex and zip)."""
    from crowdsafe.datasets.people import people

    frame = people().select("age", "sex", "zip")[::2]
    frame.with_columns(pl.format("person-{}", pl.int_range(pl.len())).alias("name")).write_csv(path)


#: (document, file) -> (why the reader has it, how this test makes it)
FIXTURES: dict[tuple[str, str], tuple[str, Callable[[Path], object]]] = {
    ("README.md", "people.csv"): ("the reader's own table: the bundled people table as a file", _people_csv),
    ("docs/own-data.md", "people.csv"): ("written by the guide's first line (write_people_csv('people.csv', "
                                         "duplicate_header=True))", lambda p: _people_csv(p, True)),
    ("docs/attacks.md", "r1.csv"): ("the reader's releases: Mondrian at k = 5 of overlapping parts of a hospital "
                                    "table", lambda p: _release(p, slice(0, 20_000))),
    ("docs/attacks.md", "r2.csv"): ("the other release", lambda p: _release(p, slice(10_000, None))),
    ("docs/attacks.md", "targets.csv"): ("the people the attacker targets, with their true disease (the part both "
                                         "releases hold)", lambda p: _hospital(p, slice(10_000, 20_000))),
    ("docs/attacks.md", "release.csv"): ("a release the reader made", lambda p: _release(p, slice(None))),
    ("docs/attacks.md", "voters.csv"): ("the linkage attack's identified list (external data)", _voters),
}


def _calculus_names() -> dict[str, Any]:
    import secrets

    from crowdsafe.randomness import Randomness

    return {"release_id": secrets.token_hex(16), "rng": Randomness()}


def _budget_set() -> dict[str, Any]:
    from crowdsafe import cli

    assert cli.main(["ledger", "init", "adult", "--epsilon", "1", "--delta", "1e-6"]) == 0
    return {}


#: document -> (what the block takes as given: names it does not define, or a step the text
#: says comes first; what makes it)
GIVEN: dict[str, tuple[str, Callable[[], dict[str, Any]]]] = {
    "docs/privacy-calculus.md": ("the sample's name (random bits, as its comment says) and the Randomness that "
                                 "drew it, from the reader's own pipeline", _calculus_names),
    "docs/mechanisms.md": ("'once the budget is set (the `ledger init` line above ...)': that line, run first",
                           _budget_set),
}


#: (document, expression as written) -> what its comment says it gives, as a check of the value
CLAIMS: dict[tuple[str, str], Callable[[Any], bool]] = {
    ("README.md", "release.certificate.summary()"):
        lambda v: v == "no formal guarantee: data-dependent recoding (Mondrian)",
    ("docs/anonymize.md", "release.certificate.summary()"):
        lambda v: v == "no formal guarantee: data-dependent recoding (Mondrian)",
    ("docs/audit.md", "result.epsilon_lower_bound, result.violates_claim"):
        lambda v: abs(v[0] - 0.97) < 0.05 and v[1] is False,
    ("docs/own-data.md", "print(result.release.frame.columns)"): lambda v: v is None,  # (printed: checked below)
}
#: (document, expression) -> the line it prints, as its comment gives it
PRINTED: dict[tuple[str, str], Callable[[str], bool]] = {
    ("docs/own-data.md", "print(result.release.frame.columns)"):
        lambda out: out == str(["age", "sex", "zip", "arrest_date", "charge", "charge_2"]),
}


def _statements(source: str) -> list[tuple[str, ast.stmt]]:
    tree = ast.parse(source)
    return [(ast.get_source_segment(source, node) or "", node) for node in tree.body]


@pytest.mark.slow  # a few seconds a document (the audit's 200,000 trials, a perturb of Adult)
@pytest.mark.parametrize("document", [d for d in DOCUMENTS if python_blocks(d)])
def test_documented_python_runs_as_written(document, tmp_path, monkeypatch, capsys):
    blocks = python_blocks(document)
    source = "\n".join(code for _, code in blocks)
    fixtures = {name: entry for (doc, name), entry in FIXTURES.items() if doc == document}
    assert all(f'"{name}"' in source for name in fixtures), f"FIXTURES makes files {document} does not name"
    claims = {e: c for (doc, e), c in CLAIMS.items() if doc == document}
    printed = {e: c for (doc, e), c in PRINTED.items() if doc == document}
    written = {segment for _, code in blocks for segment, _ in _statements(code)}
    assert set(claims) | set(printed) <= written, f"CLAIMS names lines {document} no longer shows"

    enter_scratch_folder(tmp_path, monkeypatch, fixtures)
    namespace: dict[str, Any] = {"__name__": "__documented__"}
    if document in GIVEN:
        reason, names = GIVEN[document]
        given = names()
        assert reason and all(re.search(rf"\b{n}\b", source) for n in given)
        namespace.update(given)
    checked = set()
    for line, code in blocks:
        for segment, node in _statements(code):
            where = f"{document}:{line + node.lineno - 1}: {segment}"
            capsys.readouterr()
            try:
                if isinstance(node, ast.Expr):
                    value = eval(compile(ast.Expression(node.value), where, "eval"), namespace)
                else:
                    exec(compile(ast.Module([node], []), where, "exec"), namespace)
                    value = None
            except Exception as error:  # noqa: BLE001 - the failing line, named
                pytest.fail(f"{where}\nraised {type(error).__name__}: {error}")
            out = capsys.readouterr().out.strip()
            if segment in claims:
                assert claims[segment](value), f"{where}\ngave {value!r}, not what its comment says"
                checked.add(segment)
            if segment in printed:
                assert printed[segment](out), f"{where}\nprinted {out!r}, not what its comment says"
                checked.add(segment)
    assert checked == set(claims) | set(printed)


def test_the_blocks_are_found():
    found = {d: python_blocks(d) for d in DOCUMENTS}
    assert sum(len(b) for b in found.values()) >= 9
    line, code = found["docs/audit.md"][0]
    assert code.startswith("import numpy as np")
    assert (ROOT / "docs/audit.md").read_text().splitlines()[line - 1] == code.splitlines()[0]
