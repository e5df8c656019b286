"""The words of column names, in seven languages: what a name alone says about its column.

Public: every rule here reads a column's *name*, never a value. Used by
:mod:`crowdsafe.data.identifiers` (direct identifiers), :mod:`crowdsafe.data.hierarchy_draft`
(ages, postal codes), :mod:`crowdsafe.data.schema_draft` (likely sensitive attributes) and
:mod:`crowdsafe.data.io` (postal codes read as text).

A name is cut into words (:func:`name_tokens`): accents and umlauts folded (``Prénom`` ->
``prenom``, ``Straße`` -> ``strasse``, ``Nº`` -> ``no``), camel case split, lower case. Words
are compared in their :func:`spelling` (``ae``, ``oe``, ``ue`` read as ``a``, ``o``, ``u``), so
``Schüler`` and ``Schueler`` are the same word. The tables list each word once per language,
folded, multi-word names joined with ``_`` and written without the small words of
:data:`STOPWORDS` (``date de naissance`` is ``date_naissance``). Languages: English (en), German
(de), French (fr), Spanish (es), Italian (it), Dutch (nl), Portuguese (pt).
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["AGE_WORDS", "CODE_FIRST", "CODE_NAMES", "CODE_WORDS", "IDENTIFIER_NAMES", "KIND_WORDS", "PERSON_WORDS",
           "SENSITIVE_WORDS", "STOPWORDS", "fold", "is_age", "is_code_name", "name_tokens", "spelling",
           "words"]

_LETTERS = str.maketrans({"ß": "ss", "ẞ": "SS", "ø": "o", "Ø": "O", "æ": "ae", "Æ": "AE", "œ": "oe",
                          "Œ": "OE", "ł": "l", "Ł": "L", "đ": "d", "Đ": "D", "ı": "i", "°": "o"})  # N° as Nº
# a name is cut into lower-case tokens: "PatientID" -> patient id, "e-mail" -> e mail
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_SEPARATORS = re.compile(r"[^a-z0-9]+")
_DIGRAPHS = re.compile(r"ae|oe|ue")


def fold(text: str) -> str:
    """``text`` without accents: ``é`` -> ``e``, ``ü`` -> ``u``, ``ß`` -> ``ss``, ``º`` -> ``o``."""
    decomposed = unicodedata.normalize("NFKD", text.translate(_LETTERS))
    return "".join(c for c in decomposed if not unicodedata.combining(c))


def name_tokens(name: str) -> list[str]:
    """``name`` cut into lower-case words, accents folded: ``"PatientID"`` -> ``["patient", "id"]``,
    ``"Prénom"`` -> ``["prenom"]``."""
    return [t for t in _SEPARATORS.split(_CAMEL.sub(" ", fold(name)).lower()) if t]


def spelling(word: str) -> str:
    """``word`` as the tables compare it: ``ae``, ``oe``, ``ue`` read as ``a``, ``o``, ``u`` (the
    German spelling of an umlaut without one: ``schueler`` and ``schüler`` are one word)."""
    return _DIGRAPHS.sub(lambda m: m.group(0)[0], word)


def words(table: dict[str, tuple[str, ...]]) -> frozenset[str]:
    """Every word of a per-language ``table``, in its :func:`spelling`."""
    return frozenset(spelling(w) for listed in table.values() for w in listed)


#: Small words dropped when a name is matched a second time (``numéro de client``,
#: ``Name des Kunden``, ``data di nascita``). Not ``e`` or ``y``: ``e_mail`` must stay whole.
STOPWORDS = frozenset({"of", "the", "de", "du", "des", "d", "l", "la", "le", "les", "del", "do", "da", "dos",
                       "das", "di", "della", "dello", "dei", "degli", "delle", "dell", "van", "der", "den",
                       "het", "von", "vom"})

#: Direct identifiers by their whole name, per kind (the reason's key) and language.
IDENTIFIER_NAMES: dict[str, dict[str, tuple[str, ...]]] = {
    "id": {
        "en": ("id", "uid", "uuid", "guid", "pid", "key", "identifier", "row_id", "record_id", "rowid"),
        "de": ("kennung", "schlussel", "kennnummer", "identifikationsnummer"),
        "fr": ("identifiant", "ipp"), "es": ("identificador",), "it": ("identificativo",),
        "nl": ("identificatie", "identificatienummer"), "pt": ("identificador",)},
    "name": {
        "en": ("name", "names", "full_name", "fullname", "first", "first_name", "firstname", "fname",
               "given_name", "givenname", "forename", "last", "last_name", "lastname", "lname", "surname",
               "family_name", "familyname", "middle", "middle_name", "middlename", "maiden_name", "nickname",
               "alias"),
        "de": ("vorname", "vornamen", "nachname", "familienname", "zuname", "geburtsname", "rufname",
               "madchenname", "vollstandiger_name", "vor_und_nachname", "name_vorname", "vorname_name"),
        "fr": ("nom", "prenom", "prenoms", "nom_famille", "nom_complet", "nom_naissance", "nom_usage",
               "nom_prenom", "prenom_nom", "nom_et_prenom", "nom_jeune_fille"),
        "es": ("nombre", "nombres", "apellido", "apellidos", "primer_apellido", "segundo_apellido",
               "apellido_paterno", "apellido_materno", "nombre_completo", "nombre_y_apellidos",
               "nombre_apellidos"),
        "it": ("nome", "cognome", "nome_completo", "nome_e_cognome", "nome_cognome", "cognome_nome",
               "cognome_e_nome"),
        "nl": ("naam", "voornaam", "voornamen", "achternaam", "familienaam", "roepnaam", "tussenvoegsel",
               "volledige_naam", "meisjesnaam", "geboortenaam"),
        "pt": ("nome", "sobrenome", "apelido", "nome_completo", "primeiro_nome", "nome_proprio",
               "ultimo_nome")},
    "email": {
        "en": ("email", "e_mail", "mail", "email_address", "emailaddress"),
        "de": ("e_mail_adresse", "email_adresse", "emailadresse", "mailadresse", "mail_adresse"),
        "fr": ("courriel", "adresse_mail", "adresse_email", "adresse_e_mail", "adresse_courriel",
               "adresse_electronique", "mel"),
        "es": ("correo", "correo_electronico", "direccion_correo", "direccion_email"),
        "it": ("posta_elettronica", "indirizzo_email", "indirizzo_mail", "indirizzo_e_mail", "pec"),
        "nl": ("e_mailadres", "emailadres", "mailadres"),
        "pt": ("correio_eletronico", "endereco_email", "endereco_e_mail", "endereco_eletronico")},
    "phone": {
        "en": ("phone", "telephone", "tel", "mobile", "cell", "cellphone", "fax", "phone_number", "phonenumber",
               "telephone_number", "mobile_number", "contact_number"),
        "de": ("telefon", "telefonnummer", "tel_nr", "telnr", "handy", "handynummer", "mobil", "mobilnummer",
               "mobiltelefon", "mobilfunknummer", "rufnummer", "festnetz", "festnetznummer", "faxnummer",
               "telefax"),
        "fr": ("portable", "numero_telephone", "numero_portable", "numero_mobile", "tel_portable", "tel_fixe"),
        "es": ("telefono", "movil", "celular", "numero_telefono", "telefono_movil", "tlf", "tfno"),
        "it": ("telefono", "cellulare", "numero_telefono", "numero_cellulare", "recapito_telefonico"),
        "nl": ("telefoon", "telefoonnummer", "mobiel", "mobiel_nummer", "mobiele_nummer", "mobielnummer", "gsm",
               "gsm_nummer"),
        "pt": ("telefone", "celular", "telemovel", "numero_telefone", "numero_celular", "fone")},
    "national": {
        "en": ("ssn", "social_security", "social_security_number", "sin", "nin", "nino", "national_id",
               "national_insurance", "national_insurance_number", "nhs_number", "passport", "passport_number",
               "tax_id", "tin", "itin", "driver_license", "drivers_license", "driving_licence", "license_number",
               "licence_number", "medicare_number", "mrn", "medical_record_number", "health_card", "iban"),
        "de": ("steuer_id", "steuerid", "steueridentifikationsnummer", "steuernummer", "sozialversicherungsnummer",
               "sv_nummer", "svnr", "rentenversicherungsnummer", "krankenversichertennummer", "personalausweis",
               "personalausweisnummer", "ausweisnummer", "reisepass", "reisepassnummer", "passnummer",
               "fuhrerscheinnummer"),
        "fr": ("numero_securite_sociale", "securite_sociale", "nir", "carte_identite", "numero_carte_identite",
               "passeport", "numero_passeport", "numero_fiscal"),
        "es": ("dni", "nie", "nif", "numero_seguridad_social", "nss", "pasaporte", "numero_pasaporte", "curp",
               "documento_identidad", "numero_documento", "cedula", "historia_clinica", "numero_historia_clinica"),
        "it": ("codice_fiscale", "tessera_sanitaria", "numero_tessera_sanitaria", "passaporto",
               "numero_passaporto", "carta_identita", "numero_carta_identita", "cartella_clinica",
               "numero_cartella_clinica"),
        "nl": ("bsn", "burgerservicenummer", "sofinummer", "sofi_nummer", "paspoort", "paspoortnummer",
               "rijbewijsnummer"),
        "pt": ("cpf", "rg", "nif", "cartao_cidadao", "numero_cartao_cidadao", "cns", "cartao_sus", "passaporte",
               "numero_passaporte", "pis", "nis")},
    "address": {
        "en": ("address", "street", "street_address", "home_address", "address_line", "address1", "address2",
               "addr", "postal_address", "mailing_address"),
        "de": ("adresse", "anschrift", "strasse", "strasse_hausnummer", "strasse_und_hausnummer", "hausnummer",
               "wohnadresse", "wohnanschrift"),
        "fr": ("rue", "adresse_postale", "numero_rue"),
        "es": ("direccion", "domicilio", "calle", "direccion_postal"),
        "it": ("indirizzo", "indirizzo_residenza"),
        "nl": ("adres", "straat", "straatnaam", "huisnummer", "woonadres", "straat_huisnummer"),
        "pt": ("endereco", "morada", "rua", "logradouro", "endereco_residencial")},
    "case": {
        "en": ("case_number", "case_no", "case_num", "casenumber", "docket_number", "docket", "record_number",
               "account_number", "acct", "booking_number", "inmate_number", "file_number", "claim_number",
               "policy_number", "ticket_number", "arrest_number", "citation_number"),
        "de": ("aktenzeichen",), "pt": ("prontuario",)},
    "online": {
        "en": ("ip", "ip_address", "mac_address", "device_id", "username", "user_name", "login", "url",
               "website", "handle"),
        "de": ("ip_adresse", "benutzername", "nutzername", "webseite", "homepage"),
        "fr": ("adresse_ip", "site_web"), "es": ("direccion_ip", "usuario_login"),
        "it": ("indirizzo_ip", "sito_web"), "nl": ("ip_adres", "gebruikersnaam"), "pt": ("endereco_ip",)},
    "birth": {
        "en": ("dob", "date_of_birth", "birth_date", "birthdate", "birthday", "birth_day"),
        "de": ("geburtsdatum", "geburtstag", "geb_datum", "gebdatum"),
        "fr": ("date_naissance", "date_naiss", "dt_naissance", "naissance"),
        "es": ("fecha_nacimiento", "fecha_nac", "f_nacimiento", "fec_nac", "nacimiento"),
        "it": ("data_nascita", "data_nasc", "nascita"),
        "nl": ("geboortedatum", "geb_datum", "geboortedag"),
        "pt": ("data_nascimento", "data_nasc", "dt_nascimento", "nascimento")},
}

#: Who an identifier may belong to: "<who> <kind>" (``patient_id``), "<kind> <who>" (``numero_cliente``),
#: or one German or Dutch word (``Kundennummer``: ``kunden`` + ``nummer``).
PERSON_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("person", "patient", "subject", "participant", "respondent", "client", "customer", "user", "member",
           "employee", "staff", "student", "pupil", "citizen", "resident", "defendant", "offender", "inmate",
           "prisoner", "suspect", "victim", "claimant", "applicant", "beneficiary", "policyholder", "account",
           "household", "individual", "record", "case", "booking", "docket", "file", "visit", "encounter",
           "admission", "row", "unique", "internal", "external", "personal", "stay", "hadm", "icustay"),
    "de": ("person", "personen", "kunde", "kunden", "patient", "patienten", "proband", "probanden", "versicherte",
           "versicherten", "mitglied", "mitglieds", "mitarbeiter", "mitarbeiters", "personal", "schuler",
           "student", "studenten", "burger", "einwohner", "bewohner", "teilnehmer", "klient", "klienten",
           "benutzer", "nutzer", "konto", "fall", "falls", "akte", "akten", "vorgang", "vorgangs", "vertrag",
           "vertrags", "versicherung", "versicherungs", "antrag", "antrags", "antragsteller", "haushalt",
           "haushalts", "beschaftigte", "beschaftigten", "angestellte", "angestellten", "bewerber", "empfanger",
           "pat", "aufnahme", "aufnahmen", "aufenthalt", "aufenthalts", "behandlung", "behandlungs"),
    "fr": ("personne", "client", "cliente", "patient", "patiente", "usager", "utilisateur", "membre", "adherent",
           "employe", "salarie", "eleve", "etudiant", "citoyen", "habitant", "resident", "assure", "participant",
           "dossier", "compte", "beneficiaire", "demandeur", "individu", "menage", "sujet", "fiche", "sejour",
           "venue"),
    "es": ("persona", "cliente", "paciente", "usuario", "miembro", "socio", "afiliado", "empleado", "trabajador",
           "alumno", "estudiante", "ciudadano", "habitante", "residente", "asegurado", "participante",
           "expediente", "cuenta", "beneficiario", "solicitante", "individuo", "hogar", "caso", "sujeto"),
    "it": ("persona", "cliente", "paziente", "utente", "membro", "socio", "iscritto", "dipendente", "impiegato",
           "lavoratore", "alunno", "studente", "cittadino", "abitante", "residente", "assicurato", "partecipante",
           "pratica", "fascicolo", "conto", "beneficiario", "richiedente", "individuo", "caso", "soggetto"),
    "nl": ("persoon", "klant", "patient", "gebruiker", "lid", "medewerker", "werknemer", "personeel", "leerling",
           "student", "burger", "inwoner", "bewoner", "verzekerde", "deelnemer", "dossier", "rekening", "aanvrager",
           "huishouden", "client", "zaak", "relatie"),
    "pt": ("pessoa", "cliente", "paciente", "usuario", "utente", "membro", "socio", "associado", "funcionario",
           "empregado", "colaborador", "aluno", "estudante", "cidadao", "morador", "residente", "segurado",
           "participante", "processo", "prontuario", "conta", "beneficiario", "requerente", "individuo", "caso",
           "sujeito", "titular"),
}

#: The kind word of "<who> <kind>" / "<kind> <who>", per kind: ``id``, ``name``, ``number``.
KIND_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "id": {"en": ("id", "identifier", "uuid"), "de": ("kennung",), "fr": ("identifiant",),
           "es": ("identificador",), "it": ("identificativo",), "nl": ("identificatie",), "pt": ("identificador",)},
    "name": {"en": ("name",), "de": ("name",), "fr": ("nom",), "es": ("nombre",), "it": ("nome",),
             "nl": ("naam",), "pt": ("nome",)},
    "number": {"en": ("number", "no", "num", "nr"), "de": ("nummer", "nr"), "fr": ("numero", "num"),
               "es": ("numero", "num", "nro"), "it": ("numero", "num"), "nl": ("nummer", "nr"),
               "pt": ("numero", "num")},
}
#: A code that comes first only (``code client``, ``código del cliente``, ``codice cliente``; not
#: ``visit_code``).
CODE_FIRST = ("code", "codigo", "codice")

#: Words of a name that make it a postal (or area) code, anywhere in the name ...
CODE_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("zip", "zipcode", "zip5", "postcode", "postal", "postalcode", "fips", "areacode"),
    "de": ("plz", "postleitzahl"), "fr": ("codepostal",), "es": ("codigopostal",),
    "it": ("postale", "codicepostale"), "nl": ("postcode",), "pt": ("cep", "codigopostal"),
}
#: ... and short ones that do only as the whole name (``CP`` but not ``cp_type``, ``CAP`` but not
#: ``market_cap``).
CODE_NAMES: dict[str, tuple[str, ...]] = {"fr": ("cp",), "es": ("cp",), "it": ("cap",)}

#: Words that make a name look like a sensitive attribute (a comment in the schema draft).
SENSITIVE_WORDS: dict[str, tuple[str, ...]] = {
    "en": ("diagnosis", "diagnoses", "disease", "illness", "medication", "treatment", "hiv", "icd", "income",
           "salary", "wage", "wages", "earnings", "charge", "charges", "offense", "offence", "offenses",
           "offences", "crime", "outcome", "disposition", "verdict", "sentence", "religion", "orientation",
           "disability", "health", "pregnancy", "abortion"),
    "de": ("diagnose", "diagnosen", "befund", "befunde", "krankheit", "krankheiten", "erkrankung", "erkrankungen",
           "medikament", "medikamente", "medikation", "behandlung", "therapie", "einkommen", "gehalt", "lohn",
           "verdienst", "konfession", "behinderung", "schwangerschaft", "straftat", "delikt", "vorstrafe",
           "vorstrafen", "urteil", "gesundheit", "orientierung"),
    "fr": ("diagnostic", "diagnostics", "maladie", "maladies", "pathologie", "medicament", "medicaments",
           "traitement", "therapie", "revenu", "revenus", "salaire", "remuneration", "handicap", "grossesse",
           "infraction", "delit", "condamnation", "sante"),
    "es": ("diagnostico", "enfermedad", "enfermedades", "patologia", "medicamento", "medicacion", "tratamiento",
           "ingresos", "salario", "sueldo", "discapacidad", "embarazo", "delito", "condena", "salud"),
    "it": ("diagnosi", "malattia", "malattie", "patologia", "farmaco", "farmaci", "terapia", "trattamento",
           "reddito", "stipendio", "salario", "religione", "disabilita", "gravidanza", "reato", "condanna",
           "salute"),
    "nl": ("diagnose", "ziekte", "ziektes", "aandoening", "medicatie", "medicijn", "medicijnen", "behandeling",
           "inkomen", "salaris", "loon", "religie", "geloof", "beperking", "zwangerschap", "misdrijf", "delict",
           "veroordeling", "gezondheid"),
    "pt": ("diagnostico", "doenca", "doencas", "patologia", "medicamento", "medicacao", "tratamento", "renda",
           "rendimento", "salario", "religiao", "deficiencia", "gravidez", "delito", "condenacao", "saude"),
}
#: The last part of a German or Dutch compound that makes it sensitive (``Hauptdiagnose``,
#: ``Jahreseinkommen``, ``Stundenlohn``).
SENSITIVE_ENDINGS = ("diagnose", "diagnosen", "befund", "krankheit", "erkrankung", "medikament", "medikation",
                     "einkommen", "gehalt", "lohn", "behandlung", "therapie", "ziekte", "inkomen", "salaris",
                     "medicatie", "behandeling")

#: Words of an age in years (``Alter``, ``âge``, ``edad``); not Italian ``età``, which folds to
#: ``eta`` (an estimated time of arrival in English).
AGE_WORDS = frozenset({"age", "alter", "edad", "leeftijd", "idade"})
_OTHER_UNITS = frozenset({"month", "months", "week", "weeks", "day", "days", "hour", "hours", "minutes",
                          "monat", "monate", "monaten", "woche", "wochen", "tag", "tage", "tagen", "mois",
                          "semaine", "semaines", "jour", "jours", "mes", "meses", "semana", "semanas", "dia",
                          "dias", "mese", "mesi", "settimane", "giorni", "maand", "maanden", "weken",
                          "dag", "dagen"})

_CODE_TOKENS = words(CODE_WORDS)
_CODE_WHOLE = words(CODE_NAMES)


def is_age(name: str) -> bool:
    """Whether ``name`` reads as an age in years (``age``, ``age_at_arrest``, ``AgeYears``,
    ``Alter``, ``âge``; not ``age_months``)."""
    tokens = name_tokens(name)
    return bool(set(tokens) & AGE_WORDS) and not set(tokens) & _OTHER_UNITS


def is_code_name(name: str) -> bool:
    """Whether ``name`` reads as a ZIP / postal / area code (masked, and read as text so leading
    zeros are kept): ``zip``, ``PLZ``, ``Postleitzahl``, ``code postal``, ``CAP``, ``CEP``, ..."""
    tokens = [spelling(t) for t in name_tokens(name)]
    return bool(set(tokens) & _CODE_TOKENS) or "".join(tokens) in _CODE_TOKENS or "_".join(tokens) in _CODE_WHOLE

