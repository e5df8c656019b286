"""The release certificate: what guarantee a release carries, derived from what actually ran.

A :class:`Certificate` states the guarantee kind (``dp``: (ε, δ)-DP; ``dps``: DP under
sampling, hence (ε, δ)-DP for one use of one secret sample; ``d-gamma``: (d, γ)-privacy of a
perturbed view (Rastogi, Suciu, Hong 2007), with ``parameters["d"]`` and ``parameters["gamma"]``
and its equivalent ε of unbounded DP as ``epsilon``, δ = 0; ``none``: no formal guarantee, with
the reason), ε and δ, the neighbour notion, the theorem, the mechanism chain, every parameter,
the assumptions, the randomness that ran and the accounting that recorded the run (a seeded
run, or a DP-under-sampling run that no ledger recorded, is not fit for release), the schema
choices it used that a schema draft read from the data and nobody marked reviewed
(``unreviewed_schema``: column -> what was read, from the schema's ``from_data`` markers; such a
release is not fit for release either), the format notes of the file it was written beside
(``format_notes``: e.g. whether CSV cells are formula-safe,
:func:`crowdsafe.csv_safety.format_note`), and the crowdsafe version.

A certificate is public: it travels beside the release. So it holds only what was fixed before
the data was read (parameters, theorem, assumptions, randomness kind, accounting, format notes,
the schema's markers) and outputs of the DP mechanism that was charged (the chosen scheme). It
holds no fingerprint or hash of the data, no sample size, score or count: a DPS certificate names
its release by ``sample = {"rate": beta, "release_id": <128 random bits, hex>}``, drawn from the
run's randomness before any data-dependent draw, so it is the same on neighbouring inputs for a
seeded run.

Its JSON form is stable and versioned: keys sorted, ``"format": "crowdsafe-certificate"``,
``"version": 2``, or ``3`` for a certificate with ``unreviewed_schema`` markers (the only
addition of version 3: a reader that does not know them refuses the file instead of dropping a
reason it is unfit). Version 1 files are still read (their ``input_fingerprint`` is ignored and
their sample's ``id`` is read as its ``release_id``), and so are version 2 files written before
``format_notes`` existed (no notes); a newer version is refused instead of guessing. Certificates are
written atomically (:func:`crowdsafe.files.write_text_atomic`).
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, cast

from crowdsafe.errors import InputError, ParameterError
from crowdsafe.files import read_input_text, write_text_atomic
from crowdsafe.number_text import rounded_down, rounded_up
from crowdsafe.privacy.loss import PrivacyLoss, check_delta, check_epsilon

FORMAT = "crowdsafe-certificate"
VERSION = 2
SCHEMA_REVIEW_VERSION = 3  # written only when ``unreviewed_schema`` is not empty
READABLE_VERSIONS = (1, 2, 3)

Guarantee = Literal["dp", "dps", "d-gamma", "none"]
Neighbours = Literal["add-remove", "change"]


def _crowdsafe_version() -> str:
    from crowdsafe import __version__

    return __version__


@dataclass(frozen=True)
class Certificate:
    """The guarantee a release carries; build it with :mod:`crowdsafe.privacy.certify`."""

    guarantee: Guarantee
    epsilon: float | None
    delta: float | None
    theorem: str | None
    mechanisms: tuple[dict[str, Any], ...]
    parameters: dict[str, Any]
    assumptions: tuple[str, ...]
    neighbours: Neighbours = "add-remove"
    reason: str | None = None
    sample: dict[str, Any] | None = None
    randomness: dict[str, Any] | None = None
    accounting: dict[str, Any] | None = None
    components: tuple[Certificate, ...] = ()
    format_notes: tuple[str, ...] = ()
    unreviewed_schema: dict[str, tuple[str, ...]] = field(default_factory=dict)
    crowdsafe_version: str = field(default_factory=_crowdsafe_version)

    def __post_init__(self) -> None:
        object.__setattr__(self, "unreviewed_schema", _markers(self.unreviewed_schema))
        if self.guarantee not in ("dp", "dps", "d-gamma", "none"):
            raise ParameterError(f"guarantee must be dp, dps, d-gamma or none, got {self.guarantee!r}")
        if self.neighbours not in ("add-remove", "change"):
            raise ParameterError(f"neighbours must be add-remove or change, got {self.neighbours!r}")
        if self.guarantee == "none":
            if not self.reason:
                raise ParameterError("a 'no formal guarantee' certificate needs its reason")
            if self.epsilon is not None or self.delta is not None:
                raise ParameterError("a 'no formal guarantee' certificate has no epsilon or delta")
        else:
            check_epsilon(self.epsilon)
            check_delta(self.delta)
            if not self.theorem:
                raise ParameterError("a certificate with a guarantee must name its theorem")
        if self.guarantee == "dps" and not self.release_id:
            raise ParameterError("a DP-under-sampling certificate must name its sample")
        if self.guarantee == "d-gamma":
            d, gamma = self.parameters.get("d"), self.parameters.get("gamma")
            if not (isinstance(d, (int, float)) and isinstance(gamma, (int, float)) and 0 < d < gamma < 1):
                raise ParameterError("a (d, gamma) certificate needs parameters 0 < d < gamma < 1")

    @property
    def has_guarantee(self) -> bool:
        return self.guarantee != "none"

    @property
    def loss(self) -> PrivacyLoss | None:
        """The (ε, δ) as a :class:`PrivacyLoss`, or None without a formal guarantee."""
        if self.epsilon is None or self.delta is None:
            return None
        return PrivacyLoss(self.epsilon, self.delta)

    @property
    def seeded(self) -> bool:
        """True when any randomness that ran, this certificate's or a component's, was seeded."""
        return bool(self.randomness and self.randomness.get("seeded")) or any(c.seeded for c in self.components)

    @property
    def release_id(self) -> str | None:
        """The random name of the sample's release (a version-1 file's ``sample.id``)."""
        if not self.sample:
            return None
        return self.sample.get("release_id") or self.sample.get("id")

    @property
    def unfit_reasons(self) -> tuple[str, ...]:
        """Why this release is not fit for release (empty when it is), from what ran:

        - seeded randomness: reproducible, so an attacker who knows the seed knows the sample
          and the noise;
        - ``accounting["ledger"]`` false: no ledger recorded the run, so nothing records the
          sample's use nor limits further releases (a DPS guarantee holds for one use of one
          sample only, Li, Qardaji, Su 2012).

        - no formal guarantee (``guarantee == "none"``): nothing bounds what the release reveals;
        - ``unreviewed_schema``: a schema choice the release used was read from the data by a
          schema draft and is not marked reviewed, one reason per column (the guarantee assumes
          the schema is public).

        A component's reasons count for the whole (composed) certificate.
        """
        reasons = []
        if self.guarantee == "none":
            reasons.append("no formal guarantee: nothing bounds what the release reveals")
        if self.randomness is not None and not self.randomness.get("fit_for_release", False):
            reasons.append("seeded randomness: reproducible, so whoever knows the seed knows the sample and noise")
        if self.accounting is not None and not self.accounting.get("ledger", False):
            reasons.append(NO_LEDGER)
        reasons.extend(unreviewed_reasons(self.unreviewed_schema))
        for component in self.components:
            reasons.extend(r for r in component.unfit_reasons if r not in reasons)
        return tuple(reasons)

    @property
    def fit_for_release(self) -> bool:
        """False when the release carries no formal guarantee, any randomness that ran was
        seeded, no ledger recorded the run, or it used an unreviewed schema choice read from the
        data (:attr:`unfit_reasons`)."""
        return not self.unfit_reasons

    def summary(self) -> str:
        """One line for people: the guarantee, or the reason there is none."""
        if self.guarantee == "none":
            return f"no formal guarantee: {self.reason}"
        if self.guarantee == "d-gamma":
            text = (f"{self._d_gamma()}-private (as unbounded DP: epsilon = {rounded_up(cast(float, self.epsilon))}) "
                    f"[{self.theorem}]")
            return text + self._unfit_suffix()
        return f"{self.headline()} [{self.theorem}]" + self._unfit_suffix()

    def headline(self) -> str:
        """The guarantee in a few words, without the theorem: ``(1, 1e-06)-DP under sampling``,
        ``no formal guarantee`` (for reprs)."""
        if self.guarantee == "none":
            return "no formal guarantee"
        if self.guarantee == "d-gamma":
            return f"{self._d_gamma()}-private"
        kind = "DP under sampling" if self.guarantee == "dps" else "DP"
        return f"({rounded_up(cast(float, self.epsilon))}, {rounded_up(cast(float, self.delta), 3)})-{kind}"

    def _d_gamma(self) -> str:
        """(d, γ) as printed: γ (the posterior bound) rounded up and d (the prior the attacker is
        assumed to stay below) rounded down, so neither is stated stronger than proven."""
        return f"({rounded_down(self.parameters['d'], 3)}, {rounded_up(self.parameters['gamma'], 3)})"

    def __repr__(self) -> str:
        # concise (a field-by-field repr prints every mechanism, parameter and component)
        theorem = self.theorem if self.theorem is None or len(self.theorem) <= 80 else self.theorem[:79] + "…"
        what = f"reason={self.reason[:200]!r}" if self.guarantee == "none" and self.reason else f"theorem={theorem!r}"
        composed = f", components={len(self.components)}" if self.components else ""
        return (f"Certificate({self.headline()}, {what}{composed}, fit_for_release={self.fit_for_release})")

    def _repr_html_(self) -> str:
        """The notebook view (:mod:`crowdsafe.report.views`; the report package is imported only here)."""
        from crowdsafe.report.views import certificate_html

        return certificate_html(self)

    def _unfit_suffix(self) -> str:
        return unfit_suffix(self.unfit_reasons)

    def with_format_notes(self, *notes: str | None) -> Certificate:
        """This certificate with ``format_notes`` set to ``notes`` (None entries dropped): how the
        file written beside it holds its cells (e.g. :func:`crowdsafe.csv_safety.format_note`).
        Such notes are fixed by the options and the file name before the data is read."""
        return dataclasses.replace(self, format_notes=tuple(n for n in notes if n))

    def with_unreviewed_schema(self, markers: Mapping[str, Sequence[str]]) -> Certificate:
        """This certificate with ``unreviewed_schema`` set to ``markers`` (column -> what a schema
        draft read from the data, :meth:`crowdsafe.data.schema.Schema.unreviewed` of the columns
        the release used): from the schema alone, so fixed before the data is read."""
        return dataclasses.replace(self, unreviewed_schema=_markers(markers))

    def to_dict(self) -> dict[str, Any]:
        reviewed = {"unreviewed_schema": {c: list(m) for c, m in self.unreviewed_schema.items()}
                    } if self.unreviewed_schema else {}
        return {
            "format": FORMAT,
            "version": SCHEMA_REVIEW_VERSION if self.unreviewed_schema else VERSION,
            "guarantee": self.guarantee,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "neighbours": self.neighbours,
            "theorem": self.theorem,
            "reason": self.reason,
            "mechanisms": [dict(m) for m in self.mechanisms],
            "parameters": dict(self.parameters),
            "assumptions": list(self.assumptions),
            "sample": dict(self.sample) if self.sample else None,
            "randomness": dict(self.randomness) if self.randomness else None,
            "accounting": dict(self.accounting) if self.accounting else None,
            "seeded": self.seeded,
            "fit_for_release": self.fit_for_release,
            "unfit_reasons": list(self.unfit_reasons),
            "crowdsafe_version": self.crowdsafe_version,
            "components": [c.to_dict() for c in self.components],
            "format_notes": list(self.format_notes),
            **reviewed,
        }

    as_dict = to_dict  # the name every result's public dict has (crowdsafe.api)

    def to_json(self) -> str:
        """Stable JSON: sorted keys, two-space indent, no NaN or infinity, trailing newline."""
        return json.dumps(_finite(self.to_dict()), indent=2, sort_keys=True, ensure_ascii=False,
                          allow_nan=False) + "\n"

    def write(self, path: str | os.PathLike[str], *, force: bool = False) -> Path:
        """Write the JSON form to ``path`` atomically and return the path.

        ``path`` is checked first as every output crowdsafe writes (:mod:`crowdsafe.output_guard`,
        as ``Release.write`` and ``View.write`` check theirs): never a crowdsafe ledger or a
        folder, and an existing file crowdsafe did not write (the input table, say) or a
        ``<stem>.certificate.json`` beside a table ``<stem>.csv`` it does not describe is replaced
        only with ``force=True`` (it overwrote any file)."""
        from crowdsafe.output_guard import Output, OutputKind, RunFiles

        RunFiles(outputs=(Output(path, "the certificate", OutputKind.CERTIFICATE, parameter="path"),),
                 force=force).check()
        return write_text_atomic(path, self.to_json())

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Certificate:
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise InputError("not a crowdsafe certificate (missing format 'crowdsafe-certificate')")
        if "version" not in data:
            raise InputError("certificate is missing the field 'version'")
        version = data["version"]
        if isinstance(version, bool) or version not in READABLE_VERSIONS:
            raise InputError(
                f"certificate version {version!r} is not supported by this crowdsafe "
                f"(reads versions {', '.join(map(str, READABLE_VERSIONS))}); upgrade crowdsafe"
            )
        check_fields(data, version)
        try:
            return cls(
                guarantee=data["guarantee"],
                epsilon=data["epsilon"],
                delta=data["delta"],
                theorem=data["theorem"],
                mechanisms=tuple(data["mechanisms"]),
                parameters=dict(data["parameters"]),
                assumptions=tuple(data["assumptions"]),
                neighbours=data["neighbours"],
                reason=data["reason"],
                sample=data["sample"],
                randomness=data["randomness"],
                accounting=data["accounting"] if version >= 2 else None,
                components=tuple(_component(cls, c, i) for i, c in enumerate(data["components"])),
                format_notes=tuple(data.get("format_notes") or ()),  # absent in older files
                unreviewed_schema=data.get("unreviewed_schema") or {},  # version 3 only
                crowdsafe_version=data["crowdsafe_version"],
            )
        except KeyError as exc:
            raise InputError(f"certificate is missing the field {exc.args[0]!r}") from None

    @classmethod
    def from_json(cls, text: str, name: str = "the certificate") -> Certificate:
        """The certificate written as ``text``, once its stated verdict and δ are seen to follow
        from its fields (:func:`crowdsafe.privacy.certificate_check.check_stated`; ``name`` names
        it in the refusal)."""
        from crowdsafe.privacy.certificate_check import check_stated

        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise InputError(f"certificate is not valid JSON: {exc.msg} (line {exc.lineno})") from None
        certificate = cls.from_dict(data)
        try:
            check_stated(data, certificate)
        except InputError as exc:
            raise InputError(f"{name} is not valid: {exc}") from None
        return certificate

    @classmethod
    def read(cls, path: str | os.PathLike[str]) -> Certificate:
        try:
            text = read_input_text(path, "certificate")
        except UnicodeDecodeError:
            raise InputError(f"the certificate {path} is not UTF-8 text") from None
        except OSError as exc:
            raise InputError(f"cannot read certificate {path}: {exc.strerror}") from None
        return cls.from_json(text, f"the certificate {path}")


#: Why a run that no ledger recorded is not fit for release (its ``accounting["note"]`` too).
NO_LEDGER = "no ledger: nothing records the sample's use or limits further releases"


def ledger_accounting(recorded: bool) -> dict[str, Any]:
    """A certificate's ``accounting``: ``{"ledger": true}`` when a budget ledger recorded the run's
    charge, else ``{"ledger": false, "note": ...}`` (:attr:`Certificate.unfit_reasons` then names
    it). Fixed by whether the run was given a ledger, before the data is read."""
    return {"ledger": True} if recorded else {"ledger": False, "note": NO_LEDGER}


def unfit_suffix(reasons: Sequence[str]) -> str:
    """The short mark of a result that is not fit for release, from its certificate's
    :attr:`Certificate.unfit_reasons` (``" (seeded randomness: NOT fit for release)"``; empty when
    fit): what :meth:`Certificate.summary` ends with, and what anything shown from the release
    (an estimate from a view) ends with too."""
    if not reasons:
        return ""
    short = list(dict.fromkeys(r.split(":", 1)[0] for r in reasons))
    return f" ({'; '.join(short)}: NOT fit for release)"


def unfit_line(reasons: Sequence[str]) -> str | None:
    """The one line that says why a result is not fit for release (None when it is): the
    certificate's :attr:`Certificate.unfit_reasons` after ``NOT fit for release:``, as
    ``crowdsafe perturb`` and ``crowdsafe estimate`` print it."""
    return f"NOT fit for release: {'; '.join(reasons)}" if reasons else None


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _objects(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, dict) for v in value)


def _texts(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


#: The fields of a certificate's JSON form, in the order they are checked (that of the
#: constructor, then the derived fields a reader ignores but the report shows): (name, whether a
#: file of every readable version has it, its JSON type in words, the check of its value).
_FIELDS: tuple[tuple[str, bool, str, Callable[[Any], bool]], ...] = (
    ("guarantee", True, "a string", lambda v: isinstance(v, str)),
    ("epsilon", True, "a number or null", lambda v: v is None or _number(v)),
    ("delta", True, "a number or null", lambda v: v is None or _number(v)),
    ("theorem", True, "a string or null", lambda v: v is None or isinstance(v, str)),
    ("mechanisms", True, "a list of objects", _objects),
    ("parameters", True, "an object", lambda v: isinstance(v, dict)),
    ("assumptions", True, "a list of strings", _texts),
    ("neighbours", True, "a string", lambda v: isinstance(v, str)),
    ("reason", True, "a string or null", lambda v: v is None or isinstance(v, str)),
    ("sample", True, "an object or null", lambda v: v is None or isinstance(v, dict)),
    ("randomness", True, "an object or null", lambda v: v is None or isinstance(v, dict)),
    ("accounting", False, "an object or null", lambda v: v is None or isinstance(v, dict)),  # required from version 2
    ("components", True, "a list of objects", _objects),
    ("format_notes", False, "a list of strings or null", _texts),  # absent in version 2 files written before them
    ("unreviewed_schema", False, "an object or null", lambda v: isinstance(v, dict)),  # version 3 only
    ("crowdsafe_version", True, "a string", lambda v: isinstance(v, str)),
    ("seeded", False, "true, false or null", lambda v: isinstance(v, bool)),  # written, derived again when read
    ("fit_for_release", False, "true, false or null", lambda v: isinstance(v, bool)),
    ("unfit_reasons", False, "a list of strings or null", _texts),
)


def check_fields(data: Mapping[str, Any], version: int) -> None:
    """Refuse a certificate's JSON form (``data``, of readable ``version``) whose first field in
    :data:`_FIELDS` order is missing or of the wrong JSON type, naming that field: an
    :class:`InputError` of one line. The values' ranges are checked by :class:`Certificate`."""
    for name, required, expected, fits in _FIELDS:
        if name not in data:
            if required or (name == "accounting" and version >= 2):
                raise InputError(f"certificate is missing the field {name!r}")
            continue
        if not required and data[name] is None:  # an optional field may be null (read as absent)
            continue
        if not fits(data[name]):
            raise InputError(f"certificate field {name!r} must be {expected}, got {shown_value(data[name])}")


