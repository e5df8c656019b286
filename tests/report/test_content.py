"""The report's content on a small hand-made release: every number from the rows and the
certificate's public fields."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from crowdsafe.report.content import (
    PUBLIC_FIELDS,
    ROWS,
    TOP_VALUES,
    attribute_view,
    attribute_views,
    numeric_ends,
    public_certificate,
    report_content,
    shown_values,
)
from crowdsafe.report.html import render_html

FRAME = pl.DataFrame({
    "age": ["[0, 40)"] * 5 + [">=40"] * 3 + ["[0, 40)"] * 4,
    "sex": ["Female"] * 5 + ["Male"] * 3 + ["Male"] * 4,
    "zip": ["*"] * 12,
})

DPS = {
    "format": "crowdsafe-certificate", "version": 2, "components": [], "guarantee": "dps", "epsilon": 1.0,
    "delta": 1e-6,
    "theorem": "Li, Qardaji, Su 2012, Theorem 6", "reason": None,
    "assumptions": ["the Bernoulli sample is drawn from a secret random source and is never disclosed"],
    "mechanisms": [{"step": "sample", "name": "Bernoulli sampling", "parameters": {"beta": 0.37}}],
    "neighbours": "add-remove",
    "parameters": {"k": 3, "beta": 0.37, "epsilon1": 0.19, "quasi_identifiers": ["age", "sex", "zip"],
                   "scheme": {"age": 4, "sex": 0, "zip": 2}, "scheme_level_names": {"age": "level 4", "sex": "value",
                                                                                   "zip": "*"},
                   "selection": {"objective": "retained", "candidates": 36}},
    "randomness": {"source": "ChaCha20, OS entropy", "seeded": False, "fit_for_release": True},
    "accounting": {"ledger": True}, "unfit_reasons": [], "fit_for_release": True,
    "sample": {"rate": 0.37, "release_id": "ab" * 16}, "crowdsafe_version": "0.1.0",
}
#: DPS as a file holds it: a certificate read from a file states a delta of at least d(k, beta, epsilon -
#: epsilon1) of its own parameters (here d(3, 0.37, 0.81) = 0.146...), or the report refuses it (build.check_stated)
FILED = {**DPS, "delta": 0.15}
CLASSIC = {
    "format": "crowdsafe-certificate", "guarantee": "none", "epsilon": None, "delta": None, "theorem": None,
    "reason": "data-dependent recoding (Mondrian)", "assumptions": [], "mechanisms": [],
    "parameters": {"algorithm": "mondrian", "k": 3, "quasi_identifiers": ["age", "sex"]},
    "randomness": None, "accounting": None,
    "unfit_reasons": ["no formal guarantee: nothing bounds what the release reveals"], "fit_for_release": False,
}


def test_class_sizes_utility_and_risk_come_from_the_rows():
    content = report_content(FRAME, DPS, "r.csv")
    assert content.class_sizes.tolist() == [3, 4, 5]  # (>=40, Male), ([0,40), Male), ([0,40), Female)
    assert content.k == 3 and content.rows == 12
    utility = {label: value for label, value, _ in content.utility}
    assert utility["classes"] == "3" and utility["average class size"] == "4"
    assert utility["discernibility of the release"] == f"{9 + 16 + 25}"
    assert utility["cells shown as '*'"] == "33.3%"  # the zip column
    assert utility["cells generalized"] == "66.7%"  # age and zip above level 0
    risk = {label: value for label, value, _ in content.risk}
    assert risk["smallest class"] == "3" and risk["highest linkage risk"] == "33.33%"
    assert risk["records in classes of 3 – 5"] == "100.0%"
    assert "ε = 1" in risk["differential privacy"]


def test_attributes_show_levels_and_published_values():
    content = report_content(FRAME, DPS, "r.csv")
    age, sex, zip_ = content.attributes
    assert (age.level, age.level_name, age.distinct) == (4, "level 4", 2)
    assert age.values == (("[0, 40)", 9), (">=40", 3))  # intervals in their order
    assert sex.values == (("Male", 7), ("Female", 5))
    assert zip_.star_share == 1.0 and zip_.values == (("*", 12),)


@pytest.mark.parametrize("names", [("age", "sex", "zip"), ("column", "value", "_column")])
def test_every_attribute_counted_in_one_query_is_each_counted_alone(names):
    """attribute_views (one unpivoted group-by) gives each column the view attribute_view gives it
    from its own group-by: missing values, '?', '*', numbers, and columns whose names are the
    query's own ("column", "value")."""
    rng = np.random.default_rng(4)
    values = ["a", "b", None, "?", "*", "12", ""]
    frame = pl.DataFrame({n: [values[int(i)] for i in rng.integers(0, len(values), 40)] for n in names})
    tuples = frame.group_by(list(names)).agg(pl.len().alias(ROWS).cast(pl.Int64))
    alone = tuple(attribute_view(tuples, n, DPS["parameters"]) for n in names)
    assert attribute_views(tuples, names, DPS["parameters"]) == alone
    # the columns' views differ, so one column's counts given to another would be caught
    assert len({view.values for view in alone}) == len(names)


