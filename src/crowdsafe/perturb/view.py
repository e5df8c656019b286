"""A perturbed view: the published table V, its domain, α and β, and its certificate.

The view file (CSV or Parquet) and its certificate JSON are written together, each atomically
(:mod:`crowdsafe.files`): by default the certificate sits beside the view as
``<stem>.certificate.json``. :func:`read_view` reads both back, taking α, β and the domain from
the certificate, and checks that every row of the view lies in the domain.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from crowdsafe.csv_safety import escaped_by, format_note, unescape_frame, write_csv
from crowdsafe.data import read_table
from crowdsafe.data.text_csv import read_text_csv
from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import atomic_paths, check_input, check_output_path
from crowdsafe.number_text import quantity
from crowdsafe.perturb.domain import TupleDomain
from crowdsafe.privacy.certificate import Certificate

CERTIFICATE_SUFFIX = ".certificate.json"
VIEW_SUFFIXES = (".csv", ".tsv", ".parquet", ".pq")


def check_view_path(path: str | os.PathLike[str]) -> Path:
    """Refuse an output name whose format cannot be told, or that cannot be written (a folder, an
    unwritable folder: :func:`crowdsafe.files.check_output_path`), before any work is done."""
    target = Path(path)
    if not target.name.lower().endswith(VIEW_SUFFIXES):
        raise ParameterError(f"cannot tell the output format of {target}: use a .csv or .parquet file name")
    return check_output_path(target, VIEW_SUFFIXES)  # a folder, an unwritable folder


def certificate_path(view_path: str | os.PathLike[str]) -> Path:
    """Where the certificate of a view is written by default: ``<stem>.certificate.json`` beside it."""
    path = Path(view_path)
    name = path.name
    for suffix in (".csv.gz", ".parquet", ".csv", ".tsv", ".pq"):
        if name.lower().endswith(suffix):
            name = name[: -len(suffix)]
            break
    return path.with_name(name + CERTIFICATE_SUFFIX)


@dataclass(frozen=True, slots=True)
class ViewOutput:
    """Where and how a perturbation's view is written (how the run is carried out, not what it
    publishes).

    - ``out``: the view's file (CSV or Parquet by extension; on Spark a Parquet directory,
      required there); None: nothing is written.
    - ``certificate``: the certificate JSON (default ``<stem>.certificate.json`` beside the view).
    - ``escape_formulas``: CSV cells made formula-safe (:mod:`crowdsafe.csv_safety`); the
      certificate says which.
    - ``report``: also write the view's HTML report (``<stem>.report.html`` beside it,
      :mod:`crowdsafe.report`), built from the view file and its certificate once both are in
      place; skipped for a path that is not local (``s3a://``).

    ``out`` is checked writable by the engine before the data is read (and so before any charge).
    """

    out: str | os.PathLike[str] | None = None
    certificate: str | os.PathLike[str] | None = None
    escape_formulas: bool = True
    report: bool = True


@dataclass(frozen=True)
class View:
    """A published α-β view and what is needed to estimate queries from it."""

    frame: pl.DataFrame
    domain: TupleDomain
    alpha: float
    beta: float
    n_bound: int  # the public bound N on n the plan used (never the exact n of a certified run)
    certificate: Certificate
    frame_kind: str = "polars"  # the kind of frame the data was given as (crowdsafe.data.io.frame_kind)

    def __repr__(self) -> str:
        # concise: the field-by-field repr printed the whole frame and every value of the domain;
        # alpha and beta as the plan prints them (alpha down, beta up)
        from crowdsafe.number_text import rounded_down, rounded_up

        names = self.attributes
        shown = ", ".join(names[:6]) + (f" and {len(names) - 6:,} more" if len(names) > 6 else "")
        fit = self.certificate.fit_for_release and self.certificate.has_guarantee
        return (f"View({quantity(self.rows, 'row')} of {shown}, {self.certificate.headline()}, "
                f"alpha={rounded_down(self.alpha, 4)}, beta={rounded_up(self.beta, 4)}, fit_for_release={fit})")

    @property
    def table(self) -> Any:
        """The view's rows as the kind of frame the data was given as: a pandas DataFrame for a
        pandas input, else :attr:`frame` (pandas in gives pandas out)."""
        from crowdsafe.data.io import in_kind

        return in_kind(self.frame, self.frame_kind)

    @property
    def rows(self) -> int:
        return self.frame.height

    @property
    def attributes(self) -> list[str]:
        return self.domain.attributes

    @cached_property
    def codes(self) -> dict[str, np.ndarray]:
        """The view's rows as per-attribute domain codes; a value outside the domain is an error."""
        return self.domain.encode(self.frame, what="the view")

    def write(self, path: str | os.PathLike[str], certificate: str | os.PathLike[str] | None = None, *,
              escape_formulas: bool = True, force: bool = False) -> tuple[Path, Path]:
        """Write the view (CSV or Parquet by extension) and its certificate JSON, each atomically.

        If either write fails, neither file is left behind (both are renamed into place only
        once both are complete and on disk, the certificate and crowdsafe's report of the view
        replaced removed first: :func:`crowdsafe.output_guard.replaced_first`). CSV cells are
        formula-safe unless ``escape_formulas`` is False (:mod:`crowdsafe.csv_safety`); the certificate written says
        which in its ``format_notes``, and :func:`read_view` reads the view back accordingly. An
        existing file crowdsafe did not write (the data, say) is replaced only with ``force=True``, a
        ledger never (:mod:`crowdsafe.output_guard`, as ``perturb(out=...)`` checks them first).
        """
        target = check_view_path(path)
        cert_target = Path(certificate) if certificate is not None else certificate_path(target)
        if cert_target.resolve() == target.resolve():
            raise InputError("the view and its certificate cannot be written to the same file")
        from crowdsafe.output_guard import Output, OutputKind, RunFiles, replaced_first

        RunFiles(outputs=(Output(target, "the view", OutputKind.TABLE, parameter="path", certificate=cert_target),
                          Output(cert_target, "the certificate", OutputKind.CERTIFICATE, parameter="certificate",
                                 of=target)), force=force).check()

        note = format_note(target, escape_formulas=escape_formulas)
        # both complete and on disk, then the certificate (and crowdsafe's report) of the view
        # replaced removed and both renamed into place at once (crowdsafe.files.atomic_paths)
        with atomic_paths([target, cert_target], remove_first=replaced_first(target, cert_target)) as (
                view_tmp, cert_tmp):
            if target.name.lower().endswith((".parquet", ".pq")):
                self.frame.write_parquet(view_tmp)
            else:
                write_csv(self.frame, view_tmp, escape_formulas=escape_formulas,
                          separator="\t" if target.name.lower().endswith(".tsv") else ",")
            cert_tmp.write_text(self.certificate.with_format_notes(note).to_json(), encoding="utf-8")
        return target, cert_target

    def describe(self) -> dict[str, Any]:
        return {"rows": self.rows, "attributes": self.attributes, "alpha": self.alpha, "beta": self.beta,
                "max_rows": self.n_bound, "m": self.domain.size, "certificate": self.certificate.summary()}


def _read_text(path: Path, escaped: bool = True) -> pl.DataFrame:
    """The view's cells as text (a CSV empty field is missing; formula-safe cells read back as
    written unless ``escaped`` is False); Parquet keeps its types. A directory of Parquet part
    files (a view written by the Spark engine) is read whole."""
    if path.name.lower().endswith((".parquet", ".pq")):
        if path.is_dir():
            from crowdsafe.data.streaming import parquet_parts

            return pl.read_parquet(parquet_parts(path), glob=False)
        return read_table(path)
    if not path.is_file():
        raise InputError(f"file not found: {path}")
    frame = read_text_csv(path, "view")
    # crowdsafe writes formula-safe CSV cells (crowdsafe.csv_safety) unless told not to
    return unescape_frame(frame) if escaped else frame


def read_view(path: str | os.PathLike[str], certificate: str | os.PathLike[str] | None = None) -> View:
    """Read a view and its certificate; α, β, the bound N on n and the domain come from the
    certificate (one of an uncertified, exploratory run is read too: its summary says so)."""
    path = check_input(path, "view")  # a FIFO would block the read
    cert_file = Path(certificate) if certificate is not None else certificate_path(path)
    if not cert_file.exists():
        raise InputError(
            f"no certificate for the view {path} (looked for {cert_file}); give it with the certificate parameter",
            parameter="certificate",
        )
    return view_with_certificate(path, Certificate.read(cert_file), str(cert_file))


def is_view_certificate(cert: Certificate) -> bool:
    """Whether ``cert`` is the certificate of an α-β view (its guarantee and parameters say so)."""
    return cert.guarantee in ("d-gamma", "none") and {"alpha", "beta", "domain"} <= set(cert.parameters)


def view_with_certificate(path: str | os.PathLike[str], cert: Certificate, cert_name: str = "the certificate") -> View:
    """The view at ``path`` read with ``cert`` (already read): α, β, N and the domain come from
    it; a view whose rows differ from the certificate's count, or lie outside its domain, is refused."""
    path = Path(path)
    if not is_view_certificate(cert):
        raise InputError(f"{cert_name} is not the certificate of an alpha-beta view")
    params = cert.parameters
    domain = TupleDomain.from_json(params["domain"], active=params.get("domain_kind", "active") == "active")
    frame = _read_text(path, escaped_by(cert.format_notes))
    absent = [a for a in domain.attributes if a not in frame.columns]
    if absent:
        raise InputError(f"the view {path} has no column '{absent[0]}' named by its certificate")
    expected_rows = params.get("view_rows")
    if expected_rows is not None and frame.height != expected_rows:
        raise InputError(
            f"the view {path} has {quantity(frame.height, 'row')} but its certificate says {expected_rows:,}: "
            "they do not belong together"
        )
    codes = domain.encode(frame, what="the view")  # every row must lie in the domain
    bound = params.get("max_rows", params.get("n"))  # "n": certificates written before max_rows
    if bound is None:
        raise InputError(f"{cert_name} names no bound on n (max_rows)")
    view = View(domain.decode(codes), domain, float(params["alpha"]), float(params["beta"]), int(bound), cert)
    view.__dict__["codes"] = codes
    return view
