"""The main window's settings: restored at start (each value checked), saved when it closes.
Part of ``MainWindow`` (viz/app/window.py)."""

from __future__ import annotations

from PySide6.QtCore import QTimer

from .. import i18n
from . import settings
from .timeline import SPEEDS


class WindowSettings:
    """The settings restored at start and saved when the window closes. A part of ``MainWindow``: it
    uses the window's widgets and the other parts' methods through ``self``."""

    def _restore_settings(self) -> None:
        """The window as it was left, each setting checked (``settings.get``): a wrong type or
        a value out of range gives the default; unreadable window state, the default layout."""
        geo = settings.get("geometry", None, bytes)
        if geo is not None:
            self.restoreGeometry(geo)    # Qt brings a geometry that lies off every screen back onto one
        state = settings.get("windowState", None, bytes)
        if state is None or not self.restoreState(state):
            QTimer.singleShot(0, self, self.default_layout)
        self.timeline.set_speed(settings.get("speed", 1.0, float, lo=min(SPEEDS), hi=max(SPEEDS)))
        self.zoom.set_zoom(settings.get("zoom", 1.0, float, lo=1.0, hi=4.0))
        lang = settings.get("language", "en", str, choices=i18n.LANGUAGES)
        i18n.set_language(lang)
        self.a_langs[i18n.language()].setChecked(True)
        self.editor.tabs.setCurrentIndex(settings.get("editor_tab", 0, int, lo=0, hi=self.editor.tabs.count() - 1))
        if settings.get("compare", False, bool):
            QTimer.singleShot(0, self, self._compare_restored)

    def save_settings(self) -> None:
        s = settings.settings()
        if self.presenting:
            pre = self._pre_presentation
            self.set_presentation(False)
            self._after_presentation(pre)      # now: the panels as they were, not full screen's
        s.setValue("geometry", self.saveGeometry())
        s.setValue("windowState", self.saveState())
        s.setValue("speed", self.timeline.speed)
        s.setValue("zoom", self.zoom.zoom)
        s.setValue("theme", self.theme_name)
        s.setValue("language", i18n.language())
        if self._launch is not None:
            s.setValue("heat_mode", self._launch.mode.currentIndex())
        if "gpu" in self.docks:
            s.setValue("gpu_panel_shown", not self.docks["gpu"].isHidden())
        s.setValue("editor_tab", self.editor.tabs.currentIndex())
        s.setValue("compare", self.a_compare.isChecked())
        c = self.session.cursor
        s.setValue("cursor", f"{c.instruction},{c.block},{c.warp},{c.frame}")
        if self.session.path is not None:
            s.setValue("last_scenario", str(self.session.path))
        s.sync()