def test_the_guarantee_in_plain_words():
    content = report_content(FRAME, DPS, "r.csv")
    text = " ".join(content.guarantee)
    assert "(1, 1e-06)-differential privacy under sampling" in text and "Theorem 6" in text
    assert "e^ε = 2.72" in text and content.fit_for_release
    plan = dict(content.plan)
    assert plan["k (smallest class published)"] == "3" and plan["β (sampling rate)"] == "0.37"
    assert "exponential mechanism" in plan["scheme chosen by"]


def test_a_seeded_run_is_not_fit_for_release():
    seeded = {**DPS, "randomness": {"source": "ChaCha20, seeded", "seeded": True, "fit_for_release": False},
              "fit_for_release": False,
              "unfit_reasons": ["seeded randomness: reproducible, so whoever knows the seed knows the sample"]}
    content = report_content(FRAME, seeded, "r.csv")
    assert not content.fit_for_release and "seeded randomness" in content.unfit_reasons[0]


def test_a_classic_release_says_no_formal_guarantee_with_the_reason():
    content = report_content(FRAME, CLASSIC, "a.csv")
    assert "NO formal privacy guarantee: data-dependent recoding (Mondrian)" in content.guarantee[0]
    assert not content.fit_for_release
    assert content.quasi_identifiers == ("age", "sex")  # from the certificate, not every column
    assert dict((label, value) for label, value, _ in content.risk)["differential privacy"] == "none"


def test_only_public_certificate_fields_are_read():
    leaky = {**DPS, "custodian_only": {"input_rows": 123456}, "fingerprint": "f" * 64}
    public = public_certificate(leaky)
    assert set(public) <= set(PUBLIC_FIELDS)
    assert "sample" not in public  # the release id is not shown
    content = report_content(FRAME, leaky, "r.csv")
    assert "custodian_only" not in content.certificate and "fingerprint" not in content.certificate
    page = render_html(content)
    assert page == render_html(report_content(FRAME, DPS, "r.csv"))
    assert "123456" not in page and "ab" * 16 not in page


def test_many_values_are_grouped():
    values = [(f"v{i:02d}", 100 - i) for i in range(30)]
    shown = shown_values(values)
    assert len(shown) == TOP_VALUES + 1 and shown[-1] == ("other (10 values)", sum(100 - i for i in range(20, 30)))
    numbers = [(str(i), 1) for i in range(50)] + [("*", 5)]
    binned = shown_values(numbers)
    assert len(binned) == TOP_VALUES + 1 and binned[-1] == ("*", 5)
    assert sum(c for _, c in binned) == 55


@pytest.mark.parametrize(("value", "ends"), [("[0, 40)", (0.0, 40.0)), (">=40", (40.0, 40.0)), ("17", (17.0, 17.0)),
                                             ("[38, 44]", (38.0, 44.0)), ("12th", None), ("*", None)])
