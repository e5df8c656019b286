"""Direct identifiers by column name (public) and by values (custodian-only)."""

from __future__ import annotations

import polars as pl
import pytest

from crowdsafe.data.identifiers import identifier_by_name, identifier_by_values, name_tokens

IDENTIFIERS = ["id", "ID", "PatientID", "patient_id", "person id", "Case Number", "case_no", "docket",
               "name", "Name", "first", "last", "FirstName", "last_name", "Surname", "full name",
               "defendant_name", "email", "E-mail", "client_email", "phone", "PhoneNumber", "mobile",
               "SSN", "social_security_number", "NationalID", "passport_number", "address",
               "street_address", "DOB", "date_of_birth", "BirthDate", "record_id", "MRN", "uuid",
               "booking_number", "ip_address", "username"]
ATTRIBUTES = ["age", "sex", "zip", "zipcode", "county_name", "drug_name", "state_id", "race", "income",
              "charge", "arrest_date", "diagnosis", "paid", "valid", "width", "hospital", "occupation",
              "education_num", "native-country", "fnlwgt", "offense_code", "disposition", "city"]


@pytest.mark.parametrize("column", IDENTIFIERS)
def test_identifier_names_are_recognised(column):
    assert identifier_by_name(column)


@pytest.mark.parametrize("column", ATTRIBUTES)
def test_attribute_names_are_not(column):
    assert identifier_by_name(column) is None


def test_tokens_split_camel_case_and_separators():
    assert name_tokens("PatientID") == ["patient", "id"]
    assert name_tokens("e-mail address") == ["e", "mail", "address"]
    assert name_tokens("HTTPStatus") == ["http", "status"]


def test_the_reason_says_what_kind_of_identifier():
    assert "email" in identifier_by_name("Email")
    assert "name" in identifier_by_name("first_name")
    assert "birth" in identifier_by_name("DOB")


def test_values_emails_phones_and_ssns():
    emails = pl.Series("contact", [f"user{i}@example.org" for i in range(30)] + ["n/a"] * 3)
    assert "email" in identifier_by_values(emails).reason
    phones = pl.Series("c", [f"+1 (607) 555-{i:04d}" for i in range(30)])
    assert "telephone" in identifier_by_values(phones).reason
    ssn = pl.Series("c", [f"{100 + i}-45-{6000 + i}" for i in range(25)])
    assert "SSN" in identifier_by_values(ssn).reason


def test_values_near_unique_text_but_not_repeated_categories_or_numbers():
    names = pl.Series("who", [f"Person {i}" for i in range(100)])
    assert "near-unique" in identifier_by_values(names).reason
    categories = pl.Series("race", ["White", "Black", "Asian", "Other"] * 25)
    assert identifier_by_values(categories) is None
    weights = pl.Series("fnlwgt", list(range(1000, 1100)))  # near-unique, but a number
    assert identifier_by_values(weights) is None
    codes = pl.Series("zip", [f"{13000 + i % 7}" for i in range(100)])  # 5-digit codes repeat
    assert identifier_by_values(codes) is None
    few = pl.Series("x", ["a", "b", "c"])  # too few values to say anything
    assert identifier_by_values(few) is None
