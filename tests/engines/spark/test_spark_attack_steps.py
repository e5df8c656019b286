"""The Spark attack's driver steps (engines/spark/attack_steps.py) on a grid of classes: the
location forms only the pairs it keeps, and they are the true ones. No Spark session: the
steps run on the counts Spark collects, made here by hand."""

import numpy as np
import polars as pl
import pytest

from crowdsafe.attacks.locate import encode_targets
from crowdsafe.data.generalized import AttributeDomain
from crowdsafe.engines.spark import attack_steps as steps

SIDE = 100  # x and y in [0, SIDE): SIDE² targets, SIDE² classes


@pytest.fixture(scope="module")
def grid():
    """Every (x, y) a target; the release's classes the cells of a SIDE × SIDE grid, each of
    one x and one y written as a one-value range, holding one of three sensitive values."""
    x, y = (a.ravel() for a in np.meshgrid(np.arange(SIDE), np.arange(SIDE), indexing="ij"))
    targets = pl.DataFrame({"x": x, "y": y})
    domains, codes = encode_targets(targets, ["x", "y"])
    tuples = pl.DataFrame({"__tuple": np.arange(len(x), dtype=np.int64), "__k0": codes["x"], "__k1": codes["y"],
                           "__w": np.ones(len(x), dtype=np.int64)})
    combos = pl.DataFrame({"__q0": [f"[{v}, {v}]" for v in x], "__q1": [f"[{v}, {v}]" for v in y],
                           "__sv": np.array(["a", "b", "c"])[(x + y) % 3], "count": np.full(len(x), 10)})
    values = AttributeDomain("s", pl.Series("s", ["a", "b", "c"]))
    return targets, domains, tuples, combos, values


def test_the_location_forms_only_the_pairs_it_keeps(grid, monkeypatch):
    """Each target lies in one class. Joining the targets with every class that shares their
    first column's cell, then filtering on the second, formed SIDE × SIDE² rows (a million
    here; billions for a million targets, which killed the driver): no join may now give more
    rows than there are targets or combinations times the sensitive values."""
    targets, domains, tuples, combos, values = grid
    biggest = [0]
    join = pl.DataFrame.join

    def counted_join(self, *args, **kwargs):
        out = join(self, *args, **kwargs)
        biggest[0] = max(biggest[0], out.height)
        return out

    monkeypatch.setattr(pl.DataFrame, "join", counted_join)
    located = steps.locate(combos, "R1", ["x", "y"], domains, values, tuples, "exact")
    monkeypatch.undo()
    assert biggest[0] <= 3 * max(targets.height, combos.height)
    # every target in its own class: the class whose cells are its x and y
    pairs = located.located.join(tuples, on="__tuple").select("__k0", "__k1", "__class").sort("__k0", "__k1")
    assert pairs.height == targets.height
    x_text = domains["x"].values.cast(pl.String).to_numpy()[pairs.get_column("__k0").to_numpy()]
    y_text = domains["y"].values.cast(pl.String).to_numpy()[pairs.get_column("__k1").to_numpy()]
    expected = [f"[{a}, {a}]{steps.SEPARATOR}[{b}, {b}]" for a, b in zip(x_text, y_text)]
    assert pairs.get_column("__class").to_list() == expected
    assert located.stats.get_column("__matches").to_list() == [1] * targets.height
