"""A telephone (or identity) word with a word for "number" is a direct identifier (intlsweep #5):
``Telefon-Nr.``, ``Handy-Nr.``, ``N° de téléphone``, ``Phone No.``; common names holding "No." or
"Nr." are not."""

from __future__ import annotations

import pytest

from crowdsafe.data.identifiers import REASONS, identifier_by_name

PHONE = REASONS["phone"]


@pytest.mark.parametrize("name", [
    "Telefon-Nr.", "Handy-Nr.", "Telefon Nr", "N° de téléphone", "Phone No.", "Tel.-Nr.", "Telefon", "tel no",
    "Mobil-Nr.", "Mobile No", "Fax-Nr.", "Handynr", "Telefonnr", "Telefonnummer", "phone number",
    "numéro de téléphone", "No. de teléfono", "número de telefone", "Rufnummer", "Telefoon nr",
])
def test_phone_names_with_a_number_word_are_telephone_numbers(name):
    assert identifier_by_name(name) == PHONE


def test_an_identity_word_with_a_number_word_is_an_identity_number():
    assert identifier_by_name("SSN No.") == REASONS["national"]


@pytest.mark.parametrize("name", [
    "house number", "Haus-Nr.", "Zimmer-Nr.", "Filial-Nr.", "Artikel-Nr.", "item no", "N° de rue",
    "numéro de département", "Lauf-Nr.", "Nr.", "No.", "number", "cell no", "Cell No.", "phone calls",
    "Anzahl Telefonate", "Kapitel Nr", "Versuch Nr", "Wellenlänge", "age", "Nummer", "Postleitzahl",
])
def test_common_names_with_a_number_word_are_not(name):
    assert identifier_by_name(name) is None
