"""The UCI Adult census extract (Kohavi and Becker, 1996; UCI Machine Learning Repository,
CC BY 4.0), bundled compressed and unchanged (see ``files/README.md``), with a schema and
default generalization hierarchies.

Default roles follow the anonymization literature's usual choice: quasi-identifiers age,
workclass, education, marital-status, occupation, race, sex and native-country; sensitive:
income; the rest insensitive. Change them with ``qi=`` / ``sensitive=``.

The hierarchies are data-independent (fixed domains and rules), so they can drive a strongly
safe recoding:

- age: 5-, 10-, 20-year bands (top-coded at 80), then under 40 / 40 and over, then ``*``;
- education (and education-num): school levels (primary, lower secondary, upper secondary
  without diploma, high-school graduate, some college, associate, bachelors, graduate), then
  no diploma / high school or associate / university degree, then ``*``;
- workclass: private, self-employed, government, not paid, then ``*``;
- marital-status: married / spouse absent / divorced or widowed / never married, then ever vs
  never married, then ``*``;
- occupation: seven groups after the census major occupation groups, then white collar / blue
  collar / service / armed forces, then ``*``;
- native-country: regions, then continents (North America, Latin America and Caribbean, Europe,
  Asia), then ``*``;
- relationship: spouse / child or relative / not in family, then ``*``;
- hours-per-week: <20, 20-34, 35-39, 40, 41-49, 50-59, 60+, then part-time / full-time /
  overtime, then ``*``;
- race, sex, income: value -> ``*``.

A missing value ('?' in the files) is a value of its own by default and gets a leaf ``?`` in
the hierarchies of the columns that have one; ``drop_missing=True`` removes those rows
(30,162 training rows, 15,060 test rows, 45,222 in all).
"""

from __future__ import annotations

import gzip
import io
from functools import lru_cache
from importlib import resources
from typing import Literal

import polars as pl

from crowdsafe.data import (
    Attribute,
    AttributeType,
    Dataset,
    Hierarchy,
    MissingPolicy,
    NumberKind,
    Role,
    Schema,
    flat,
    grouping,
    intervals,
    ordered_groups,
)
from crowdsafe.data.pipeline import load_source
from crowdsafe.data.sources import Source
from crowdsafe.errors import ParameterError

Split = Literal["train", "test", "all"]

COLUMNS = (
    "age", "workclass", "fnlwgt", "education", "education-num", "marital-status", "occupation",
    "relationship", "race", "sex", "capital-gain", "capital-loss", "hours-per-week",
    "native-country", "income",
)
QUASI_IDENTIFIERS = (
    "age", "workclass", "education", "marital-status", "occupation", "race", "sex", "native-country",
)
SENSITIVE = ("income",)
NUMERIC = ("age", "fnlwgt", "education-num", "capital-gain", "capital-loss", "hours-per-week")
EDUCATION_ORDER = (
    "Preschool", "1st-4th", "5th-6th", "7th-8th", "9th", "10th", "11th", "12th", "HS-grad",
    "Some-college", "Assoc-voc", "Assoc-acdm", "Bachelors", "Masters", "Prof-school", "Doctorate",
)
INCOME_ORDER = ("<=50K", ">50K")
AGE_DOMAIN = range(17, 91)  # the extract covers people over 16; 90 is the source's top code
HOURS_DOMAIN = range(1, 100)

CITATION = (
    "Becker, B. and Kohavi, R. (1996). Adult. UCI Machine Learning Repository, CC BY 4.0. "
    "https://doi.org/10.24432/C5XW20"
)


def _read(file_name: str) -> pl.DataFrame:
    """One UCI file as published: fields after the first start with a space, ``?`` is missing,
    and the test file has a first line of its own and incomes ending in ``.``. The spaces are
    removed from the text before Polars reads it: stripping them in Polars after the read was
    faster to read but left string columns that every later join and group-by was slower on (the
    intersection attack on Adult by about 15%)."""
    raw = gzip.decompress(resources.files("crowdsafe.datasets").joinpath("files", file_name).read_bytes())
    if file_name.startswith("adult.test"):
        raw = raw.split(b"\n", 1)[1]  # first line: "|1x3 Cross validator"
    frame = pl.read_csv(
        io.BytesIO(raw.replace(b", ", b",")),
        has_header=False,
        new_columns=list(COLUMNS),
        null_values="?",
        schema_overrides={c: pl.Int64 if c in NUMERIC else pl.String for c in COLUMNS},
    )
    frame = frame.filter(~pl.all_horizontal(pl.all().is_null()))  # blank trailing lines
    return frame.with_columns(pl.col("income").str.strip_suffix("."))