def shown_value(value: Any) -> str:
    """A malformed field's value as an error message shows it: its repr, cut to 60 characters."""
    text = repr(value)
    return text if len(text) <= 60 else text[:59] + "…"


def _component(cls: type[Certificate], data: dict[str, Any], index: int) -> Certificate:
    """Component ``index`` of a composed certificate, read by ``cls.from_dict``; an error names it."""
    try:
        return cls.from_dict(data)
    except (InputError, ParameterError) as exc:
        raise type(exc)(f"component {index + 1} of the certificate: {exc}") from None


#: The marker of a column nobody declared (crowdsafe.data.schema.INFERRED_TYPE; privacy/ imports no data code).
_INFERRED_TYPE = "type inferred"
#: The marker of a column whose reading an undeclared ';' file left to its values (crowdsafe.data.schema).
_READ_DECIMAL_COMMA = "reading decimal comma"
#: The marker of a numeric column declared without integer or real (crowdsafe.data.schema.NUMBERS_FROM_DATA).
_NUMBERS_FROM_DATA = 'reading integers or reals by the values (declare type = "integer" or "real")'


#: how a schema file's reader resolves an unreviewed choice (the app says it its own way: crowdsafe.app.pages)
REVIEW_HINT = "(check it is public, then delete the column's from_data line in the schema)"


