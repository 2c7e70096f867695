"""viz.fileio: every file warpviz writes appears whole or not at all."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest
from hypothesis import given, settings as hsettings, strategies as st

from viz.fileio import atomic_target, inside, safe_name, umask, write_atomic


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


def test_the_data_is_on_the_disk_before_the_rename_and_the_rename_after_it(tmp_path, monkeypatch):
    """fsync of the temporary file (its whole content), then the rename, then fsync of the folder."""
    import viz.fileio as fileio

    events = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd):
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            events.append(("fsync-folder", os.path.realpath(f"/proc/self/fd/{fd}") if os.path.exists("/proc/self")
                           else None))
        else:
            events.append(("fsync-file", st.st_size))
        real_fsync(fd)

    def replace(src, dst):
        events.append(("rename", Path(src).parent == Path(dst).parent, Path(dst).name))
        real_replace(src, dst)

    monkeypatch.setattr(fileio.os, "fsync", fsync)
    monkeypatch.setattr(fileio.os, "replace", replace)
    p = tmp_path / "mine.toml"
    write_atomic(p, "x" * 5000)
    kinds = [e[0] for e in events]
    assert kinds.index("rename") > kinds.index("fsync-file")
    assert ("fsync-file", 5000) in events[:kinds.index("rename")]          # the whole text, before the rename
    assert events[kinds.index("rename")] == ("rename", True, "mine.toml")  # beside the target, over it
    folder = [e for e in events[kinds.index("rename"):] if e[0] == "fsync-folder"]
    assert folder, events                                                 # the rename itself made durable
    if folder[0][1] is not None:
        assert folder[0][1] == os.path.realpath(tmp_path)


def test_atomic_target_fsyncs_what_the_caller_wrote(tmp_path, monkeypatch):
    import viz.fileio as fileio

    sizes = []
    real = os.fsync
    monkeypatch.setattr(fileio.os, "fsync", lambda fd: (sizes.append(os.fstat(fd).st_size), real(fd)))
    with atomic_target(tmp_path / "t.wvtrace") as tmp:
        tmp.write_bytes(b"z" * 777)
    assert 777 in sizes and (tmp_path / "t.wvtrace").read_bytes() == b"z" * 777


FULL_DISK = """
import resource, signal, sys
from viz.fileio import WriteError, write_atomic
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)       # EFBIG, as a full disk gives ENOSPC
resource.setrlimit(resource.RLIMIT_FSIZE, (4096, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
try:
    write_atomic(sys.argv[1], "new " * 2000)
except WriteError as err:
    print(err.errno, err.filename, isinstance(err, OSError), err, sep="|")
    sys.exit(3)
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_FSIZE is POSIX")
def test_a_write_past_the_file_size_limit_leaves_the_old_file_whole(tmp_path):
    import errno
    import subprocess
    import sys

    p = tmp_path / "mine.toml"
    old = "old = 1\n" * 700                      # 5,600 bytes: more than the limit, already on disk
    p.write_text(old)
    root = Path(__file__).resolve().parents[1]
    proc = subprocess.run([sys.executable, "-c", FULL_DISK, str(p)], capture_output=True, text=True, timeout=120,
                          env=dict(os.environ, PYTHONPATH=str(root)))
    assert proc.returncode == 3, proc.stderr
    code, name, is_oserror, message = proc.stdout.strip().split("|")
    assert int(code) == errno.EFBIG and name == str(p) and is_oserror == "True"
    assert message.startswith(f"Could not write {p}: the file is larger than") and "keeps its old content" in message
    assert p.read_text() == old
    assert [q.name for q in tmp_path.iterdir()] == ["mine.toml"]


def test_write_error_says_the_disk_is_full_in_words(tmp_path):
    import errno

    from viz.errors import WarpvizError
    from viz.fileio import WriteError

    err = WriteError(tmp_path / "a.toml", OSError(errno.ENOSPC, "No space left on device"))
    assert isinstance(err, OSError) and isinstance(err, WarpvizError) and err.errno == errno.ENOSPC
    assert str(err) == (f"Could not write {tmp_path / 'a.toml'}: the disk is full (No space left on device). "
                        "The file keeps its old content.")


def test_a_folder_that_cannot_be_made_is_a_write_error(tmp_path):
    from viz.fileio import WriteError

    (tmp_path / "file").write_text("")
    with pytest.raises(WriteError) as got:
        write_atomic(tmp_path / "file" / "sub" / "a.toml", "x")
    assert "Could not write" in str(got.value)


# ---------------------------------------------------------------------------- names from file content


@pytest.mark.parametrize("text, want", [
    ("../../../../ESCAPED", "_.._.._.._ESCAPED"), ("..", "warpviz"), (".", "warpviz"), ("", "warpviz"),
    ("a/b\\c", "a_b_c"), (".hidden", "hidden"), ("CON", "CON_"), ("tile: 32x32", "tile_ 32x32"),
    ("转置", "转置"), ("copy_float", "copy_float"),
])
def test_safe_name_of_known_names(text, want):
    assert safe_name(text) == want


@hsettings(max_examples=300, deadline=None)
@given(st.text(max_size=300))
def test_any_text_becomes_one_name_inside_the_folder(text):
    folder = Path("/tmp/exports")
    name = safe_name(text)
    assert name and name not in (".", "..") and len(name) <= 120
    assert "/" not in name and "\\" not in name and "\0" not in name and not name.startswith(".")
    assert inside(folder, name) and (folder / name).parent == folder


@pytest.mark.parametrize("path, ok", [
    ("a.mp4", True), ("sub/a.mp4", True), ("../a.mp4", False), ("sub/../../a.mp4", False), ("/etc/x", False),
    (".", False), ("a/../b", True), ("/tmp/exports/x.png", True),
])
def test_inside(path, ok):
    assert inside("/tmp/exports", path) is ok


def test_one_byte_formatter_for_every_message():
    from viz.fileio import format_bytes
    from viz.trace import launch, tracefile

    assert [format_bytes(n) for n in (0, 512, 1024, 2**20 - 1)] == ["0 bytes", "512 bytes", "1,024 bytes",
                                                                   "1,048,575 bytes"]
    assert format_bytes(3 * 2**19) == "1.5 MiB (1,572,864 bytes)"
    assert format_bytes(4 << 30) == "4.00 GiB (4,294,967,296 bytes)"
    assert format_bytes(240 << 30) == "240.00 GiB (257,698,037,760 bytes)"
    # the trace reader and the launch-file checks say sizes the same way (no second formatter)
    assert tracefile._size is format_bytes and launch._bytes is format_bytes
