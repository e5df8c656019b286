"""Column names in seven languages (issue 35): identifiers, postal codes, sensitive attributes and
ages by name alone, with the words that must not match (``Ortsname``, ``county_name``, a year of
birth) so that the rules cannot over-match."""

from __future__ import annotations

import pytest

from crowdsafe.data.column_words import fold, is_age, is_code_name, name_tokens, spelling
from crowdsafe.data.identifiers import identifier_by_name
from crowdsafe.data.schema_draft import sensitive_by_name

NAME, BIRTH, NUMBER = "a person's name", "a full date of birth", "a case, record or account number"
# language -> (column name, the start of its reason)
IDENTIFIERS = {
    "de": [("Vorname", NAME), ("Nachname", NAME), ("Geburtsdatum", BIRTH), ("Kundennummer", NUMBER),
           ("Patientennummer", NUMBER), ("Versichertennummer", NUMBER), ("Telefonnummer", "a telephone"),
           ("Handynummer", "a telephone"), ("Telefon", "a telephone"), ("E-Mail", "an email"),
           ("E-Mail-Adresse", "an email"), ("Straße", "a street"), ("Strasse", "a street"),
           ("Kunden-Nr.", NUMBER), ("KundenID", "an identifier"), ("Name des Kunden", NAME),
           ("Mitgliedsnummer", NUMBER), ("Steuer-ID", "a national"), ("Lieferadresse", "a street"),
           # a hospital's (a new user's walk-through, 2026-11-30: these were quasi-identifiers with intervals)
           ("Aufnahmenummer", NUMBER), ("Aufnahme-Nr.", NUMBER), ("Pat.-Nr.", NUMBER), ("Pat-ID", "an identifier"),
           ("Aufenthalts-ID", "an identifier"), ("Behandlungsnummer", NUMBER)],
    "fr": [("nom", NAME), ("prénom", NAME), ("Prenom", NAME), ("date de naissance", BIRTH),
           ("numéro client", NUMBER), ("N° de dossier", NUMBER), ("Nom du patient", NAME),
           ("adresse e-mail", "an email"), ("Téléphone", "a telephone"), ("courriel", "an email"),
           ("numéro de sécurité sociale", "a national"), ("IPP", "an identifier"), ("N° de séjour", NUMBER),
           ("numéro de venue", NUMBER)],
    "es": [("apellido", NAME), ("Apellidos", NAME), ("nombre", NAME), ("fecha de nacimiento", BIRTH),
           ("número de cliente", NUMBER), ("nombre del paciente", NAME), ("correo electrónico", "an email"),
           ("teléfono", "a telephone"), ("DNI", "a national"), ("dirección", "a street"),
           ("telefono_cliente", "a telephone")],
    "it": [("nome", NAME), ("cognome", NAME), ("codice fiscale", "a national"), ("data di nascita", BIRTH),
           ("codice cliente", NUMBER), ("numero paziente", NUMBER), ("indirizzo", "a street"),
           ("cellulare", "a telephone")],
    "nl": [("achternaam", NAME), ("voornaam", NAME), ("geboortedatum", BIRTH), ("klantnummer", NUMBER),
           ("klantnaam", NAME), ("BSN", "a national"), ("e-mailadres", "an email"),
           ("telefoonnummer", "a telephone"), ("straat", "a street")],
    "pt": [("nome", NAME), ("sobrenome", NAME), ("data de nascimento", BIRTH), ("CPF", "a national"),
           ("número do cliente", NUMBER), ("nome do paciente", NAME), ("endereço", "a street"),
           ("telefone", "a telephone")],
    "en": [("date_of_birth", BIRTH), ("dob", BIRTH), ("birth_date", BIRTH), ("customerid", "an identifier"),
           ("patient_email", "an email"), ("hadm_id", "an identifier"), ("stay_id", "an identifier"),
           ("icustay_id", "an identifier")],
}
NOT_IDENTIFIERS = [
    "county_name", "drug_name", "state_id", "Ortsname", "Firmenname", "Nummer der Filiale", "Filialnummer",
    "Geburtsjahr", "Geburtsort", "birth_year", "year_of_birth", "année de naissance", "lieu de naissance",
    "año de nacimiento", "anno di nascita", "geboortejaar", "ano de nascimento", "nom de la ville",
    "nombre de clients", "número de personas", "nome_comune", "id_produit", "codigo_postal", "PLZ", "Ort",
    "Alter", "Beruf", "Einkommen", "Diagnose", "Geschlecht", "first_visit", "last_visit", "visit_code",
    "no_case", "mobile_user", "valid", "paid", "Rechnungsbetrag", "Stadt",
    "Aufnahmedatum", "Aufnahmeart", "Behandlungsdauer", "Aufenthaltsdauer", "durée de séjour", "motif de venue",
    "length_of_stay", "stay_length",
]