def test_numeric_forms(value, ends):
    assert numeric_ends(value) == ends


def test_an_empty_release():
    content = report_content(FRAME.head(0), DPS, "r.csv")
    assert content.class_sizes.size == 0 and isinstance(content.class_sizes, np.ndarray)
    assert content.rows == 0


def test_a_scanned_release_gives_the_same_content_as_its_rows_in_memory(tmp_path):
    """build.read_release scans the file lazily; the report is computed from the tuple table, so a
    scan and the same rows in memory give one content, and a Spark folder of parts the same again."""
    from crowdsafe.report.build import read_release

    path = tmp_path / "r.csv"
    FRAME.write_csv(path)
    (tmp_path / "r.certificate.json").write_text(json.dumps(FILED))
    scanned, certificate = read_release(path)
    assert isinstance(scanned, pl.LazyFrame)
    in_memory = render_html(report_content(FRAME, FILED, "r.csv"))
    assert render_html(report_content(scanned, certificate, "r.csv")) == in_memory
    folder = tmp_path / "parts.csv"
    folder.mkdir()
    FRAME.head(5).write_csv(folder / "part-0.csv")
    FRAME.slice(5).write_csv(folder / "part-1.csv")
    (tmp_path / "parts.certificate.json").write_text(json.dumps(FILED))
    parts, _ = read_release(folder)
    assert render_html(report_content(parts, FILED, "r.csv")) == in_memory


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_folder_of_parts_is_counted_part_by_part_with_the_same_content(tmp_path, suffix):
    """build.release_content counts a folder of parts one part at a time (memory bounded by a
    part): the same page as the rows in memory and as the whole folder scanned at once (the
    reference twin), with a tuple in several parts, an empty part, a formula-escaped cell in a
    formula-safe CSV folder, and a Spark marker file beside them."""
    from crowdsafe.csv_safety import escape_frame, format_note
    from crowdsafe.report.build import _counted_parts, read_release, release_content

    # the first class (5 rows, k = 3) formula-escaped whole: a release has no class below k (build.certified_table)
    frame = FRAME.with_columns(pl.when(pl.int_range(pl.len()) < 5).then(pl.lit("=1+1")).otherwise(pl.col("zip"))
                               .alias("zip"))
    certificate = {**FILED, "format_notes": [format_note("r.csv", escape_formulas=True)]} if suffix == ".csv" else FILED
    folder = tmp_path / f"r{suffix}"
    folder.mkdir()
    for i, part in enumerate((frame.head(5), frame.slice(5, 4), frame.slice(9), frame.head(0))):
        if suffix == ".csv":
            escape_frame(part).write_csv(folder / f"part-{i}.csv")
        else:
            part.write_parquet(folder / f"part-{i}.parquet")
    (folder / "_SUCCESS").write_bytes(b"")
    (tmp_path / "r.certificate.json").write_text(json.dumps(certificate))
    counted = _counted_parts(folder, certificate)
    assert counted is not None and counted.get_column(ROWS).sum() == frame.height
    assert counted.height < frame.height  # distinct rows, weighted
    scanned, found = read_release(folder)
    expected = render_html(report_content(frame, certificate, f"r{suffix}"))
    assert render_html(report_content(scanned, found, f"r{suffix}")) == expected
    assert render_html(release_content(folder)) == expected
    if suffix == ".csv":  # the escapes were undone before counting: the cell is the value written
        assert "=1+1" in counted.get_column("zip").to_list()


def test_the_tuple_table_counts_records_per_quasi_identifier_tuple():
    from crowdsafe.report.content import ROWS, tuple_table

    table = tuple_table(FRAME.lazy(), ["age", "sex"])
    assert sorted(table.get_column(ROWS).to_list()) == [3, 4, 5] and table.width == 3
    assert table.get_column(ROWS).sum() == FRAME.height