@lru_cache(maxsize=3)
def adult_frame(split: str) -> pl.DataFrame:
    """The raw Adult frame of a split (cached; clone it before changing it)."""
    if split == "train":
        return _read("adult.data.gz")
    if split == "test":
        return _read("adult.test.gz")
    return pl.concat([adult_frame("train"), adult_frame("test")])


def schema() -> Schema:
    """The Adult schema: roles and types of the 15 columns."""
    attributes = []
    for name in COLUMNS:
        role = (
            Role.QUASI_IDENTIFIER if name in QUASI_IDENTIFIERS
            else Role.SENSITIVE if name in SENSITIVE else Role.INSENSITIVE
        )
        kind = AttributeType.NUMERIC if name in NUMERIC else AttributeType.CATEGORICAL
        order: tuple[str, ...] | None = None
        if name == "education":
            kind, order = AttributeType.ORDINAL, EDUCATION_ORDER
        elif name == "income":
            kind, order = AttributeType.ORDINAL, INCOME_ORDER
        # the numeric columns hold whole numbers (read as integers whatever the rows)
        attributes.append(Attribute(name, role, kind, order,
                                    numbers=NumberKind.INTEGER if kind is AttributeType.NUMERIC else None))
    return Schema(tuple(attributes), source="adult (bundled)", bundled=True)


_EDUCATION_LEVELS = [
    [("Primary school", 3), ("Lower secondary", 3), ("Upper secondary, no diploma", 2),
     ("High-school graduate", 1), ("Some college", 1), ("Associate degree", 2),
     ("Bachelors", 1), ("Graduate degree", 3)],
    [("No diploma", 3), ("High school or associate", 3), ("University degree", 2)],
]

_REGIONS = {
    "North America": ["United-States", "Canada", "Outlying-US(Guam-USVI-etc)"],
    "Central America": ["Mexico", "Guatemala", "Honduras", "El-Salvador", "Nicaragua"],
    "Caribbean": ["Cuba", "Jamaica", "Haiti", "Dominican-Republic", "Puerto-Rico", "Trinadad&Tobago"],
    "South America": ["Columbia", "Ecuador", "Peru"],
    "Northwestern Europe": ["England", "Scotland", "Ireland", "France", "Germany", "Holand-Netherlands"],
    "Southern Europe": ["Italy", "Portugal", "Greece"],
    "Eastern Europe": ["Poland", "Hungary", "Yugoslavia"],
    "East Asia": ["China", "Hong", "Taiwan", "Japan", "South"],
    "Southeast Asia": ["Philippines", "Vietnam", "Laos", "Cambodia", "Thailand"],
    "South and West Asia": ["India", "Iran"],
}
_CONTINENTS = {
    "North America": ["North America"],
    "Latin America and Caribbean": ["Central America", "Caribbean", "South America"],
    "Europe": ["Northwestern Europe", "Southern Europe", "Eastern Europe"],
    "Asia": ["East Asia", "Southeast Asia", "South and West Asia"],
}


def _age_hierarchy() -> Hierarchy:
    """5-, 10- and 20-year bands top-coded at 80, then two halves split at 40 (the top code joins
    the older half), then ``*``: fixed by the domain alone."""
    bands = intervals("age", AGE_DOMAIN, widths=[5, 10, 20], top=80)
    ages = bands.leaves.to_list()
    levels = [[bands.labels[level][node] for node in bands.leaf_map(level)] for level in range(1, bands.height)]
    levels.append(["[0, 40)" if age < 40 else ">=40" for age in ages])
    levels.append(["*"] * len(ages))
    return Hierarchy.from_columns("age", bands.leaves, levels)


