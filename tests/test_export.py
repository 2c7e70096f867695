"""Export: files decode with the right frame count and size, SVG keeps text, writes are
atomic (cancel and failure leave nothing, never spoil a good file), the CLI exits 2 with a
message for every user error."""

import errno
import os
import threading
import xml.etree.ElementTree as ET

import imageio.v3 as iio
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from viz import export as ex  # noqa: E402
from viz.cli import main  # noqa: E402
from viz.export import ExportCancelled, ExportError, Selection, Settings, export  # noqa: E402
from viz.frames import frames  # noqa: E402
from viz.scenario import load  # noqa: E402
from viz.warp import warp_detail  # noqa: E402

SMALL = Settings(size=(320, 180), fps=10, hold=0.2)
COLUMN_READ = Selection(instructions=(8,), frames="1-4")     # compute, request, 2 wavefronts


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


@pytest.fixture(scope="module")
def plain():
    return load("transpose-tile")


@pytest.fixture(scope="module")
def padded():
    return load("transpose-tile", {"PAD": "1"})


def leftovers(folder):
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_mp4_decodes_with_the_frames_of_the_model(plain, tmp_path):
    out = tmp_path / "a.mp4"
    res = export(plain, out, SMALL, COLUMN_READ)
    assert res.pictures == 4 and res.video_frames == 4 * 2        # 0.2 s x 10 fps each
    decoded = list(iio.imiter(out))
    assert len(decoded) == 8
    assert decoded[0].shape == (180, 320, 3)
    assert not leftovers(tmp_path)


def test_whole_instruction_frame_count_equals_the_frame_model(plain, tmp_path):
    out = tmp_path / "col.gif"
    res = export(plain, out, SMALL, Selection(instructions=(8,)))
    model = frames(warp_detail(plain, 8))
    assert res.pictures == len(model) == 35
    decoded = list(iio.imiter(out))
    assert len(decoded) == 35 and decoded[0].shape[:2] == (180, 320)
    meta = iio.immeta(out, index=0)
    assert meta.get("duration") == 200 and meta.get("loop") == 0


def test_webm_decodes(plain, tmp_path):
    out = tmp_path / "a.webm"
    export(plain, out, SMALL, COLUMN_READ)
    assert len(list(iio.imiter(out))) == 8


def test_png_is_one_frame_the_summary_by_default(plain, tmp_path):
    out = tmp_path / "a.png"
    res = export(plain, out, Settings(size=(640, 360)), Selection(instructions=(8,)))
    img = iio.imread(out)
    assert img.shape[:2] == (360, 640) and res.video_frames == 1


def test_svg_parses_and_keeps_lane_labels_as_text(plain, tmp_path):
    out = tmp_path / "a.svg"
    export(plain, out, Settings(size=(1280, 720)), Selection(instructions=(8,), frames="5"))
    root = ET.parse(out).getroot()
    texts = [e.text for e in root.iter() if e.tag.endswith("text") and e.text]
    assert "lane" in texts and "byte addr" in texts
    assert all(str(k) in texts for k in range(32))
    assert "Wavefront 3 of 32" in texts
    assert root.get("viewBox") == "0 0 1280 720"


def test_png_sequence_into_a_folder_replaces_an_old_one(plain, tmp_path):
    """The frames of warpviz's own earlier export (named in its manifest, unchanged) are
    replaced, and the 31 it no longer has removed."""
    folder = tmp_path / "frames"
    export(plain, str(folder) + "/", SMALL, Selection(instructions=(8,)))
    assert len(list(folder.glob("frame_*.png"))) == 35
    export(plain, folder, SMALL, COLUMN_READ, png_sequence=True)
    assert sorted(p.name for p in folder.iterdir()) == [".warpviz-frames.json"] + [f"frame_{k:05d}.png"
                                                                                   for k in range(1, 5)]
    assert not leftovers(tmp_path)


def test_compare_steps_together_and_holds_the_shorter(plain, padded, tmp_path):
    out = tmp_path / "cmp.gif"
    res = export(plain, out, SMALL, Selection(instructions=(8,)), compare=padded, labels=("PAD = 0", "PAD = 1"))
    assert res.pictures == 35                                      # max(35, 4)
    assert len(list(iio.imiter(out))) == 35


def test_title_card_is_one_more_picture_held_longer(plain, tmp_path):
    out = tmp_path / "t.mp4"
    res = export(plain, out, Settings(size=(320, 180), fps=10, hold=0.2, title_card=True), COLUMN_READ)
    assert res.pictures == 5 and res.video_frames == 20 + 8        # 2 s card + 4 x 0.2 s
    assert len(list(iio.imiter(out))) == 28


def test_frames_by_kind(plain):
    plan = ex.make_plan(plain, SMALL, Selection(instructions=(8, 9), frames="request,summary"))
    assert [s.left[1].kind for s in plan.steps] == ["request", "summary"] * 2


