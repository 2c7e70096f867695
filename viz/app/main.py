"""Start the app: ``run_app(scenario)`` (the CLI's ``warpviz`` and ``warpviz FILE``)."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("warpviz")
    app.setOrganizationName("warpviz")
    if app.style().name().lower() != "fusion":  # once: a new style would delete the one widgets use
        app.setStyle("Fusion")
    return app


def cannot_start() -> str | None:
    """Why no window can open here (no display, Qt's X11 libraries missing), in the user's
    language; None when it can. Checked before the QApplication, where Qt would abort."""
    if QApplication.instance() is not None:
        return None
    from .. import i18n
    from . import settings
    from .display import problem

    lang = settings.get("language", "en", str)
    if lang in i18n.LANGUAGES:
        i18n.set_language(lang)
    return problem()


def run_app(scenario: str | None = None) -> int:
    """Open the main window (on ``scenario``: a file or a built-in's name) and run until it closes.
    Exit status 2, with the reason on stderr, when no window can open here."""
    why = cannot_start()
    if why is not None:
        print(f"warpviz: {why}", file=sys.stderr)
        return 2
    app = make_app()
    from .window import MainWindow

    win = MainWindow(scenario)
    win.show()
    win.view.setFocus()
    code = app.exec()
    from .worker import Runner

    Runner.wait_all(5000)
    return code
