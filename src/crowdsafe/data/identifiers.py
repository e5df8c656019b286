"""Direct identifiers: columns that name a person on their own (id, name, email, phone, ...).

A direct identifier is dropped before any release (role ``identifier``); no anonymization can
make a name or an email address safe to publish. Two kinds of evidence:

- :func:`identifier_by_name`: the column's *name* (public: part of the schema), in English,
  German, French, Spanish, Italian, Dutch and Portuguese (the words: :mod:`crowdsafe.data.column_words`),
  and in Japanese, Chinese, Korean, Arabic and Russian (:mod:`crowdsafe.data.script_words`).
  The command line warns with this alone, so a warning never depends on a row of the data.
- :func:`identifier_by_values`: the column's *values* (near-unique strings, email / phone /
  national-id patterns). This reads the data: the result is a custodian-only suggestion (the
  schema draft marks it as taken from the data), never printed beside a release.

Both return the reason in words, or None. With a schema inferred from the data, the commands
warn about the columns they publish or read whose name looks like a direct identifier
(:func:`name_warnings`, one line per column; :class:`IdentifierWarning` where a result has no
notes), and a command that would read a *declared* identifier is refused
(:func:`refuse_identifier_columns`). The rules are deliberately conservative on names
(``county_name``, ``state_id`` or ``Ortsname`` are attributes, not people) and leave the decision to the
custodian who reviews the draft.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from crowdsafe.data.column_words import (
    CODE_FIRST,
    IDENTIFIER_NAMES,
    KIND_WORDS,
    PERSON_WORDS,
    STOPWORDS,
    name_tokens,
    spelling,
    words,
)
from crowdsafe.data.script_words import script_identifier
from crowdsafe.errors import ParameterError

if TYPE_CHECKING:
    from crowdsafe.data.schema import Schema

#: The reason given for each kind of identifier name (:data:`crowdsafe.data.column_words.IDENTIFIER_NAMES`).
REASONS = {
    "id": "an identifier column",
    "name": "a person's name",
    "email": "an email address",
    "phone": "a telephone number",
    "national": "a national or official identity number",
    "address": "a street address",
    "case": "a case, record or account number",
    "online": "an online identifier",
    "birth": "a full date of birth (it identifies a person: with sex and ZIP it singles out most people; HIPAA "
             "Safe Harbor lists it); publish the year of birth instead, or make it a quasi-identifier with a "
             "date hierarchy",
}
_EXACT = {spelling(n): REASONS[kind] for kind, table in IDENTIFIER_NAMES.items() for n in words(table)}
_PERSON = words(PERSON_WORDS)
_PERSON_ABROAD = words({lang: w for lang, w in PERSON_WORDS.items() if lang != "en"})  # not English
# the kind word of "<who> <kind>" (English order: patient_id, Kunden-Nr) and its reason
_KINDS = {spelling(w): REASONS["case" if kind == "number" else kind]
          for kind, table in KIND_WORDS.items() for w in words(table)}
_KINDS |= {"email": REASONS["email"], "phone": REASONS["phone"]}
# "<kind> <who>" (numero_cliente, nom du client, Name des Kunden) takes these too
_KINDS_FIRST = _KINDS | dict.fromkeys(CODE_FIRST, REASONS["case"])
# whole names that also name things, never taken as the head of "<identifier> <who>" (first_visit)
_AMBIGUOUS = frozenset({"first", "last", "middle", "key", "handle", "alias", "login", "url", "website", "cell",
                        "mobile", "names", "docket", "street", "ip", "fax", "acct", "mail"})
# the last part of a German or Dutch compound: "<who><part>" (Kundennummer, klantnaam, Patientenmail)
_PARTS = ("nummer", "kennung", "name", "naam", "email", "mail", "telefon", "telefoon", "nr", "no", "id")
_LINKS = ("", "s", "n", "en", "e")  # Kunde-n-nummer, Mitglied-s-nummer
# the last part of a compound that is an identifier whatever comes before (Lieferadresse)
_ENDINGS = {"telefonnummer": REASONS["phone"], "telefoonnummer": REASONS["phone"],
            "adresse": REASONS["address"], "anschrift": REASONS["address"], "adres": REASONS["address"]}

# "<kind> <number>" and "<number> <kind>": a telephone or identity word with a word for number
_NUMBER = words(KIND_WORDS["number"])
_NUMBERED = frozenset({REASONS["phone"], REASONS["national"]})
_COUNTED = _AMBIGUOUS - {"mobile", "fax"}  # 'Cell No.' may count cells; 'Mobile No.' is a phone

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
PHONE = re.compile(r"^\+?[\d\s().-]{7,20}$")  # then 7 to 15 digits (E.164)
NATIONAL_ID = re.compile(r"^\d{3}-\d{2}-\d{4}$")  # US SSN as usually written
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")  # 2021-03-04 (and a time after it) is a date, not a phone
PATTERN_SHARE = 0.8  # share of the non-missing values that must match a pattern
UNIQUE_SHARE = 0.9  # distinct / non-missing values above which strings are near-unique
MIN_VALUES = 20  # fewer non-missing values than this: too few to call anything near-unique


def identifier_by_name(name: str) -> str | None:
    """Why the column called ``name`` looks like a direct identifier, or None.

    Depends on the name alone (public), in English, German, French, Spanish, Italian, Dutch and
    Portuguese (:mod:`crowdsafe.data.column_words`; accents, umlauts and case do not matter), and
    in Japanese, Chinese, Korean, Arabic and Russian (:mod:`crowdsafe.data.script_words`: ``氏名``,
    ``生年月日``, ``전화번호``, ``تاريخ الميلاد``, ``Фамилия``).
    Matches: exact names (``email``, ``first_name``, ``SSN``, ``DOB``, ``Vorname``, ``prénom``,
    ``date de naissance``, ``codice fiscale``), "<person or record> <id / name / number>"
    (``patient_id``, ``DefendantName``, ``case no``, ``Kunden-Nr``), the same the other way round
    (``numéro client``, ``nombre del paciente``, ``Name des Kunden``), one German or Dutch word
    made of the two (``Kundennummer``, ``Patientennummer``, ``klantnaam``), an identifier of a
    person (``patient_email``, ``telefono_cliente``) and compounds ending in an address
    (``Lieferadresse``). An attribute named after a thing (``county_name``, ``state_id``,
    ``drug_name``, ``Ortsname``, ``Filialnummer``) does not; nor does a year of birth."""
    in_script = script_identifier(name)  # Japanese, Chinese, Korean, Arabic, Russian (module script_words)
    if in_script is not None:
        return REASONS[in_script]
    tokens = [spelling(t) for t in name_tokens(name)]
    kept = [t for t in tokens if t not in STOPWORDS]
    for candidate in dict.fromkeys((tuple(tokens), tuple(kept), tuple(_compounds_split(kept)))):
        reason = _by_tokens(list(candidate)) if candidate else None
        if reason is not None:
            return reason
    return None


def _by_tokens(tokens: list[str]) -> str | None:
    """:func:`identifier_by_name`'s rules on the words of a name."""
    for joined in ("_".join(tokens), "".join(tokens)):
        if joined in _EXACT:
            return _EXACT[joined]
    if len(tokens) == 1:
        stem = next((tokens[0][: -len(n)] for n in ("nummer", "nr") if tokens[0].endswith(n)), "")
        if stem not in _COUNTED and _EXACT.get(stem) in _NUMBERED:
            return _EXACT[stem]  # Handynr, Telefonnr
        return next((reason for ending, reason in _ENDINGS.items()
                     if tokens[0].endswith(ending) and len(tokens[0]) > len(ending) + 1), None)
    numbered = [t for t in tokens if t not in _NUMBER]
    if len(numbered) == 1 and numbered[0] not in _COUNTED and _EXACT.get(numbered[0]) in _NUMBERED:
        return _EXACT[numbered[0]]  # Telefon-Nr., Phone No., N° de téléphone, SSN no
    if tokens[-1] in _KINDS and set(tokens[:-1]) <= _PERSON:
        return _KINDS[tokens[-1]]  # patient_id, Kunden Nr
    if tokens[0] in _KINDS_FIRST and set(tokens[1:]) <= _PERSON_ABROAD:
        return _KINDS_FIRST[tokens[0]]  # numero_cliente, Name des Kunden
    for cut in range(1, len(tokens)):
        head, tail = tokens[:cut], tokens[cut:]
        if set(head) <= _PERSON and "_".join(tail) in _EXACT:
            return _EXACT["_".join(tail)]  # patient_email, client_phone_number
        first = "_".join(head)
        if first in _EXACT and first not in _AMBIGUOUS and set(tail) <= _PERSON_ABROAD:
            return _EXACT[first]  # telefono_cliente, date_naissance_patient
    return None


