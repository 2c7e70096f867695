"""Exports never delete or replace what warpviz did not write (data loss).

A PNG sequence into a folder of the user's goes in beside what it holds (holiday.png, a
.git folder, a subfolder named album.png keep every byte); a frame_*.png warpviz cannot
prove it wrote refuses the export before anything changes; a folder that is a symbolic
link is written through; FIFOs, devices and /dev are refused; a full disk and a file-size
limit leave no partial file and keep the previous good one; ``Video.save("d/")`` and File
→ Export… go through the same writer."""

from __future__ import annotations

import errno
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from viz import export as ex  # noqa: E402
from viz.cli import main  # noqa: E402
from viz.export import ExportError, Selection, Settings, export  # noqa: E402
from viz.scenario import load  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
SMALL = Settings(size=(160, 90), fps=10, hold=0.2)
FOUR = Selection(instructions=(8,), frames="1-4")
TWO = Selection(instructions=(8,), frames="1-2")
FRAMES4 = [f"frame_{k:05d}.png" for k in range(1, 5)]


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


@pytest.fixture(scope="module")
def plain():
    return load("transpose-tile")


def users_folder(d: Path) -> dict[str, bytes]:
    """A folder as the attacker's report had it: a picture, a dot-file, a .git folder, a
    subfolder named like a picture."""
    (d / ".git").mkdir(parents=True)
    (d / ".git" / "HEAD").write_bytes(b"ref: refs/heads/main\n")
    (d / "album.png").mkdir()
    (d / "album.png" / "a.jpg").write_bytes(b"\xff\xd8 a photo")
    (d / "holiday.png").write_bytes(b"\x89PNG my holiday")
    (d / ".notes").write_bytes(b"my notes")
    return snapshot(d)


def snapshot(d: Path) -> dict[str, bytes]:
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file()}


def theirs(d: Path, before: dict[str, bytes]) -> dict[str, bytes]:
    return {k: v for k, v in snapshot(d).items() if k in before}


def test_a_sequence_into_the_users_folder_keeps_every_file_of_theirs(plain, tmp_path):
    pics = tmp_path / "pics"
    before = users_folder(pics)
    res = export(plain, str(pics) + "/", SMALL, FOUR)
    assert res.pictures == 4
    assert theirs(pics, before) == before                                   # every byte of theirs
    assert sorted(p.name for p in pics.iterdir()) == sorted(
        [".git", ".notes", ".warpviz-frames.json", "album.png", "holiday.png", *FRAMES4])
    manifest = json.loads((pics / ".warpviz-frames.json").read_text())
    assert manifest["written_by"] == "warpviz" and sorted(manifest["frames"]) == FRAMES4
    assert [p.name for p in tmp_path.iterdir()] == ["pics"]                  # nothing beside it either

    # again, shorter: warpviz's own 4 frames are replaced and the 2 it no longer has removed
    export(plain, pics, SMALL, TWO, png_sequence=True)
    assert theirs(pics, before) == before
    assert sorted(p.name for p in pics.glob("frame_*.png")) == FRAMES4[:2]
    assert sorted(json.loads((pics / ".warpviz-frames.json").read_text())["frames"]) == FRAMES4[:2]


def test_a_frame_file_warpviz_did_not_write_refuses_the_export_and_changes_nothing(plain, tmp_path):
    pics = tmp_path / "pics"
    pics.mkdir()
    (pics / "frame_00003.png").write_bytes(b"someone else's frame")
    (pics / "keep.txt").write_text("x")
    before = snapshot(pics)
    with pytest.raises(ExportError, match="frame_00003.png, which warpviz did not write"):
        export(plain, pics, SMALL, FOUR, png_sequence=True)
    assert snapshot(pics) == before and sorted(os.listdir(pics)) == ["frame_00003.png", "keep.txt"]


def test_a_frame_of_warpviz_the_user_changed_is_theirs_now(plain, tmp_path):
    pics = tmp_path / "pics"
    export(plain, pics, SMALL, FOUR, png_sequence=True)
    (pics / "frame_00004.png").write_bytes(b"edited by hand")       # changed since: no longer provably ours
    with pytest.raises(ExportError, match="frame_00004.png"):
        export(plain, pics, SMALL, TWO, png_sequence=True)
    assert (pics / "frame_00004.png").read_bytes() == b"edited by hand"
    assert sorted(p.name for p in pics.glob("frame_*.png")) == FRAMES4


