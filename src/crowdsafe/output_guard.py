"""The output guard: what a run writes is checked against what it reads, before either happens.

A command declares the files of its run as one :class:`RunFiles`: its inputs (:class:`Input`:
the data file or folder of parts, the schema and the hierarchy files it names, the ledger with
its ``-wal``, ``-shm`` and ``-journal`` files, a certificate or release it reads;
:mod:`crowdsafe.drivers.run_files` builds them) and its outputs (:class:`Output`). Before the
data is read and before anything is charged, :meth:`RunFiles.check` refuses, in one line naming
both paths (a :class:`~crowdsafe.errors.ParameterError`), an output that

1. is a special file (a FIFO, a device such as ``/dev/null``, a socket): crowdsafe writes a
   complete regular file and renames it onto the name (:mod:`crowdsafe.files`), which would
   replace the device node itself, and opening a FIFO blocks; or is a folder where a file is
   written (a certificate, a report, a JSON or plain file; not an output ``folder`` set, which
   the Spark engine writes as a folder of parts), even with ``force``: the rename would fail
   after the charge;
2. is an input of the run: the same real path (symbolic links resolved), the same file
   (``st_dev`` and ``st_ino``: a hard link), a file inside a data folder, or a folder that holds
   an input; the configured ledger (``CROWDSAFE_LEDGER`` or the default) and its companions are
   inputs of every run, and no run replaces a crowdsafe ledger anywhere, even with ``force``;
3. is the same file as another output of the run;
4. exists and was not written by crowdsafe (:func:`written_by_crowdsafe`), unless ``force``;
   a symbolic link to nothing (a dangling link) exists too, and is refused likewise;
5. is a table whose certificate (``<stem>.certificate.json``) exists and may be that of another
   existing table beside it, of the same stem and another suffix (``rel.csv`` and
   ``rel.parquet`` share ``rel.certificate.json``; its format notes say CSV or Parquet), unless
   ``force``: the other table would be left beside a certificate of another release; or is a
   report crowdsafe wrote for another release (``<stem>.report.html`` with that release's table
   or certificate beside it), to be replaced by the report of another table, unless ``force``;
6. is a certificate ``<stem>.certificate.json`` (existing or not, in any folder) beside a table
   of that stem the run does not write (``perturb --certificate``, the composed certificate of
   ``publish --releases N``), unless ``force``: readers would take it for that table's; or is
   the certificate of one table (``of`` set) to be written over a composed certificate of several
   releases, unless ``force``;
7. is a custodian-only file (``custodian`` set: exact facts about the data, such as the attack's
   per-target table) that would lie in the folder of a release the run reads or writes, or in
   any folder below it, even with ``force``: whoever is handed the release's folder would get it
   too (the rule of ``publish --custodian-report``).

The test of rule 4 is cheap (a stat and at most the first bytes of one small file) and looks
for crowdsafe's own mark, by :class:`OutputKind`: a table or view with a crowdsafe certificate
at its certificate path, a certificate, an HTML report with crowdsafe's ``generator`` meta tag,
a JSON file that begins with ``"written_by": "crowdsafe"`` (:func:`json_document`), an
experiment folder whose record lists every file in it. Anything else (a schema a custodian may
have edited since it was drafted, a plain CSV export) is replaced only with ``force``.

A path with a URI scheme (``s3a://``) is not local: the engine that writes it owns it.
"""

from __future__ import annotations

import enum
import json
import os
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from crowdsafe.errors import ParameterError
from crowdsafe.files import check_writable, literal_path, special_kind

#: The first bytes of every JSON file crowdsafe writes (:func:`json_document`).
JSON_MARK = '{\n  "written_by": "crowdsafe"'
#: The tag in the head of every HTML report crowdsafe writes.
REPORT_MARK = '<meta name="generator" content="crowdsafe">'
#: The record an experiment writes in its folder, listing the files it wrote.
EXPERIMENT_RECORD = "experiment.json"
_CERTIFICATE_FORMAT = "crowdsafe-certificate"
_MAX_MARKED_BYTES = 64 << 20  # a certificate or record larger than this is not crowdsafe's


