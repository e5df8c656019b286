"""``crowdsafe report`` reads the certificate as every reader does (Certificate.from_dict's checks):
a malformed one is refused in one line naming the file and its first bad field, exit status 2,
and no report is written; a valid one gives the same page as before."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from crowdsafe.cli import main
from crowdsafe.errors import InputError
from crowdsafe.report import build_report, report_path


def copied(published: Path, folder: Path, edit: Any = None) -> Path:
    """The release copied to ``folder`` beside its certificate, edited by ``edit`` (a function of
    the certificate's JSON, or a dict to write instead)."""
    folder.mkdir()
    shutil.copy(published, folder / "r.csv")
    certificate = json.loads(published.with_name("r.certificate.json").read_text(encoding="utf-8"))
    if isinstance(edit, dict):
        certificate = edit
    elif edit is not None:
        edit(certificate)
    (folder / "r.certificate.json").write_text(json.dumps(certificate), encoding="utf-8")
    return folder / "r.csv"


def _set(key: str, value: Any) -> Any:
    return lambda certificate: certificate.__setitem__(key, value)


def _drop(key: str) -> Any:
    return lambda certificate: certificate.pop(key)


@pytest.mark.parametrize("edit, field", [
    (_set("epsilon", "x"), "'epsilon' must be a number or null, got 'x'"),
    (_set("epsilon", "1"), "'epsilon' must be a number or null, got '1'"),
    (_set("epsilon", True), "'epsilon' must be a number or null, got True"),
    (_set("delta", [1]), "'delta' must be a number or null, got [1]"),
    (_set("format_notes", 5), "'format_notes' must be a list of strings or null, got 5"),
    (_set("format_notes", [5]), "'format_notes' must be a list of strings or null, got [5]"),
    (_set("unfit_reasons", "seeded"), "'unfit_reasons' must be a list of strings or null"),
    (_set("mechanisms", ["sample"]), "'mechanisms' must be a list of objects"),
    (_set("parameters", None), "'parameters' must be an object"),
    (lambda c: c["parameters"].__setitem__("selection", 5), "'parameters.selection' must be an object or null"),
    (lambda c: c["mechanisms"][0].__setitem__("parameters", 3), "'mechanisms[0].parameters' must be an object"),
    (_set("epsilon", -1), "epsilon must be a finite number >= 0, got -1"),
    (_set("delta", 1.5), "delta must lie in [0, 1), got 1.5"),
    (_set("guarantee", "strong"), "guarantee must be dp, dps, d-gamma or none, got 'strong'"),
    (_drop("theorem"), "missing the field 'theorem'"),
    (_drop("epsilon"), "missing the field 'epsilon'"),
    (_drop("version"), "missing the field 'version'"),
    ({"format": "crowdsafe-certificate"}, "missing the field 'version'"),
    ({"format": "crowdsafe-certificate", "version": 2}, "missing the field 'guarantee'"),
    (_set("components", [{"format": "crowdsafe-certificate", "version": 2}]),
     "component 1 of the certificate: certificate is missing the field 'guarantee'"),
], ids=["epsilon-text", "epsilon-number-as-text", "epsilon-bool", "delta-list", "format-notes-int",
        "format-notes-of-int", "unfit-reasons-text", "mechanisms-of-text", "parameters-null", "selection-int",
        "mechanism-parameters-int", "epsilon-negative", "delta-too-large", "guarantee-unknown", "no-theorem",
        "no-epsilon", "no-version", "format-only", "format-and-version-only", "component-missing-fields"])
def test_a_malformed_certificate_is_refused_in_one_line(published, tmp_path, capsys, edit, field):
    release = copied(published, tmp_path / "copy", edit)
    certificate = release.with_name("r.certificate.json")
    with pytest.raises(InputError, match="is not valid") as refused:
        build_report(release)
    assert str(certificate) in str(refused.value) and field in str(refused.value)
    capsys.readouterr()
    assert main(["report", str(release)]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert str(certificate) in err and field in err and "internal error" not in err
    assert not report_path(release).exists() and sorted(p.name for p in release.parent.iterdir()) == [
        "r.certificate.json", "r.csv"]
    assert main(["report", str(release), "--out", str(tmp_path / "elsewhere.html")]) == 2
    assert not (tmp_path / "elsewhere.html").exists()


def test_a_valid_certificate_gives_the_same_report(published, tmp_path):
    """Through the checked reading, the release's certificate gives the page publish wrote."""
    expected = report_path(published).read_bytes()
    release = copied(published, tmp_path / "same")
    assert build_report(release).encode("utf-8") == expected
    assert main(["report", str(release)]) == 0
    assert report_path(release).read_bytes() == expected
