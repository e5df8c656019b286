"""An uploaded table, streamed straight into the app's private folder.

The multipart body is parsed as it arrives (python-multipart's streaming parser): the file part
is written chunk by chunk to ``<private folder>/uploads/<n>/<name>`` (the folder is 0700, the
file 0600), never held whole in memory and never put in the system's shared temporary folder.
A body larger than the cap is refused with 413: at once when its ``Content-Length`` says so,
else as soon as the bytes read pass it (the partial file is removed).
"""

from __future__ import annotations

import os
import re
import shutil
import unicodedata
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header

from crowdsafe.errors import ParameterError

_SAFE = re.compile(r"[^\w. -]+")  # letters and digits of every script are kept (患者.csv, مرضى.csv)


class TooLarge(Exception):
    """The upload is larger than the cap (answered with 413)."""


@dataclass
class _Part:
    headers: dict[str, bytes] = field(default_factory=dict)  # raw: a browser sends a file name as UTF-8
    field_name: str = ""
    file_name: str | None = None
    value: bytearray = field(default_factory=bytearray)
    handle: Any = None
    path: Path | None = None


def safe_name(name: str) -> str:
    """A file name for the upload: the base name given, other characters replaced (the name is
    the table's label on the pages and in the ledger)."""
    base = unicodedata.normalize("NFC", name.replace("\\", "/").rsplit("/", 1)[-1])
    base = _SAFE.sub("_", base).strip(" .")
    return base[:120] or "upload.csv"


async def receive_upload(request: Any, folder: Path, limit: int) -> tuple[Path, str, dict[str, str]]:
    """Stream the multipart body of ``request`` into ``folder``; return the file's path, its
    name and the other (small) form fields. Raises :class:`TooLarge` past ``limit`` bytes and
    ParameterError when the form holds no file."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise TooLarge
    content_type, options = parse_options_header(request.headers.get("content-type", ""))
    boundary = options.get(b"boundary")
    if content_type != b"multipart/form-data" or not boundary:
        raise ParameterError("the upload is not a multipart form")
    parts: list[_Part] = []
    current: list[_Part] = []
    header = {"field": bytearray(), "value": bytearray()}

    def on_part_begin() -> None:
        current[:] = [_Part()]

    def on_header_field(data: bytes, start: int, end: int) -> None:
        header["field"] += data[start:end]

    def on_header_value(data: bytes, start: int, end: int) -> None:
        header["value"] += data[start:end]

    def on_header_end() -> None:
        current[0].headers[bytes(header["field"]).decode("latin-1").lower()] = bytes(header["value"])
        header["field"], header["value"] = bytearray(), bytearray()

    def on_headers_finished() -> None:
        part = current[0]
        _, disposition = parse_options_header(part.headers.get("content-disposition", b""))
        part.field_name = disposition.get(b"name", b"").decode("utf-8", "replace")
        filename = disposition.get(b"filename")
        if filename is not None:
            if any(p.path is not None for p in parts):  # (two parts of one name collided in the folder)
                raise ParameterError("upload one file at a time (the form held more than one)")
            part.file_name = safe_name(filename.decode("utf-8", "replace"))
            part.path = folder / part.file_name
            part.handle = open(part.path, "xb")  # noqa: SIM115 (closed at the part's end or on error)
            os.chmod(part.path, 0o600)

    def on_part_data(data: bytes, start: int, end: int) -> None:
        part = current[0]
        if part.handle is not None:
            part.handle.write(data[start:end])
        elif len(part.value) + end - start <= 4096:
            part.value += data[start:end]

    def on_part_end() -> None:
        part = current[0]
        if part.handle is not None:
            part.handle.close()
            part.handle = None
        parts.append(part)

    parser = MultipartParser(boundary, {
        "on_part_begin": on_part_begin, "on_header_field": on_header_field, "on_header_value": on_header_value,
        "on_header_end": on_header_end, "on_headers_finished": on_headers_finished, "on_part_data": on_part_data,
        "on_part_end": on_part_end,
    })
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise TooLarge
            parser.write(chunk)
        parser.finalize()
    except BaseException as exc:
        for part in [*parts, *current]:
            if part.handle is not None:
                part.handle.close()
        shutil.rmtree(folder, ignore_errors=True)
        if isinstance(exc, MultipartParseError):  # a header past the parser's limit: a name of thousands of characters
            raise ParameterError(f"the upload's form could not be read ({exc}); if the file's name is very long, "
                                 "rename the file and upload it again") from None
        raise
    files = [p for p in parts if p.path is not None and p.field_name == "file"]
    fields = {p.field_name: bytes(p.value).decode("utf-8", "replace") for p in parts if p.path is None}
    if not files or not files[0].file_name or files[0].path is None:
        shutil.rmtree(folder, ignore_errors=True)
        raise ParameterError("choose a file to upload: the form held none")
    if files[0].path.stat().st_size == 0:  # chosen, but empty (it was told "choose a file", as if none were)
        shutil.rmtree(folder, ignore_errors=True)
        raise ParameterError(f"{files[0].file_name} is empty (0 bytes): choose the file that holds the table")
    return files[0].path, files[0].file_name, fields
