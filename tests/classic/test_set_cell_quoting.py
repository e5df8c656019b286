"""Mondrian's set cells quote a member that needs it (crowdsafe.data.set_cells): with the
categories ``a, b``, ``a`` and ``b`` a class of ``a`` and ``a, b`` was written ``{a, a, b}``, and
nobody could tell whether ``b`` was in it; the release check read ``{a, b}`` (a class of ``a``
and ``b``) as the one value ``a, b``. Now the release is read back exactly."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from cli_helpers import run_command, run_for_error
from crowdsafe.data.generalized import AttributeDomain
from crowdsafe.data.pipeline import load, load_release

CATEGORIES = ["a, b", "a", "b", 'x "y"', "{z}"]
SCHEMA = '''[attributes.cat]
type = "categorical"
role = "quasi-identifier"
{hierarchy}
[attributes.age]
type = "numeric"
role = "quasi-identifier"

[attributes.row]
type = "categorical"
role = "sensitive"
'''
# a hierarchy's two groups (its classes at k = 4), and the set cells they are written as, by hand
GROUPED = {
    "ab_apart": ('"g1" = ["a", "b"]\n"g2" = ["a, b", "x \\"y\\"", "{z}"]',
                 {"{a, b}", '{"a, b", "x ""y""", "{z}"}'}),
    "ab_together": ('"g1" = ["a", "a, b"]\n"g2" = ["b", "x \\"y\\"", "{z}"]',
                    {'{a, "a, b"}', '{b, "x ""y""", "{z}"}'}),
    "no_hierarchy": ("", None),
}


def _files(tmp_path: Path, groups: str) -> tuple[Path, Path]:
    rows = [{"cat": c, "age": age + rep, "row": f"r{len(CATEGORIES) * 2 * rep + 2 * i + j}"}
            for rep in range(3) for i, c in enumerate(CATEGORIES) for j, age in enumerate((20, 30))]
    data = tmp_path / "t.csv"
    pl.DataFrame(rows).write_csv(data)
    schema = tmp_path / "s.toml"
    hierarchy = f"[[attributes.cat.hierarchy.groups]]\n{groups}\n" if groups else ""
    schema.write_text(SCHEMA.format(hierarchy=hierarchy), encoding="utf-8")
    return data, schema


@pytest.mark.parametrize("case", list(GROUPED))
def test_a_set_release_is_read_back_exactly(capsys, tmp_path, case):
    groups, expected_cells = GROUPED[case]
    data, schema = _files(tmp_path, groups)
    out = tmp_path / "r.csv"
    code, err = run_for_error(capsys, "anonymize", data, "--schema", schema, "--algorithm", "mondrian",
                              "--categorical", "set", "--k", "4", "--out", out, "--no-report")
    assert code == 0, err
    release = load_release(out).frame
    cells = set(release.get_column("cat").to_list())
    if expected_cells is not None:
        assert cells == expected_cells
    assert any('"' in c for c in cells)  # some member is quoted

    # every row's cell covers its own category (rows matched by the published 'row')
    original = load(data, schema=schema)
    domain = AttributeDomain.of(original, "cat")
    truth = dict(zip(original.frame.get_column("row").to_list(), original.frame.get_column("cat").to_list()))
    cover = domain.cover(release.get_column("cat").unique())
    covered = {cover.labels[j]: set(domain.values.gather(cover.members(j)).to_list()) for j in range(len(cover.labels))}
    for row, cell in zip(release.get_column("row").to_list(), release.get_column("cat").to_list()):
        assert truth[row] in covered[cell], (cell, truth[row])
    # and only the categories of its class: the classes hold 2 and 3 categories, 12 and 18 rows
    members = {}
    for row, cell in zip(release.get_column("row").to_list(), release.get_column("cat").to_list()):
        members.setdefault(cell, set()).add(truth[row])
    assert all(covered[cell] == held for cell, held in members.items())

    # check --original and compare read the same classes (none merged) and cells
    classes = release.select("cat", "age").n_unique()
    capsys.readouterr()
    code, stdout, err = run_command(capsys, "check", str(out), "--original", str(data), "--schema", str(schema),
                                    "--json")
    assert code == 0, err
    privacy = json.loads(stdout)["privacy"]["classes"]
    assert privacy["groups"] == classes and privacy["smallest"] >= 4
    code, stdout, err = run_command(capsys, "compare", str(data), str(out), "--schema", str(schema), "--json")
    assert code == 0, err
    loss = json.loads(stdout)["information_loss"]
    assert loss["classes"] == classes
    sizes = {cell: len(held) for cell, held in members.items()}
    rows_of = release.get_column("cat").value_counts()
    expected_ncp = sum(n * (sizes[c] / 5 if sizes[c] > 1 else 0) for c, n in rows_of.iter_rows()) / 30
    assert loss["ncp"]["cat"] == pytest.approx(expected_ncp)