class OutputKind(enum.Enum):
    """What an output is, which says how :func:`written_by_crowdsafe` recognises its mark."""

    TABLE = "table"  # a release or view (a file, or a Spark folder): a crowdsafe certificate names it
    CERTIFICATE = "certificate"
    REPORT = "report"
    JSON = "json"
    EXPERIMENT = "experiment"  # an experiment's folder
    PLAIN = "plain"  # no mark: replaced only with force


#: The outputs that may be folders: an experiment's results, a table the Spark engine writes as parts.
_FOLDER_KINDS = (OutputKind.EXPERIMENT, OutputKind.TABLE)


@dataclass(frozen=True)
class Input:
    """A file the run reads (or keeps, as the ledger). ``what``: how a message names it (``the
    data``). ``folder``: a folder of parts, inside which nothing may be written."""

    path: str | os.PathLike[str]
    what: str
    folder: bool = False
    release: bool = False  # a release or view: no custodian-only output may lie in its folder (rule 7)


@dataclass(frozen=True)
class Output:
    """A file the run will write. ``what``: how a message names it (``the release``);
    ``parameter``: the parameter that sets its path (named in the message; None for a
    positional argument); ``certificate``: for a table, the certificate written with it (its
    mark: :func:`written_by_crowdsafe`); ``of``: for a report, the table it describes, for a
    certificate the one table it certifies (None for the composed certificate of several)."""

    path: str | os.PathLike[str]
    what: str
    kind: OutputKind
    parameter: str | None = "out"
    certificate: str | os.PathLike[str] | None = None
    of: str | os.PathLike[str] | None = None
    custodian: bool = False  # custodian-only: never in a release's folder (rule 7)
    folder: bool = False  # written as a folder of parts (the Spark engine's tables): an existing folder is its kind


@dataclass(frozen=True)
class RunFiles:
    """The inputs and outputs of one run, and whether an existing file crowdsafe did not write
    may be replaced (``force``)."""

    inputs: Sequence[Input] = ()
    outputs: Sequence[Output] = ()
    force: bool = False

    def check(self) -> None:
        """Refuse the first output that breaks a rule of the module docstring."""
        inputs = [(i, _where(i.path)) for i in [*self.inputs, *_configured_ledger()] if is_local(i.path)]
        checked: list[tuple[Output, tuple[str, os.stat_result | None]]] = []
        own_tables = {_where(literal_path(o.path))[0] for o in self.outputs
                      if o.kind is OutputKind.TABLE and is_local(o.path)}
        releases = [*own_tables, *(_where(i.path)[0] for i in self.inputs if i.release and is_local(i.path))]
        for output in self.outputs:
            if not is_local(output.path):
                continue
            path = literal_path(output.path)
            where = _where(path)
            kind = special_kind(Path(where[0]))
            if kind is not None:
                raise ParameterError(
                    f"cannot write {output.what} to {path}: it is {kind}, not a regular file (crowdsafe writes "
                    f"regular files only); {_choose(output)}", parameter=output.parameter)
            if (where[1] is not None and stat.S_ISDIR(where[1].st_mode) and output.kind not in _FOLDER_KINDS
                    and not output.folder):
                raise ParameterError(
                    f"cannot write {output.what} to {path}: it is a folder (crowdsafe writes a file there, and "
                    f"force never replaces a folder); nothing was read or charged: {_choose(output)}",
                    parameter=output.parameter)
            if output.kind is not OutputKind.EXPERIMENT:  # (a folder of results: made by its own run)
                check_writable(path)
            for source, place in inputs:
                how = _overlap(path, where, place, source.folder)
                if how:
                    raise ParameterError(
                        f"{output.what} {path} would overwrite {source.what} {source.path} ({how}); nothing was "
                        f"written: {_choose(output)}", parameter=output.parameter)
            for other, place in checked:
                if _overlap(path, where, place, folder=False):
                    raise ParameterError(f"{output.what} {path} and {other.what} {other.path} are the same file: "
                                         f"{_choose(output)}", parameter=output.parameter)
            checked.append((output, where))
            folder = _release_folder(where[0], releases) if output.custodian else None
            if folder is not None:
                raise ParameterError(
                    f"{output.what} {path} would lie in the release's folder {folder}: it holds exact facts about the "
                    "data that the guarantee does not cover (custodian-only); write it outside that folder (nothing "
                    "was read or charged)", parameter=output.parameter)
            if where[1] is not None and stat.S_ISREG(where[1].st_mode) and _is_ledger(Path(where[0])):
                raise ParameterError(f"{output.what} {path} would overwrite a crowdsafe ledger (its budgets and "
                                     f"charges), which crowdsafe never replaces, even with force: "
                                     f"{_choose(output)}", parameter=output.parameter)
            if where[1] is None and not self.force and os.path.islink(path):
                # a link to nothing: the rename would replace the link, a file crowdsafe did not write
                raise ParameterError(
                    f"{output.what} {path} is a symbolic link to {os.readlink(path)}, which does not exist (a "
                    f"dangling link): give force=True to replace the link with a file, or {_choose(output)}",
                    parameter=_with_force(output))
            other_release = None if self.force or where[1] is None else _report_of_another(output)
            if other_release is not None:
                raise ParameterError(
                    f"{output.what} {path} is the report of another release, {other_release}: give force=True to "
                    f"replace it, or {_choose(output)}",
                    parameter=_with_force(output))
            shared = None if self.force else _certificate_of_another(output)
            beside = None if self.force else _table_of_certificate(output, own_tables)
            if beside is not None:
                raise ParameterError(
                    f"{output.what} {path} would be taken for the certificate of another table, {beside} (a "
                    f"certificate <stem>.certificate.json belongs to the tables of that stem in its folder): give "
                    f"force=True to write it there, or {_choose(output)}",
                    parameter=_with_force(output))
            composed = None if self.force or where[1] is None else _composed_certificate(output)
            if composed is not None:
                raise ParameterError(
                    f"{output.what} {path} would replace {composed}: give force=True to replace it, or "
                    f"{_choose(output)}", parameter=_with_force(output))
            if shared is not None:
                raise ParameterError(
                    f"{output.what} {path} would replace the certificate {output.certificate} of another table, "
                    f"{shared} (the same name with another suffix shares it): give force=True to replace it, or "
                    f"{_choose(output)}", parameter=_with_force(output))
            if where[1] is not None and not self.force and not written_by_crowdsafe(_resolved(output)):
                raise ParameterError(f"{output.what} {path} {_unmarked(output)}: give force=True to replace it, or "
                                     f"{_choose(output)}",
                                     parameter=_with_force(output))


