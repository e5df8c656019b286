"""A table that ``missing='drop'`` leaves without rows is refused with the empty table's
custodian-only label (sweep pb7, item 2).

E: every row has a missing value; E1: E plus one complete row. With ``missing='drop'`` E1 answers
and E is refused: one row decides it, so the refusal is a custodian-only fact, said as
:data:`crowdsafe.errors.EMPTY_TABLE` says it, by the loader read whole and batch by batch.
"""

from __future__ import annotations

import pytest

import crowdsafe.data.streamed_table as streamed_table
from crowdsafe import api
from crowdsafe.data import streaming
from crowdsafe.errors import EMPTY_TABLE, CrowdsafeError
from small_schemas import AGE_SEX, EDU

SCHEMA = AGE_SEX + EDU
E = "age,sex,edu\n30,,HS\n,M,BSc\n"


def _commands(tmp_path, schema):
    def query(path):
        api.query(path, "count", epsilon=1, randomness=3, ledger=None, schema=schema, missing="drop")

    def perturb(path):
        api.perturb(path, attributes=["sex", "edu"], gamma=0.5, d=0.2, max_rows=10, seed=3, schema=schema,
                    missing="drop", ledger=None)

    def publish(path):
        out = tmp_path / "out" / path.rsplit("/", 1)[-1]
        api.publish(path, epsilon=1, qi=["age", "sex"], sensitive="edu", seed=3, schema=schema, missing="drop",
                    out=str(out / "r.csv"), ledger=str(out / "l.sqlite3"), budget=(5, 1e-3), scheme="medium")

    return {"query": query, "perturb": perturb, "publish": publish}


def _outcome(run, path) -> str | None:
    try:
        run(path)
    except CrowdsafeError as exc:
        return str(exc)
    return None


@pytest.mark.parametrize("streamed", [False, True], ids=["whole", "streamed"])
def test_a_table_emptied_by_drop_is_refused_as_a_custodian_fact(tmp_path, monkeypatch, streamed):
    schema = tmp_path / "schema.toml"
    schema.write_text(SCHEMA, encoding="utf-8")
    paths = {"E": tmp_path / "E.csv", "E1": tmp_path / "E1.csv"}
    paths["E"].write_text(E, encoding="utf-8")
    paths["E1"].write_text(E + "41,F,BSc\n", encoding="utf-8")
    tries: list[bool] = []
    if streamed:
        read = streamed_table.read_streamed

        def noted(*args, **kwargs):
            tries.append(True)
            return read(*args, **kwargs)

        monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
        monkeypatch.setattr(streamed_table, "read_streamed", noted)
    for name, command in _commands(tmp_path, str(schema)).items():
        assert _outcome(command, str(paths["E1"])) is None, name
        refusal = _outcome(command, str(paths["E"]))
        assert refusal is not None and "nothing is left after missing='drop'" in refusal, name
        assert refusal.endswith(EMPTY_TABLE), (name, refusal)
    assert bool(tries) is streamed  # the streamed reader was the one that refused (query and publish stream)
