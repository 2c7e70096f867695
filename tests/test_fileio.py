"""viz.fileio: every file warpviz writes appears whole or not at all."""

from __future__ import annotations

import os
import stat

import pytest

from viz.fileio import atomic_target, umask, write_atomic


def test_a_new_file_gets_the_umask_mode_and_an_old_one_keeps_its_mode(tmp_path):
    p = write_atomic(tmp_path / "sub" / "a.json", "{}\n")
    assert p.read_text() == "{}\n"
    assert stat.S_IMODE(os.stat(p).st_mode) == 0o666 & ~umask()       # not mkstemp's private 0600
    os.chmod(p, 0o640)
    write_atomic(p, b"[]")
    assert p.read_bytes() == b"[]" and stat.S_IMODE(os.stat(p).st_mode) == 0o640
    assert [q.name for q in p.parent.iterdir()] == ["a.json"]


def test_a_failed_write_leaves_the_old_file_and_no_temporary_file(tmp_path):
    p = tmp_path / "trace.wvtrace"
    p.write_bytes(b"old")
    with pytest.raises(RuntimeError):
        with atomic_target(p) as tmp:
            tmp.write_bytes(b"half")
            raise RuntimeError("disk full")
    assert p.read_bytes() == b"old"
    assert [q.name for q in tmp_path.iterdir()] == ["trace.wvtrace"]