def hierarchies() -> dict[str, Hierarchy]:
    """Default hierarchies for Adult's categorical and numeric quasi-identifier candidates."""
    return {
        "age": _age_hierarchy(),
        "workclass": grouping("workclass", [{
            "Private": ["Private"],
            "Self-employed": ["Self-emp-not-inc", "Self-emp-inc"],
            "Government": ["Federal-gov", "State-gov", "Local-gov"],
            "Not paid": ["Without-pay", "Never-worked"],
        }]),
        "education": ordered_groups("education", EDUCATION_ORDER, groups=_EDUCATION_LEVELS),
        "education-num": intervals("education-num", range(1, 17), cuts=[[4, 7, 9, 10, 11, 13, 14], [9, 13]]),
        "marital-status": grouping("marital-status", [
            {
                "Married": ["Married-civ-spouse", "Married-AF-spouse"],
                "Spouse absent": ["Married-spouse-absent", "Separated"],
                "Divorced or widowed": ["Divorced", "Widowed"],
                "Never married": ["Never-married"],
            },
            {
                "Ever married": ["Married", "Spouse absent", "Divorced or widowed"],
                "Never married": ["Never married"],
            },
        ]),
        "occupation": grouping("occupation", [
            {
                "Managerial and professional": ["Exec-managerial", "Prof-specialty"],
                "Technical, sales and clerical": ["Tech-support", "Sales", "Adm-clerical"],
                "Service": ["Other-service", "Protective-serv", "Priv-house-serv"],
                "Farming and fishing": ["Farming-fishing"],
                "Production and craft": ["Craft-repair", "Machine-op-inspct"],
                "Transport and labour": ["Transport-moving", "Handlers-cleaners"],
                "Armed forces": ["Armed-Forces"],
            },
            {
                "White collar": ["Managerial and professional", "Technical, sales and clerical"],
                "Blue collar": ["Farming and fishing", "Production and craft", "Transport and labour"],
                "Service": ["Service"],
                "Armed forces": ["Armed forces"],
            },
        ]),
        "relationship": grouping("relationship", [{
            "Spouse": ["Husband", "Wife"],
            "Child or relative": ["Own-child", "Other-relative"],
            "Not in family": ["Not-in-family", "Unmarried"],
        }]),
        "race": flat("race", ["White", "Black", "Asian-Pac-Islander", "Amer-Indian-Eskimo", "Other"]),
        "sex": flat("sex", ["Female", "Male"]),
        "native-country": grouping("native-country", [_REGIONS, _CONTINENTS]),
        "hours-per-week": intervals("hours-per-week", HOURS_DOMAIN, cuts=[[20, 35, 40, 41, 50, 60], [35, 41]]),
        "income": flat("income", INCOME_ORDER),
    }


def adult_source(split: str, name: str) -> Source:
    """A split of Adult as read (a fresh copy of the cached frame), with its schema and default
    hierarchies, for the data layer's load pipeline."""
    return frame_source(adult_frame(split).clone(), name)


def frame_source(frame: pl.DataFrame, name: str) -> Source:
    """An Adult-shaped frame as read, with the Adult schema and default hierarchies; each of
    them gets a missing-value leaf if its column keeps missing values after the policy."""
    return Source(frame, name, name, schema(), hierarchies(), typed=True, missing_leaves=True)


def dataset_from_frame(frame: pl.DataFrame, name: str, missing: MissingPolicy | str) -> Dataset:
    """A Dataset over an Adult-shaped frame with the Adult schema and default hierarchies.

    Columns with missing values get a missing-value leaf in their hierarchy. For public frames
    only (the bundled file, the seeded synthetic tables): the schema is marked ``bundled``, so a
    histogram takes these leaves as its public cells, and whether a column has a missing-value
    leaf is then read from the frame. A custodian's own Adult-shaped table is loaded with
    :func:`crowdsafe.data.load` and a schema file instead.
    """
    return load_source(frame_source(frame, name), missing=missing)


def adult(split: Split = "train", *, drop_missing: bool = False) -> Dataset:
    """UCI Adult as a :class:`~crowdsafe.data.Dataset`.

    ``split``: ``"train"`` (adult.data, 32,561 rows), ``"test"`` (adult.test, 16,281 rows;
    the trailing '.' of its labels removed) or ``"all"`` (both, 48,842 rows). With
    ``drop_missing=True`` rows with a missing value are removed (30,162 / 15,060 / 45,222).
    """
    if split not in ("train", "test", "all"):
        raise ParameterError(f"unknown Adult split {split!r}; use 'train', 'test' or 'all'")
    name = "adult" if split == "train" else f"adult-{split}"
    policy = MissingPolicy.DROP if drop_missing else MissingPolicy.KEEP
    return dataset_from_frame(adult_frame(split).clone(), name, policy)