def _compounds_split(tokens: list[str]) -> list[str]:
    """Each German or Dutch compound "<who><part>" cut in two (``kundennummer`` -> ``kunden
    nummer``); other words as they are."""
    out = []
    for token in tokens:
        out.extend(_compound(token) or [token])
    return out


def _compound(token: str) -> list[str] | None:
    for part in _PARTS:
        if token.endswith(part) and len(token) > len(part) + 1:
            stem = token[: -len(part)]
            for link in _LINKS:
                if stem.endswith(link) and stem[: len(stem) - len(link)] in _PERSON:
                    return [stem[: len(stem) - len(link)], part]
    return None


@dataclass(frozen=True)
class ValueEvidence:
    """What a column's values suggest (custodian-only: computed from the data)."""

    reason: str
    share: float  # the share of non-missing values behind the reason


def identifier_by_values(column: pl.Series) -> ValueEvidence | None:
    """Why ``column``'s values look like a direct identifier, or None.

    Reads the data: the answer is for the custodian reviewing a schema draft, never a public
    output. Text columns only (a near-unique number is as likely a measurement, e.g. a weight):
    email, telephone or SSN-like patterns in at least :data:`PATTERN_SHARE` of the values, or
    near-unique text (at least :data:`UNIQUE_SHARE` distinct) among at least :data:`MIN_VALUES`
    values."""
    if column.dtype not in (pl.String, pl.Categorical, pl.Enum):
        return None
    text = column.cast(pl.String).drop_nulls().str.strip_chars()
    text = text.filter(text != "")
    n = len(text)
    if n == 0:
        return None
    for pattern, reason in ((EMAIL, "email addresses"), (NATIONAL_ID, "SSN-like numbers")):
        share = _share(text.str.contains(pattern.pattern))
        if share >= PATTERN_SHARE:
            return ValueEvidence(f"values look like {reason} ({share:.0%})", share)
    digits = text.str.replace_all(r"\D", "").str.len_chars()
    phone = text.str.contains(PHONE.pattern) & digits.is_between(7, 15) & ~text.str.contains(ISO_DATE.pattern)
    share = _share(phone)
    if share >= PATTERN_SHARE and _share(digits != text.str.len_chars()) >= 0.5:
        # mostly formatted (+, spaces, dashes, brackets): a bare 7-digit code is not a phone
        return ValueEvidence(f"values look like telephone numbers ({share:.0%})", share)
    if n >= MIN_VALUES:
        unique = text.n_unique() / n
        if unique >= UNIQUE_SHARE:
            return ValueEvidence(f"near-unique text ({unique:.0%} of the values are distinct)", unique)
    return None


