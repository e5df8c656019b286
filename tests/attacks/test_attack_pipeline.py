"""The order of the Polars engine's steps in the intersection attack (attacks/locate.py,
``class_tables_and_codes``): the releases' group-bys are collected in a second thread, started
before the targets' side (their pass over their rows and its NumPy part) runs in this one
(Polars runs the group-bys without the GIL); the class tables are the same as without it, and
an error of the releases' side is raised before one of the targets' side, as when the two ran
in turn."""

from __future__ import annotations

import os
import threading

import polars as pl
import pytest

from crowdsafe.attacks import locate
from crowdsafe.data import Hierarchy
from crowdsafe.data.generalized import leaf_domain
from crowdsafe.errors import InputError

HIERARCHY = Hierarchy.from_columns("s", ["flu", "cold", "cough"], [["sick"] * 3])
RELEASES = [
    pl.DataFrame({"age": ["[20, 29]"] * 3 + ["[30, 39]"] * 3, "s": ["flu", "cold", "flu", "cough", "flu", "cold"]}),
    pl.DataFrame({"age": ["[20, 39]"] * 6, "s": ["flu", "cold", "cough", "cough", "flu", "cold"]}),
]


def test_the_group_bys_run_in_a_second_thread_beside_the_targets_side(monkeypatch):
    leaves = locate.leaf_masks(HIERARCHY, leaf_domain("s", HIERARCHY))
    assert leaves is not None
    started = threading.Event()
    seen: dict[str, object] = {}
    collect_all = pl.collect_all

    def targets_side() -> str:  # the releases' group-bys were started before it
        seen["targets_thread"] = threading.current_thread() is threading.main_thread()
        seen["group_bys_started_before"] = started.wait(timeout=5)
        return "the targets' side"

    def group_bys(*args, **kwargs):
        seen["group_bys_thread"] = threading.current_thread() is not threading.main_thread()
        started.set()
        return collect_all(*args, **kwargs)

    monkeypatch.setattr(locate.pl, "collect_all", group_bys)
    tables, result = locate.class_tables_and_codes(RELEASES, ["age"], "s", targets_side, sensitive_leaves=leaves)
    assert seen == {"targets_thread": True, "group_bys_thread": True, "group_bys_started_before": True}
    assert result == "the targets' side"
    monkeypatch.setattr(locate.pl, "collect_all", collect_all)
    for table, other in zip(tables, locate.class_tables(RELEASES, ["age"], "s")):  # the same tables without it
        assert table.n_classes == other.n_classes and (table.sizes == other.sizes).all()
        assert {(int(k), table.sensitive_cells[int(c)]) for k, c in zip(*table.sensitive_held)} == {
            (int(k), other.sensitive_cells[int(c)]) for k, c in zip(*other.sensitive_held)}


def test_an_error_of_the_releases_side_comes_before_one_of_the_targets_side(monkeypatch):
    def failing_targets_side() -> None:
        raise InputError("the targets' error")

    with pytest.raises(InputError, match="the release has no column"):  # refused before the thread starts
        locate.class_tables_and_codes(RELEASES, ["age", "zip"], "s", failing_targets_side)
    with pytest.raises(InputError, match="the targets' error"):  # the releases' side is fine
        locate.class_tables_and_codes(RELEASES, ["age"], "s", failing_targets_side)

    def failing_tables(*args, **kwargs):
        raise InputError("the releases' error")

    monkeypatch.setattr(locate, "_class_tables", failing_tables)  # both sides fail: the releases' error
    with pytest.raises(InputError, match="the releases' error"):
        locate.class_tables_and_codes(RELEASES, ["age"], "s", failing_targets_side)
    monkeypatch.undo()

    def failing_group_bys(*args, **kwargs):
        raise InputError("the group-bys' error")

    monkeypatch.setattr(locate.pl, "collect_all", failing_group_bys)  # the group-bys fail in the other thread
    with pytest.raises(InputError, match="the group-bys' error"):
        locate.class_tables_and_codes(RELEASES, ["age"], "s", failing_targets_side)


def test_the_group_bys_threads_are_kept_and_made_again_after_a_fork(monkeypatch):
    assert locate.collector() is locate.collector()  # kept between attacks
    monkeypatch.setattr(locate, "_collector", locate._collector)  # (put back after the test)
    pid = os.getpid()
    kept = locate.collector()
    monkeypatch.setattr(locate.os, "getpid", lambda: pid + 1)  # as in a forked child
    made = locate.collector()
    assert made is not kept
    tables, _ = locate.class_tables_and_codes(RELEASES, ["age"], "s", lambda: None)  # and they collect
    assert [t.n_classes for t in tables] == [2, 1]