@pytest.mark.parametrize(("column", "reason"), [pair for pairs in IDENTIFIERS.values() for pair in pairs])
def test_identifier_names_in_each_language(column, reason):
    assert (identifier_by_name(column) or "").startswith(reason), column


@pytest.mark.parametrize("column", NOT_IDENTIFIERS)
def test_names_of_things_and_years_are_not_identifiers(column):
    assert identifier_by_name(column) is None


def test_every_language_has_names():
    assert set(IDENTIFIERS) >= {"de", "fr", "es", "it", "nl", "pt"}
    assert all(len(pairs) >= 5 for pairs in IDENTIFIERS.values())


def test_a_birth_date_reason_says_it_identifies_and_suggests_the_year():
    reason = identifier_by_name("Geburtsdatum")
    assert reason == identifier_by_name("date_of_birth") == identifier_by_name("data de nascimento")
    assert "identifies a person" in reason and "year of birth instead" in reason


def test_accents_umlauts_and_case_are_folded():
    assert fold("Prénom Größe Nº") == "Prenom Grosse No"
    assert name_tokens("PRÉNOM") == name_tokens("prenom") == ["prenom"]
    assert name_tokens("Straße") == ["strasse"] and name_tokens("KundenNummer") == ["kunden", "nummer"]
    assert spelling("schueler") == spelling(name_tokens("Schüler")[0]) == "schuler"
    assert identifier_by_name("Schülernummer") == identifier_by_name("Schuelernummer") == NUMBER
    assert identifier_by_name("NACHNAME") == identifier_by_name("nachname") == NAME


@pytest.mark.parametrize("column", ["PLZ", "Postleitzahl", "plz_wohnort", "code postal", "CP", "CAP",
                                    "código postal", "codigo_postal", "postcode", "postal code", "zip",
                                    "zipcode", "ZIP_CODE", "CEP", "codice postale", "Codice di avviamento postale"])
def test_postal_code_names(column):
    assert is_code_name(column)


@pytest.mark.parametrize("column", ["market_cap", "cp_type", "capital_gain", "Ort", "Kundennummer", "copy",
                                    "caption", "cepheid", "Ortsteil"])
def test_not_postal_code_names(column):
    assert not is_code_name(column)


@pytest.mark.parametrize(("column", "word"), [
    ("Diagnose", "diagnose"), ("Diagnosis", "diagnosis"), ("diagnostic", "diagnostic"),
    ("diagnóstico", "diagnostico"), ("diagnosi", "diagnosi"), ("ICD", "icd"), ("ICD-10", "icd"),
    ("Befund", "befund"), ("Krankheit", "krankheit"), ("maladie", "maladie"), ("enfermedad", "enfermedad"),
    ("malattia", "malattia"), ("ziekte", "ziekte"), ("doença", "doenca"), ("Erkrankung", "erkrankung"),
    ("Medikament", "medikament"), ("medication", "medication"), ("Hauptdiagnose", "diagnose"),
    ("Jahreseinkommen", "einkommen"), ("Einkommen", "einkommen"), ("revenu", "revenu"),
])
def test_sensitive_names_in_each_language(column, word):
    assert sensitive_by_name(column) == word


@pytest.mark.parametrize("column", ["Ort", "PLZ", "Beruf", "Geschlecht", "Alter", "Diagonale", "Mediathek",
                                    "Kundennummer", "age", "Behandlungsraum", "Therapiezentrum", "Lohnsteuerklasse"])
def test_not_sensitive_names(column):
    assert sensitive_by_name(column) is None


def test_ages_in_several_languages():
    assert all(is_age(n) for n in ("Alter", "âge", "edad", "leeftijd", "idade", "age_at_arrest"))
    assert not any(is_age(n) for n in ("Alter_Monate", "age_months", "eta", "Altersgruppe", "page"))
