"""Whatever a widget schedules dies with it: timers, results of pool threads, language
listeners. A callback that outlives its widget raises "Internal C++ object
already deleted" in the event loop, which pytest-qt turns into a failure of the test."""

from __future__ import annotations

import threading

import shiboken6
from app_helpers import after, user_dirs, wait_idle  # noqa: F401 - fixture
from PySide6.QtCore import QObject

from viz import i18n
from viz.app.lifetime import on_language_change
from viz.app.worker import Runner


def own_window(qtbot):
    """A main window that the test deletes itself (qtbot.addWidget would close it again)."""
    from viz.app.main import make_app
    from viz.app.window import MainWindow

    make_app()
    w = MainWindow("transpose-tile")
    w.show()
    qtbot.waitExposed(w)
    wait_idle(qtbot, w.session)
    return w


def test_a_window_deleted_while_it_analyses_leaves_no_callback_behind(qtbot, user_dirs):  # noqa: F811
    w = own_window(qtbot)
    w.session.set_text(w.session.text + "\n# an edit\n")     # starts the whole-launch analysis
    assert w.session.busy and w.progress_timer.isActive()     # the bar shows if it takes 250 ms
    progress = w.progress
    w.close()
    w.deleteLater()
    qtbot.waitUntil(lambda: not shiboken6.isValid(progress))
    after(qtbot, 300)                                          # past the bar's 250 ms


def test_language_listeners_go_with_their_window(qtbot, user_dirs):  # noqa: F811
    before = list(i18n._listeners)
    w = own_window(qtbot)
    mine = [fn for fn in i18n._listeners if not any(fn is b for b in before)]
    assert mine                                               # the window, its About and Export menus
    w.close()
    w.deleteLater()
    # Its own listeners, not the count: a window of an earlier test in this process may be
    # deleted (deleteLater) while this one is, taking its listeners with it.
    qtbot.waitUntil(lambda: not any(fn is m for fn in i18n._listeners for m in mine))
    i18n.set_language("zh_CN")                                 # nobody left to call
    i18n.set_language("en")


def test_on_language_change_calls_until_the_owner_is_destroyed(qtbot):
    owner = QObject()
    seen = []
    on_language_change(owner, seen.append)
    i18n.set_language("zh_CN")
    i18n.set_language("en")
    assert seen == ["zh_CN", "en"]
    shiboken6.delete(owner)
    i18n.set_language("zh_CN")
    i18n.set_language("en")
    assert seen == ["zh_CN", "en"]


def test_a_runner_deleted_while_its_job_runs_gets_nothing_and_raises_nothing(qtbot):
    runner = Runner()
    got, failed = [], []
    runner.done.connect(got.append)
    runner.failed.connect(failed.append)
    release, started = threading.Event(), threading.Event()

    def job(progress, cancel):
        started.set()
        release.wait(300)
        progress(1.0, "done")
        return 42

    runner.submit(job)
    assert started.wait(300)
    shiboken6.delete(runner)
    release.set()
    assert Runner.wait_all(300_000)
    after(qtbot, 50)
    assert got == [] and failed == []


def test_a_runner_still_delivers_the_newest_result(qtbot):
    """The same path, alive: the result of the newest job arrives, an older one is dropped."""
    runner = Runner()
    got = []
    runner.done.connect(got.append)
    gate = threading.Event()
    runner.submit(lambda p, c: gate.wait(300) and "old")
    runner.submit(lambda p, c: "new")
    gate.set()
    qtbot.waitUntil(lambda: got == ["new"] and not runner.busy, timeout=20000)
    assert Runner.wait_all(300_000)
    after(qtbot, 50)
    assert got == ["new"]


def test_a_superseded_jobs_signal_object_is_freed_on_the_gui_thread(qtbot):
    """A job replaced by a newer one still holds its signal object when it ends on the pool
    thread; that QObject must be deleted on the GUI thread, not the pool thread (deleting it
    there races the GUI thread over its connections: a segfault seen once in a CI run)."""
    from PySide6.QtCore import QThread, Qt
    from PySide6.QtWidgets import QApplication

    runner = Runner()
    release = threading.Event()
    runner.submit(lambda progress, stop: release.wait(300))
    old = runner._signals
    threads = []
    old.destroyed.connect(lambda *_: threads.append(QThread.currentThread()), Qt.ConnectionType.DirectConnection)
    with qtbot.waitSignal(runner.done, timeout=30000):
        runner.submit(lambda progress, stop: 7)   # the newer job; the old one is still waiting
    del old
    release.set()                                  # the old job ends on its pool thread now
    from PySide6.QtCore import QThreadPool

    assert QThreadPool.globalInstance().waitForDone(300_000)   # the old job has ended
    with qtbot.waitSignal(runner.done, timeout=30000):
        runner.submit(lambda progress, stop: 8)    # the GUI thread frees what ended jobs left
    qtbot.waitUntil(lambda: bool(threads), timeout=30000)
    assert threads[0] is QApplication.instance().thread()


def test_cycles_are_collected_on_the_gui_thread_only(qtbot):
    """Automatic collection is off once the app exists (a pool thread would otherwise delete
    widgets held in cycles); a timer on the GUI thread collects them instead."""
    import gc
    import weakref

    from viz.app.main import make_app

    make_app()
    assert not gc.isenabled()

    class Holder:
        pass

    h = Holder()
    h.me, h.obj = h, QObject()          # a cycle holding a Qt object
    gone = weakref.ref(h)
    del h
    for _ in range(2000):               # allocations enough to pass the first threshold
        Holder()
    assert gone() is not None           # nothing collected it behind the timer's back
    [object() for _ in range(gc.get_threshold()[0] + 10)]
    junk = [[k] for k in range(gc.get_threshold()[0] + 10)]    # tracked containers: count grows
    qtbot.waitUntil(lambda: gone() is None, timeout=10000)
    del junk