def _share(mask: pl.Series) -> float:
    """The share of true values in a boolean series."""
    return float(mask.to_numpy().mean()) if len(mask) else 0.0


# -- the warning for a schema inferred from the data ---------------------------------------------

#: Words every name warning contains (how the command line tells it from other notes).
NAME_WARNING_MARK = "(a direct identifier)"


class IdentifierWarning(UserWarning):
    """A column that will be published or used looks, by its name alone, like a direct identifier
    and the schema was inferred (nobody declared its role)."""


def name_warning(column: str, reason: str) -> str:
    """The one-line warning for ``column``, whose name looks like ``reason``. From the name alone:
    the same on every table with that column, whatever its rows."""
    reason = reason.split(" (")[0].split(";")[0]  # the kind alone: the draft carries the longer advice
    return (f"column '{column}' looks like {reason} {NAME_WARNING_MARK}; declare it role = \"identifier\" in a "
            f"schema (crowdsafe schema draft DATA --out schema.toml writes one) or drop it")


def name_warnings(schema: Schema, columns: Sequence[str]) -> list[str]:
    """One warning per column of ``columns`` (those a command publishes or reads) whose name looks
    like a direct identifier, when nobody declared it (:meth:`Schema.was_inferred`: the schema was
    inferred from the data, or a partial schema left the column out). A declared attribute is the
    custodian's decision and gets none. Depends on the schema's names and source only, never on a
    row, so it is public and identical on neighbouring tables. Such a column is still used as the roles say
    (an inferred schema makes it a quasi-identifier): the warning asks the custodian to decide."""
    found = []
    for column in dict.fromkeys(columns):
        if not schema.was_inferred(column):
            continue
        reason = identifier_by_name(column)
        if reason is not None and column not in schema.identifiers:
            found.append(name_warning(column, reason))
    return found


def is_name_warning(note: str) -> bool:
    """Whether ``note`` is one of :func:`name_warnings`' lines."""
    return note.startswith("column '") and NAME_WARNING_MARK in note


def refuse_identifier_columns(schema: Schema, columns: Sequence[str], what: str) -> None:
    """Raise a :class:`~crowdsafe.errors.ParameterError` when ``what`` (e.g. "the query") reads a
    column the schema declares a direct identifier: nothing about it is ever published, not even a
    DP answer (from the schema alone, before any row is read)."""
    declared = [c for c in columns if c in set(schema.identifiers)]
    if declared:
        raise ParameterError(
            f"{what} reads '{declared[0]}', which the schema declares a direct identifier (role = \"identifier\"): "
            "nothing about an identifier is published; remove it, or change its role in the schema"
        )
