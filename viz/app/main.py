"""Start the app: ``run_app(scenario)`` (the CLI's ``warpviz`` and ``warpviz FILE``)."""

from __future__ import annotations

import sys

from PySide6.QtWidgets import QApplication


def make_app(argv: list[str] | None = None) -> QApplication:
    app = QApplication.instance() or QApplication(argv if argv is not None else sys.argv[:1])
    app.setApplicationName("warpviz")
    app.setOrganizationName("warpviz")
    app.setStyle("Fusion")
    return app


def run_app(scenario: str | None = None) -> int:
    """Open the main window (on ``scenario``: a file or a built-in's name) and run until it closes."""
    app = make_app()
    from .window import MainWindow

    win = MainWindow(scenario)
    win.show()
    win.view.setFocus()
    code = app.exec()
    from .worker import Runner

    Runner.wait_all(5000)
    return code
