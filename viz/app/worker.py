"""Background jobs: analysis and sweeps run off the GUI thread, newest wins.

A ``Runner`` runs one job at a time on ``QThreadPool``; submitting a new job asks the
running one to stop (the engine polls ``cancel`` between chunks) and drops its result.
Results come back on the GUI thread through queued signals. Each job has its own signal
object, connected to the Runner's methods: when the Runner (and the widget that owns it) is
deleted, Qt drops those connections, so a job that finishes later reaches nothing.
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from PySide6.QtCore import QEventLoop, QObject, QRunnable, QThreadPool, QTimer, Signal

from ..engine import Cancelled

JobFn = Callable[[Callable[[float, str], None], Callable[[], bool]], Any]


# Signal objects of jobs that ended, freed on the GUI thread (a QObject deleted on a pool
# thread while the GUI thread touches its connections crashes the process).
_retired: list[QObject] = []
_retired_lock = threading.Lock()


def retire(obj: QObject) -> None:
    """Called on a pool thread for a job's signal object it holds: keep it alive until the GUI
    thread frees it (``free_retired``)."""
    with _retired_lock:
        _retired.append(obj)


def free_retired() -> None:
    """Drop the ended jobs' signal objects; called on the GUI thread."""
    with _retired_lock:
        gone = _retired[:]
        _retired.clear()
    del gone


class _Signals(QObject):
    done = Signal(int, object)
    failed = Signal(int, object)
    progress = Signal(int, float, str)


class _Job(QRunnable):
    def __init__(self, gen: int, fn: JobFn, signals: _Signals, stop: threading.Event):
        super().__init__()
        self.gen, self.fn, self.signals, self.stop = gen, fn, signals, stop
        self._last = 0.0
        self._text = ""
        self.setAutoDelete(True)

    def _progress(self, fraction: float, text: str) -> None:
        now = time.monotonic()
        # at most one update per 50 ms, but never drop a new stage (a recording's "ncu" step
        # follows the recording run within milliseconds and then lasts seconds)
        if now - self._last > 0.05 or fraction >= 1.0 or text != self._text:
            self._last, self._text = now, text
            self.signals.progress.emit(self.gen, fraction, text)

    def run(self) -> None:
        try:
            self._run()
        finally:
            # the pool thread lets go of its signal object and its work; the GUI thread frees them
            retire(self.signals)
            self.signals = self.fn = None

    def _run(self) -> None:
        try:
            result = self.fn(self._progress, self.stop.is_set)
        except Cancelled:
            return
        except Exception as err:  # noqa: BLE001 - handed to the GUI thread, which shows it
            if not self.stop.is_set():
                self.signals.failed.emit(self.gen, err)
            return
        if not self.stop.is_set():
            self.signals.done.emit(self.gen, result)


class Runner(QObject):
    """Runs the newest submitted job; older ones are cancelled and their results dropped."""

    done = Signal(object)
    failed = Signal(object)
    progress = Signal(float, str)
    busyChanged = Signal(bool)

    _pool: QThreadPool | None = None
    # start-up (``viz.app.main.open_window``): jobs submitted while the first window is built
    # wait here until it is shown, so the first analysis (numba compiling, on a cold cache)
    # does not compete with the window for the interpreter before the window is on screen
    _held: list | None = None

    def __init__(self, parent: QObject | None = None):
        super().__init__(parent)
        self._signals: _Signals | None = None
        self._gen = 0
        self._stop: threading.Event | None = None
        self.busy = False
        if Runner._pool is None:
            Runner._pool = QThreadPool.globalInstance()

    def submit(self, fn: JobFn) -> int:
        free_retired()
        self.cancel()
        self._gen += 1
        self._stop = threading.Event()
        self._set_busy(True)
        # The job's own signals, not a child of this Runner: a child would be deleted with it
        # while the pool thread may still emit on it. Bound methods of this QObject as the
        # receivers: Qt disconnects them when the Runner is deleted.
        self._signals = signals = _Signals()
        signals.done.connect(self._on_done)
        signals.failed.connect(self._on_failed)
        signals.progress.connect(self._on_progress)
        job = _Job(self._gen, fn, signals, self._stop)
        if Runner._held is not None:
            Runner._held.append((job, self._stop))
        else:
            Runner._pool.start(job)
        return self._gen

    @staticmethod
    def hold() -> None:
        """Keep the jobs submitted from now on until ``release`` (the first window's start)."""
        if Runner._held is None:
            Runner._held = []

    @staticmethod
    def release() -> None:
        """Start the held jobs (those not cancelled meanwhile), and stop holding."""
        held, Runner._held = Runner._held or [], None
        for job, stop in held:
            if not stop.is_set():
                Runner._pool.start(job)

    def cancel(self) -> None:
        if self._stop is not None:
            self._stop.set()
            self._stop = None
        self._set_busy(False)

    def _set_busy(self, busy: bool) -> None:
        if busy != self.busy:
            self.busy = busy
            self.busyChanged.emit(busy)

    def _on_done(self, gen: int, result) -> None:
        QTimer.singleShot(0, free_retired)   # after this slot: its sender may be among them
        if gen == self._gen and self._stop is not None:
            self._stop = None
            self._set_busy(False)
            self.done.emit(result)

    def _on_failed(self, gen: int, err) -> None:
        QTimer.singleShot(0, free_retired)
        if gen == self._gen and self._stop is not None:
            self._stop = None
            self._set_busy(False)
            self.failed.emit(err)

    def _on_progress(self, gen: int, fraction: float, text: str) -> None:
        if gen == self._gen:
            self.progress.emit(fraction, text)

    @staticmethod
    def wait_all(msecs: int = 30000) -> bool:
        return Runner._pool.waitForDone(msecs) if Runner._pool else True


def wait_with_progress(parent, label: str, fn: JobFn, show_after_ms: int = 300):
    """Run ``fn(progress, cancel)`` off the GUI thread and wait for it while the window keeps
    painting: after ``show_after_ms`` a progress dialog with a Cancel button appears. Returns
    ``(True, result)``, or ``(False, None)`` when the user cancelled (the job is asked to stop
    and its result dropped). An exception of ``fn`` is raised here, on the GUI thread."""
    from PySide6.QtWidgets import QProgressDialog

    from ..i18n import tr

    runner = Runner(parent)
    outcome: dict = {}
    loop = QEventLoop()
    dialog = QProgressDialog(label, tr("Cancel"), 0, 100, parent)
    dialog.setWindowTitle("warpviz")
    dialog.setMinimumDuration(show_after_ms)
    dialog.setAutoClose(False)
    dialog.setAutoReset(False)
    dialog.setValue(0)

    def finish(key, value=None):
        outcome.setdefault(key, value)
        loop.quit()

    runner.done.connect(lambda result: finish("done", result))
    runner.failed.connect(lambda err: finish("failed", err))
    runner.progress.connect(lambda fraction, text: dialog.setValue(int(100 * min(max(fraction, 0.0), 1.0))))
    dialog.canceled.connect(lambda: finish("cancelled"))
    # shown after show_after_ms even when no progress arrives meanwhile (one long step)
    QTimer.singleShot(show_after_ms, lambda: None if outcome else dialog.show())
    runner.submit(fn)
    if not outcome:
        loop.exec()
    if "cancelled" in outcome and "done" not in outcome:
        runner.cancel()
    dialog.close()
    dialog.deleteLater()
    runner.deleteLater()
    if "failed" in outcome:
        raise outcome["failed"]
    if "done" in outcome:
        return True, outcome["done"]
    return False, None
