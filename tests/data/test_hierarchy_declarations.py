"""Declared hierarchies and builder parameters that would publish a value wrongly, or crash, are
refused in one line when the schema or the hierarchy file is read (sweep ds5, items 2, 6 and 7).

- An empty label (``F;;*`` in a file, ``"" = ["F"]`` in named groups) published every F as an
  empty cell, read back as a missing value (``check --original`` then refused the release).
- A hierarchy file with two roots (``M;A;*``, ``F;B;ROOT``) kept M and F apart at its "fully
  generalized" level.
- ``widths = "5"`` was an internal TypeError; ``flat = false`` a flat hierarchy; ``order = "MF"``
  the two values M and F; a number for ``order`` or a list inside a group a TypeError."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from crowdsafe.cli import main
from crowdsafe.data.builders import dates, flat, from_spec, grouping, intervals, masking, ordered_groups
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.data.schema import Schema
from crowdsafe.errors import CrowdsafeError, HierarchyError, SchemaError

# -- item 2: empty labels --------------------------------------------------------------------------


@pytest.mark.parametrize(("rows", "level", "leaf"), [
    ("M;A;*\nF;;*\n", 1, "F"),
    ("M;A;*\nF; ;*\n", 1, "F"),  # white space only: cells are stripped
    ("M;A;B;*\nF;C;;*\n", 2, "F"),
    ("M,A,*\nF,\"\",*\n", 1, "F"),
])
def test_a_hierarchy_file_with_an_empty_label_is_refused(tmp_path, rows, level, leaf):
    path = tmp_path / "sex.csv"
    path.write_text(rows)
    with pytest.raises(HierarchyError) as raised:
        Hierarchy.from_csv(path, name="sex")
    message = str(raised.value)
    assert message == (f"hierarchy file {path}: the value {leaf!r} has an empty label at level {level}, so it would "
                       "be published as an empty cell, which every reader takes for a missing value; give that node "
                       "a label")


@pytest.mark.parametrize("label", ["", " ", "\t"])
def test_a_group_with_an_empty_label_is_refused_when_the_schema_is_read(tmp_path, label):
    path = tmp_path / "s.toml"
    path.write_text(f'[attributes.sex]\ntype = "categorical"\n[[attributes.sex.hierarchy.groups]]\n'
                    f'A = ["M"]\n"{label}" = ["F"]\n')
    with pytest.raises(HierarchyError) as raised:
        Schema.from_toml(path)
    assert str(raised.value) == ("hierarchy of 'sex': level 1 has a group with an empty label (holding 'F'): its "
                                 "values would be published as empty cells, which every reader takes for missing "
                                 "values; give the group a label")


def test_grouping_in_code_refuses_an_empty_label_at_any_level():
    with pytest.raises(HierarchyError, match=r"^hierarchy 'sex': the value 'F' has an empty label at level 1,"):
        grouping("sex", [{"A": ["M"], "": ["F"]}])
    with pytest.raises(HierarchyError, match=r"^hierarchy 'sex': the value 'M' has an empty label at level 2,"):
        grouping("sex", [{"A": ["M"], "B": ["F"]}, {"  ": ["A"], "C": ["B"]}])
    with pytest.raises(HierarchyError, match=r"the value 'F' has an empty label at level 1"):
        ordered_groups("sex", ["M", "F"], groups=[[("A", 1), ("", 1)]])


def test_publish_refuses_an_empty_label_before_anything_is_written(tmp_path, capsys):
    data = tmp_path / "data.csv"
    pl.DataFrame({"sex": ["M", "F"] * 50, "age": list(range(100))}).write_csv(data)
    (tmp_path / "sex.csv").write_text("M;A;*\nF;;*\n")
    schema = tmp_path / "s.toml"
    schema.write_text('[attributes.sex]\ntype = "categorical"\nhierarchy = "sex.csv"\n'
                      '[attributes.age]\ntype = "integer"\n')
    out = tmp_path / "out" / "r.csv"
    code = main(["publish", str(data), "--schema", str(schema), "--epsilon", "2", "--delta", "1e-6", "--no-ledger",
                 "--scheme", "sex=1,age=0", "--out", str(out)])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.parent.exists()
    assert err.startswith("crowdsafe: error: hierarchy file ") and "the value 'F' has an empty label at level 1" in err
    assert len(err.splitlines()) == 1


# -- item 6: one root ------------------------------------------------------------------------------


@pytest.mark.parametrize(("rows", "says"), [
    ("M;A;*\nF;B;ROOT\n", "ends in 2 labels at its top level 2 ('*', 'ROOT')"),
    ("a;x;1\nb;y;2\nc;z;3\nd;w;4\n", "ends in 4 labels at its top level 2 ('1', '2', '3', ...)"),
    ("M\nF\n", "has no level above the values"),
])
def test_a_hierarchy_file_with_several_roots_is_refused(tmp_path, rows, says):
    path = tmp_path / "h.csv"
    path.write_text(rows)
    with pytest.raises(HierarchyError) as raised:
        Hierarchy.from_csv(path)
    message = str(raised.value)
    assert message.startswith(f"hierarchy file {path} {says}: its top level must give every value one label")
    assert message.endswith("add a last column '*'") and "\n" not in message


def test_a_hierarchy_file_with_one_root_of_another_name_is_taken(tmp_path):
    path = tmp_path / "h.csv"
    path.write_text("M;A;ROOT\nF;B;ROOT\n")
    made = Hierarchy.from_csv(path)
    assert made.labels[made.height] == ("ROOT",)


@given(st.lists(st.integers(-50, 200), min_size=1, max_size=30, unique=True), st.integers(1, 3))
@settings(max_examples=30, deadline=None)
def test_every_builder_ends_in_the_one_root(values, depth):
    """The rule the files are now held to: every builder's top level is the single root '*'."""
    texts = [f"{v:05d}" if v >= 0 else str(v) for v in values]
    built = [
        intervals("x", values, widths=[5 * 2 ** i for i in range(depth)]),
        masking("x", texts, levels=depth),
        dates("x", [dt.date(2000, 1, 1) + dt.timedelta(days=3 * v + 200) for v in values]),
        flat("x", values),
        ordered_groups("x", sorted(values), fanout=[2] * depth),
        grouping("x", [{"low": [v for v in values if v < 60] or [-99],
                        "high": [v for v in values if v >= 60] or [999]}]),
    ]
    for made in built:
        assert made.labels[made.height] == ("*",), made


