"""Atomic writes leave either the complete file or nothing."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from crowdsafe.errors import InputError
from crowdsafe.files import atomic_path, write_text_atomic


def test_write_then_rename(tmp_path):
    target = tmp_path / "out" / "a.txt"
    write_text_atomic(target, "hello")
    assert target.read_text() == "hello"
    assert [p.name for p in target.parent.iterdir()] == ["a.txt"]


def test_failure_leaves_old_file_and_no_temporary(tmp_path):
    target = tmp_path / "a.txt"
    target.write_text("old")
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("crash mid-write")
    assert target.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["a.txt"]


def test_failure_creates_nothing(tmp_path):
    target = tmp_path / "new.txt"
    with pytest.raises(RuntimeError):
        with atomic_path(target) as tmp:
            tmp.write_text("half")
            raise RuntimeError("crash")
    assert list(tmp_path.iterdir()) == []


def test_output_gets_the_usual_permissions_not_private(tmp_path):
    import os

    umask = os.umask(0o022)
    try:
        target = write_text_atomic(tmp_path / "release.csv", "a\n")
    finally:
        os.umask(umask)
    assert target.stat().st_mode & 0o777 == 0o644


def test_an_input_path_the_system_cannot_look_up_is_one_line(tmp_path):
    from crowdsafe.files import check_input, check_input_path

    long_name = tmp_path / ("a" * 300 + ".csv")
    with pytest.raises(InputError, match=r"the name is too long \(304 bytes in its longest part"):
        check_input(long_name, "data")
    with pytest.raises(InputError, match="the name is too long"):
        check_input_path("x/" * 2100 + "y.csv")
    check_input_path(tmp_path / "missing.csv")  # nothing there: the caller's "file not found"
    check_input_path(tmp_path / "missing" / "x.csv")
    with pytest.raises(InputError, match="holds a NUL character"):
        check_input_path("a\0b.csv")


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="needs /proc")
def test_pseudo_files_of_proc_and_sys_are_refused_before_reading(tmp_path, capsys):
    """/proc and /sys files are 'regular' of size 0, made as they are read: /proc/kmsg blocked for
    ever, /proc/cpuinfo failed midway with an I/O error read as a machine that stopped (sweep ds5, item 10)."""
    from crowdsafe import cli
    from crowdsafe.files import check_input

    with pytest.raises(InputError, match=r"^/proc/self/status is under /proc, the kernel's pseudo-files, not a "
                                         r"regular file: crowdsafe reads regular files only"):
        check_input("/proc/self/status")
    link = tmp_path / "data.csv"
    link.symlink_to("/proc/self/status")  # as its links resolve
    with pytest.raises(InputError, match="is under /proc"):
        check_input(link, "data")
    table = tmp_path / "t.csv"
    table.write_text("age,sex\n" + "".join(f"{20 + i % 30},{'MF'[i % 2]}\n" for i in range(60)))
    with open(table, "rb") as handle:  # a file opened as /proc/self/fd/N is the file itself: read
        assert check_input(f"/proc/self/fd/{handle.fileno()}") == Path(f"/proc/self/fd/{handle.fileno()}")
    for argv in (["check", "/proc/self/status"], ["check", str(table), "--schema", "/proc/self/status"],
                 ["schema", "draft", "/proc/self/status", "--out", str(tmp_path / "s.toml")]):
        assert cli.main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "is under /proc, the kernel's pseudo-files" in err, err
