"""docs/certificate.md lists every field of every certificate crowdsafe writes, and nothing else
(an officer's sweep, 2026-11-30: the certificate's JSON was documented by a list of its top-level
fields in docs/privacy-calculus.md that left out `format_notes`, `unreviewed_schema` and the
guarantee `d-gamma`, and by no list at all for `parameters`, whose `n_at_max`, `n_min`,
`scheme_level_names`, `score_sensitivity` and `utility_loss_bound_95` no document named).

Certificates of each kind are written here (publish: chosen on the sample and on the table, a
fixed scheme, with and without a ledger, several releases; anonymize: Mondrian with ℓ-diversity
and t-closeness, MDAV, the lattice search; perturb: a view and an exploratory one); every field
path they hold must be named in the document's field section, and every field named there must be
a key the source writes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from crowdsafe import api
from report_tables import publish_small, small_table, write_inputs

ROOT = Path(__file__).resolve().parents[2]
DOCUMENT = ROOT / "docs" / "certificate.md"
#: objects keyed by the data's columns, or lists of records: their keys are not fields
KEYED_BY_COLUMN = {"parameters.scheme", "parameters.scheme_level_names", "parameters.scheme_level_descriptions",
                   "parameters.selection.levels", "parameters.domain", "parameters.domain_sources",
                   "parameters.candidates", "unreviewed_schema"}
FIELD = re.compile(r"^[a-z_][a-z0-9_]*(?:(?:\[\])?\.[a-z_][a-z0-9_]*)*$")


def field_paths(tree: dict[str, Any], prefix: str = "") -> set[str]:
    """Every field path of a certificate's JSON (a mechanism's as ``mechanisms[].…``; a
    component is a certificate of its own)."""
    found = set()
    for key, value in tree.items():
        path = f"{prefix}{key}"
        found.add(path)
        if key == "mechanisms":
            for mechanism in value or ():
                found |= {f"mechanisms[].{k}" for k in mechanism}
                found |= {f"mechanisms[].parameters.{k}" for k in mechanism.get("parameters") or {}}
        elif key == "components":
            for component in value or ():
                found |= field_paths(component)
        elif isinstance(value, dict) and path not in KEYED_BY_COLUMN:
            found |= field_paths(value, path + ".")
    return found


def documented() -> set[str]:
    """The field names the document's field section gives in code spans (``a.b`` and ``b``)."""
    section = DOCUMENT.read_text(encoding="utf-8").split("## Field by field", 1)[1]
    spans = {span.strip() for span in re.findall(r"`([^`]+)`", section)}
    return {span for span in spans if FIELD.match(span)}


@pytest.fixture(scope="module")
def certificates(tmp_path_factory) -> dict[str, dict[str, Any]]:
    root = tmp_path_factory.mktemp("certificates")
    table = small_table()
    written: dict[str, Path] = {}
    publish_small(root / "chosen", table)
    written["chosen"] = root / "chosen/out/r.certificate.json"
    publish_small(root / "ledger", table, ledger=str(root / "ledger.sqlite3"), budget=(10.0, 1e-5))
    written["ledger"] = root / "ledger/out/r.certificate.json"
    publish_small(root / "fixed", table, scheme="medium")
    written["fixed"] = root / "fixed/out/r.certificate.json"
    publish_small(root / "two", table, releases=2)
    written["two"], written["two-1"] = root / "two/out/r.certificate.json", root / "two/out/r-1.certificate.json"
    data, schema = (str(p) for p in write_inputs(root / "inputs", table))
    api.publish(data, epsilon=0.1, delta=1e-6, schema=schema, seed=1, ledger=None, out=str(root / "table/r.csv"))
    written["on the table"] = root / "table/r.certificate.json"
    classic = {"mondrian-l": dict(algorithm="mondrian", l=2, sensitive="education"),
               "mondrian-t": dict(algorithm="mondrian", t=0.5, sensitive="education"),
               "mdav": dict(algorithm="mdav"), "lattice": dict(algorithm="lattice")}
    for name, options in classic.items():
        api.anonymize(data, schema=schema, k=5, out=str(root / f"{name}.csv"), report=False, **options)
        written[name] = root / f"{name}.certificate.json"
    api.perturb(data, schema=schema, attributes=["workclass", "education"], max_rows=3000, d=0.1, gamma=0.5,
                seed=1, out=str(root / "view.csv"), report=False, ledger=None)
    api.perturb(data, schema=schema, attributes=["age", "sex"], exploratory=True, d=0.1, gamma=0.5, seed=1,
                out=str(root / "exploratory.csv"), report=False, ledger=None)
    written["view"], written["exploratory"] = root / "view.certificate.json", root / "exploratory.certificate.json"
    return {name: json.loads(path.read_text(encoding="utf-8")) for name, path in written.items()}


@pytest.mark.slow  # a dozen runs (the quick loop: README)
def test_every_field_written_is_documented(certificates):
    names = documented()
    missing = {f"{path} ({kind})" for kind, certificate in certificates.items() for path in field_paths(certificate)
               if path not in names and path.rsplit(".", 1)[-1] not in names}
    assert not missing, f"docs/certificate.md does not name: {sorted(missing)}"
    guarantees = {c["guarantee"] for c in certificates.values()}
    assert guarantees == {"dps", "dp", "d-gamma", "none"}
    table = DOCUMENT.read_text(encoding="utf-8").split("| `guarantee` |", 1)[1].split("\n", 1)[0]
    assert all(f"`{g}`" in table for g in guarantees)


def test_every_field_documented_is_written_by_the_source():
    source = "\n".join(p.read_text(encoding="utf-8") for p in (ROOT / "src" / "crowdsafe").rglob("*.py"))
    # a key written as a string (a dict's key, a value such as a step's name) or as a keyword
    written = set(re.findall(r"""["']([a-z_][a-z0-9_]*)["']""", source)) | set(
        re.findall(r"""\b([a-z_][a-z0-9_]*)\s*=""", source))
    unknown = {name for name in documented() if name.rsplit(".", 1)[-1] not in written}
    assert not unknown, f"docs/certificate.md names fields no source writes: {sorted(unknown)}"