def test_a_manifest_warpviz_did_not_write_is_left_and_refuses(plain, tmp_path):
    pics = tmp_path / "pics"
    pics.mkdir()
    (pics / ".warpviz-frames.json").write_text('{"frames": {"frame_00001.png": []}}')     # not warpviz's format
    (pics / "frame_00001.png").write_bytes(b"mine")
    with pytest.raises(ExportError, match="is not a list of frames warpviz wrote"):
        export(plain, pics, SMALL, FOUR, png_sequence=True)
    assert (pics / "frame_00001.png").read_bytes() == b"mine"


def test_a_manifest_cannot_make_warpviz_touch_another_file(plain, tmp_path):
    """A crafted manifest naming holiday.png (or ../x) with its real hash: only frame_NNNNN.png
    names count, so the file stays."""
    import hashlib

    pics = tmp_path / "pics"
    pics.mkdir()
    (pics / "holiday.png").write_bytes(b"photo")
    (tmp_path / "outside.png").write_bytes(b"outside")
    h = hashlib.sha256(b"photo").hexdigest()
    o = hashlib.sha256(b"outside").hexdigest()
    (pics / ".warpviz-frames.json").write_text(json.dumps(
        {"written_by": "warpviz", "frames": {"holiday.png": [h], "../outside.png": [o]}}))
    export(plain, pics, SMALL, TWO, png_sequence=True)
    assert (pics / "holiday.png").read_bytes() == b"photo" and (tmp_path / "outside.png").read_bytes() == b"outside"


