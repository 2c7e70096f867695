"""The export dialog on files a user did not write: a trace compared with another trace
exports side by side, and a default file name made from what a file says (a trace's
``name``, a scenario's title) stays one name inside the chosen folder."""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

import imageio.v3 as iio

from app_helpers import make_window, user_dirs  # noqa: F401 - fixtures
from test_app_export import export_now, open_dialog, small, type_into

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"


def wait_trace(qtbot, w):
    qtbot.waitUntil(lambda: w.session.trace_analysis is not None, timeout=20000)


def compare_with(qtbot, w, path: Path) -> None:
    w.a_compare.setChecked(True)
    assert w.compare.open_right(str(path))
    qtbot.waitUntil(lambda: w.compare.right.trace_analysis is not None, timeout=20000)


def test_a_trace_compared_with_a_shipped_trace_exports_side_by_side(qtbot, user_dirs, tmp_path):
    w = make_window(qtbot, str(TRACES / "copy_float.wvtrace"))
    wait_trace(qtbot, w)
    compare_with(qtbot, w, TRACES / "copy_int.wvtrace")
    d = open_dialog(qtbot, w)
    assert d.compare.isEnabled() and d.compare.isChecked()
    assert d.problem is None, d.problem
    assert Path(d.path.text()).name == "copy_float-vs-copy_int-1.mp4"
    small(qtbot, d, 320, 90)
    out = tmp_path / "pair.gif"
    type_into(qtbot, d.path, str(out))
    msg = export_now(qtbot, d)
    left = w.session.timeline.frame_count(w.session.cursor)
    right = w.compare.right.timeline.frame_count(w.session.cursor)
    assert msg.startswith("Wrote") and d.result.pictures == max(left, right)
    assert len(list(iio.imiter(out))) == max(left, right)
    assert iio.imread(out, index=0).shape[:2] == (90, 320)
    d.close()
    w.close()


def rewrite_header(src: Path, dst: Path, **fields) -> Path:
    """A copy of a shipped trace whose header says what an attacker wants."""
    dst.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
        for item in zin.infolist():
            data = zin.read(item)
            if item.filename == "header.json":
                data = json.dumps(dict(json.loads(data), **fields)).encode()
            zout.writestr(item.filename, data)
    return dst


def test_a_partner_trace_named_to_escape_exports_inside_the_chosen_folder(qtbot, user_dirs, tmp_path, monkeypatch):
    from viz.app import settings

    out = tmp_path / "exports" / "deep"
    out.mkdir(parents=True)
    settings.put("export/folder", str(out))
    victim = rewrite_header(TRACES / "copy_int.wvtrace", tmp_path / "outside" / "victim.wvtrace")
    evil = rewrite_header(TRACES / "copy_int.wvtrace", tmp_path / "shared" / "a" / "b" / "evil.wvtrace",
                          name="../../../../ESCAPED", title="../../../../ESCAPED",
                          compare="../../../outside/victim.wvtrace")
    assert (evil.parent / "../../../outside/victim.wvtrace").resolve() == victim.resolve()
    monkeypatch.chdir(ROOT)        # the left side by a relative path, as `warpviz assets/traces/...` gives it
    w = make_window(qtbot, "assets/traces/copy_float.wvtrace")
    wait_trace(qtbot, w)
    w.a_compare.setChecked(True)   # Ctrl+M: compare picks a partner itself, never the file on the left
    assert w.compare.right.path is not None
    assert w.compare.right.path.resolve() != (ROOT / "assets/traces/copy_float.wvtrace").resolve()
    assert w.compare.open_right(str(evil))
    qtbot.waitUntil(lambda: w.compare.right.trace_analysis is not None, timeout=20000)

    # the hostile trace on the left: its header's `compare` must not reach a file outside its folder
    w.a_compare.setChecked(False)
    assert w.open_path(evil)
    wait_trace(qtbot, w)
    w.a_compare.setChecked(True)
    assert w.compare.right.path is not None and w.compare.right.path.resolve() != victim.resolve()

    # and named ../../../../ESCAPED as the partner, the default file is one name in the folder
    w.open_path(ROOT / "assets/traces/copy_float.wvtrace")
    wait_trace(qtbot, w)
    assert w.compare.open_right(str(evil))
    qtbot.waitUntil(lambda: w.compare.right.trace_analysis is not None, timeout=20000)
    d = open_dialog(qtbot, w)
    d.format.setCurrentIndex(d.format.findData("gif"))
    d.refresh()
    default = Path(d.path.text())
    assert default.parent == out and default.name == "copy_float-vs-evil-1.gif"
    small(qtbot, d, 320, 90)
    d.frames.setText("1")
    msg = export_now(qtbot, d)
    assert msg.startswith("Wrote") and default.is_file()
    assert not [p for p in tmp_path.rglob("*ESCAPED*")]
    d.close()
    w.close()
