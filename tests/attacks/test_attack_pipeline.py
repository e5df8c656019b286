"""The order of the Polars engine's steps in the intersection attack (attacks/locate.py,
``class_tables_and_codes``): the targets' pass runs in a second thread from the moment the
class tables' Polars queries are done, not once the whole tables are built. Polars calls made
while the pass holds Polars' threads wait for it, so the queries come first; the class tables'
NumPy part (each class's sensitive leaves, the classes' numbering) then runs beside the pass."""

from __future__ import annotations

import threading

import polars as pl

from crowdsafe.attacks import locate
from crowdsafe.data import Hierarchy
from crowdsafe.data.generalized import leaf_domain

HIERARCHY = Hierarchy.from_columns("s", ["flu", "cold", "cough"], [["sick"] * 3])
RELEASES = [
    pl.DataFrame({"age": ["[20, 29]"] * 3 + ["[30, 39]"] * 3, "s": ["flu", "cold", "flu", "cough", "flu", "cold"]}),
    pl.DataFrame({"age": ["[20, 39]"] * 6, "s": ["flu", "cold", "cough", "cough", "flu", "cold"]}),
]


class _Pass:
    """Stands for the targets' query: records when it is collected."""

    def __init__(self) -> None:
        self.started = threading.Event()

    def collect(self) -> pl.DataFrame:
        self.started.set()
        return pl.DataFrame({"done": [True]})


def test_the_targets_pass_starts_between_the_class_tables_queries_and_their_numpy(monkeypatch):
    leaves = locate.leaf_masks(HIERARCHY, leaf_domain("s", HIERARCHY))
    assert leaves is not None  # each class's leaves as a mask: read in NumPy, after the queries
    query = _Pass()
    seen: dict[str, bool] = {}
    ranks, held = locate._canonical_ranks, locate._held_leaves

    def canonical_ranks(*args, **kwargs):  # Polars queries: before the pass
        seen["ranks"] = query.started.is_set()
        return ranks(*args, **kwargs)

    def held_leaves(*args, **kwargs):  # NumPy: beside the pass (waits for it to start, bounded)
        seen["leaves"] = query.started.wait(timeout=5)
        return held(*args, **kwargs)

    monkeypatch.setattr(locate, "_canonical_ranks", canonical_ranks)
    monkeypatch.setattr(locate, "_held_leaves", held_leaves)
    tables, frame = locate.class_tables_and_codes(RELEASES, ["age"], "s", query, sensitive_leaves=leaves)
    assert seen == {"ranks": False, "leaves": True}
    assert frame.to_dict(as_series=False) == {"done": [True]}
    # the same tables as without the pass
    for table, other in zip(tables, locate.class_tables(RELEASES, ["age"], "s")):
        assert table.n_classes == other.n_classes and (table.sizes == other.sizes).all()
        assert {(int(k), table.sensitive_cells[int(c)]) for k, c in zip(*table.sensitive_held)} == {
            (int(k), other.sensitive_cells[int(c)]) for k, c in zip(*other.sensitive_held)}