def unreviewed_reasons(markers: Mapping[str, Sequence[str]]) -> list[str]:
    """Why a release that used the schema choices ``markers`` (column -> what was read from the
    data, unreviewed) is not fit for release: one reason per column a schema draft marked, and one
    for all the columns nobody declared (their types were inferred). Names only columns and the
    schema's markers."""
    inferred = [c for c, read in markers.items() if _INFERRED_TYPE in read]
    decided = [c for c, read in markers.items() if _READ_DECIMAL_COMMA in read]
    numbers = [c for c, read in markers.items() if _NUMBERS_FROM_DATA in read]
    reasons = []
    for column, read in markers.items():
        drafted = [m for m in read if m not in (_INFERRED_TYPE, _READ_DECIMAL_COMMA, _NUMBERS_FROM_DATA)]
        if drafted:
            reasons.append(f"unreviewed schema draft: column '{column}': {' and '.join(drafted)} read from the data, "
                           f"not marked reviewed {REVIEW_HINT}")
    if inferred:
        listed = ", ".join(f"'{c}'" for c in inferred)
        reasons.append(f"schema inferred from the data: no declared type for {listed} (their values chose it, so "
                       "the release's values can depend on a row it does not publish); declare them in a schema "
                       "(crowdsafe schema draft DATA --out schema.toml)")
    if decided:
        listed = ", ".join(f"'{c}'" for c in decided)
        reasons.append(f"decimal separator not declared: {listed} read from a ';'-separated file whose decimal "
                       "separator nobody declared, so whether a value such as 40,5 is one number is read from the "
                       "values (one row can change how every value is read); declare it with --decimal-comma or "
                       "[csv] decimal_comma = true in the schema, or --no-decimal-comma")
    if numbers:
        listed = ", ".join(f"'{c}'" for c in numbers)
        reasons.append(f"numbers read by their values: {listed} declared numeric without integer or real, so one "
                       "row with a fraction turns whole numbers into reals (and changes how the column is shown "
                       "and measured); declare type = \"integer\" or type = \"real\" in the schema")
    return reasons


def _markers(value: Any) -> dict[str, tuple[str, ...]]:
    """``unreviewed_schema`` checked: column name -> a non-empty list of non-empty strings, in the
    order of the column names (as its JSON form, whose keys are sorted, reads back)."""
    if not isinstance(value, Mapping):
        raise ParameterError("unreviewed_schema must map column names to what was read from the data")
    out: dict[str, tuple[str, ...]] = {}
    for column, read in value.items():
        if (not isinstance(column, str) or isinstance(read, str) or not isinstance(read, (list, tuple))
                or not read or not all(isinstance(m, str) and m for m in read)):
            raise ParameterError(f"unreviewed_schema of {column!r} must be a non-empty list of strings")
        out[column] = tuple(read)
    return dict(sorted(out.items()))


def _finite(value: Any) -> Any:
    """Replace non-finite floats by strings so JSON stays standard (a perturbed view's domain may
    hold ±inf or NaN: :func:`crowdsafe.perturb.domain.TupleDomain.from_json` reads them back)."""
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value