def check_outputs(outputs: Sequence[Output], inputs: Sequence[Input] = (), *, force: bool = False) -> None:
    """:meth:`RunFiles.check` of ``RunFiles(inputs, outputs, force)``."""
    RunFiles(tuple(inputs), tuple(outputs), force).check()


def _configured_ledger() -> list[Input]:
    """The ledger the configuration names (``CROWDSAFE_LEDGER``, else the per-user default) and
    its SQLite companions: an input of every run, whether or not the run opens a ledger, so that
    no output replaces it (a run with ``--no-ledger`` or without a charge included)."""
    from crowdsafe.privacy.ledger_storage import SIDE_FILES, default_ledger_path

    path = default_ledger_path()
    return [Input(path, "the configured ledger"),
            *(Input(Path(f"{path}{side}"), f"the configured ledger's {side.lstrip('-')} file") for side in SIDE_FILES)]


def _is_ledger(path: Path) -> bool:
    """Whether the regular file at ``path`` is a crowdsafe ledger (its header carries the ledger's
    mark: :func:`crowdsafe.privacy.ledger_mark.carries_mark`)."""
    from crowdsafe.privacy.ledger_mark import carries_mark

    return carries_mark(_head(path, 72))


def is_local(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` names a local file (not ``scheme://...``)."""
    return "://" not in str(path)


def _unmarked(output: Output) -> str:
    """Why an existing output may not be replaced without force, by kind."""
    if output.kind is OutputKind.PLAIN:
        return "exists"
    if output.kind is OutputKind.EXPERIMENT:
        return f"holds files crowdsafe did not write (its {EXPERIMENT_RECORD} does not list them)"
    return "exists and crowdsafe did not write it"


def _choose(output: Output) -> str:
    return f"choose another path for the {output.parameter} parameter" if output.parameter else "choose another path"


def _with_force(output: Output) -> tuple[str, ...]:
    """The parameters a refusal that ``force`` lifts names: ``force``, and the output's own."""
    return ("force",) + ((output.parameter,) if output.parameter else ())


def _where(path: str | os.PathLike[str]) -> tuple[str, os.stat_result | None]:
    """The real path (symbolic links resolved, ``..`` after a folder yet to be made taken as the
    writer will take it) and the status of the file there, or None when it is absent."""
    real = os.path.realpath(literal_path(path))
    try:
        status: os.stat_result | None = os.stat(real)
    except (OSError, ValueError):
        status = None
    return real, status


def _resolved(output: Output) -> Output:
    """``output`` with its paths as :func:`_where` resolves them (the files its mark is read from)."""
    certificate = output.certificate
    return replace(output, path=os.path.realpath(literal_path(output.path)),
                   certificate=None if certificate is None else os.path.realpath(literal_path(certificate)))


def _overlap(path: Path, where: tuple[str, os.stat_result | None], place: tuple[str, os.stat_result | None],
             folder: bool) -> str | None:
    """How the output at ``path`` (``where``) meets a file at ``place``, or None."""
    real, status = where
    other, other_status = place
    if real == other:
        return "a symbolic link to it" if path.is_symlink() else "the same file"
    if status is not None and other_status is not None and (status.st_dev, status.st_ino) == (
            other_status.st_dev, other_status.st_ino):
        return "the same file: a hard link to it"
    if folder and _under(real, other):
        return "inside that folder"
    if _under(other, real):
        return "a folder that holds it"
    return None


def _release_folder(real: str, releases: Sequence[str]) -> str | None:
    """The folder of the first release (a real path) that holds ``real`` or a folder above it."""
    for release in releases:
        folder = os.path.dirname(release)
        if _under(real, folder):
            return folder
    return None


def _under(path: str, folder: str) -> bool:
    return path.startswith(folder.rstrip(os.sep) + os.sep)


# -- rule 4: crowdsafe's own mark --------------------------------------------------------------


def written_by_crowdsafe(output: Output) -> bool:
    """Whether the existing file (or folder) at ``output.path`` carries crowdsafe's mark for its
    kind (see the module docstring). Reads at most one small file's first bytes."""
    path = literal_path(output.path)
    if output.kind is OutputKind.TABLE:
        return output.certificate is not None and _is_certificate(literal_path(output.certificate))
    if output.kind is OutputKind.CERTIFICATE:
        return _is_certificate(path)
    if output.kind is OutputKind.REPORT:
        return REPORT_MARK.encode() in _head(path, 4096)
    if output.kind is OutputKind.JSON:
        return _head(path, len(JSON_MARK)) == JSON_MARK.encode()
    if output.kind is OutputKind.EXPERIMENT:
        return _experiment_folder(path)
    return False


def _head(path: Path, size: int) -> bytes:
    """The first ``size`` bytes of the regular file ``path`` (empty for anything else)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return b""
        with open(path, "rb") as handle:
            return handle.read(size)
    except OSError:
        return b""


def _marked_json(path: Path) -> Any:
    """The JSON document at ``path`` when it is a regular file of at most 64 MiB, else None."""
    try:
        status = os.stat(path)
        if not stat.S_ISREG(status.st_mode) or status.st_size > _MAX_MARKED_BYTES:
            return None
        return json.loads(path.read_bytes())
    except (OSError, ValueError):
        return None


def _is_certificate(path: Path) -> bool:
    found = _marked_json(path)
    return isinstance(found, dict) and found.get("format") == _CERTIFICATE_FORMAT


def _experiment_folder(folder: Path) -> bool:
    """Every entry of ``folder`` is a regular file its crowdsafe record lists (or the record)."""
    record = folder / EXPERIMENT_RECORD
    if _head(record, len(JSON_MARK)) != JSON_MARK.encode():
        return not any(folder.iterdir()) if folder.is_dir() else False
    found = _marked_json(record)
    listed = {Path(f).name for f in found.get("files", [])} if isinstance(found, dict) else set()
    return all(entry.name in listed | {EXPERIMENT_RECORD} and entry.is_file() and not entry.is_symlink()
               for entry in folder.iterdir())


#: The table names a certificate ``<stem>.certificate.json`` may belong to, and the notes their
#: certificates carry (:func:`crowdsafe.csv_safety.format_note`: "CSV ..." or "Parquet ...").
_TABLE_NOTES = {".csv": "CSV", ".tsv": "CSV", ".csv.gz": "CSV", ".parquet": "Parquet", ".pq": "Parquet"}
_CERTIFICATE_SUFFIX = ".certificate.json"


def _certificate_of_another(output: Output) -> Path | None:
    """For a table whose certificate exists: another existing table beside it with the same stem
    and another suffix whose certificate it may be (its format notes fit that table's format, or
    it has none), which writing this table would leave with a certificate of another release."""
    if output.kind is not OutputKind.TABLE or output.certificate is None or not is_local(output.path):
        return None
    certificate = literal_path(output.certificate)
    table = literal_path(output.path)
    if not certificate.name.endswith(_CERTIFICATE_SUFFIX) or certificate.parent != table.parent:
        return None
    found = _marked_json(certificate) if certificate.is_file() else None
    if not isinstance(found, dict) or found.get("format") != _CERTIFICATE_FORMAT:
        return None
    notes = found.get("format_notes")
    notes = [n for n in notes if isinstance(n, str)] if isinstance(notes, list) else []
    stem = certificate.name[:-len(_CERTIFICATE_SUFFIX)]
    for other in _named_like(certificate.parent, stem, _TABLE_NOTES):
        if other.name == table.name:
            continue
        kind = _TABLE_NOTES[other.name[len(stem):].lower()]
        if not notes or any(n.startswith(kind) for n in notes):
            return other
    return None


def _named_like(folder: Path, stem: str, suffixes: Sequence[str] | Mapping[str, str]) -> list[Path]:
    """The entries of ``folder`` named ``stem`` and one of ``suffixes``, the suffix in any case
    (``R.CSV`` and ``R.Parquet`` are tables as ``R.csv`` and ``R.parquet`` are, and share the
    certificate ``R.certificate.json``), in the order of ``suffixes``."""
    wanted = {suffix.lower(): i for i, suffix in enumerate(suffixes)}
    try:
        with os.scandir(folder if str(folder) else ".") as entries:
            found = [(wanted[e.name[len(stem):].lower()], e.name) for e in entries
                     if e.name.startswith(stem) and e.name[len(stem):].lower() in wanted]
    except OSError:
        return []
    return [folder / name for _, name in sorted(found)]


def _table_of_certificate(output: Output, own_tables: set[str]) -> Path | None:
    """For a certificate ``<stem>.certificate.json`` (existing or not, wherever it lies): a table of
    that stem in its folder (``<stem>.csv``, ``<stem>.parquet``...) that the run does not write.
    Readers take the certificate for that table's (and the guard's rule 4 takes the table for a
    release crowdsafe wrote), so it would certify a table it does not describe."""
    if output.kind is not OutputKind.CERTIFICATE or not is_local(output.path):
        return None
    certificate = literal_path(output.path)
    if not certificate.name.endswith(_CERTIFICATE_SUFFIX):
        return None
    stem = certificate.name[:-len(_CERTIFICATE_SUFFIX)]
    for other in _named_like(certificate.parent, stem, _TABLE_NOTES):
        if _where(other)[0] not in own_tables:
            return other
    return None


def _composed_certificate(output: Output) -> str | None:
    """For the certificate of one table (``output.of`` set) to be written over an existing
    composed certificate (of several releases, ``publish --releases N``): what that certifies."""
    if output.kind is not OutputKind.CERTIFICATE or output.of is None or not is_local(output.path):
        return None
    path = literal_path(output.path)
    found = _marked_json(path)
    if not isinstance(found, dict) or found.get("format") != _CERTIFICATE_FORMAT:
        return None
    components = found.get("components")
    if not isinstance(components, list) or not components:
        return None
    stem = path.name[:-len(_CERTIFICATE_SUFFIX)] if path.name.endswith(_CERTIFICATE_SUFFIX) else path.stem
    numbered = sorted(e.name for e in _scan(path.parent) if e.name.startswith(stem + "-")
                      and any(e.name.lower().endswith(suffix) for suffix in _TABLE_NOTES))
    tables = f": {', '.join(numbered[:4])}{', ...' if len(numbered) > 4 else ''}" if numbered else ""
    plural = "s" if len(components) != 1 else ""
    return f"the composed certificate of {len(components)} release{plural}{tables} (their joint guarantee)"


def _scan(folder: Path) -> list[os.DirEntry[str]]:
    try:
        with os.scandir(folder if str(folder) else ".") as entries:
            return list(entries)
    except OSError:
        return []


_REPORT_SUFFIX = ".report.html"
_BEFORE_REPORT_SUFFIX = ".before.report.html"  # (crowdsafe.report.build.BEFORE_REPORT_SUFFIX)


def _report_of_another(output: Output) -> Path | None:
    """For an existing report crowdsafe wrote, to be replaced by the report of ``output.of``
    written elsewhere than beside it: the release it is the report of (a table or certificate of
    its stem beside it), when that is not ``output.of``."""
    if output.kind is not OutputKind.REPORT or output.of is None or not is_local(output.of):
        return None
    path, table = literal_path(output.path), literal_path(output.of)
    if not path.name.endswith(_REPORT_SUFFIX) or not written_by_crowdsafe(output):
        return None
    stem = path.name[:-len(_REPORT_SUFFIX)]
    own = table.with_name(table.stem + _REPORT_SUFFIX)  # (crowdsafe.report.build.report_path)
    if path.parent.resolve() == own.parent.resolve() and path.name == own.name:
        return None  # the report's own place (tables of one stem sharing it: rule 5)
    found = _named_like(path.parent, stem, (*_TABLE_NOTES, _CERTIFICATE_SUFFIX))
    return found[0] if found else None


def replaced_first(table: str | os.PathLike[str], certificate: str | os.PathLike[str] | None = None) -> list[Path]:
    """What is removed just before a new table (or view) is put in place at ``table``
    (:func:`crowdsafe.files.atomic_paths`): its ``certificate``, so that no reader ever finds a
    certificate beside a table it does not describe (between the renames the table stands
    without one), and the HTML report crowdsafe wrote beside it, which describes the release
    replaced (a run that writes a report writes the new one after the release), and so the
    report with before-distributions ``report --before`` wrote beside it (``<stem>.before.report.html``,
    unless a table of stem ``<stem>.before`` stands beside it: then it is that table's report); a
    report crowdsafe did not write is left alone. When ``table`` exists and is replaced, a crowdsafe
    certificate at its own ``<stem>.certificate.json`` is removed too, unless another table of
    that stem stands beside it (whose certificate it may be): the new table has no certificate
    there (``certificate`` None: a plain table, ``datasets export``, ``estimate --out``,
    ``attack --out``; or a view's certificate named elsewhere), and the old one would describe it
    (ds6 #7)."""
    path = literal_path(table)
    report = path.with_name(path.stem + _REPORT_SUFFIX)
    removed = [] if certificate is None else [literal_path(certificate)]
    own = path.with_name(path.stem + _CERTIFICATE_SUFFIX)
    if (os.path.lexists(path) and own not in removed and _is_certificate(own)
            and not [t for t in _named_like(path.parent, path.stem, _TABLE_NOTES) if t.name != path.name]):
        removed.append(own)
    before = path.with_name(path.stem + _BEFORE_REPORT_SUFFIX)
    reports = [report] + ([] if _named_like(path.parent, path.stem + ".before", _TABLE_NOTES) else [before])
    return removed + [r for r in reports if written_by_crowdsafe(Output(r, "the report", OutputKind.REPORT))]


def json_document(payload: Mapping[str, Any], **dumps: Any) -> str:
    """``payload`` as the JSON text crowdsafe writes to a file: ``"written_by": "crowdsafe"``
    first (:data:`JSON_MARK`, the mark rule 4 looks for), then ``payload`` as ``json.dumps``
    writes it with ``indent=2`` and the keywords ``dumps`` (``sort_keys``, ``default``...),
    and a final newline."""
    if "written_by" in payload:
        raise ValueError("a JSON document crowdsafe writes has no key 'written_by' of its own")
    body = json.dumps(dict(payload), indent=2, **dumps)
    return JSON_MARK + ("\n}" if body == "{}" else "," + body[1:]) + "\n"


__all__ = ["EXPERIMENT_RECORD", "JSON_MARK", "REPORT_MARK", "Input", "Output", "OutputKind", "RunFiles",
           "check_outputs", "is_local", "json_document", "replaced_first", "written_by_crowdsafe"]
