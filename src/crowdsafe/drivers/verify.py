"""Check a release against the ledger that recorded it (``crowdsafe ledger verify RELEASE``).

A certificate is a JSON file beside its table: nothing in the two files binds them to each other
or to the run, so an edited table, an edited certificate, or another run's table beside it read
as the release (:func:`crowdsafe.report.build.certified_table` catches only a table that breaks
the certificate's k or columns). The ledger is the custodian's record of the run: when
``publish`` has written its files, its entry records each file's SHA-256 and each certificate's
release id (:func:`written_digests`). Verifying reads the table and the certificate beside it,
finds the entry whose record names this certificate, and compares the bytes.

The digests are of the written files: the release (a DP output) and its certificate (the plan,
DP outputs and random ids), never of the input; they are kept in the ledger, which is
custodian-only, and printed only by this check, to its caller. A remote path gets no digest:
the check then says it cannot tell. A folder (a Spark release) is digested part by part
(:func:`folder_digest`: each file's SHA-256 in the order of its path in the folder). An α-β
view's entry records its view and certificate the same way
(:func:`crowdsafe.drivers.perturb.view_digests`).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from crowdsafe.errors import InputError
from crowdsafe.output_guard import is_local

#: Bytes read at a time while hashing a file.
BLOCK = 1 << 20


def file_digest(path: str | os.PathLike[str]) -> str | None:
    """The SHA-256 (hex) of the regular local file at ``path``; of a local folder (a Spark
    release: its part files), :func:`folder_digest`; None for a remote path or a missing file."""
    if not is_local(str(path)):
        return None
    if Path(path).is_dir():
        return folder_digest(path)
    if not Path(path).is_file():
        return None
    return _sha256(path)


def _sha256(path: str | os.PathLike[str]) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while block := handle.read(BLOCK):
            digest.update(block)
    return digest.hexdigest()


def folder_parts(folder: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """(path relative to ``folder``, with ``/``; its SHA-256) of every regular file below
    ``folder`` (part files, Spark's ``_SUCCESS`` and ``.crc`` files included; a symbolic link is
    not a file of the folder), sorted by that path: the same list wherever the folder is copied."""
    root = Path(folder)
    found = []
    for here, _, names in os.walk(root):
        for name in names:
            path = Path(here) / name
            if path.is_file() and not path.is_symlink():
                found.append((path.relative_to(root).as_posix(), _sha256(path)))
    return sorted(found)


def folder_digest(folder: str | os.PathLike[str]) -> str:
    """The SHA-256 of a folder's files: of the UTF-8 lines ``<relative path>\t<SHA-256>\n`` of
    :func:`folder_parts`, in their order. A part file edited, added, removed or renamed changes it."""
    lines = "".join(f"{name}\t{sha}\n" for name, sha in folder_parts(folder))
    return hashlib.sha256(lines.encode("utf-8")).hexdigest()


def _local(path: str) -> str:
    return os.path.abspath(path) if is_local(path) else path


def written_digests(written: Mapping[str, Any], release_ids: Sequence[str | None]) -> list[dict[str, Any]]:
    """What a publication's ledger entry records of the files it wrote (``written``: the engine's
    ``write`` result): per release, its table and certificate with their SHA-256 and the
    certificate's release id; for several releases, the combined certificate too (no table)."""
    tables, certificates = written.get("tables") or [], written.get("certificates") or []
    files = [{"release_id": release_id, "table": _local(table), "table_sha256": file_digest(table),
              "certificate": _local(certificate), "certificate_sha256": file_digest(certificate)}
             for table, certificate, release_id in zip(tables, certificates, release_ids, strict=True)]
    combined = written.get("combined_certificate")
    if combined:
        files.append({"release_id": None, "table": None, "table_sha256": None, "certificate": _local(combined),
                      "certificate_sha256": file_digest(combined)})
    return files