def test_progress_reports_every_frame(plain, tmp_path):
    seen = []
    export(plain, tmp_path / "p.mp4", SMALL, COLUMN_READ, progress=lambda k, n: seen.append((k, n)))
    assert seen == [(k, 8) for k in range(1, 9)]


@pytest.mark.parametrize("name", ["c.mp4", "c.gif", "c.png", "c.svg", "seq/"])
def test_cancel_leaves_nothing_and_keeps_the_old_file(plain, tmp_path, name):
    out = tmp_path / name
    if not name.endswith("/"):
        out.write_bytes(b"a good file")
    flag = threading.Event()
    if name.endswith((".png", ".svg")):     # one frame: cancelled before it is written
        flag.set()

    def progress(k, n):
        if k >= 2:
            flag.set()

    with pytest.raises(ExportCancelled):
        export(plain, out, SMALL, COLUMN_READ, progress=progress, cancel=flag)
    if name.endswith("/"):
        assert not out.exists()
    else:
        assert out.read_bytes() == b"a good file"
    assert not leftovers(tmp_path)


def test_a_full_disk_is_a_clear_error_and_spoils_nothing(plain, tmp_path, monkeypatch):
    out = tmp_path / "full.mp4"
    out.write_bytes(b"a good file")
    real = ex.image_bgra
    calls = []

    def failing(img):
        calls.append(1)
        if len(calls) == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(img)

    monkeypatch.setattr(ex, "image_bgra", failing)
    with pytest.raises(ExportError, match="disk is full"):
        export(plain, out, SMALL, COLUMN_READ)
    assert out.read_bytes() == b"a good file"
    assert not leftovers(tmp_path)


def test_a_gif_of_one_picture(plain, tmp_path):
    out = tmp_path / "one.gif"
    res = export(plain, out, SMALL, Selection(instructions=(8,), frames="2"))
    assert res.pictures == 1 and len(list(iio.imiter(out))) == 1
    assert iio.imread(out, index=0).shape[:2] == (180, 320)


def test_an_export_is_on_the_disk_before_its_rename(plain, tmp_path, monkeypatch):
    """Each export's file is fsync-ed before it replaces the old one (a crash never leaves an
    empty file behind a good name), and the folder after."""
    import viz.fileio as fileio

    events = []
    real_fsync, real_replace = os.fsync, os.replace
    monkeypatch.setattr(fileio.os, "fsync", lambda fd: (events.append(("fsync", os.fstat(fd).st_size)),
                                                        real_fsync(fd)))
    monkeypatch.setattr(fileio.os, "replace", lambda a, b: (events.append(("rename", os.path.getsize(a))),
                                                            real_replace(a, b)))
    out = tmp_path / "a.png"
    export(plain, out, SMALL, COLUMN_READ)
    i = events.index(("rename", out.stat().st_size))
    assert ("fsync", out.stat().st_size) in events[:i] and any(e[0] == "fsync" for e in events[i + 1:])


@pytest.mark.parametrize("parts, want", [
    (["copy_float", "vs", "../../../../ESCAPED", 1], "copy_float-vs-_.._.._.._ESCAPED-1.mp4"),
    (["..", "vs", "/etc/passwd", 3], "warpviz-vs-_etc_passwd-3.mp4"),
    (["", "  "], "warpviz.mp4"),
    (["CON"], "CON_.mp4"),
    (["transpose-tile", 9], "transpose-tile-9.mp4"),
])
def test_default_file_names_made_from_file_content(parts, want, tmp_path):
    name = ex.default_file_name(parts, ".mp4")
    assert name == want
    assert ex.path_in(tmp_path, name).parent == tmp_path


def test_path_in_refuses_a_name_that_leaves_the_folder(tmp_path):
    for bad in ("../x.mp4", "a/../../x.mp4", str(tmp_path.parent / "x.mp4")):
        with pytest.raises(ExportError, match="not a file name inside"):
            ex.path_in(tmp_path, bad)


def run_cli(capsys, *argv):
    rc = main(["export", *argv])
    return rc, capsys.readouterr()


def test_cli_writes_and_reports(tmp_path, capsys):
    out = tmp_path / "cli.gif"
    rc, io = run_cli(capsys, "transpose-tile", "--out", str(out), "-i", "9", "--frames", "1-3",
                     "--size", "320x180", "--hold", "0.5", "--compare-set", "PAD=1", "--theme", "dark")
    assert rc == 0, io.err
    assert "wrote" in io.out and out.exists()
    assert len(list(iio.imiter(out))) == 3


