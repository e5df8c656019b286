"""The budget ledger: refusals, composition, DPS sample tracking, concurrency and crashes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from crowdsafe.errors import BudgetExceeded, InputError, ParameterError, SampleReuseError
from crowdsafe.privacy.composition import compose_homogeneous
from crowdsafe.privacy.ledger import LEDGER_ENV, ChargeRequest, Ledger, default_ledger_path

SRC = str(Path(__file__).resolve().parents[2] / "src")


@pytest.fixture
def ledger(tmp_path):
    with Ledger(tmp_path / "ledger.sqlite3") as opened:
        opened.set_budget("fp-adult", "adult", 1.0, 1e-6)
        yield opened


def _query(ledger: Ledger, epsilon: float, delta: float = 0.0, **extra):
    with ledger.charge("adult", epsilon=epsilon, delta=delta, description="count", mechanism="laplace", **extra) as c:
        c.record(answer=1)
    return c


def test_a_typed_request_charges_like_its_keywords(ledger):
    request = ChargeRequest(epsilon=0.2, delta=1e-8, kind="dps-release", description="publish",
                            mechanism="m", sample_ids=["s-0"], details={"plan": 1})
    assert ledger.check("adult", request) == ledger.check("adult", epsilon=0.2, delta=1e-8, kind="dps-release",
                                                          description="publish", mechanism="m", sample_ids=["s-0"])
    with ledger.charge("adult", request, sample_ids=["s-1"]) as charge:  # a keyword replaces the field
        charge.record(rows=3)
    (entry,) = ledger.entries("adult")
    assert (entry.kind, entry.samples, entry.details, entry.outcome) == ("dps-release", ("s-1",), {"plan": 1},
                                                                         {"rows": 3})
    assert ledger.budget("adult").spent.epsilon == pytest.approx(0.2)
    with pytest.raises(TypeError):
        ledger.check("adult", epsilon=0.1, description="q", mechanism="m", epsilonn=0.1)
    with pytest.raises(TypeError):
        ledger.check("adult", epsilon=0.1, description="q")  # no mechanism
    with pytest.raises(ParameterError, match="kind"):
        ledger.check("adult", ChargeRequest(epsilon=0.1, description="q", mechanism="m", kind="other"))


def test_budget_is_set_once(ledger):
    assert ledger.set_budget("fp-adult", "adult", 1.0, 1e-6).budget.epsilon == 1.0  # same value: fine
    with pytest.raises(ParameterError, match=r"change it on the record with change_budget\('adult'"):
        ledger.set_budget("fp-adult", "adult", 2.0, 1e-6)
    with pytest.raises(ParameterError, match="already belongs to other data"):
        ledger.set_budget("fp-other", "adult", 1.0, 1e-6)
    with pytest.raises(ParameterError):
        ledger.set_budget("fp-x", "x", 0.0, 0.0)


def test_charges_add_up_and_the_one_too_many_is_refused_without_a_trace(ledger):
    for _ in range(10):
        _query(ledger, 0.1)
    budget = ledger.budget("adult")
    assert budget.spent.epsilon == pytest.approx(1.0) and budget.entries == 10
    with pytest.raises(BudgetExceeded, match="nothing was computed") as refused:
        _query(ledger, 0.1)
    # the ledger knows the table by its rows: its refusal says whose fact it is (docs/privacy-boundary.md)
    assert "a custodian-only fact about the data" in str(refused.value)
    assert ledger.budget("fp-adult").entries == 10
    assert all(e.status == "completed" and e.outcome == {"answer": 1} for e in ledger.entries())


def test_check_refuses_like_charge_but_writes_nothing(ledger):
    assert ledger.check("adult", epsilon=0.5, description="q", mechanism="m").epsilon == 0.5
    with pytest.raises(BudgetExceeded):
        ledger.check("adult", epsilon=1.5, description="q", mechanism="m")
    with pytest.raises(BudgetExceeded):
        ledger.check("adult", epsilon=0.1, delta=1e-5, description="q", mechanism="m")  # δ over
    assert ledger.entries() == []


def test_a_pure_dp_budget_admits_no_delta_and_a_tiny_delta_budget_is_not_overspent(tmp_path):
    # no absolute slack in the comparison: a δ = 0 budget admits no δ at all, however small (1e-16
    # and three charges of 3e-16 were accepted until 2026-11-30), and a δ budget of 1e-14 refuses a
    # total of 1.09e-14
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.set_budget("fp-pure", "pure", 1.0, 0.0)
        with pytest.raises(BudgetExceeded, match="admits nothing that costs δ > 0"):
            ledger.check("pure", epsilon=0.1, delta=1e-16, description="q", mechanism="m")
        with ledger.charge("pure", epsilon=0.1, description="q", mechanism="m"):
            pass  # pure ε still fits
        ledger.set_budget("fp-tiny", "tiny", 1.0, 1e-14)
        with ledger.charge("tiny", epsilon=0.1, delta=1e-14, description="q", mechanism="m"):
            pass
        with pytest.raises(BudgetExceeded):
            ledger.check("tiny", epsilon=0.1, delta=0.09e-14, description="q", mechanism="m")
        assert ledger.budget("tiny").spent.delta == 1e-14 and ledger.budget("pure").spent.delta == 0.0


def test_unknown_dataset_has_no_budget(ledger):
    with pytest.raises(BudgetExceeded, match="no privacy budget is set"):
        ledger.check("census", epsilon=0.1, description="q", mechanism="m")


def test_a_failed_release_still_counts(ledger):
    with pytest.raises(RuntimeError):
        with ledger.charge("adult", epsilon=0.3, description="q", mechanism="m"):
            raise RuntimeError("disk full")
    (entry,) = ledger.entries()
    assert entry.status == "failed" and "disk full" in entry.outcome["error"]
    assert ledger.budget("adult").spent.epsilon == pytest.approx(0.3)


def test_repeated_mechanism_is_certified_by_the_tightest_bound(tmp_path):
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.set_budget("fp", "d", 10.0, 1e-5)
        with ledger.charge("d", epsilon=0.1, description="50 counts", mechanism="m", repetitions=50) as charge:
            pass
        # auto: a slack of at most 10% of the free δ, here 1e-6, used because it saves > 1% of ε
        expected = min(compose_homogeneous(0.1, 0.0, 50, s).epsilon for s in (0.0, 1e-7, 1e-6))
        assert charge.loss.epsilon < 50 * 0.1
        assert charge.loss.epsilon == pytest.approx(expected)
        assert charge.loss.delta == pytest.approx(1e-6)
        (entry,) = ledger.entries()
        assert entry.repetitions == 50 and entry.run_loss.epsilon == 0.1 and "kov" in entry.composition


def test_repetitions_do_not_spend_delta_for_a_negligible_gain(tmp_path):
    with Ledger(tmp_path / "l.sqlite3") as ledger:
        ledger.set_budget("fp", "d", 10.0, 1e-5)
        with ledger.charge("d", epsilon=0.2, delta=1e-8, kind="dps-release", repetitions=3,
                           sample_ids=["s1", "s2", "s3"], description="3 releases", mechanism="m") as charge:
            pass
        assert charge.loss.delta == pytest.approx(3e-8)  # no slack: it would buy almost nothing
        assert charge.loss.epsilon <= 0.6 + 1e-12
        with ledger.charge("d", epsilon=0.1, description="explicit slack", mechanism="m", repetitions=50,
                           delta_slack=1e-6) as explicit:
            pass
        assert explicit.loss.epsilon == pytest.approx(compose_homogeneous(0.1, 0.0, 50, 1e-6).epsilon)


def test_parallel_parts_of_a_partition_cost_their_maximum(ledger):
    _query(ledger, 0.3, partition=("sex", "Female"))
    _query(ledger, 0.3, partition=("sex", "Male"))
    _query(ledger, 0.2, partition=("sex", "Female"))
    assert ledger.budget("adult").spent.epsilon == pytest.approx(0.5)
    _query(ledger, 0.1)
    assert ledger.budget("adult").spent.epsilon == pytest.approx(0.6)
    # Under change-one neighbours a record can move between parts: the two largest add up.
    ledger.set_budget("fp-change", "changed", 1.0, 1e-6)
    for part, epsilon in (("A", 0.2), ("B", 0.1), ("C", 0.05)):
        with ledger.charge("changed", epsilon=epsilon, description="count", mechanism="laplace",
                           partition=("race", part), neighbours="change"):
            pass
    assert ledger.budget("changed").spent.epsilon == pytest.approx(0.3)


def test_dps_sample_is_used_once(ledger):
    with ledger.charge("adult", epsilon=0.2, delta=1e-8, kind="dps-release", sample_ids=["sample-1"],
                       sample_rate=0.2, description="publish", mechanism="sample+k-anon") as charge:
        charge.record(rows=100)
    with pytest.raises(SampleReuseError, match="does not compose.*a custodian-only fact about the data"):
        ledger.check("adult", epsilon=0.1, ran_on="sample-1", description="query on the sample", mechanism="m")
    # A fresh sample composes like any (ε, δ)-DP release.
    with ledger.charge("adult", epsilon=0.2, delta=1e-8, kind="dps-release", sample_ids=["sample-2"],
                       description="publish", mechanism="m"):
        pass
    spent = ledger.budget("adult").spent
    assert spent.epsilon == pytest.approx(0.4) and spent.delta == pytest.approx(2e-8)
    assert [e.samples for e in ledger.entries()] == [("sample-1",), ("sample-2",)]


def test_fresh_samples_that_happen_to_coincide_are_recorded_not_refused(ledger):
    """A DPS release names the samples it drew itself, fresh and independent: if one comes out
    equal (as a table) to an earlier sample or to data a query read, that is chance, not reuse,
    and refusing would make whether a run goes ahead depend on the sampled rows."""
    _query(ledger, 0.1, ran_on="sample-9")
    for _ in range(2):
        with ledger.charge("adult", epsilon=0.1, kind="dps-release", sample_ids=["sample-9", "sample-9"],
                           repetitions=2, description="p", mechanism="m"):
            pass
    assert [e.samples for e in ledger.entries() if e.kind == "dps-release"] == [("sample-9",), ("sample-9",)]
    # the input of a query or release may still not be a consumed sample
    with pytest.raises(SampleReuseError, match="does not compose"):
        ledger.check("adult", epsilon=0.1, ran_on="sample-9", description="query on the sample", mechanism="m")


def test_dps_release_must_name_its_samples(ledger):
    with pytest.raises(ParameterError, match="identity"):
        ledger.check("adult", epsilon=0.1, kind="dps-release", description="p", mechanism="m")
    with pytest.raises(ParameterError):
        ledger.check("adult", epsilon=0.1, sample_ids=["s"], description="q", mechanism="m")


def test_export_is_json_and_lists_every_entry(ledger):
    _query(ledger, 0.25)
    data = json.loads(json.dumps(ledger.export()))
    (dataset,) = data["datasets"]
    assert dataset["name"] == "adult" and dataset["spent"]["epsilon"] == 0.25
    assert dataset["entries"][0]["mechanism"] == "laplace"
    assert ledger.integrity_check() == "ok"


def test_default_location_honours_the_environment(monkeypatch, tmp_path):
    monkeypatch.setenv(LEDGER_ENV, str(tmp_path / "mine.sqlite3"))
    assert default_ledger_path() == tmp_path / "mine.sqlite3"
    monkeypatch.delenv(LEDGER_ENV)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))
    assert default_ledger_path() == tmp_path / "data" / "crowdsafe" / "ledger.sqlite3"


def test_a_file_that_is_not_a_ledger_is_refused(tmp_path):
    bogus = tmp_path / "bogus.sqlite3"
    bogus.write_bytes(b"this is not a database" * 100)
    bogus.chmod(0o600)
    with pytest.raises(InputError, match="not a usable crowdsafe ledger"):
        Ledger(bogus)
    with pytest.raises(InputError, match="folder"):
        Ledger(tmp_path)


# -- two processes, and kill -9 ------------------------------------------------------------------

_WORKER = textwrap.dedent(
    """
    import sys
    from crowdsafe.errors import BudgetExceeded
    from crowdsafe.privacy.ledger import Ledger
    path, attempts = sys.argv[1], int(sys.argv[2])
    ledger = Ledger(path)
    ok = refused = 0
    for i in range(attempts):
        try:
            with ledger.charge("d", epsilon=0.01, description=f"q{i}", mechanism="m") as charge:
                pass
            ok += 1
            print(charge.entry_id, flush=True)
        except BudgetExceeded:
            refused += 1
    print(f"done {ok} {refused}", flush=True)
    """
)


def _spawn(code: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": SRC}
    return subprocess.Popen([sys.executable, "-c", code, *args], stdout=subprocess.PIPE, text=True, env=env)


def test_two_processes_never_overspend(tmp_path):
    path = tmp_path / "shared.sqlite3"
    with Ledger(path) as ledger:
        ledger.set_budget("fp", "d", 1.0, 0.0)
    workers = [_spawn(_WORKER, str(path), "70") for _ in range(2)]
    outputs = [w.communicate(timeout=120)[0] for w in workers]
    assert all(w.returncode == 0 for w in workers)
    granted = sum(int(out.strip().splitlines()[-1].split()[1]) for out in outputs)
    assert granted == 100  # 140 attempts at 0.01 against a budget of 1: exactly 100 fit
    with Ledger(path) as ledger:
        assert ledger.budget("d").entries == 100
        assert ledger.budget("d").spent.epsilon == pytest.approx(1.0)
        assert ledger.integrity_check() == "ok"


def test_kill_9_mid_release_loses_no_committed_entry(tmp_path):
    path = tmp_path / "crash.sqlite3"
    with Ledger(path) as ledger:
        ledger.set_budget("fp", "d", 1e9, 0.0)
    worker = _spawn(_WORKER, str(path), "100000")
    committed = []
    assert worker.stdout is not None
    while len(committed) < 40:
        committed.append(int(worker.stdout.readline()))
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)
    with Ledger(path) as ledger:
        ids = {e.id for e in ledger.entries()}
        assert set(committed) <= ids  # every reported charge survived
        assert ledger.integrity_check() == "ok"  # totals equal their entries: nothing partial
        count = ledger.budget("d").entries
        with ledger.charge("d", epsilon=0.01, description="after the crash", mechanism="m"):
            pass
        assert ledger.budget("d").entries == count + 1


_STUCK_IN_TRANSACTION = textwrap.dedent(
    """
    import sys, time
    from crowdsafe.privacy import ledger as module
    path, marker = sys.argv[1], sys.argv[2]
    original = module.Ledger._insert

    def insert_then_hang(conn, req):
        entry_id = original(conn, req)
        open(marker, "w").write(str(entry_id))
        time.sleep(60)  # killed here: the entry and its sample are written but not committed
        return entry_id

    module.Ledger._insert = staticmethod(insert_then_hang)
    ledger = module.Ledger(path)
    with ledger.charge("d", epsilon=0.5, kind="dps-release", sample_ids=["s1"], description="publish",
                       mechanism="m"):
        pass
    """
)

_CHARGED_THEN_DIES = textwrap.dedent(
    """
    import os, sys, time
    from crowdsafe.privacy.ledger import Ledger
    ledger = Ledger(sys.argv[1])
    with ledger.charge("d", epsilon=0.5, description="noise drawn, then killed", mechanism="m"):
        open(sys.argv[2], "w").write("charged")
        time.sleep(60)
    """
)


def _run_until_marker(code: str, path: Path, marker: Path) -> None:
    worker = _spawn(code, str(path), str(marker))
    deadline = time.monotonic() + 60
    while not marker.exists():
        assert time.monotonic() < deadline and worker.poll() is None, "worker did not reach the marker"
        time.sleep(0.02)
    worker.send_signal(signal.SIGKILL)
    worker.wait(timeout=30)


def test_kill_9_inside_the_charge_transaction_leaves_no_partial_entry(tmp_path):
    path = tmp_path / "partial.sqlite3"
    with Ledger(path) as ledger:
        ledger.set_budget("fp", "d", 1.0, 0.0)
    _run_until_marker(_STUCK_IN_TRANSACTION, path, tmp_path / "marker")
    with Ledger(path) as ledger:
        assert ledger.entries() == []
        assert ledger.budget("d").spent.epsilon == 0.0
        assert ledger.integrity_check() == "ok"
        # The sample was never recorded, so a release may use it now.
        with ledger.charge("d", epsilon=0.5, kind="dps-release", sample_ids=["s1"], description="p", mechanism="m"):
            pass


def test_a_release_killed_after_its_charge_keeps_counting(tmp_path):
    path = tmp_path / "charged.sqlite3"
    with Ledger(path) as ledger:
        ledger.set_budget("fp", "d", 1.0, 0.0)
    _run_until_marker(_CHARGED_THEN_DIES, path, tmp_path / "marker")
    with Ledger(path) as ledger:
        (entry,) = ledger.entries()
        assert entry.status == "charged" and entry.finished_at is None
        assert ledger.budget("d").spent.epsilon == 0.5
        with pytest.raises(BudgetExceeded):
            ledger.check("d", epsilon=0.6, description="q", mechanism="m")


def test_identity_key_is_secret_random_and_stable(tmp_path):
    first, second = Ledger(tmp_path / "a.sqlite3"), Ledger(tmp_path / "b.sqlite3")
    assert len(first.identity_key) == 32 and first.identity_key != second.identity_key
    again = Ledger(tmp_path / "a.sqlite3")
    assert again.identity_key == first.identity_key
    plain = "ab" * 32
    assert first.identify(plain) != second.identify(plain) != plain
    assert first.identify(plain) == again.identify(plain)
    assert first.identity_key.hex() not in json.dumps(first.export(), default=str)


def test_a_schema_1_ledger_with_datasets_is_refused_and_an_empty_one_upgraded(tmp_path):
    import sqlite3

    def old_ledger(path, with_dataset):
        conn = sqlite3.connect(path)
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        conn.execute("INSERT INTO meta VALUES ('schema_version', '1')")
        conn.execute("CREATE TABLE datasets (fingerprint TEXT PRIMARY KEY, name TEXT NOT NULL UNIQUE, "
                     "epsilon_budget REAL, delta_budget REAL, created_at TEXT)")
        conn.execute("CREATE TABLE samples (sample_id TEXT PRIMARY KEY, entry_id INTEGER, rate REAL)")
        if with_dataset:
            conn.execute("INSERT INTO datasets VALUES ('f', 'adult', 1.0, 0.0, 'then')")
        conn.commit()
        conn.close()
        path.chmod(0o600)

    old_ledger(tmp_path / "used.sqlite3", True)
    with pytest.raises(InputError, match="earlier crowdsafe"):
        Ledger(tmp_path / "used.sqlite3")
    old_ledger(tmp_path / "empty.sqlite3", False)
    upgraded = Ledger(tmp_path / "empty.sqlite3")
    assert len(upgraded.identity_key) == 32
    upgraded.set_budget("f", "adult", 1.0)
    with upgraded.charge("adult", epsilon=0.1, kind="dps-release", sample_ids=["s"], description="p",
                         mechanism="m"):
        pass


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_new_ledger_and_its_side_files_are_private(tmp_path):
    path = tmp_path / "new" / "folder" / "ledger.sqlite3"
    with Ledger(path) as book:
        book.set_budget("f", "adult", 1.0)
        with book.charge("adult", epsilon=0.1, description="count", mechanism="m"):
            side = [Path(f"{path}{suffix}") for suffix in ("-wal", "-shm", "-journal")]
            present = [f for f in side if f.exists()]
            assert {f.name[-4:] for f in present} == {"-wal", "-shm"}  # WAL mode, while the ledger is open
            assert {f.stat().st_mode & 0o777 for f in present} == {0o600}
    assert path.stat().st_mode & 0o777 == 0o600
    assert path.parent.stat().st_mode & 0o777 == 0o700
    assert path.parent.parent.stat().st_mode & 0o777 == 0o700


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
@pytest.mark.parametrize("mode", [0o644, 0o640, 0o604, 0o660, 0o606, 0o666, 0o620], ids=oct)
def test_a_ledger_others_can_read_or_write_is_refused_before_it_is_opened(tmp_path, mode):
    path = tmp_path / "led ger.sqlite3"
    with Ledger(path) as book:
        book.set_budget("f", "adult", 1.0)
    path.chmod(mode)
    before = path.read_bytes()
    with pytest.raises(InputError) as refused:
        Ledger(path)
    message = str(refused.value)
    assert "\n" not in message and f"{mode:o}" in message and "open to other users" in message
    assert message.endswith(f"make it private with `chmod 600 '{path}'`")
    assert path.read_bytes() == before and not Path(f"{path}-wal").exists()  # SQLite never opened it
    path.chmod(0o600)
    with Ledger(path) as book:
        assert book.budget("adult") is not None


@pytest.mark.skipif(sys.platform == "win32", reason="POSIX permissions")
def test_a_side_file_others_can_read_is_refused_and_named(tmp_path):
    path = tmp_path / "ledger.sqlite3"
    Ledger(path).close()
    journal = Path(f"{path}-journal")
    journal.write_bytes(b"")
    journal.chmod(0o644)
    with pytest.raises(InputError, match=f"make it private with `chmod 600 {journal}`"):
        Ledger(path)
    journal.chmod(0o600)
    Ledger(path).close()
