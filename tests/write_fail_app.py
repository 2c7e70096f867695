"""The app with a full disk (run by tests/test_app_write_fail.py, in its own process).

The file-size limit (RLIMIT_FSIZE) is set to 4 KiB once the window is up, with SIGXFSZ
ignored, so every write past 4,096 bytes fails with EFBIG as a full disk makes it fail
(Linux: the same write(2) that ENOSPC stops). The user then works as usual: types, lets the
autosave run, presses Ctrl+S, opens another scenario, closes the window; at each step this
prints what the files on disk hold and what the window says, then lifts the limit and saves.

argv: MODE (``user``: your own scenario; ``builtin``: a built-in, autosaved to the recovery
file) and the scenario to open. One JSON line on stdout.
"""

from __future__ import annotations

import json
import resource
import signal
import sys
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QDeadlineTimer, QEventLoop, Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest

from viz.app import settings
from viz.app.main import make_app
from viz.scenario import resolve

MODE, TARGET = sys.argv[1], sys.argv[2]
LIMIT = 4096
app = make_app()

from viz.app.window import RECOVERY_META, RECOVERY_TEXT, MainWindow  # noqa: E402 - after the QApplication


def spin(until, msecs: int = 20000) -> bool:
    deadline = QDeadlineTimer(msecs)
    while not until() and not deadline.hasExpired():
        QCoreApplication.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 20)
    return bool(until())


def read(path: Path) -> str | None:
    return path.read_text("utf-8") if path.exists() else None


w = MainWindow(TARGET)
w.show()
w.session.wait(600_000)      # returns when the analysis ends (a ceiling, not a sleep)
path = w.session.path
rec = settings.recovery_dir()
report: dict = {"path": str(path), "text_before": w.session.text}

signal.signal(signal.SIGXFSZ, signal.SIG_IGN)          # the write fails with EFBIG instead of killing us
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (LIMIT, hard))

# Type a long note at the end of the text (a paste): the file would pass 4 KiB.
w.editor.tabs.setCurrentIndex(1)
ed = w.editor.text
cur = ed.textCursor()
cur.movePosition(QTextCursor.MoveOperation.End)
ed.setTextCursor(cur)
note = "".join(f"# note {k}: the padded tile reads each column without a bank conflict\n" for k in range(80))
cur.insertText("\n" + note)
w.editor.flush()
typed = w.session.text
report["typed_bytes"] = len(typed.encode())
report["autosaved_error"] = spin(lambda: bool(w.last_write_error), 10000)     # the autosave timer fires
report["after_autosave"] = {"file": read(path), "recovery": read(rec / RECOVERY_TEXT),
                            "recovery_meta": read(rec / RECOVERY_META), "status": w.statusBar().currentMessage(),
                            "info": w.editor.info.text() if w.editor.info.isVisibleTo(w.editor) else ""}

QTest.keyClick(w.view, Qt.Key.Key_S, Qt.KeyboardModifier.ControlModifier)
report["after_save"] = {"file": read(path), "status": w.statusBar().currentMessage(),
                        "editor": w.editor.text.toPlainText() == typed, "title": w.windowTitle()}

report["open_other"] = w.open_path(resolve("coalesced"))          # the library's click: the text must go somewhere
report["after_open_other"] = {"path": str(w.session.path), "editor": w.editor.text.toPlainText() == typed,
                              "status": w.statusBar().currentMessage()}

asked = []
w.close_losing_edits = lambda: asked.append(w.last_write_error) or False      # "Cancel": stay
w.close()
report["close"] = {"asked": asked, "visible": w.isVisible(), "editor": w.editor.text.toPlainText() == typed}

resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))     # space again
report["save_again"] = str(w.save())
report["after_space"] = {"file": read(path), "saved": read(Path(report["save_again"]))
                         if report["save_again"] != "None" else None,
                         "info": w.editor.info.text() if w.editor.info.isVisibleTo(w.editor) else "",
                         "last_write_error": w.last_write_error}
report["typed"] = typed
report["leftovers"] = sorted(str(p) for p in Path(settings.data_dir()).rglob(".*") if p.is_file())
w.close()
report["closed"] = not w.isVisible() and not asked[1:]
print(json.dumps(report))
