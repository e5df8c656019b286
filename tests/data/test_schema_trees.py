"""Schemas and hierarchies validated as trees (issue 33, points 7 and 9): a hierarchy may not
publish one value as another (cycles, a label reused from another value); a schema file's nesting
is bounded and its numbers finite, each refusal one line naming the key."""

from __future__ import annotations

import math

import pytest

from crowdsafe.data import Schema, load
from crowdsafe.data.builders import grouping, intervals, ordered_groups
from crowdsafe.data.hierarchy import Hierarchy
from crowdsafe.errors import HierarchyError, SchemaError


def _file(tmp_path, text, name="h.csv"):
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(("rows", "value", "node", "level"), [
    ("F;M;*\nM;F;*\n", "F", "M", 1),  # the cycle of the issue: every woman published as M
    ("F;M;*\nM;M;*\n", "F", "M", 1),  # a group labelled as one of its other members
    ("a;b;c;*\nb;b;c;*\nc;c;c;*\n", "a", "b", 1),
    ("a;x;b\nb;y;b\n", "a", "b", 2),  # two levels up
])
def test_a_hierarchy_file_that_publishes_a_value_as_another_is_refused(tmp_path, rows, value, node, level):
    path = _file(tmp_path, rows)
    with pytest.raises(HierarchyError) as caught:
        Hierarchy.from_csv(path, name="sex")
    assert str(caught.value) == (
        f"hierarchy file {path}: the value {value!r} would be published as {node!r} at level {level}, which is "
        "another value of 'sex' (a cycle, or a label reused): a release could not tell them apart; give that node "
        "a label of its own")


@pytest.mark.parametrize("rows", [
    "F;F;*\nM;M;*\n",  # kept as itself up the chain
    "F;person;*\nM;person;*\n",
    "*;*\nF;*\n",  # a leaf '*' and the root '*'
    "20;[20, 30);*\n25;[20, 30);*\n",
])
def test_trees_that_keep_values_apart_are_accepted(tmp_path, rows):
    Hierarchy.from_csv(_file(tmp_path, rows), name="x")


def test_group_cycles_and_reused_labels_are_refused():
    with pytest.raises(HierarchyError, match="the value 'M' would be published as 'F' at level 2"):
        grouping("sex", [{"G": ["F", "M"]}, {"F": ["G"]}])
    with pytest.raises(HierarchyError, match="the value 'b' would be published as 'a' at level 1"):
        grouping("x", [{"a": ["a", "b"]}])
    with pytest.raises(HierarchyError, match="the value 'x' would be published as 'y'"):
        ordered_groups("x", ["x", "y"], groups=[[("y", 2)]])
    assert grouping("x", [{"a": ["a"], "other": ["b", "c"]}]).height == 2
    assert ordered_groups("x", ["a", "b", "c"], fanout=[2]).height == 2  # labels made from the values


def test_a_schema_file_with_a_cycle_is_refused_on_load(tmp_path):
    _file(tmp_path, "F;M;*\nM;F;*\n", "sex.csv")
    schema = _file(tmp_path, '[attributes.sex]\ntype = "categorical"\nhierarchy = "sex.csv"\n', "s.toml")
    data = _file(tmp_path, "sex\nF\nM\n", "d.csv")
    with pytest.raises(HierarchyError, match="the value 'F' would be published as 'M'"):
        load(data, schema=schema)


@pytest.mark.parametrize(("spec", "key"), [
    ("widths = [nan, 10]", "hierarchy.widths[0] is nan"),
    ("widths = [5, inf]", "hierarchy.widths[1] is inf"),
    ("cuts = [[30, nan]]", "hierarchy.cuts[0][1] is nan"),
    ("widths = [5], bottom = -inf", "hierarchy.bottom is -inf"),
    ("widths = [5], top = nan", "hierarchy.top is nan"),
    ("widths = [5], origin = inf", "hierarchy.origin is inf"),
])
def test_nan_and_infinities_are_refused_naming_the_key(tmp_path, spec, key):
    path = _file(tmp_path, f'[attributes.age]\ntype = "numeric"\nhierarchy = {{ {spec} }}\n', "s.toml")
    with pytest.raises(SchemaError) as caught:
        Schema.from_toml(path)
    assert str(caught.value) == f"schema file {path}: attributes.age.{key}; numbers in a schema must be finite"


def test_nan_anywhere_in_the_file(tmp_path):
    path = _file(tmp_path, '[attributes.age]\ntype = "ordinal"\norder = [1.0, nan]\n', "s.toml")
    with pytest.raises(SchemaError, match=r"attributes\.age\.order\[1\] is nan"):
        Schema.from_toml(path)


@pytest.mark.parametrize("text", [
    "x = " + "[" * 100_000 + "]" * 100_000 + "\n",  # the parser's recursion
    "x = " + "{a = " * 3000 + "1" + "}" * 3000 + "\n",
    "[" + ".".join(f"t{i}" for i in range(40)) + "]\nx = 1\n",  # tables nested by their names: no recursion
    "x = " + "[" * 40 + "]" * 40 + "\n",
])
def test_deep_nesting_is_refused_in_one_line(tmp_path, text):
    path = _file(tmp_path, text + '[attributes.age]\ntype = "numeric"\n', "s.toml")
    with pytest.raises(SchemaError) as caught:
        Schema.from_toml(path)
    assert str(caught.value) == (f"schema file {path} is nested too deeply (more than 32 levels of tables and lists): "
                                 "a schema needs a few")


def test_a_real_schema_nests_well_within_the_bound(tmp_path):
    path = _file(tmp_path, '[attributes.job]\ntype = "categorical"\n[[attributes.job.hierarchy.groups]]\n'
                           'office = ["clerk", "sales"]\n[[attributes.job.hierarchy.groups]]\nall = ["office"]\n'
                           '[attributes.age]\ntype = "numeric"\nhierarchy = { cuts = [[20, 40], [40]] }\n', "s.toml")
    assert Schema.from_toml(path).names == ["job", "age"]


@pytest.mark.parametrize(("options", "fragment"), [
    ({"widths": [math.nan, 10]}, "widths holds nan"),
    ({"widths": [5, 10], "top": math.inf}, "top holds inf"),
    ({"cuts": [[30, math.nan]]}, "cuts holds nan"),
    ({"widths": [5], "origin": -math.inf}, "origin holds -inf"),
    ({"widths": ["five"]}, "widths must be numbers"),
])
def test_the_interval_builder_refuses_non_finite_parameters(options, fragment):
    with pytest.raises(HierarchyError, match=fragment):
        intervals("age", [20, 30, 40], **options)
