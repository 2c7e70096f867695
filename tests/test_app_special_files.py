"""A scenario file swapped for a FIFO or for /dev/zero while the app has it open: the app
asks whether the text on screen differs from the file through the bounded reader
(``viz.fileio.read_text_limited``), which refuses both without opening them for reading;
before, the FIFO blocked the app and /dev/zero filled its memory. Opening either is a
message, and the app keeps what it had."""

from __future__ import annotations

import os

import pytest

from app_helpers import user_dirs, window  # noqa: F401 - fixtures

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"),
                                reason="no FIFOs or /dev/zero here")

SCENARIO = """title = "mine"
[launch]
block = [32]
grid = [1]
[arrays]
s = { space = "shared", type = "float", shape = [64] }
[[access]]
op = "load"
at = "s[lane]"
"""


def test_a_scenario_swapped_for_a_fifo_or_dev_zero(qtbot, window, tmp_path):
    p = tmp_path / "mine.toml"
    p.write_text(SCENARIO)
    assert window.open_path(p)
    window.session.wait()
    assert window.modified() is False
    p.unlink()
    os.mkfifo(p)
    assert window.modified() is True           # the file is no longer the text on screen
    window._update_title()
    p.unlink()
    p.symlink_to("/dev/zero")
    assert window.modified() is True
    assert window.session.text == SCENARIO


def test_opening_a_fifo_or_dev_zero_is_a_message(qtbot, window, tmp_path, monkeypatch):
    from PySide6.QtWidgets import QMessageBox

    shown = []
    monkeypatch.setattr(QMessageBox, "warning", staticmethod(lambda *a, **k: shown.append(a[2])))
    before = window.session.text
    fifo = tmp_path / "f.toml"
    os.mkfifo(fifo)
    zero = tmp_path / "z.toml"
    zero.symlink_to("/dev/zero")
    for p in (fifo, zero):
        window.open_path(p)
        window.session.wait()
        assert window.isVisible()
    assert shown == [f"Cannot open {fifo}: is not a regular file", f"Cannot open {zero}: is not a regular file"]
    assert window.session.text == before
