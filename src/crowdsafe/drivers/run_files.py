"""The files of each run, declared for the output guard (:mod:`crowdsafe.output_guard`).

Every command that writes builds its :class:`~crowdsafe.output_guard.RunFiles` here, before it
reads anything: :func:`guard` takes what the run reads (the data, a schema, a ledger, and any
other file it names: :func:`release_inputs`, :func:`file_input`) and what it writes
(:func:`publish_outputs`, :func:`view_outputs`, or one :class:`~crowdsafe.output_guard.Output`)
and refuses a clash in one line. What counts as an input:

- the data: the file, or the folder of its parts (nothing may be written inside it);
- the schema file and every hierarchy file it names (paths relative to the schema's folder);
- the ledger and its SQLite companions ``-wal``, ``-shm`` and ``-journal`` (present or not: a
  release written there would be overwritten by the ledger's next write, or overwrite it);
- the release, view or certificate a command reads (``report``, ``estimate``, ``attack``).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from crowdsafe.errors import CrowdsafeError, ParameterError
from crowdsafe.files import literal_path
from crowdsafe.output_guard import Input, Output, OutputKind, RunFiles, is_local

if TYPE_CHECKING:
    from crowdsafe.perturb.view import ViewOutput
    from crowdsafe.privacy.ledger import LedgerSpec


def file_input(path: str | os.PathLike[str] | None, what: str) -> list[Input]:
    """A file the run reads, named ``what`` in messages (nothing for None or a remote path); a
    folder counts with everything inside it."""
    if path is None or not isinstance(path, (str, os.PathLike)) or not is_local(path):
        return []
    local = literal_path(path)  # as the readers take it: a leading '~' is a folder of that name
    return [Input(local, what, folder=local.is_dir())]


def data_inputs(data: Any, what: str = "the data") -> list[Input]:
    """The data's file or folder of parts, when ``data`` names one (a frame, a Dataset or a
    bundled name adds nothing)."""
    return file_input(data, what) if isinstance(data, (str, os.PathLike)) else []


def schema_inputs(schema: Any) -> list[Input]:
    """The schema file and the hierarchy files it names. A schema that cannot be read adds only
    itself: the run's own read refuses it, before anything is written."""
    if schema is None:
        return []
    from crowdsafe.data.schema import Schema

    found = file_input(schema, "the schema") if isinstance(schema, (str, os.PathLike)) else []
    if isinstance(schema, (str, os.PathLike)):
        try:
            schema = Schema.from_toml(Path(schema).expanduser())
        except (CrowdsafeError, RecursionError, ValueError):
            return found
    if isinstance(schema, Schema):
        for attribute in schema.attributes:
            if isinstance(attribute.hierarchy, str):
                found += file_input(attribute.hierarchy, f"the hierarchy file of '{attribute.name}'")
    return found


def ledger_inputs(spec: LedgerSpec) -> list[Input]:
    """The ledger a run opens (``"default"``, a path or a Ledger) and its -wal, -shm and -journal
    files; nothing without a ledger. Only paths are computed: the ledger is not opened."""
    if spec is None:
        return []
    from crowdsafe.privacy.ledger import Ledger
    from crowdsafe.privacy.ledger_storage import SIDE_FILES, ledger_path

    path = spec.path if isinstance(spec, Ledger) else ledger_path(spec)
    return [Input(path, "the ledger"),
            *(Input(Path(f"{path}{side}"), f"the ledger's {side.lstrip('-')} file") for side in SIDE_FILES)]


def release_inputs(table: str | os.PathLike[str], certificate: str | os.PathLike[str] | None = None,
                   what: str = "the release") -> list[Input]:
    """A release or view a command reads (marked ``release``: a custodian-only output may not lie
    in its folder), and its certificate (``certificate``, else ``<stem>.certificate.json`` beside
    it). A ``certificate`` that names a folder is refused here, before the output guard would name
    it in a message about overwriting."""
    from crowdsafe.errors import InputError
    from crowdsafe.perturb.view import certificate_path

    if certificate is not None and Path(certificate).is_dir():
        raise InputError(f"the certificate {certificate} is a folder: give the certificate's JSON file "
                         f"(default: {certificate_path(table)})")
    beside = certificate if certificate is not None else certificate_path(table)
    read = [replace(i, release=True) for i in file_input(table, what)]  # no custodian-only file in its folder
    return [*read, *file_input(beside, f"the certificate of {what}")]


