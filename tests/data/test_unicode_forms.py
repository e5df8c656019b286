"""Values that differ from a hierarchy's leaves only in their Unicode normalisation form (NFD
beside NFC): still matched exactly (published as missing, as any value a hierarchy does not
list), but said so, in the custodian's words of a publish and in the error of a strict read."""

from __future__ import annotations

import unicodedata

import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe.data import flat
from crowdsafe.data.unicode_forms import twin_note, twins
from crowdsafe.errors import HierarchyError

CITIES = ["München", "Köln", "Zürich", "Genève"]


def _nfd(text: str) -> str:
    return unicodedata.normalize("NFD", text)


def test_twins_are_the_values_a_leaf_holds_in_another_form():
    leaves = pl.Series([_nfd(c) for c in CITIES])
    values = pl.Series(["München", "Köln", _nfd("Zürich"), "Paris", None])
    assert twins(values, leaves).to_list() == ["München", "Köln"]  # the NFD 'Zürich' is a leaf itself
    assert twins(pl.Series([1, 2]), pl.Series([1, 2])).to_list() == []
    assert twin_note("Paris", leaves) == "" and "normalisation form" in twin_note("Köln", leaves)


def test_a_strict_read_says_the_value_differs_only_in_its_form():
    hierarchy = flat("city", [_nfd(c) for c in CITIES])
    with pytest.raises(HierarchyError, match=r"'München' of column 'city' \(and 2 other values\) \(a leaf of the "
                                             r"hierarchy is the same text in another Unicode normalisation form"):
        hierarchy.leaf_codes(pl.Series(["München", "Köln", "Genève"]), column="city")
    with pytest.raises(HierarchyError) as plain:  # a value no leaf holds in any form: no such clause
        hierarchy.leaf_codes(pl.Series(["Paris"]), column="city")
    assert "normalisation" not in str(plain.value)


def _tables(tmp_path, hierarchy_form: str):
    rows = [CITIES[i % 4] for i in range(800)]
    pl.DataFrame({"city": rows, "sex": ["F", "M"] * 400}).write_csv(tmp_path / "cities.csv")
    # the names with a 'ü' in ``hierarchy_form``, the others as the data writes them (NFC)
    leaves = [unicodedata.normalize(hierarchy_form, c) if "ü" in c else c for c in CITIES]
    (tmp_path / "city.csv").write_text("".join(f"{leaf};EU;*\n" for leaf in leaves), encoding="utf-8")
    (tmp_path / "cities.toml").write_text(
        '[attributes.city]\nrole = "quasi-identifier"\ntype = "categorical"\nhierarchy = "city.csv"\n'
        '[attributes.sex]\nrole = "quasi-identifier"\ntype = "categorical"\nhierarchy = { flat = true }\n')


@pytest.mark.parametrize("form", ["NFD", "NFC"])
def test_a_publish_says_which_values_it_published_as_missing_and_why(tmp_path, capsys, form):
    _tables(tmp_path, form)
    code, out, err = run_command(capsys, "publish", str(tmp_path / "cities.csv"), "--schema",
                                 str(tmp_path / "cities.toml"), "--scheme", "none", "--epsilon", "3", "--no-ledger",
                                 "--seed", "1", "--no-report", "--out", str(tmp_path / "r.csv"))
    assert code == 0, err
    released = pl.read_csv(tmp_path / "r.csv").get_column("city")
    if form == "NFD":  # München and Zürich are written NFC in the data, NFD in the hierarchy
        assert ("  outside       'city': 2 distinct values not in its hierarchy, published as missing "
                "(?, or empty where not generalized); 2 of them only in Unicode form (NFD/NFC)") in out
        assert set(released.drop_nulls().to_list()) <= {"Köln", "Genève"} and released.null_count() > 0
    else:  # the control: the same table with a hierarchy in the data's form
        assert "outside" not in out and released.null_count() == 0


def test_a_generalized_column_publishes_the_values_outside_as_a_question_mark_and_says_so(tmp_path, capsys):
    """intlsweep #9: the custodian line said "an empty cell" where the generalized column holds '?'."""
    _tables(tmp_path, "NFD")
    code, out, err = run_command(capsys, "publish", str(tmp_path / "cities.csv"), "--schema",
                                 str(tmp_path / "cities.toml"), "--scheme", "none,city=1", "--epsilon", "3",
                                 "--no-ledger", "--seed", "1", "--no-report", "--out", str(tmp_path / "r.csv"))
    assert code == 0, err
    released = pl.read_csv(tmp_path / "r.csv", infer_schema=False).get_column("city")
    assert "?" in released.to_list() and released.null_count() == 0
    assert "published as missing (?, or empty where not generalized)" in out
