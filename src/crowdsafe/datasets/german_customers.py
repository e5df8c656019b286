"""A synthetic German customer table, as a German spreadsheet exports it: for own data in German.

For tests, the guide and the app: every row is invented, drawn by a seeded NumPy generator from
short hand-typed lists (common German first names and surnames, large cities with the first two
digits of their postal codes, streets, occupations, diagnoses). E-mail addresses use the
reserved ``example.*`` domains; telephone numbers the blocks the Bundesnetzagentur sets aside
for film and television (030 23125xxx, 040 66969xxx, 069 90009xxx, 089 99998xxx, 0221 4710xxx).

Columns (German names, as such a file has them): ``Kundennummer``, ``Vorname``, ``Nachname``,
``Geburtsdatum``, ``E-Mail``, ``Telefon``, ``Straße``, ``PLZ``, ``Ort``, ``Geschlecht``,
``Alter`` (in whole years on :data:`REFERENCE_DAY`, consistent with the birth date), ``Beruf``,
``Einkommen`` (monthly, in euros, two decimals) and ``Diagnose``. The first seven are direct
identifiers; ``PLZ`` is a postal code (text: ``01067`` keeps its zero); ``Diagnose`` is the
sensitive attribute a study would publish.

:func:`write_german_customers` writes the file a German locale writes: ``;``-separated, UTF-8,
dates ``dd.mm.yyyy``, numbers with a decimal comma and a ``.`` between thousands
(``3.456,78``). :func:`german_customers` is the same table as read back (what
``crowdsafe.data.load`` gives for the file), and the bundled name ``german-customers`` opens it.

Test data, not a release: NumPy's PCG64 generator, not :class:`~crowdsafe.randomness.Randomness`.
"""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import numpy as np
import polars as pl

from crowdsafe.data.sources import Source
from crowdsafe.errors import ParameterError
from crowdsafe.files import atomic_path

__all__ = ["DEFAULT_ROWS", "REFERENCE_DAY", "german_customers", "german_customers_source", "write_german_customers"]

DEFAULT_ROWS = 20_000
REFERENCE_DAY = dt.date(2024, 12, 31)  # the day the ages are counted on

FEMALE = ("Anna", "Maria", "Ursula", "Monika", "Petra", "Elisabeth", "Sabine", "Renate", "Helga", "Karin",
          "Brigitte", "Ingrid", "Erika", "Andrea", "Gisela", "Claudia", "Susanne", "Gabriele", "Christa",
          "Christine", "Hildegard", "Birgit", "Julia", "Barbara", "Stefanie", "Nicole", "Katharina", "Sandra",
          "Martina", "Laura", "Lena", "Sophie", "Lea", "Hannah", "Emma", "Mia", "Marie", "Johanna", "Jana",
          "Jessica")
MALE = ("Peter", "Wolfgang", "Michael", "Klaus", "Thomas", "Jürgen", "Hans", "Andreas", "Stefan", "Werner",
        "Uwe", "Frank", "Dieter", "Günter", "Horst", "Manfred", "Bernd", "Helmut", "Ralf", "Gerhard",
        "Markus", "Christian", "Martin", "Jörg", "Karl", "Heinz", "Matthias", "Sebastian", "Alexander",
        "Daniel", "Tobias", "Jan", "Lukas", "Felix", "Jonas", "Leon", "Paul", "Maximilian", "Niklas", "Tim")