def _records(report: Mapping[str, Any]) -> list[tuple[dict[str, Any], dict[str, Any], dict[str, Any]]]:
    """(dataset, entry, file record) for every file record in the ledger's export."""
    return [(dataset, entry, record) for dataset in report.get("datasets") or ()
            for entry in dataset.get("entries") or ()
            for record in (entry.get("outcome") or {}).get("files") or ()]


def _entry_words(dataset: Mapping[str, Any], entry: Mapping[str, Any]) -> str:
    return (f"ledger entry #{entry['id']} of '{dataset['name']}' ({entry['kind']}, {entry['status']}"
            f"{', seeded' if entry.get('seeded') else ''}, {str(entry['created_at'])[:19].replace('T', ' ')} UTC)")


def verify_release(table: str | os.PathLike[str], report: Mapping[str, Any],
                   certificate: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """Check the release ``table`` and the certificate beside it (or ``certificate``, one written
    elsewhere: ``perturb --certificate``) against ``report`` (the ledger's export,
    :func:`crowdsafe.budgets.ledger_report`). Return what matched; raise :class:`InputError`, in
    one line, when the ledger holds no record of the certificate or a file differs from the one
    recorded."""
    import json

    from crowdsafe.anonymize.release import certificate_path
    from crowdsafe.perturb.view import certificate_path as view_certificate_path

    path = Path(table)
    beside = certificate_path(path) if certificate is None else Path(certificate)
    if certificate is None and not beside.is_file() and view_certificate_path(path).is_file():
        beside = view_certificate_path(path)  # a view's (view.csv.gz: view.certificate.json)
    if not path.exists():
        raise InputError(f"no release at {path}")
    if certificate is not None and not beside.is_file():
        raise InputError(f"no certificate at {beside}")
    if not beside.is_file():
        raise InputError(f"the release {path} has no certificate beside it ({beside.name}); name it with "
                         "--certificate FILE if it was written elsewhere")
    certificate_sha = file_digest(beside)
    table_sha = file_digest(path)
    try:
        release_id = ((json.loads(beside.read_text(encoding="utf-8")) or {}).get("sample") or {}).get("release_id")
    except (OSError, ValueError, AttributeError) as exc:
        raise InputError(f"cannot read the certificate {beside}: {exc}") from exc
    records = _records(report)
    by_certificate = [r for r in records if r[2].get("certificate_sha256") == certificate_sha and r[2].get("table")]
    if not by_certificate:
        named = [r for r in records if release_id and r[2].get("release_id") == release_id]
        if named:
            dataset, entry, _ = named[0]
            raise InputError(f"the certificate {beside} names a release of {_entry_words(dataset, entry)}, but it is "
                             "not the certificate that run wrote: it was edited")
        raise InputError(f"no entry of the ledger {report.get('ledger')} wrote the certificate {beside}: the release "
                         "was made with another ledger or none (--no-ledger; anonymize records no files), or by a "
                         "crowdsafe before 2026-11-30 (no digests recorded), or its certificate was edited")
    dataset, entry, record = by_certificate[0]
    if record.get("table_sha256") is None or table_sha is None:
        raise InputError(f"the certificate {beside} is the one {_entry_words(dataset, entry)} wrote, but the ledger "
                         f"holds no digest of its table (a remote path, or a folder before 2026-11-30): {path} "
                         "cannot be checked")
    if record["table_sha256"] != table_sha:
        raise InputError(f"{path} is not the table {_entry_words(dataset, entry)} wrote beside this certificate (its "
                         "SHA-256 differs): it was edited, or is another table")
    return {"release": str(path), "certificate": str(beside), "table_sha256": table_sha,
            "certificate_sha256": certificate_sha, "release_id": record.get("release_id"),
            "dataset": dataset["name"], "entry": entry["id"], "kind": entry["kind"], "status": entry["status"],
            "seeded": bool(entry.get("seeded")), "epsilon": entry["epsilon"], "delta": entry["delta"],
            "created_at": entry["created_at"], "written_as": record.get("table"),
            "matches": _entry_words(dataset, entry)}


__all__ = ["file_digest", "folder_digest", "folder_parts", "verify_release", "written_digests"]
