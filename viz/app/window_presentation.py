"""The main window's presentation mode (F11 / Esc): the picture alone, full screen, at 1.5x type,
in your theme or high contrast; leaving it puts the window and every panel back as they were.
Part of ``MainWindow`` (viz/app/window.py)."""

from __future__ import annotations

from typing import NamedTuple

from PySide6.QtCore import QByteArray, QRect, QTimer
from PySide6.QtGui import QFont
from PySide6.QtWidgets import QApplication

from . import settings


PRESENTATION_THEME = "high-contrast"   # presentation mode's theme where View → Theme asks for it
PRESENTATION_CONTRAST = "presentation_high_contrast"   # that setting; off: presentation keeps your theme
PRESENTATION_SCALE = 1.35


class WindowPresentation:
    """Presentation mode and the way back from it. A part of ``MainWindow``: it uses the window's
    widgets and the other parts' methods through ``self``."""

    def set_presentation(self, on: bool) -> None:
        if on == self.presenting:
            return
        self.presenting = on
        self.compare.set_presenting(on)
        if on:
            # What leaving restores exactly: the panels (saveState), the window's own rectangle
            # (normalGeometry: restoreGeometry guesses a frame under X11 and moved the window
            # down 25 px, past a 720-px screen's bottom) and each shown panel's size, since
            # restoreState alone lets the docks drift a few pixels a round trip.
            self._pre_presentation = PrePresentation(
                self.saveState(), self.theme_name, self.isMaximized(), QRect(self.normalGeometry()),
                self._dock_sizes())
            for d in self.docks.values():  # the picture alone; its figures row stays
                d.hide()
            self.menuBar().hide()
            self.statusBar().hide()
            f = QFont(self._base_font)
            f.setPointSizeF(self._base_font.pointSizeF() * 1.5)
            QApplication.setFont(f)
            mono = QFont(self._source_font)
            mono.setPointSizeF(self._source_font.pointSizeF() * 1.5)
            self.source.setFont(mono)
            self.apply_theme(self.presentation_theme(), remember=False)
            self.showFullScreen()
            QTimer.singleShot(0, self, self._cover_screen)
        else:
            pre = self._pre_presentation
            QApplication.setFont(self._base_font)
            self.source.setFont(self._source_font)
            self.menuBar().show()
            self.statusBar().show()
            self.apply_theme(pre.theme_name)
            if pre.maximized:
                self.showMaximized()
            else:
                self.showNormal()
                self.setGeometry(self._on_screen(pre.geometry))
            self.restoreState(pre.state)         # the panels are back at once; their sizes settle below
            # The panels once the window has its size back and the normal font has reached every
            # widget: restored while still full screen (or at 1.5x type) they keep full-screen
            # sizes and push the window past the screen's bottom.
            QTimer.singleShot(0, self, lambda: self._after_presentation(pre))
        self.view.setFocus()

    def _cover_screen(self) -> None:
        """Presentation mode covers the whole screen also where no window manager makes a window
        full screen (a kiosk, an X server alone: F11 left the window at its size under Xvfb)."""
        screen = self.screen()
        if self.presenting and screen is not None and self.frameGeometry() != screen.geometry():
            self.setGeometry(screen.geometry())

    def presentation_theme(self) -> str:
        """The theme presentation mode shows: yours, or high contrast where View → Theme asks for it."""
        return PRESENTATION_THEME if self.a_present_contrast.isChecked() else self.theme_name

    def _presentation_contrast(self, on: bool) -> None:
        settings.put(PRESENTATION_CONTRAST, on)
        if self.presenting:
            self.apply_theme(self.presentation_theme(), remember=False)

    def _after_presentation(self, pre: "PrePresentation") -> None:
        if self.presenting:
            return
        self.restoreState(pre.state)
        self._resize_docks(pre.docks)
        if not self.isMaximized():
            room = self._on_screen(self.geometry())
            if room != self.geometry():     # never past the screen: the panels give way, not the picture
                if room.width() < self.width():
                    self.default_layout(room.width())
                self.setGeometry(room)
        self.presentationLeft.emit()


class PrePresentation(NamedTuple):
    """The window as it was before presentation mode: what leaving it restores."""
    state: QByteArray
    theme_name: str
    maximized: bool
    geometry: QRect
    docks: dict
