"""The registry of named reproductions behind ``crowdsafe experiment NAME``.

An experiment is a function that takes an :class:`ExperimentContext` (where to write, the
randomness to use) and writes CSV and PNG files through it. Register one with the
:func:`experiment` decorator in a module listed in ``_MODULES`` (one line per module), so later
layers add entries without touching the command line.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import tempfile
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from crowdsafe.errors import InputError, ParameterError
from crowdsafe.experiments.output import write_csv, write_png
from crowdsafe.randomness import Randomness, as_randomness

# One line per module that registers experiments.
_MODULES = [
    "crowdsafe.experiments.calculus",
    "crowdsafe.experiments.alpha_beta",
    "crowdsafe.experiments.non_composition",
    "crowdsafe.experiments.composition",
    "crowdsafe.experiments.linkage",
    "crowdsafe.experiments.extreme_value",
    "crowdsafe.experiments.utility",
]

DEFAULT_RESULTS = Path("results")


@dataclass
class ExperimentContext:
    """Where an experiment writes, the randomness it must draw from, and the options it was given
    (``key=value`` texts, read by the experiment itself; empty for the defaults)."""

    name: str
    folder: Path
    randomness: Randomness
    written: list[Path] = field(default_factory=list)
    summary: dict[str, Any] = field(default_factory=dict)
    options: dict[str, str] = field(default_factory=dict)

    def csv(self, stem: str, columns: dict[str, list[Any]]) -> Path:
        """Write ``columns`` (name -> values, equal lengths) as ``<folder>/<stem>.csv``."""
        path = write_csv(self.folder / f"{stem}.csv", columns)
        self.written.append(path)
        return path

    def png(self, stem: str, figure: Any) -> Path:
        """Write a Matplotlib figure as ``<folder>/<stem>.png``."""
        path = write_png(self.folder / f"{stem}.png", figure)
        self.written.append(path)
        return path


@dataclass(frozen=True)
class Experiment:
    name: str
    title: str
    run: Callable[[ExperimentContext], None]
    options: tuple[str, ...] = ()  # the ``-O key=value`` keys it reads (none: it takes no options)


_REGISTRY: dict[str, Experiment] = {}
_loaded = False


ExperimentFunction = Callable[[ExperimentContext], None]


def experiment(name: str, title: str, options: tuple[str, ...] = ()
               ) -> Callable[[ExperimentFunction], ExperimentFunction]:
    """Register the decorated function as the experiment ``name``, reading the option keys
    ``options`` (``-O key=value``; any other key is refused before it runs)."""

    def register(function: Callable[[ExperimentContext], None]) -> Callable[[ExperimentContext], None]:
        if name in _REGISTRY and _REGISTRY[name].run is not function:
            raise ValueError(f"experiment {name!r} is registered twice")
        _REGISTRY[name] = Experiment(name, title, function, tuple(options))
        return function

    return register


def _load() -> None:
    global _loaded
    if not _loaded:
        for module in _MODULES:
            importlib.import_module(module)
        _loaded = True


def available() -> list[Experiment]:
    """Every registered experiment, sorted by name."""
    _load()
    return [_REGISTRY[name] for name in sorted(_REGISTRY)]


def get(name: str) -> Experiment:
    _load()
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY))
        raise ParameterError(f"unknown experiment {name!r}; known: {known}") from None


@dataclass(frozen=True)
class ExperimentResult:
    name: str
    title: str
    folder: Path
    files: tuple[Path, ...]
    summary: dict[str, Any]

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "title": self.title, "folder": str(self.folder),
                "files": [str(f) for f in self.files], "summary": self.summary}


def run(
    name: str,
    out: str | os.PathLike[str] | None = None,
    seed: int | Randomness | None = None,
    options: Mapping[str, str] | None = None,
    *,
    force: bool = False,
) -> ExperimentResult:
    """Run the experiment ``name``, writing under ``out/<name>/`` (default ``results/<name>/``);
    ``options`` are handed to it as texts (an experiment refuses keys it does not know).

    The folder's record, ``experiment.json``, lists the files the run wrote. Before the run, a
    folder holding anything its record does not list (a file crowdsafe did not write) is refused
    unless ``force`` (:mod:`crowdsafe.output_guard`); a rerun replaces its own files."""
    from crowdsafe.files import write_text_atomic
    from crowdsafe.output_guard import EXPERIMENT_RECORD, Output, OutputKind, check_outputs, json_document

    entry = get(name)
    unknown = sorted(set(options or {}) - set(entry.options))
    if unknown:
        takes = f"its options are: {', '.join(entry.options)}" if entry.options else "it takes no options"
        raise ParameterError(f"unknown option {unknown[0]!r} for the experiment {name!r}: {takes}")
    folder = Path(out if out is not None else DEFAULT_RESULTS) / name
    check_outputs([Output(folder, f"the results folder of {name}", OutputKind.EXPERIMENT)], force=force)
    made = [f for f in (folder.parent, *folder.parent.parents) if not f.exists()]  # folders this run makes
    staging = _staging_folder(folder)
    context = ExperimentContext(name, staging, as_randomness(seed),
                                options={str(k): str(v) for k, v in (options or {}).items()})
    try:
        entry.run(context)
        written = [folder / path.name for path in context.written]
        result = ExperimentResult(name, entry.title, folder, tuple(written), context.summary)
        record = staging / EXPERIMENT_RECORD
        write_text_atomic(record, json_document(result.as_dict(), default=str))
        _put_in_place([*context.written, record], folder, name)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for made_folder in made:  # a refused or failed run leaves no folder it made either
            with contextlib.suppress(OSError):
                made_folder.rmdir()
        raise
    shutil.rmtree(staging, ignore_errors=True)
    return result


def _put_in_place(files: list[Path], folder: Path, name: str) -> None:
    """Move the run's ``files`` (its record last) into ``folder``, all or nothing (ds6 #6: a move
    that failed part-way left new files under the old record). Every name is checked first (a
    folder there is refused in one line); the files they replace are moved aside, and put back
    with the new files removed if a move fails."""
    for path in files:
        target = folder / path.name
        if target.is_dir() and not target.is_symlink():
            raise ParameterError(f"the results folder {folder} holds a folder {path.name} where the experiment "
                                 f"{name!r} writes a file: remove it, or choose another out; nothing was replaced")
    folder.mkdir(parents=True, exist_ok=True)
    aside = Path(tempfile.mkdtemp(prefix=f".{folder.name}.replaced-{os.getpid()}-", dir=folder.parent))
    moved: list[str] = []
    placed: list[str] = []
    try:
        for path in files:
            target = folder / path.name
            if target.exists() or target.is_symlink():
                os.replace(target, aside / path.name)
                moved.append(path.name)
            os.replace(path, target)
            placed.append(path.name)
    except OSError as exc:
        for placed_name in placed:
            with contextlib.suppress(OSError):
                (folder / placed_name).unlink()
        kept = []
        for moved_name in moved:
            try:
                os.replace(aside / moved_name, folder / moved_name)
            except OSError:
                kept.append(moved_name)
        state = (f"the files it replaced are kept in {aside}" if kept else "the folder is as it was before the run")
        if not kept:
            shutil.rmtree(aside, ignore_errors=True)
        raise InputError(f"the experiment {name!r} could not put its files in {folder}: {exc.strerror or exc} "
                         f"({exc.filename}); {state}") from None
    shutil.rmtree(aside, ignore_errors=True)


def _staging_folder(folder: Path) -> Path:
    """A new hidden folder beside ``folder`` for the run to write into (moved into ``folder`` when
    the run ends, removed when it fails: an interrupted or failed run leaves no file in
    ``folder``). Folders a killed run left there are removed first (their process is gone)."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    for stale in folder.parent.glob(f".{folder.name}.partial-*"):
        pid = stale.name[len(f".{folder.name}.partial-"):].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(stale, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=f".{folder.name}.partial-{os.getpid()}-", dir=folder.parent))


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