@pytest.mark.parametrize("argv, words", [
    (["--out", "{tmp}/x.doc"], "unknown extension"),
    (["--out", "{tmp}/no/such/folder/x.mp4"], "does not exist"),
    (["--out", "{tmp}/x.mp4", "--size", "321x180"], "even width and height"),
    (["--out", "{tmp}/x.mp4", "--size", "huge"], "not understood"),
    (["--out", "{tmp}/x.mp4", "--size", "10x10"], "out of range"),
    (["--out", "{tmp}/x.mp4", "--fps", "0"], "--fps"),
    (["--out", "{tmp}/x.gif", "--hold", "-1"], "--hold"),
    (["--out", "{tmp}/x.png", "--theme", "neon"], "unknown theme"),
    (["--out", "{tmp}/x.png", "-i", "99"], "outside 1..16"),
    (["--out", "{tmp}/x.png", "--warp", "8"], "outside 0..7"),
    (["--out", "{tmp}/x.png", "--frames", "sometimes"], "not understood"),
    (["--out", "{tmp}/x.png", "--compare-set", "NOPE=1"], "not a param"),
    (["--out", "{tmp}"], "a PNG sequence needs a folder"),
])
def test_cli_user_errors_exit_2_with_a_message(tmp_path, capsys, argv, words):
    argv = [a.replace("{tmp}", str(tmp_path)) for a in argv]
    if words == "a PNG sequence needs a folder":
        (tmp_path / "file").write_text("x")
        argv = ["--out", str(tmp_path / "file"), "--png-sequence"]
    rc, io = run_cli(capsys, "transpose-tile", *argv)
    assert rc == 2
    assert words in io.err and "Traceback" not in io.err
    assert not leftovers(tmp_path)


def test_cli_invalid_scenario_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.toml"
    bad.write_text('[launch]\nblock = [32]\ngrid = [1]\n[[access]]\nop = "load"\nat = "nothere[tid]"\n')
    rc, io = run_cli(capsys, str(bad), "--out", str(tmp_path / "x.png"))
    assert rc == 2 and "bad.toml" in io.err


def test_cli_missing_ffmpeg_exits_2(tmp_path, capsys, monkeypatch):
    import imageio_ffmpeg

    def missing():
        raise RuntimeError("No ffmpeg exe could be found")

    monkeypatch.setattr(imageio_ffmpeg, "get_ffmpeg_exe", missing)
    rc, io = run_cli(capsys, "transpose-tile", "--out", str(tmp_path / "x.mp4"))
    assert rc == 2 and "ffmpeg" in io.err
    assert not list(tmp_path.iterdir())


def test_cli_unwritable_folder_exits_2(tmp_path, capsys, monkeypatch):
    real = os.access
    monkeypatch.setattr(ex.os, "access", lambda p, mode: False if str(p) == str(tmp_path) else real(p, mode))
    rc, io = run_cli(capsys, "transpose-tile", "--out", str(tmp_path / "x.png"))
    assert rc == 2 and "permission denied" in io.err


def test_export_runs_on_a_worker_thread_while_the_gui_thread_paints(plain, tmp_path):
    from PySide6.QtCore import QRectF
    from PySide6.QtGui import QImage, QPainter

    from viz.render import paint_frame, theme

    out = tmp_path / "worker.gif"
    done = {}

    def work():
        try:
            done["result"] = export(plain, out, SMALL, COLUMN_READ)
        except Exception as err:   # reported below, in the test's thread
            done["error"] = err

    t = threading.Thread(target=work)
    t.start()
    d = warp_detail(plain, 8)
    img = QImage(320, 180, QImage.Format.Format_RGB32)
    for f in frames(d)[:6]:            # the "GUI" keeps painting meanwhile
        p = QPainter(img)
        paint_frame(p, QRectF(0, 0, 320, 180), d, f, theme())
        p.end()
    t.join(60)
    assert "error" not in done, done.get("error")
    assert done["result"].pictures == 4 and len(list(iio.imiter(out))) == 4


def test_the_title_card_says_how_many_accesses_it_leaves_out():
    """A scenario with more accesses than the card lists ends the list with "…and N more"."""
    from viz.export import title_lines

    sc = load("stencil-shared")
    details = [warp_detail(sc, k) for k in range(len(sc.instructions()))]
    accesses = {f"{d.op} {d.access.text}" for d in details}
    lines = title_lines(sc, details)
    assert len(accesses) > 4
    listed = [ln for ln in lines if ln in accesses]
    assert len(listed) == 3
    assert f"…and {len(accesses) - 3} more accesses" in lines
    assert lines[-1].startswith("grid ")


def test_the_title_card_draws_every_line_or_says_how_many_are_left():
    from PySide6.QtCore import QRectF

    from viz.render import NullPainter, paint_title_card, theme

    lines = [f"line {k}" for k in range(40)]
    texts = paint_title_card(NullPainter(), QRectF(0, 0, 1920, 1080), "A title", lines, theme())
    drawn = [t.text for t in texts if t.key == "card-line"]
    shown = [t for t in drawn if t.startswith("line ")]
    assert drawn[:len(shown)] == lines[:len(shown)] and 3 <= len(shown) < 40
    assert drawn[-1] == f"…and {40 - len(shown)} more"
    assert all(t.px >= 14 for t in texts)
    few = paint_title_card(NullPainter(), QRectF(0, 0, 1920, 1080), "A title", lines[:3], theme())
    assert [t.text for t in few if t.key == "card-line"] == lines[:3]
