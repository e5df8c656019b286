"""crowdsafe.progress: the passes of a streamed publish reported by name, shown only on a terminal
and erased, never in captured output."""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from cli_helpers import run_command
from crowdsafe import api, progress
from crowdsafe.data import streaming

PASSES = ["reading the table: its values", "hashing the table (its identity)", "finding the sample's values",
          "hashing and counting the sample"]
CHOICE = ["choosing the generalization", None, 0, True]  # one call: no rows to count, shown while it runs


class Recorder:
    """A display that keeps what it is told: [label, total, rows advanced, finished]."""

    def __init__(self) -> None:
        self.passes: list[list] = []

    def start(self, label, total):
        self.passes.append([label, total, 0, False])
        return len(self.passes) - 1

    def advance(self, task, rows):
        self.passes[task][2] += rows

    def finish(self, task):
        self.passes[task][3] = True


@pytest.fixture
def table(tmp_path) -> Path:
    rng = np.random.default_rng(5)
    n = 3000
    path = tmp_path / "t.csv"
    pl.DataFrame({"age": rng.integers(17, 90, n), "sex": rng.choice(["F", "M"], n),
                  "city": rng.choice(["Lyon", "Paris", "Nice"], n),
                  "income": rng.choice(["<=50K", ">50K"], n)}).write_csv(path)
    return path


def test_without_a_display_batches_pass_untouched():
    batches = [pl.DataFrame({"a": [1, 2]}), pl.DataFrame({"a": [3]})]
    assert list(progress.tracked(iter(batches), "x", 3)) == batches


@pytest.mark.slow  # half a second or more (the quick loop: README)
def test_streamed_publish_reports_each_pass(table, tmp_path, monkeypatch):
    """The passes of a streamed publish with a ledger, in order, then the choice of the
    generalization; each ends, and each pass whose rows are known reads all of them. Read whole,
    the same publish shows the choice only."""
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    recorder = Recorder()
    with progress.showing(recorder):
        api.publish(str(table), epsilon=1.0, delta=1e-6, seed=3, ledger=str(tmp_path / "l.ledger"),
                    budget=(10.0, 1e-5), out=str(tmp_path / "r.csv"), report=False,
                    qi=["age", "sex", "city"])
    assert [p[0] for p in recorder.passes] == [*PASSES, CHOICE[0]]
    assert recorder.passes[0][1] is None and recorder.passes[0][2] == 3000
    assert all(p[1] == 3000 and p[2] == 3000 for p in recorder.passes[1:-1])
    assert all(p[3] for p in recorder.passes) and recorder.passes[-1] == CHOICE
    monkeypatch.setattr(streaming, "EAGER_BYTES", 1 << 40)
    read_whole = Recorder()
    with progress.showing(read_whole):
        api.publish(str(table), epsilon=1.0, delta=1e-6, seed=3, ledger=None, out=str(tmp_path / "w.csv"),
                    report=False, qi=["age", "sex", "city"])
    assert read_whole.passes == [CHOICE]  # read whole, only the choice (which can take minutes on many columns)


def test_a_pass_that_stops_is_finished():
    recorder = Recorder()

    def failing():
        yield pl.DataFrame({"a": [1]})
        raise ValueError("bad row")

    with progress.showing(recorder), pytest.raises(ValueError):
        list(progress.tracked(failing(), "reading", 10))
    assert recorder.passes == [["reading", 10, 1, True]]


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_shown_on_a_terminal_only():
    captured = io.StringIO()
    with progress.shown_on_terminal(captured):
        assert progress._display.get() is None  # not a terminal: no display at all
        assert list(progress.tracked(iter([pl.DataFrame({"a": [1]})]), "hashing the table", 1))
    assert captured.getvalue() == ""
    terminal = Terminal()
    with progress.shown_on_terminal(terminal):
        display = progress._display.get()
        assert display is not None
        list(progress.tracked(iter([pl.DataFrame({"a": [1]})] * 3), "hashing the table", 3))
    assert "hashing the table" in terminal.getvalue()  # drawn, then erased (transient)
    assert display.progress is None  # stopped with the block
    assert progress._display.get() is None


def test_command_line_output_has_no_progress(table, tmp_path, monkeypatch, capsys):
    """The command line's captured standard error (not a terminal) holds no trace of the passes."""
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    monkeypatch.setenv("CROWDSAFE_LEDGER", str(tmp_path / "l.ledger"))
    code, out, err = run_command(capsys, "publish", str(table), "--qi", "age,sex,city", "--epsilon", "1",
                                 "--delta", "1e-6", "--budget", "10,1e-5", "--seed", "3", "--no-report",
                                 "--out", str(tmp_path / "rel" / "r.csv"))
    assert code == 0, err
    for label in PASSES:
        assert label not in err and label not in out


def test_one_call_pass_is_reported_while_it_runs(table, monkeypatch):
    """A pass run as one streaming query (the check's classes) is shown while it runs, with no
    share of rows, and ends even when it fails."""
    recorder = Recorder()
    with progress.showing(recorder):
        with progress.working("counting"):
            assert recorder.passes == [["counting", None, 0, False]]
        with pytest.raises(ValueError), progress.working("failing"):
            raise ValueError("bad")
    assert recorder.passes == [["counting", None, 0, True], ["failing", None, 0, True]]
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    checked = Recorder()
    with progress.showing(checked):
        api.check(str(table), qi=["age", "sex", "city"], sensitive=["income"])
    assert [p[0] for p in checked.passes] == ["reading the table: its values", "counting the table's classes"]
    assert all(p[3] for p in checked.passes)


def test_streamed_query_reports_its_passes(table, tmp_path, monkeypatch):
    """A streamed DP count with a ledger: the read, the identity, then the query's own rows."""
    monkeypatch.setattr(streaming, "EAGER_BYTES", 0)
    recorder = Recorder()
    with progress.showing(recorder):
        api.query(str(table), "count where age >= 30", epsilon=1.0, randomness=1,
                  ledger=str(tmp_path / "q.ledger"), budget=(10.0, 1e-6))
    assert [p[0] for p in recorder.passes] == ["reading the table: its values", "hashing the table (its identity)",
                                               "reading the table: the query's rows"]
    assert all(p[3] for p in recorder.passes)


def test_a_schema_draft_reports_its_passes(table):
    """Found by a sweep: drafting a 20M-row file ran two minutes with nothing on the terminal."""
    from crowdsafe.data.schema_draft import draft_schema

    recorder = Recorder()
    with progress.showing(recorder):
        draft_schema(str(table))
    assert [p[0] for p in recorder.passes] == ["reading the table for the draft",
                                               "drafting each column's type, role and hierarchy"]
    assert all(p[3] for p in recorder.passes)