SURNAMES = ("Müller", "Schmidt", "Schneider", "Fischer", "Weber", "Meyer", "Wagner", "Becker", "Schulz",
            "Hoffmann", "Schäfer", "Koch", "Bauer", "Richter", "Klein", "Wolf", "Schröder", "Neumann",
            "Schwarz", "Zimmermann", "Braun", "Krüger", "Hofmann", "Hartmann", "Lange", "Schmitt", "Werner",
            "Schmitz", "Krause", "Meier", "Lehmann", "Schmid", "Schulze", "Maier", "Köhler", "Herrmann",
            "König", "Walter", "Mayer", "Huber", "Kaiser", "Fuchs", "Peters", "Lang", "Scholz", "Möller",
            "Weiß", "Jung", "Hahn", "Schubert", "Vogel", "Friedrich", "Keller", "Günther", "Frank", "Berger",
            "Winkler", "Roth", "Beck", "Lorenz", "Baumann", "Franke", "Albrecht", "Schuster", "Simon", "Ludwig",
            "Böhm", "Winter", "Kraus", "Martin", "Schumacher", "Krämer", "Vogt", "Stein", "Jäger", "Otto",
            "Sommer", "Groß", "Seidel", "Heinrich", "Brandt", "Haas", "Schreiber", "Graf", "Schulte", "Dietrich",
            "Ziegler", "Kuhn", "Kühn", "Pohl", "Engel", "Horn", "Busch", "Bergmann", "Thomas", "Voigt", "Sauer",
            "Arnold", "Wolff", "Pfeiffer")
# city, the first two digits of its postal codes (several for the large ones), telephone block or None
CITIES = (
    ("Berlin", ("10", "12", "13"), "030 23125"), ("Hamburg", ("20", "22"), "040 66969"),
    ("München", ("80", "81"), "089 99998"), ("Köln", ("50", "51"), "0221 4710"),
    ("Frankfurt am Main", ("60",), "069 90009"), ("Stuttgart", ("70",), None), ("Düsseldorf", ("40",), None),
    ("Leipzig", ("04",), None), ("Dortmund", ("44",), None), ("Essen", ("45",), None), ("Bremen", ("28",), None),
    ("Dresden", ("01",), None), ("Hannover", ("30",), None), ("Nürnberg", ("90",), None),
    ("Duisburg", ("47",), None), ("Bochum", ("44",), None), ("Bielefeld", ("33",), None), ("Bonn", ("53",), None),
    ("Münster", ("48",), None), ("Mannheim", ("68",), None), ("Karlsruhe", ("76",), None),
    ("Augsburg", ("86",), None), ("Wiesbaden", ("65",), None), ("Chemnitz", ("09",), None),
    ("Kiel", ("24",), None), ("Aachen", ("52",), None), ("Halle (Saale)", ("06",), None),
    ("Magdeburg", ("39",), None), ("Freiburg im Breisgau", ("79",), None), ("Lübeck", ("23",), None),
    ("Erfurt", ("99",), None), ("Rostock", ("18",), None), ("Mainz", ("55",), None), ("Kassel", ("34",), None),
    ("Saarbrücken", ("66",), None), ("Potsdam", ("14",), None), ("Oldenburg", ("26",), None),
    ("Regensburg", ("93",), None), ("Jena", ("07",), None), ("Zwickau", ("08",), None),
    ("Görlitz", ("02",), None), ("Cottbus", ("03",), None),
)
STREETS = ("Hauptstraße", "Schulstraße", "Gartenstraße", "Bahnhofstraße", "Dorfstraße", "Bergstraße",
           "Birkenweg", "Lindenstraße", "Kirchstraße", "Waldstraße", "Ringstraße", "Schillerstraße",
           "Goethestraße", "Mozartstraße", "Am Markt", "Rosenweg", "Wiesenweg", "Amselweg", "Feldstraße",
           "Poststraße", "Friedhofstraße", "Mühlenweg", "Sonnenstraße", "Eichenweg", "Kastanienallee")
OCCUPATIONS = ("Lehrkraft", "Pflegefachkraft", "Bürokaufleute", "Softwareentwicklung", "Elektrotechnik",
               "Verkauf", "Lagerlogistik", "Maschinenbau", "Buchhaltung", "Erzieherin/Erzieher", "Ärztin/Arzt",
               "Rente", "Studium", "Kfz-Mechatronik", "Gastronomie", "Friseurhandwerk", "Polizeidienst",
               "Bankkaufleute", "Architektur", "Steuerberatung", "Tischlerei", "Landwirtschaft", "Hausverwaltung",
               "Physiotherapie", "Sozialarbeit")
