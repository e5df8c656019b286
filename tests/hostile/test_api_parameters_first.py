"""Parameters of the Python API that are decided from themselves alone are refused first: before
the table is read, before a ledger file is made and before any charge (docs/mechanisms.md, "Order
of work"; docs/hostile-input.md, "Options at and beyond their limits"). Found by a sweep of the
Python API:

- ``budget="5,1e-5"``, ``(1,)`` or out-of-range values gave a TypeError from inside the ledger, or
  were refused only after the data was read and a ledger file made.

Each refusal is one line, a ParameterError naming the parameter, leaves no ledger file where
there was none and no entry in one that exists, and is the same on a table and on its neighbour
(one row more, holding a missing value that ``missing="error"`` would refuse: a refusal of the
data there would mean the table was read first).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from crowdsafe import api
from crowdsafe.errors import ParameterError

ROWS = 200
BUDGET = (5.0, 1e-6)


def _tables() -> tuple[pl.DataFrame, pl.DataFrame]:
    """D and its neighbour D' = D plus a row with a missing ``sex`` and a new ``ville``."""
    rng = np.random.default_rng(5)
    table = pl.DataFrame({"age": rng.integers(20, 70, ROWS), "sex": rng.choice(["F", "M"], ROWS),
                          "ville": rng.choice(["Genève", "Zürich", "Bern"], ROWS)})
    extra = pl.DataFrame({"age": [33], "sex": [None], "ville": ["Lugano"]},
                         schema={"age": table["age"].dtype, "sex": pl.String, "ville": pl.String})
    return table, pl.concat([table, extra])


TABLE, NEIGHBOUR = _tables()


def _query(data: Any, ledger: Path, **given: Any) -> Any:
    options: dict[str, Any] = {"epsilon": 0.1, "ledger": ledger, "budget": BUDGET, "missing": "error", **given}
    return api.query(data, options.pop("text", "histogram sex"), **options)


def _perturb(data: Any, ledger: Path | None, **given: Any) -> Any:
    options: dict[str, Any] = {"c": 0.001, "gamma": 0.5, "max_rows": 1000, "seed": 1, "attributes": ["sex", "ville"],
                               "domains": {"sex": ["F", "M"], "ville": ["Genève", "Zürich", "Bern", "Lugano"]},
                               "ledger": ledger, "budget": BUDGET, "missing": "error", **given}
    return api.perturb(data, **options)


def _publish(data: Any, ledger: Path, **given: Any) -> Any:
    options: dict[str, Any] = {"epsilon": 1.0, "scheme": {"age": 0, "sex": 0, "ville": 0}, "ledger": ledger,
                               "budget": BUDGET, "seed": 1, "missing": "error", **given}
    return api.publish(data, **options)


RUNS = {"query": _query, "perturb": _perturb, "publish": _publish}


@pytest.fixture
def used_ledger(tmp_path: Path) -> Path:
    """A ledger holding the table's budget and one charged query."""
    ledger = tmp_path / "used.sqlite3"
    api.query(TABLE, "count", epsilon=0.1, ledger=ledger, budget=BUDGET, randomness=1)
    return ledger


def _refused_alike(run: Any, tmp_path: Path, used_ledger: Path, match: str, parameter: str, **given: Any) -> str:
    """The refusal of ``run(**given)`` on D and on D': one line, a ParameterError on
    ``parameter`` matching ``match``, the same words on both tables, no ledger file made and the
    used ledger unchanged."""
    before = api.ledger_report(used_ledger)
    messages = []
    for data in (TABLE, NEIGHBOUR):
        fresh = tmp_path / "fresh.sqlite3"
        for ledger in (fresh, used_ledger):
            with pytest.raises(ParameterError, match=match) as raised:
                run(data, ledger, **given)
            messages.append(str(raised.value))
            assert parameter in raised.value.parameters, raised.value.parameters
        assert not fresh.exists()  # no ledger made for a refused parameter
    assert api.ledger_report(used_ledger) == before  # no entry, no budget change
    assert len(set(messages)) == 1 and "\n" not in messages[0], messages
    return messages[0]


# -- item 4: the budget parameter ----------------------------------------------------------------


@pytest.mark.parametrize("run", sorted(RUNS))
@pytest.mark.parametrize(("budget", "match"), [
    ("5,1e-5", r"^budget must be a pair \(epsilon, delta\) of numbers, e\.g\. \(1, 1e-6\), got '5,1e-5'$"),
    ((1,), r"^budget must be a pair .* got \(1,\)$"),
    ((1, 1e-6, 0), r"^budget must be a pair .* got \(1, 1e-06, 0\)$"),
    (5.0, r"^budget must be a pair .* got 5\.0$"),
    ((-1, 1e-6), r"^budget=\(-1, 1e-06\): epsilon must be a finite number >= 0"),
    ((0, 1e-6), r"^budget=\(0, 1e-06\): a privacy budget needs epsilon > 0"),
    ((1, 2), r"^budget=\(1, 2\): delta must lie in \[0, 1\)"),
    ((1, float("nan")), r"^budget=\(1, nan\): delta must be a number"),
    ((True, 0.0), r"^budget=\(True, 0\.0\): epsilon must be a number"),
])
def test_a_malformed_budget_is_refused_first(tmp_path, used_ledger, run, budget, match):
    _refused_alike(RUNS[run], tmp_path, used_ledger, match, "budget", budget=budget)


@pytest.mark.parametrize("run", sorted(RUNS))
def test_a_malformed_budget_is_refused_before_the_data_is_read(tmp_path, run):
    ledger = tmp_path / "l.sqlite3"
    with pytest.raises(ParameterError, match=r"^budget=\(-1, 1e-06\)"):  # not: the file is not found
        RUNS[run](tmp_path / "nope.csv", ledger, budget=(-1, 1e-6))
    assert not ledger.exists()


def test_a_budget_given_as_a_list_is_the_pair(tmp_path):
    ledger = tmp_path / "l.sqlite3"
    api.query(TABLE, "count", epsilon=0.1, ledger=ledger, budget=[2, 0], randomness=1)
    (dataset,) = api.ledger_report(ledger)["datasets"]
    assert (dataset["budget"]["epsilon"], dataset["budget"]["delta"]) == (2.0, 0.0)
