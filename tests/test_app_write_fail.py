"""A full disk never costs the user's text (tests/write_fail_app.py, in its own process,
under a 4 KiB file-size limit: each write past it fails with EFBIG, as on a full disk).

Autosave, Ctrl+S, the copy kept when another scenario opens and the recovery file are each
written whole or not at all: the file on disk keeps its old text, the window says which file
could not be written and why, the text stays in the editor, another scenario does not
replace it, closing asks first; once there is room again, Ctrl+S writes it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from app_helpers import user_dirs  # noqa: F401 - fixture
from viz.scenario import resolve

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not hasattr(os, "setrlimit") and sys.platform == "win32",
                                reason="RLIMIT_FSIZE is POSIX")


def run_app(tmp_path: Path, mode: str, target: str) -> dict:
    env = dict(os.environ, QT_QPA_PLATFORM="offscreen", WARPVIZ_SETTINGS=str(tmp_path / "settings.ini"),
               WARPVIZ_DATA_DIR=str(tmp_path / "data"),
               PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]))
    proc = subprocess.run([sys.executable, str(ROOT / "tests" / "write_fail_app.py"), mode, target], env=env,
                          capture_output=True, text=True, timeout=240, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


def test_a_full_disk_keeps_your_scenario_and_your_text(tmp_path):
    mine = tmp_path / "data" / "scenarios" / "mine.toml"
    mine.parent.mkdir(parents=True)
    old = resolve("transpose-tile").read_text("utf-8") + "# my own copy\n"
    mine.write_text(old, encoding="utf-8")
    r = run_app(tmp_path, "user", str(mine))
    assert r["text_before"] == old and r["typed_bytes"] > 4096

    # the autosave failed: the file has its old text (not 4,096 bytes of it), and the window says so
    assert r["autosaved_error"]
    after = r["after_autosave"]
    assert after["file"] == old
    for said in (after["status"], after["info"]):
        assert str(mine) in said and "file-size limit" in said and "File too large" in said, said
        assert "keeps its old content" in said and "stays in the editor" in said
    # Ctrl+S: the same, the text still in the editor
    assert r["after_save"]["file"] == old and r["after_save"]["editor"]
    assert str(mine) in r["after_save"]["status"]
    # another scenario does not replace text that could not be written
    assert r["open_other"] is False
    assert r["after_open_other"]["path"] == str(mine) and r["after_open_other"]["editor"]
    # closing asks first (here: Cancel), and the window stays
    assert len(r["close"]["asked"]) == 1 and str(mine) in r["close"]["asked"][0]
    assert r["close"]["visible"] and r["close"]["editor"]
    # room again: Ctrl+S writes the whole text and the warning goes
    assert r["save_again"] == str(mine) and r["after_space"]["file"] == r["typed"]
    assert r["after_space"]["info"] == "" and r["after_space"]["last_write_error"] == ""
    assert r["leftovers"] == [] and r["closed"]
    assert mine.read_text("utf-8") == r["typed"]


def test_a_full_disk_keeps_the_recovery_file_and_the_edits_to_a_builtin(tmp_path):
    rec = tmp_path / "data" / "recovery"
    rec.mkdir(parents=True)
    old_text = "# the unsaved text of an earlier session\n"
    old_meta = json.dumps({"path": str(tmp_path / "elsewhere.toml")})
    (rec / "unsaved.toml").write_text(old_text, encoding="utf-8")
    (rec / "unsaved.json").write_text(old_meta, encoding="utf-8")
    r = run_app(tmp_path, "builtin", "transpose-tile")
    assert r["path"] == str(resolve("transpose-tile"))
    after = r["after_autosave"]
    assert r["autosaved_error"]
    assert after["recovery"] == old_text and after["recovery_meta"] == old_meta       # not half a new one
    assert after["file"] == resolve("transpose-tile").read_text("utf-8")
    assert str(rec / "unsaved.toml") in after["status"] and "file-size limit" in after["status"]
    # Ctrl+S on a built-in saves a copy in your scenarios: that fails too, and says where
    assert str(tmp_path / "data" / "scenarios") in r["after_save"]["status"]
    assert r["after_save"]["editor"]
    assert r["open_other"] is False and r["after_open_other"]["editor"]
    assert list((tmp_path / "data" / "scenarios").glob("*.toml")) == [Path(r["save_again"])]
    # room again: the copy holds the whole text
    saved = Path(r["save_again"])
    assert saved.name == "transpose-tile-mine.toml" and r["after_space"]["saved"] == r["typed"]
    assert r["leftovers"] == [] and r["closed"]


def test_a_recovery_folder_that_cannot_be_made_is_a_message_and_the_edits_go_to_your_scenarios(qtbot, user_dirs):
    from app_helpers import make_window, wait_analysis
    from test_app_editor import type_at

    data = user_dirs / "data"
    data.mkdir()
    (data / "recovery").write_text("a file where the folder should be")
    w = make_window(qtbot, "transpose-tile")          # starts: no recovery to read
    w.close_losing_edits = lambda: True               # a failing test must not wait on the question
    type_at(qtbot, w, "ROWS = 8", "ROWS = 4")
    wait_analysis(qtbot, w)
    assert w.autosave() is False
    assert str(data / "recovery") in w.last_write_error and "stays in the editor" in w.last_write_error
    assert w.windowTitle().endswith("transpose-tile.toml * — warpviz")
    # another scenario: the edits are kept as a copy in your scenarios first, then it opens
    assert w.open_path(resolve("coalesced")) and w.session.path.stem == "coalesced"
    kept = data / "scenarios" / "transpose-tile-edited.toml"
    assert "ROWS = 4" in kept.read_text() and w.last_write_error == ""
    w.close()


# ---------------------------------------------------------------------------- two windows, special files


def test_two_windows_keeping_copies_at_once_never_overwrite_each_other(qtbot, user_dirs, monkeypatch):
    """Two windows (two processes in real life) edit the same built-in and open another
    scenario at the same moment: both pick transpose-tile-edited.toml as the free name.
    The second must not replace the first's copy: it takes the next name."""
    from app_helpers import make_window
    from viz.app import window_files as window_mod

    a = make_window(qtbot, "transpose-tile")
    b = make_window(qtbot, "transpose-tile")
    for w in (a, b):
        w.close_losing_edits = lambda: True
    a.session.set_text(a.session.text + "\n# window A\n")
    b.session.set_text(b.session.text + "\n# window B\n")
    real = window_mod.unique_user_path
    first = real("transpose-tile-edited")
    calls = []

    def asked_before_either_wrote(stem):
        calls.append(stem)
        return first if len(calls) <= 2 else real(stem)

    monkeypatch.setattr(window_mod, "unique_user_path", asked_before_either_wrote)
    kept_a = a._keep_unsaved_edits()
    kept_b = b._keep_unsaved_edits()
    assert kept_a == first and kept_b != first and kept_b.name == "transpose-tile-edited-2.toml"
    assert "# window A" in kept_a.read_text() and "# window B" in kept_b.read_text()
    assert a.last_write_error == "" and b.last_write_error == ""
    a.close()
    b.close()


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are POSIX")
def test_a_recovery_file_that_is_a_fifo_is_a_message_not_a_hang(qtbot, user_dirs):
    import stat

    from app_helpers import make_window

    rec = user_dirs / "data" / "recovery"
    rec.mkdir(parents=True)
    os.mkfifo(rec / "unsaved.toml")
    w = make_window(qtbot, "transpose-tile")
    w.close_losing_edits = lambda: True
    w.session.set_text(w.session.text + "\n# typed\n")
    assert w.autosave() is False
    assert "FIFO" in w.last_write_error and "stays in the editor" in w.last_write_error
    assert stat.S_ISFIFO(os.lstat(rec / "unsaved.toml").st_mode) and sorted(os.listdir(rec)) == ["unsaved.toml"]
    assert "# typed" in w.session.text
    w.close()


def test_concurrent_autosaves_of_one_file_all_succeed(tmp_path):
    """Writers of one path at once (two windows on one scenario, the recovery file) while a
    third removes it (the other window's "clear the recovery file"): each write is whole,
    none fails for the others' temporary files, renames or removal."""
    import threading

    from viz.fileio import write_atomic

    path = tmp_path / "unsaved.toml"
    texts = [f"# writer {k}\n" * 200 for k in range(3)]
    errors = []
    start = threading.Barrier(4)

    def writer(text):
        start.wait()
        for _ in range(60):
            try:
                write_atomic(path, text)
            except Exception as err:  # noqa: BLE001 - the test collects every failure
                errors.append(err)

    def clearer():
        start.wait()
        for _ in range(200):
            path.unlink(missing_ok=True)

    threads = [threading.Thread(target=writer, args=(t,)) for t in texts] + [threading.Thread(target=clearer)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert errors == []
    assert set(os.listdir(tmp_path)) <= {"unsaved.toml"}           # no temporary file left
    assert not path.exists() or path.read_text() in texts