# -- item 7: builder parameters of the wrong type --------------------------------------------------

_WRONG = {"text": '"5"', "real": "5.5", "boolean": "true", "whole": "5", "list of texts": '["a"]',
          "list of booleans": "[true]", "table": "{ a = 1 }", "list of lists": "[[1]]", "list of tables": "[{ a = 1 }]",
          "date": "2024-01-01"}
#: (column, its type, the hierarchy table with %s for the key's value, what the key must be, the wrong
#: kinds the key takes legitimately)
_KEYS = {
    "widths": ("age", "integer", "{ widths = %s }", "a list of numbers", {"list of lists"}),
    "bottom": ("age", "integer", "{ widths = [5], bottom = %s }", "a number", {"real", "whole"}),
    "top": ("age", "integer", "{ widths = [5], top = %s }", "a number", {"real", "whole"}),
    "origin": ("age", "integer", "{ widths = [5], origin = %s }", "a number", {"real", "whole"}),
    "cuts": ("age", "integer", "{ cuts = %s }", "a list of lists of cut points", {"list of lists"}),
    "cuts bottom": ("age", "integer", "{ cuts = [[30]], bottom = %s }", "a number", {"real", "whole"}),
    "mask": ("zip", "categorical", "{ mask = %s }", "mask must be a whole number", {"whole"}),
    "dates": ("day", "date", "{ dates = %s }", "level", set()),
    "fanout": ("sex", "categorical", "{ fanout = %s }", "a list of whole numbers", {"list of lists"}),
    "order": ("sex", "ordinal", '{ fanout = [2], order = %s }', "a list of values",
              {"list of texts", "list of booleans"}),
    "groups": ("sex", "categorical", "{ groups = %s }", "a list of tables", {"list of tables"}),
    "flat": ("sex", "categorical", "{ flat = %s }", "true", {"boolean"}),
}


def _cases():
    for key, (column, kind, table, must, fine) in _KEYS.items():
        for wrong, value in _WRONG.items():
            if wrong not in fine:
                yield pytest.param(column, kind, table % value, must, id=f"{key}-{wrong}")


@pytest.mark.parametrize(("column", "kind", "table", "must"), list(_cases()))
def test_a_builder_key_of_the_wrong_type_is_refused_in_one_line_when_the_schema_is_read(
        tmp_path, column, kind, table, must):
    path = tmp_path / "s.toml"
    path.write_text(f'[attributes.{column}]\ntype = "{kind}"\nhierarchy = {table}\n')
    with pytest.raises(CrowdsafeError) as raised:  # nothing else (a TypeError, a ValueError) gets out
        Schema.from_toml(path)
    assert isinstance(raised.value, SchemaError)
    message = str(raised.value)
    assert f"'{column}'" in message and must in message and "\n" not in message


@pytest.mark.parametrize(("value", "must"), [
    ('"MF"', "order must be a list of values"), ("5", "order must be a list of values"),
    ("2024-01-01", "order must be a list of values"), ('[["M"], ["F"]]', "order must be a list of values"),
    ("{ M = 1 }", "order must be a list of values"),
])
def test_an_attribute_order_that_is_not_a_list_of_values_is_refused(tmp_path, value, must):
    path = tmp_path / "s.toml"
    path.write_text(f'[attributes.sex]\ntype = "ordinal"\norder = {value}\n')
    with pytest.raises(SchemaError) as raised:
        Schema.from_toml(path)
    assert str(raised.value).startswith(f"attribute 'sex': {must}") and "\n" not in str(raised.value)


def test_a_group_listing_a_list_is_refused():
    with pytest.raises(HierarchyError, match=r"group 'a' of level 1 lists \['M'\]; list values, not lists"):
        from_spec({"groups": [{"a": [["M"]]}]}, pl.Series("sex", ["M"]), attribute="sex")


def test_builders_called_in_code_refuse_texts_for_numbers():
    for wrong in ({"widths": "5"}, {"widths": [5], "bottom": "18"}, {"cuts": [["30"]]}, {"widths": [True]}):
        with pytest.raises(HierarchyError, match="must be"):
            intervals("age", [1, 2, 3], **wrong)


def test_the_check_command_names_a_widths_text(tmp_path: Path, capsys):
    data = tmp_path / "data.csv"
    pl.DataFrame({"age": [20, 30, 40]}).write_csv(data)
    schema = tmp_path / "s.toml"
    schema.write_text('[attributes.age]\ntype = "integer"\nhierarchy = { widths = "5", bottom = 0, top = 120 }\n')
    code = main(["check", str(data), "--schema", str(schema)])
    err = capsys.readouterr().err.strip()
    assert code == 2
    assert err == ("crowdsafe: error: hierarchy of 'age': widths must be a list of numbers, one width per level "
                   "(e.g. widths = [5, 10]), got '5'")
