"""The main window's files: opening (scenario, trace, launch file; the dialog, drag and drop,
what opens at start), saving (in place, a copy in your scenarios), every write of your text
(atomic; a failure said and the text kept), autosave and crash recovery.
Part of ``MainWindow`` (viz/app/window.py)."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import stat
from pathlib import Path

from PySide6.QtWidgets import QFileDialog, QMessageBox

from ..fileio import WriteError, write_atomic, write_failure, write_new
from ..frames import Cursor
from ..i18n import tr
from ..scenario import resolve
from . import settings
from .library import unique_user_path
from .worker import wait_with_progress


RECOVERY_TEXT = "unsaved.toml"
RECOVERY_META = "unsaved.json"
QUICK_TRACE_BYTES = 8 << 20     # a trace file up to this size is read at once; a larger one off the GUI thread
MAX_RECOVERY_BYTES = 64 << 20     # a recovery file larger than any scenario typed by hand is not one


class WindowFiles:
    """Opening and saving files, writing your text, autosave and crash recovery. A part of
    ``MainWindow``: it uses the window's widgets and the other parts' methods through ``self``."""

    def _open_initial(self, arg: str | None) -> None:
        rec = self._recovery()
        if arg and str(arg).lower().endswith(".wvtrace"):
            if self.open_trace(Path(arg)):
                return
            arg = None         # the message is in the status bar; open what would open without it
        if arg:
            try:
                path = resolve(arg)
            except Exception as err:  # noqa: BLE001 - ScenarioError: show it, open nothing
                self.statusBar().showMessage(str(err), 15000)
                path = None
            if path is not None:
                if rec and rec[0] is not None and Path(rec[0]).resolve() == path.resolve():
                    self.open_path(path, text=rec[1], recovered=True)
                else:
                    self.open_path(path)
                return
        if rec:
            path, text = rec
            if path is not None and Path(path).is_file():
                self.open_path(Path(path), text=text, recovered=True)
            else:
                self.session.open_text(text, "recovered")
                self.editor.show_info(lambda: tr("Restored your unsaved edits from the last session."))
            return
        last = settings.get("last_scenario", "", str)
        cursor = settings.get("cursor", "", str)
        # a regular file only: a FIFO or a device named there would hang the start or fill the memory
        path = Path(last) if last and _is_regular(Path(last)) else resolve("transpose-tile")
        if last and path != Path(last) and os.path.lexists(last):
            self.last_open_error = tr("{path}: the file you had open last is no longer a regular file (a folder, a "
                                      "pipe or a device now has its name), so the default scenario opened. Fix: open "
                                      "the file you meant with File → Open", path=last)
            self.statusBar().showMessage(self.last_open_error, 30000)
        if not self.open_path(path) and path.suffix == ".wvtrace":
            path = resolve("transpose-tile")
            self.open_path(path)
        if cursor and last and Path(last) == path:
            at = _cursor_setting(cursor)
            if at is not None:
                self.session.move_to(at)

    def open_path(self, path: Path, text: str | None = None, recovered: bool = False) -> bool:
        path = Path(path)
        if path.suffix.lower() == ".wvtrace":
            return self.open_trace(path)
        from .state import is_launch_file

        if is_launch_file(path):
            return self.open_launch(path)
        if not self.secure_edits():
            return False               # the edits could not be written: they stay on screen
        try:
            self.session.cursor = Cursor()
            self.session.open(path, text=text)
        except (OSError, UnicodeDecodeError) as err:
            QMessageBox.warning(self, "warpviz", tr("Cannot open {path}: {err}", path=path, err=err))
            return False
        self.library.set_current(path)
        self.editor.show_info((lambda: tr("Restored your unsaved edits from the last session.")) if recovered else "")
        settings.put("last_scenario", str(path))
        if self.a_compare.isChecked():
            self.compare.right.clear()  # a new left side picks a new partner
            self.compare.ensure_partner()
        self._update_title()
        return True

    def open_trace(self, path: Path) -> bool:
        """Open a recorded trace: the picture, timeline, figures and heat map of what the kernel
        did; its launch file shows read-only. A bad file is a message; what was open stays."""
        from ..trace import TraceError

        if not self.secure_edits():
            return False               # the edits could not be written: they stay on screen
        try:
            src = self._load_trace(path)
            if src is None:
                self.statusBar().showMessage(tr("Opening {path} was cancelled.", path=path.name), 8000)
                return False
            self.session.open_trace(path, src)
        except TraceError as err:
            self.statusBar().showMessage(tr("Cannot open the trace: {err}", err=err.paragraph()), 30000)
            self.last_open_error = err.paragraph()
            return False
        self.last_open_error = ""
        if self.a_compare.isChecked():
            self.compare.right.clear()             # a new left side picks a new partner
            self.compare.ensure_partner()
        if not self.presenting:
            self.docks["source"].show()
            self.docks["source"].raise_()
        self.library.set_current(path)
        self.editor.show_info(lambda: tr("A recorded trace: the launch file below is shown read-only. To change "
                                         "the kernel or its launch, edit the launch file and record again (Record "
                                         "trace in the GPU panel, or `warpviz trace`)."))
        settings.put("last_scenario", str(path))
        self._update_title()
        return True

    def _load_trace(self, path: Path):
        """The trace file loaded and checked (``TraceSource``): a small file here, a large one
        (over ``QUICK_TRACE_BYTES``) off the GUI thread with a progress dialog that can cancel
        it (None then). TraceError for a bad file."""
        from ..trace.detail import TraceSource

        try:
            size = path.stat().st_size
        except (OSError, ValueError):
            size = 0                  # load says what is wrong with it
        if size <= QUICK_TRACE_BYTES:
            return TraceSource.open(path)
        ok, src = wait_with_progress(self, tr("Reading and checking the trace {name}…", name=path.name),
                                     lambda progress, cancel: TraceSource.open(
                                         path, lambda f, stage: progress(f, stage), cancel))
        return src if ok else None

    def open_launch(self, path: Path) -> bool:
        """Open a launch file (``*.launch.toml``): its kernel's source in the Source panel and
        the GPU panel's Record trace / Record and validate. A bad file opens with the CLI's
        message in the GPU panel; nothing else changes."""
        if not self.secure_edits():
            return False               # the edits could not be written: they stay on screen
        try:
            self.session.open_launch(path)
        except (OSError, UnicodeDecodeError) as err:
            QMessageBox.warning(self, "warpviz", tr("Cannot open {path}: {err}", path=path, err=err))
            return False
        if self.a_compare.isChecked():
            self.a_compare.setChecked(False)       # nothing to compare before it is recorded
        if not self.presenting:
            for key in ("source", "gpu"):
                if key in self.docks:
                    self.docks[key].show()
                    self.docks[key].raise_()
        self.library.set_current(path)
        self.editor.show_info(lambda: tr("A launch file: record a trace of its kernel with Record trace in the GPU "
                                         "panel. It is shown read-only; edit it in your editor, then open it again."))
        settings.put("last_scenario", str(path))
        self._update_title()
        return True

    def open_dialog(self) -> None:
        start = str(settings.user_scenario_dir())
        path, _ = QFileDialog.getOpenFileName(self, tr("Open a scenario"), start,
                                              tr("Scenarios and traces (*.toml *.wvtrace);;Scenarios (*.toml);;"
                                                 "Traces (*.wvtrace)") + ";;" + tr("Launch files (*.launch.toml)"))
        if path:
            self.open_path(Path(path))

    def is_user_file(self, path: Path | None) -> bool:
        return path is not None and path.parent.resolve() == settings.user_scenario_dir().resolve()

    def save(self) -> Path | None:
        """Save: your own scenario or an opened file in place; a built-in as a copy in your scenarios."""
        if self.session.is_trace:
            self.statusBar().showMessage(tr("A trace is read-only: there is nothing to save."), 8000)
            return None
        if self.session.is_launch:
            self.statusBar().showMessage(tr("A launch file is shown read-only: there is nothing to save here."), 8000)
            return None
        self.editor.flush()
        path = self.session.path
        if path is None or self.session.is_builtin:
            return self.save_copy()
        if not self._write(path, self.session.text):
            return None
        self._clear_recovery()
        self.statusBar().showMessage(tr("Saved {path}", path=path), 5000)
        self._update_title()
        return path

    def save_copy(self) -> Path | None:
        if self.session.is_trace:
            self.statusBar().showMessage(tr("A trace is read-only: there is nothing to save."), 8000)
            return None
        if self.session.is_launch:
            self.statusBar().showMessage(tr("A launch file is shown read-only: there is nothing to save here."), 8000)
            return None
        self.editor.flush()
        stem = (self.session.path.stem if self.session.path else "scenario") + "-mine"
        path = self._write_copy(stem.replace("-mine-mine", "-mine"))
        if not path:
            return None
        self._clear_recovery()
        self.session.path = path
        self.session.name = path.stem
        self.library.reload()
        self.library.set_current(path)
        settings.put("last_scenario", str(path))
        self.statusBar().showMessage(tr("Saved as {path}; it is autosaved from now on", path=path), 8000)
        self._update_title()
        return path

    def _keep_unsaved_edits(self) -> Path | bool | None:
        """Before another scenario replaces the text: edits to a built-in or an outside file
        go into your scenarios as a copy (nothing typed is lost; no dialog in the middle of a class).
        The copy's path; None when there was nothing to keep; False when it could not be written."""
        p = self.session.path
        if not self.session.text or self.is_user_file(p) or not self.modified():
            return None
        stem = (p.stem if p else "untitled") + "-edited"
        copy = self._write_copy(stem)
        if not copy:
            return False
        self._clear_recovery()
        self.library.reload()
        self.statusBar().showMessage(tr("Your edits were kept as {path}", path=copy), 10000)
        return copy

    def secure_edits(self) -> bool:
        """Before the editor's text is replaced (another file opens): the edits are written
        (autosave, or a copy in your scenarios). False, with the message shown, when they could
        not be: the caller then leaves the text where it is."""
        self.editor.flush()
        if self.autosave():
            return self._keep_unsaved_edits() is not False
        # the recovery file failed: a built-in's or an outside file's edits may still be kept as a copy
        return not self.is_user_file(self.session.path) and isinstance(self._keep_unsaved_edits(), Path)

    def _write(self, path: Path, text: str) -> bool:
        """Write the user's text atomically (``viz.fileio``: a temporary file, fsync, rename):
        the file has the new text or keeps its old one. False, with the message shown, when
        the write failed (a full disk, a size limit, no permission)."""
        try:
            write_atomic(path, text)
        except OSError as err:
            self._write_failed(path, err)
            return False
        self._wrote()
        return True

    def _write_copy(self, stem: str) -> Path | None:
        """The text as a new file in your scenarios (``stem.toml``, ``stem-2.toml``...), never
        over another: a name another window took a moment ago is skipped
        (``viz.fileio.write_new``). None, with the message shown, when it could not be written."""
        for _ in range(1000):
            try:
                path = unique_user_path(stem)
            except OSError as err:          # the scenarios folder cannot be made
                self._write_failed(_failed_path(err, "scenarios"), err)
                return None
            try:
                write_new(path, self.session.text)
            except FileExistsError:         # another window (or process) took the name first
                continue
            except OSError as err:
                self._write_failed(path, err)
                return None
            self._wrote()
            return path
        self._write_failed(settings.user_scenario_dir(), OSError(errno.EEXIST, "no free file name"))
        return None

    def _wrote(self) -> None:
        if self.last_write_error:           # it works again: the warning goes
            self.last_write_error = ""
            self.editor.show_info("")
            self.statusBar().clearMessage()
            self._update_title()

    def _write_failed(self, path: Path, err: OSError) -> None:
        """Say that ``path`` could not be written and why, in the status bar (until the next
        message) and above the editor (until a write succeeds); the text stays in the editor."""
        message = str(err) if isinstance(err, WriteError) else write_failure(path, err)
        message += " " + tr("Your text stays in the editor: fix the cause, then save again (Ctrl+S).")
        self.last_write_error = message
        self.statusBar().showMessage(message)
        self.editor.show_info(message)
        self._update_title()

    def delete_user_scenario(self, path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            return
        if self.session.path == path:
            self.session.path = None
        self.library.reload()

    def _edited(self) -> None:
        self.autosave_timer.start()
        self._update_title()

    def modified(self) -> bool:
        p = self.session.path
        if self.session.is_trace or self.session.is_launch:
            return False            # read-only: nothing to save
        if p is None:
            return True
        from ..fileio import ReadRefused, read_text_limited
        from ..scenario import MAX_TEXT_BYTES

        try:        # bounded: the file may have been swapped for a FIFO or /dev/zero since it was opened
            return read_text_limited(p, MAX_TEXT_BYTES, "scenario") != self.session.text
        except ReadRefused:
            return True

    def autosave(self) -> bool:
        """Your own scenarios are written in place (atomically); any other unsaved text goes to
        the recovery file. False when the text could not be written (the message is shown)."""
        self.autosave_timer.stop()
        p = self.session.path
        if not self.session.text:
            return True
        if self.is_user_file(p):
            if self.modified() and not self._write(p, self.session.text):
                return False
            self._clear_recovery()
        elif self.modified():
            text = self.session.text
            if settings.autosave_off():       # no data folder this session: the status bar said why
                return True
            try:
                d = settings.recovery_dir()
            except OSError as err:
                self._write_failed(_failed_path(err, "recovery"), err)
                return False
            # The text first, then what it belongs to, with the text's hash: a half-done pair
            # (the second write failed) restores the text as untitled, never onto another file.
            meta = {"path": str(p) if p else None, "sha256": _digest(text)}
            return self._write(d / RECOVERY_TEXT, text) and self._write(d / RECOVERY_META, json.dumps(meta))
        else:
            self._clear_recovery()
        return True

    def _recovery(self) -> tuple[str | None, str] | None:
        """The unsaved text of the last session and the file it belongs to (None: untitled)."""
        try:
            d = settings.recovery_dir()
            text = _read_small(d / RECOVERY_TEXT)
            meta = json.loads(_read_small(d / RECOVERY_META))
        except (OSError, ValueError, RecursionError):
            return None
        if not isinstance(meta, dict):
            return None, text           # the text is the user's; what it belonged to is unreadable
        path = meta.get("path")
        if not isinstance(path, str) or not path or "\0" in path:
            path = None
        digest = meta.get("sha256")
        if digest is not None and digest != _digest(text):
            path = None                 # the text of another save than its file name: keep it, untitled
        return path, text

    def _clear_recovery(self) -> None:
        try:
            d = settings.recovery_dir()
            for name in (RECOVERY_TEXT, RECOVERY_META):
                (d / name).unlink(missing_ok=True)
        except OSError:
            pass

    def dragEnterEvent(self, event) -> None:  # noqa: N802
        if self._dropped_file(event.mimeData()) is not None:
            event.acceptProposedAction()

    def dropEvent(self, event) -> None:  # noqa: N802
        path = self._dropped_file(event.mimeData())
        if path is not None:
            event.acceptProposedAction()
            self.open_path(path)

    @staticmethod
    def _dropped_file(mime) -> Path | None:
        for url in mime.urls() if mime.hasUrls() else []:
            if url.isLocalFile() and url.toLocalFile().lower().endswith((".toml", ".wvtrace")):
                return Path(url.toLocalFile())
        return None

    def close_losing_edits(self) -> bool:
        """Asked when the window closes and your edits could not be written: close anyway
        (the edits are lost) or stay (the default)."""
        box = QMessageBox(QMessageBox.Icon.Warning, "warpviz",
                          self.last_write_error + "\n\n" + tr("Close warpviz anyway and lose these edits?"),
                          QMessageBox.StandardButton.Discard | QMessageBox.StandardButton.Cancel, self)
        box.setObjectName("closeLosingEdits")
        box.setDefaultButton(QMessageBox.StandardButton.Cancel)
        box.exec()
        return box.clickedButton() is box.button(QMessageBox.StandardButton.Discard)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


def _read_small(path: Path) -> str:
    """A recovery file's text: a regular file of reasonable size (a FIFO or a device put in its
    place must not hang or fill the memory at start), else OSError / ValueError."""
    from ..fileio import read_text_limited

    return read_text_limited(path, MAX_RECOVERY_BYTES, "recovery file")     # ReadRefused is a ValueError


def _failed_path(err: OSError, folder: str) -> Path:
    """The folder a failed ``mkdir`` names (the user data folder may be the one that failed)."""
    return Path(err.filename) if isinstance(err.filename, str) and err.filename else Path(folder)


def _is_regular(path: Path) -> bool:
    try:
        return stat.S_ISREG(path.stat().st_mode)
    except (OSError, ValueError):
        return False


def _cursor_setting(text: str) -> Cursor | None:
    """The remembered position ``"instruction,block,warp,frame"``; None unless four whole
    numbers in 0..2^31 (the position is then clamped to what the file has)."""
    parts = text.split(",")
    if len(parts) != 4 or any(len(p.strip()) > 10 for p in parts):
        return None
    try:
        values = [int(p) for p in parts]
    except ValueError:
        return None
    if not all(0 <= v < 2**31 for v in values):
        return None
    return Cursor(*values)
