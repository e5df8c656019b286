"""The publish jobs of the app: the progress a job's page shows (:class:`JobDisplay`, its
:class:`Pass` es) and, for a job stopped as the app stops, what happened to the budget
(:func:`stopped_outcome`): a job stopped before the charge leaves no ledger entry, one stopped
after it leaves its entry marked failed (the budget stays spent)."""

from __future__ import annotations

import threading
from dataclasses import dataclass, replace
from pathlib import Path


@dataclass
class Pass:
    """One pass over the table as the progress display reported it (custodian-only, transient)."""

    label: str
    total: int | None
    done: int = 0
    finished: bool = False


class JobDisplay:
    """A :class:`crowdsafe.progress.Display` that keeps the passes of one publish for its page."""

    def __init__(self) -> None:
        self.passes: list[Pass] = []
        self.lock = threading.Lock()

    def start(self, label: str, total: int | None) -> Pass:
        with self.lock:
            task = Pass(label, total)
            self.passes.append(task)
            return task

    def advance(self, task: Pass, rows: int) -> None:
        with self.lock:
            task.done += rows

    def finish(self, task: Pass) -> None:
        with self.lock:
            task.finished = True

    def snapshot(self) -> list[Pass]:
        with self.lock:
            return [replace(p) for p in self.passes]


def ledger_mark(path: Path) -> int:
    """The ledger's last entry (0: none, or no ledger yet)."""
    if not path.exists():
        return 0
    from crowdsafe.privacy.ledger import Ledger

    with Ledger(path) as book:
        return max((e.id for e in book.entries()), default=0)


def stopped_outcome(path: Path, mark: int, label: str) -> str:
    """What a publish of ``label`` started after entry ``mark`` left when it was stopped: its
    entry marked failed, or none (stopped before the charge). In one line, for its page and the
    terminal."""
    charged = []
    if path.exists():
        from crowdsafe.privacy.ledger import Ledger

        with Ledger(path) as book:
            charged = [e.id for e in book.entries() if e.id > mark and e.kind == "dps-release"
                       and e.status == "failed" and e.description.startswith(f"publish {label}:")]
    if charged:
        return (f"stopped when the app stopped, after its charge: ledger entry #{charged[-1]} is marked failed (the "
                "budget it charged stays spent); no file was written")
    return "stopped when the app stopped, before the ledger was charged: nothing was spent and no file was written"