def guard(outputs: Iterable[Output], *, data: Any = None, schema: Any = None, ledger: LedgerSpec = None,
          inputs: Iterable[Input] = (), force: bool = False) -> None:
    """Check the run's outputs against its inputs (:meth:`~crowdsafe.output_guard.RunFiles.check`)
    before anything is read or charged: ``data``, ``schema`` (and its hierarchy files),
    ``ledger`` (and its companions) and ``inputs`` (any other file it reads)."""
    declared = [*data_inputs(data), *schema_inputs(schema), *ledger_inputs(ledger), *inputs]
    RunFiles(tuple(declared), tuple(outputs), force).check()


def publish_outputs(tables: Sequence[str | os.PathLike[str]], *, report: bool,
                    custodian_report: str | os.PathLike[str] | None = None) -> list[Output]:
    """What ``publish`` writes for the release paths ``tables``: each table with its certificate
    and (``report``) its HTML report, the composed certificate of several, the custodian
    report."""
    from crowdsafe.anonymize.release import certificate_path
    from crowdsafe.report.build import report_path

    outputs: list[Output] = []
    for table in tables:
        certificate = certificate_path(table) if is_local(table) else None
        outputs.append(Output(table, "the release", OutputKind.TABLE, certificate=certificate))
        if certificate is not None:
            outputs.append(Output(certificate, "the certificate", OutputKind.CERTIFICATE, of=table))
            if report:
                outputs.append(Output(report_path(table), "the report", OutputKind.REPORT))
    if len(tables) > 1 and is_local(tables[0]):
        first = Path(tables[0])
        combined = first.with_name(first.stem.rsplit("-", 1)[0] + ".certificate.json")
        outputs.append(Output(combined, "the composed certificate", OutputKind.CERTIFICATE))
    if custodian_report is not None:
        outputs.append(Output(custodian_report, "the custodian report", OutputKind.JSON,
                              parameter="custodian_report"))
    return outputs


def refuse_stale_releases(out: str | os.PathLike[str] | None, tables: Sequence[str | os.PathLike[str]],
                          force: bool = False) -> None:
    """Refuse, before anything is read, a publication to ``out`` (its release paths ``tables``)
    beside numbered releases of an earlier run under the same name that this one would not
    replace: ``r-3.csv`` and ``r-4.csv`` of four releases stayed beside the certificate of a new
    run of two (or of one, written to ``r.csv``), as if they were part of it. A numbered table is
    an earlier release when its certificate is beside it (each keeps its own certificate).
    ``force``: publish beside them, as asked (no file the run does not write is removed)."""
    from crowdsafe.anonymize.release import certificate_path

    if force or out is None or not is_local(out):
        return
    path = Path(out)
    written = {Path(t).name for t in tables}
    numbered = {found: found.name[len(path.stem) + 1: len(found.name) - len(path.suffix)]
                for found in path.parent.glob(f"{glob.escape(path.stem)}-*{glob.escape(path.suffix)}")}
    stale = sorted((found for found, number in numbered.items() if number.isdigit()
                    and found.name not in written and certificate_path(found).is_file()),
                   key=lambda found: int(numbered[found]))
    if stale:
        names = ", ".join(p.name for p in stale[:5]) + (f" and {len(stale) - 5} more" if len(stale) > 5 else "")
        runs = f"{len(tables)} release{'s' if len(tables) > 1 else ''}"
        several = len(stale) > 1
        raise ParameterError(
            f"{names} beside {path} {'are releases' if several else 'is a release'} of an earlier run under this "
            f"name, which this run of {runs} would leave beside its certificate as if part of it: remove "
            f"{'them (with their certificates)' if several else 'it (with its certificate)'}, publish to another "
            "name, or give --force to publish beside them", parameter="out")


def view_outputs(output: ViewOutput) -> list[Output]:
    """What ``perturb`` writes: the view, its certificate and (``output.report``) its report."""
    from crowdsafe.perturb.view import certificate_path
    from crowdsafe.report.build import report_path

    if output.out is None:
        return []
    certificate = output.certificate if output.certificate is not None else certificate_path(output.out)
    found = [Output(output.out, "the view", OutputKind.TABLE, certificate=certificate),
             Output(certificate, "the certificate", OutputKind.CERTIFICATE, of=output.out,
                    parameter="certificate" if output.certificate is not None else "out")]
    if output.report and is_local(output.out):
        found.append(Output(report_path(output.out), "the report", OutputKind.REPORT))
    return found


__all__ = ["data_inputs", "file_input", "guard", "ledger_inputs", "publish_outputs", "refuse_stale_releases",
           "release_inputs", "schema_inputs", "view_outputs"]