DIAGNOSES = (  # (diagnosis, weight)
    ("Keine", 30), ("Essentielle Hypertonie", 14), ("Diabetes mellitus Typ 2", 8), ("Diabetes mellitus Typ 1", 1),
    ("Rückenschmerzen", 9), ("Asthma bronchiale", 4), ("Depressive Episode", 5), ("Angststörung", 3),
    ("Migräne", 4), ("Hypothyreose", 4), ("Adipositas", 5), ("Gonarthrose", 3), ("Akute Bronchitis", 4),
    ("Gastritis", 3), ("Vorhofflimmern", 2), ("Chronisch obstruktive Lungenkrankheit", 2), ("Schlafstörung", 3),
    ("Allergische Rhinitis", 4), ("Osteoporose", 2), ("Koronare Herzkrankheit", 2),
)
GENDERS = (("weiblich", 49), ("männlich", 49), ("divers", 2))
_DOMAINS = ("example.com", "example.org", "example.net")
_ASCII = str.maketrans({"ä": "ae", "ö": "oe", "ü": "ue", "ß": "ss", "Ä": "Ae", "Ö": "Oe", "Ü": "Ue"})


def _weighted(rng: np.random.Generator, table: tuple[tuple[str, int], ...], n: int) -> np.ndarray:
    labels = np.asarray([label for label, _ in table], dtype=object)
    weights = np.asarray([w for _, w in table], dtype=float)
    return labels[rng.choice(len(labels), n, p=weights / weights.sum())]


def _zipf(rng: np.random.Generator, pool: tuple[str, ...], n: int) -> np.ndarray:
    """``n`` draws from ``pool`` with Zipf-like weights (a few common, many rare)."""
    weights = 1.0 / np.arange(1, len(pool) + 1) ** 0.7
    return np.asarray(pool, dtype=object)[rng.choice(len(pool), n, p=weights / weights.sum())]


def german_customers(rows: int = DEFAULT_ROWS, seed: int = 0) -> pl.DataFrame:
    """``rows`` invented customers as a Polars frame, typed as the CSV file reads back (same
    ``seed``, same table): ``Geburtsdatum`` a date, ``PLZ`` text, ``Alter`` and ``Kundennummer``
    integers, ``Einkommen`` a float, the rest text."""
    if isinstance(rows, bool) or not isinstance(rows, (int, np.integer)) or rows < 1:
        raise ParameterError(f"the number of rows must be a whole number >= 1, got {rows!r}")
    n = int(rows)
    rng = np.random.default_rng(seed)
    gender = _weighted(rng, GENDERS, n)
    female = _zipf(rng, FEMALE, n)
    male = _zipf(rng, MALE, n)
    first = np.where(gender == "männlich", male, np.where(gender == "weiblich", female,
                                                          np.where(rng.random(n) < 0.5, female, male)))
    last = _zipf(rng, SURNAMES, n)
    city = rng.choice(len(CITIES), n, p=_city_weights())
    age_days = rng.integers(18 * 365, 90 * 365, n)
    born = pl.Series("Geburtsdatum", np.datetime64(REFERENCE_DAY) - age_days.astype("timedelta64[D]")).cast(pl.Date)
    reference = pl.lit(REFERENCE_DAY)
    frame = pl.DataFrame({
        "Kundennummer": (1_000_000 + rng.permutation(9 * max(n, 1_000))[:n]).astype(np.int64),
        "Vorname": first.astype(str),
        "Nachname": last.astype(str),
        "Geburtsdatum": born,
        "E-Mail": [f"{f.translate(_ASCII).lower()}.{s.translate(_ASCII).lower()}{k}@{d}" for f, s, k, d in zip(
            first, last, rng.integers(1, 100, n), rng.choice(np.asarray(_DOMAINS), n))],
        "Telefon": [_phone(CITIES[c][2], int(x)) for c, x in zip(city, rng.integers(0, 1000, n))],
        "Straße": [f"{s} {h}" for s, h in zip(rng.choice(np.asarray(STREETS), n), rng.integers(1, 160, n))],
        "PLZ": _postal_codes(rng, city),
        "Ort": [CITIES[c][0] for c in city],
        "Geschlecht": gender.astype(str),
        "Beruf": _zipf(rng, OCCUPATIONS, n).astype(str),
        "Einkommen": np.round(np.exp(rng.normal(7.9, 0.45, n)), 2),
        "Diagnose": _weighted(rng, DIAGNOSES, n).astype(str),
    })
    age = (reference.dt.year() - pl.col("Geburtsdatum").dt.year()
           - (reference.dt.ordinal_day() < pl.col("Geburtsdatum").dt.ordinal_day()).cast(pl.Int32)).cast(pl.Int64)
    return frame.with_columns(age.alias("Alter")).select(
        "Kundennummer", "Vorname", "Nachname", "Geburtsdatum", "E-Mail", "Telefon", "Straße", "PLZ", "Ort",
        "Geschlecht", "Alter", "Beruf", "Einkommen", "Diagnose")


