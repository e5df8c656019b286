"""Direct identifiers: columns that name a person on their own (id, name, email, phone, ...).

A direct identifier is dropped before any release (role ``identifier``); no anonymization can
make a name or an email address safe to publish. Two kinds of evidence:

- :func:`identifier_by_name`: the column's *name* (public: part of the schema). The command line
  warns with this alone, so a warning never depends on a row of the data.
- :func:`identifier_by_values`: the column's *values* (near-unique strings, email / phone /
  national-id patterns). This reads the data: the result is a custodian-only suggestion (the
  schema draft marks it as taken from the data), never printed beside a release.

Both return the reason in words, or None. With a schema inferred from the data, the commands
warn about the columns they publish or read whose name looks like a direct identifier
(:func:`name_warnings`, one line per column; :class:`IdentifierWarning` where a result has no
notes), and a command that would read a *declared* identifier is refused
(:func:`refuse_identifier_columns`). The rules are deliberately conservative on names
(``county_name`` or ``state_id`` are attributes, not people) and leave the decision to the
custodian who reviews the draft.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import polars as pl

from crowdsafe.errors import ParameterError

if TYPE_CHECKING:
    from crowdsafe.data.schema import Schema

# a name is cut into lower-case tokens: "PatientID" -> patient id, "e-mail" -> e mail
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^a-z0-9]+")

# who an identifier may belong to: "<who> id", "<who> name", "<who> number"
_PERSON = frozenset({
    "person", "patient", "subject", "participant", "respondent", "client", "customer", "user",
    "member", "employee", "staff", "student", "pupil", "citizen", "resident", "defendant",
    "offender", "inmate", "prisoner", "suspect", "victim", "claimant", "applicant", "beneficiary",
    "policyholder", "account", "household", "individual", "record", "case", "booking", "docket",
    "file", "visit", "encounter", "admission", "row", "unique", "internal", "external",
})

# whole names (after tokenizing and joining with "_") that are identifiers, with the reason
_EXACT: dict[str, str] = {}
for _names, _reason in (
    (("id", "uid", "uuid", "guid", "pid", "key", "identifier", "row_id", "record_id", "rowid"),
     "an identifier column"),
    (("name", "names", "full_name", "fullname", "first", "first_name", "firstname", "fname",
      "given_name", "givenname", "forename", "last", "last_name", "lastname", "lname",
      "surname", "family_name", "familyname", "middle", "middle_name", "middlename",
      "maiden_name", "nickname", "alias"),
     "a person's name"),
    (("email", "e_mail", "mail", "email_address", "emailaddress"), "an email address"),
    (("phone", "telephone", "tel", "mobile", "cell", "cellphone", "fax", "phone_number",
      "phonenumber", "telephone_number", "mobile_number", "contact_number"),
     "a telephone number"),
    (("ssn", "social_security", "social_security_number", "sin", "nin", "nino", "national_id",
      "national_insurance", "national_insurance_number", "nhs_number", "passport",
      "passport_number", "tax_id", "tin", "itin", "driver_license", "drivers_license",
      "driving_licence", "license_number", "licence_number", "medicare_number", "mrn",
      "medical_record_number", "health_card"),
     "a national or official identity number"),
    (("address", "street", "street_address", "home_address", "address_line", "address1",
      "address2", "addr"),
     "a street address"),
    (("case_number", "case_no", "case_num", "casenumber", "docket_number", "docket",
      "record_number", "account_number", "acct", "booking_number", "inmate_number",
      "file_number", "claim_number", "policy_number", "ticket_number", "arrest_number",
      "citation_number"),
     "a case, record or account number"),
    (("ip", "ip_address", "mac_address", "device_id", "username", "user_name", "login", "url",
      "website", "handle"),
     "an online identifier"),
    (("dob", "date_of_birth", "birth_date", "birthdate", "birthday", "birth_day"),
     "a full date of birth (with sex and ZIP it singles out most people; HIPAA Safe Harbor "
     "lists it); keep only its year, or make it a quasi-identifier with a date hierarchy"),
):
    for _name in _names:
        _EXACT[_name] = _reason

# the last token of "<who> <kind>" and the reason
_KINDS = {"id": "an identifier column", "identifier": "an identifier column", "uuid": "an identifier column",
          "name": "a person's name", "number": "a case, record or account number",
          "no": "a case, record or account number", "num": "a case, record or account number",
          "nr": "a case, record or account number", "email": "an email address",
          "phone": "a telephone number"}

EMAIL = re.compile(r"^[^@\s]+@[^@\s]+\.[A-Za-z]{2,}$")
PHONE = re.compile(r"^\+?[\d\s().-]{7,20}$")  # then 7 to 15 digits (E.164)
NATIONAL_ID = re.compile(r"^\d{3}-\d{2}-\d{4}$")  # US SSN as usually written
ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")  # 2021-03-04 (and a time after it) is a date, not a phone
PATTERN_SHARE = 0.8  # share of the non-missing values that must match a pattern
UNIQUE_SHARE = 0.9  # distinct / non-missing values above which strings are near-unique
MIN_VALUES = 20  # fewer non-missing values than this: too few to call anything near-unique


def name_tokens(name: str) -> list[str]:
    """``name`` cut into lower-case words: ``"PatientID"`` -> ``["patient", "id"]``."""
    return [t for t in _SEPARATORS.split(_CAMEL.sub(" ", name).lower()) if t]


def identifier_by_name(name: str) -> str | None:
    """Why the column called ``name`` looks like a direct identifier, or None.

    Depends on the name alone (public). Exact names (``email``, ``first_name``, ``SSN``, ``DOB``)
    and "<person or record> <id / name / number>" (``patient_id``, ``DefendantName``,
    ``case no``) match; an attribute named after a thing (``county_name``, ``state_id``,
    ``drug_name``) does not."""
    tokens = name_tokens(name)
    if not tokens:
        return None
    joined = "_".join(tokens)
    if joined in _EXACT:
        return _EXACT[joined]
    if "".join(tokens) in _EXACT:
        return _EXACT["".join(tokens)]
    if len(tokens) >= 2 and tokens[-1] in _KINDS and set(tokens[:-1]) <= _PERSON:
        return _KINDS[tokens[-1]]
    if len(tokens) >= 2 and tokens[0] in _PERSON and "_".join(tokens[1:]) in _EXACT:
        return _EXACT["_".join(tokens[1:])]  # patient_email, client_phone_number
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