def test_a_folder_that_is_a_link_is_written_through_and_stays_a_link(plain, tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    (real / "mine.txt").write_text("mine")
    link = tmp_path / "linkpics"
    link.symlink_to(real)
    export(plain, str(link) + "/", SMALL, TWO)
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert sorted(os.listdir(real)) == [".warpviz-frames.json", "frame_00001.png", "frame_00002.png", "mine.txt"]
    assert sorted(os.listdir(tmp_path)) == ["linkpics", "real"]                 # no .linkpics.old-*


def test_a_file_that_is_a_link_is_written_through(plain, tmp_path):
    target = tmp_path / "pictures" / "a.png"
    target.parent.mkdir()
    target.write_bytes(b"old")
    link = tmp_path / "a.png"
    link.symlink_to(target)
    export(plain, link, SMALL, TWO)
    assert link.is_symlink() and target.read_bytes().startswith(b"\x89PNG")


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("name", ["out.png", "out.mp4", "out.gif", "out.svg"])
def test_a_fifo_is_refused_and_stays_a_fifo(plain, tmp_path, name):
    import stat

    fifo = tmp_path / name
    os.mkfifo(fifo)
    with pytest.raises(ExportError, match=r"it is a FIFO \(named pipe\), not a regular file"):
        export(plain, fifo, SMALL, TWO)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and os.listdir(tmp_path) == [name]


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_link_to_a_device_is_refused_and_dev_is_never_written(plain, tmp_path):
    link = tmp_path / "null.png"
    link.symlink_to("/dev/null")
    with pytest.raises(ExportError, match="a character device"):
        export(plain, link, SMALL, TWO)
    assert link.is_symlink() and os.listdir(tmp_path) == ["null.png"]


def test_a_full_disk_mid_sequence_leaves_the_folder_as_it_was(plain, tmp_path, monkeypatch):
    pics = tmp_path / "pics"
    before = users_folder(pics)
    real = ex.fsync_file
    calls = []

    def failing(path):
        calls.append(path)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real(path)

    monkeypatch.setattr(ex, "fsync_file", failing)
    with pytest.raises(ExportError, match="disk is full"):
        export(plain, pics, SMALL, FOUR, png_sequence=True)
    assert snapshot(pics) == before and sorted(os.listdir(pics)) == [".git", ".notes", "album.png", "holiday.png"]
    # a new folder: gone again
    with pytest.raises(ExportError, match="disk is full"):
        calls.clear()
        export(plain, tmp_path / "new", SMALL, FOUR, png_sequence=True)
    assert sorted(os.listdir(tmp_path)) == ["pics"]


def test_a_cancelled_sequence_into_the_users_folder_leaves_it_as_it_was(plain, tmp_path):
    import threading

    pics = tmp_path / "pics"
    before = users_folder(pics)
    flag = threading.Event()
    with pytest.raises(ex.ExportCancelled):
        export(plain, pics, SMALL, FOUR, png_sequence=True, progress=lambda k, n: k >= 2 and flag.set(),
               cancel=flag)
    assert snapshot(pics) == before and ".warpviz-frames.json" not in os.listdir(pics)


def test_ffmpeg_failing_keeps_the_previous_video(plain, tmp_path, monkeypatch):
    """ffmpeg exits non-zero after taking every frame (its status was never looked at): the
    export fails and the old file stays."""
    out = tmp_path / "v.mp4"
    out.write_bytes(b"the previous good video")
    real_close = ex._Ffmpeg.close

    def close(self):
        real_close(self)
        raise OSError(errno.EIO, "ffmpeg exited with status 1: Error writing trailer")

    monkeypatch.setattr(ex._Ffmpeg, "close", close)
    with pytest.raises(ExportError, match="Error writing trailer"):
        export(plain, out, SMALL, TWO)
    assert out.read_bytes() == b"the previous good video" and os.listdir(tmp_path) == ["v.mp4"]


def test_an_mp4_without_its_index_is_not_complete(plain, tmp_path):
    out = tmp_path / "v.mp4"
    export(plain, out, SMALL, TWO)
    data = out.read_bytes()
    assert ex._mp4_complete(out) and b"moov" in data
    cut = tmp_path / "cut.mp4"
    cut.write_bytes(data[: len(data) // 2])
    assert not ex._mp4_complete(cut)
    no_moov = tmp_path / "nomoov.mp4"
    no_moov.write_bytes(b"\0\0\0\x10ftypisom\0\0\0\0" + b"\0\0\0\x10mdat" + b"x" * 8)
    assert not ex._mp4_complete(no_moov)


FSIZE = """
import resource, sys
resource.setrlimit(resource.RLIMIT_FSIZE, (8 * 1024, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
from viz.cli import main
sys.exit(main(["export", "transpose-tile", "-i", "9", "--frames", "1-4", "--size", "320x180", "--out", sys.argv[1]]))
"""


@pytest.mark.skipif(not hasattr(os, "fork"), reason="RLIMIT_FSIZE is POSIX")
@pytest.mark.parametrize("name", ["v.mp4", "seq/", "v.gif", "v.svg"])
def test_under_a_file_size_limit_an_export_fails_and_keeps_the_previous_file(tmp_path, name):
    """`ulimit -f 8` (ffmpeg inherits it: SIGXFSZ or EFBIG): exit 2 with one sentence, the
    previous good file whole, nothing else left."""
    out = tmp_path / name
    if not name.endswith("/"):
        out.write_bytes(b"the previous good file")
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen",
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, "-c", FSIZE, str(out)], capture_output=True, text=True, timeout=300,
                          env=env, cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "wrote" not in proc.stdout and "Traceback" not in proc.stderr
    said = [ln for ln in proc.stderr.splitlines() if ln.startswith("warpviz:")]
    assert len(said) == 1 and ("file-size limit" in said[0] or "disk is full" in said[0]), proc.stderr
    if name.endswith("/"):
        assert os.listdir(tmp_path) == []
    else:
        assert out.read_bytes() == b"the previous good file" and os.listdir(tmp_path) == [name]


def test_video_save_into_a_folder_goes_beside_the_users_files(tmp_path):
    import warpviz

    pics = tmp_path / "d"
    before = users_folder(pics)
    v = warpviz.scenario("transpose-tile").animation(9, "1-2", size=(160, 90))
    v.save(str(pics) + "/")
    assert theirs(pics, before) == before and sorted(p.name for p in pics.glob("frame_*.png")) == FRAMES4[:2]
    (pics / "frame_00009.png").write_bytes(b"theirs")
    with pytest.raises(ExportError, match="frame_00009.png"):
        v.save(str(pics) + "/")
    assert (pics / "frame_00009.png").read_bytes() == b"theirs"


def test_the_cli_refuses_with_one_sentence_and_exit_2(tmp_path, capsys):
    pics = tmp_path / "pics"
    pics.mkdir()
    (pics / "frame_00001.png").write_bytes(b"mine")
    assert main(["export", "transpose-tile", "-i", "1", "--out", str(pics) + "/"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "did not write" in err[0] and "nothing was written" in err[0]
    assert (pics / "frame_00001.png").read_bytes() == b"mine"


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
@pytest.mark.parametrize("argv", [["layout", "(8,8):(8,1)"], ["matrix", "ldmatrix-x4-tile"], ["calibrate"],
                                  ["bench", "transpose-tile"], ["bench", "--traces", "--dry-run"],
                                  ["trace", str(ROOT / "kernels" / "copy_float.launch.toml")]])
def test_every_out_refuses_a_fifo_before_it_starts(tmp_path, capsys, argv):
    """layout/matrix --out, and the GPU commands' --out before minutes of measuring (here,
    with no GPU, the refusal must come first: it names the FIFO, not the missing GPU)."""
    fifo = tmp_path / "m.png"
    os.mkfifo(fifo)
    assert main([*argv, "--out", str(fifo)]) == 2
    assert "FIFO" in capsys.readouterr().err and os.listdir(tmp_path) == ["m.png"]


def test_a_failure_while_moving_the_frames_in_leaves_only_provable_frames(plain, tmp_path, monkeypatch):
    """The disk fails after the first frame went in: the user's files are whole, the message
    says how far it got, and every frame in the folder is listed in the manifest, so the
    next export replaces them (none is left as an unknown frame_*.png)."""
    import viz.fileio as fileio

    pics = tmp_path / "pics"
    before = users_folder(pics)
    real = fileio.commit_new
    calls = []

    def failing(tmp, path):
        calls.append(path)
        if len(calls) == 2:
            raise OSError(errno.EIO, "Input/output error")
        real(tmp, path)

    monkeypatch.setattr(fileio, "commit_new", failing)
    with pytest.raises(ExportError, match="writing stopped after 1 of 4 frames"):
        export(plain, pics, SMALL, FOUR, png_sequence=True)
    assert theirs(pics, before) == before
    assert sorted(p.name for p in pics.glob("frame_*.png")) == FRAMES4[:1]
    assert not [p for p in pics.iterdir() if p.name.startswith(".warpviz-part")]
    monkeypatch.undo()
    export(plain, pics, SMALL, TWO, png_sequence=True)                # the frame left behind is provably warpviz's
    assert sorted(p.name for p in pics.glob("frame_*.png")) == FRAMES4[:2] and theirs(pics, before) == before


def test_write_new_without_hard_links_still_never_replaces(tmp_path, monkeypatch):
    """A file system without hard links (FAT, some network shares): the name is reserved with
    O_EXCL instead."""
    import viz.fileio as fileio

    def no_link(a, b):
        raise OSError(errno.EPERM, "Operation not permitted")

    monkeypatch.setattr(fileio.os, "link", no_link)
    p = tmp_path / "copy.toml"
    fileio.write_new(p, "first")
    with pytest.raises(FileExistsError):
        fileio.write_new(p, "second")
    assert p.read_text() == "first" and os.listdir(tmp_path) == ["copy.toml"]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_the_apis_pictures_refuse_a_fifo_and_a_link_to_dev_null(tmp_path):
    import stat

    import warpviz

    fifo = tmp_path / "p.png"
    os.mkfifo(fifo)
    pic = warpviz.scenario("transpose-tile").frame(9, size=(160, 90))
    with pytest.raises(ExportError, match="FIFO"):
        pic.save(fifo)
    null = tmp_path / "l.svg"
    null.symlink_to("/dev/null")
    with pytest.raises(ExportError, match="character device"):
        warpviz.layout_map("(8,8):(8,1)").save(null)
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode) and null.is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["l.svg", "p.png"]
