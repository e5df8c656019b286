"""The mechanism's inputs as the code built them before issue 32's fix, put back with pytest's
``monkeypatch`` by the tests that show a check can fail (tests/privacy_boundary/test_mechanism_inputs.py,
tests/audit/test_audit_publish_cli.py). Nothing here changes a library default: each function
replaces one piece for the duration of one test.
"""

from __future__ import annotations

import copy

import numpy as np
import pytest

from crowdsafe.data import Hierarchy
from crowdsafe.selection import score as objectives


def penalties_counting_leaves(monkeypatch: pytest.MonkeyPatch) -> None:
    """``node_penalties`` as it was: every hierarchy treated as declared, so a node of an observed
    hierarchy (whose leaves are the data's values) costs the share of the leaves, or of their
    range, that it covers."""
    real = objectives.node_penalties

    def counting_leaves(hierarchy: Hierarchy) -> list[np.ndarray]:
        as_declared = copy.copy(hierarchy)
        as_declared.observed = False
        return real(as_declared)

    monkeypatch.setattr(objectives, "node_penalties", counting_leaves)


def no_missing_value_leaf(monkeypatch: pytest.MonkeyPatch) -> None:
    """Published hierarchies as they were: no missing-value leaf unless the data holds a missing
    value (``Hierarchy.absorbing`` returns the hierarchy as it is)."""
    monkeypatch.setattr(Hierarchy, "absorbing", lambda hierarchy: hierarchy)


def before_the_fix(monkeypatch: pytest.MonkeyPatch) -> None:
    """Both: the penalties and the hierarchies of a publication before issue 32's fix. A column
    without a hierarchy, constant in the data, has one leaf, so its ``*`` costs 0; with a second
    value it costs 1."""
    penalties_counting_leaves(monkeypatch)
    no_missing_value_leaf(monkeypatch)