def _city_weights() -> np.ndarray:
    weights = 1.0 / np.arange(1, len(CITIES) + 1) ** 0.6
    return weights / weights.sum()


def _phone(block: str | None, x: int) -> str:
    """A number of a block set aside for film and television (Berlin's for a city without one)."""
    return f"{block or '030 23125'}{x:03d}"


def _postal_codes(rng: np.random.Generator, city: np.ndarray) -> list[str]:
    """A 5-digit code per row: one of its city's two-digit prefixes, then 3 digits from 40 per
    prefix (so codes repeat and share prefixes; Dresden's first is 01067)."""
    pick = rng.random(len(city))
    suffix = 67 + 23 * rng.integers(0, 40, len(city))
    return [f"{CITIES[c][1][int(p * len(CITIES[c][1]))]}{s:03d}" for c, p, s in zip(city, pick, suffix)]


def german_customers_source(rows: int = DEFAULT_ROWS, seed: int = 0) -> Source:
    """The table as a named table for the load pipeline (no schema: one is inferred or declared,
    exactly as for a user's own file)."""
    return Source(german_customers(rows, seed), "german-customers", "german-customers")


def _decimal_comma(values: pl.Series) -> list[str]:
    """Numbers with two decimals as a German locale writes them: ``3.456,78``, ``856,40``."""
    cents = np.rint(values.to_numpy() * 100).astype(np.int64)
    return [("-" if c < 0 else "") + f"{abs(c) // 100:,}".replace(",", ".") + f",{abs(c) % 100:02d}" for c in cents]


def write_german_customers(path: str | os.PathLike[str], rows: int = DEFAULT_ROWS, seed: int = 0, *,
                           force: bool = False) -> Path:
    """Write the table to ``path`` as a German spreadsheet exports it (``;``-separated, UTF-8,
    dates ``dd.mm.yyyy``, ``Einkommen`` with a decimal comma and ``.`` between thousands),
    atomically; returns the path. An existing file is replaced only with ``force`` (and never a
    ledger or a special file: :mod:`crowdsafe.output_guard`). Read back with
    ``crowdsafe.data.load(path)`` (the decimal comma is found) or ``load(path, decimal_comma=True)``
    it is :func:`german_customers`."""
    from crowdsafe.output_guard import Output, OutputKind, check_outputs

    check_outputs([Output(Path(path), "the German customer table", OutputKind.PLAIN, parameter="path")],
                  force=force)
    frame = german_customers(rows, seed)
    text = frame.with_columns(pl.col("Geburtsdatum").dt.strftime("%d.%m.%Y"),
                              pl.Series("Einkommen", _decimal_comma(frame.get_column("Einkommen"))))
    path = Path(path)
    with atomic_path(path) as tmp:
        text.write_csv(tmp, separator=";")
    return path
