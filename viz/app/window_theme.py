"""The main window's theme (View → Theme): the pictures, the Qt palette, the editor and the
plot panels in one set of colours. Part of ``MainWindow`` (viz/app/window.py)."""

from __future__ import annotations

from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QApplication

from ..render.theme import theme
from . import settings
from .window_presentation import PRESENTATION_SCALE


class WindowTheme:
    """The theme: pictures, palette and plots in one set of colours. A part of ``MainWindow``: it
    uses the window's widgets and the other parts' methods through ``self``."""

    def apply_theme(self, name: str, remember: bool = True) -> None:
        scale = PRESENTATION_SCALE if self.presenting else 1.0
        th = theme(name, scale)
        if remember:
            self.theme_name = name
            settings.put("theme", name)
        self.a_themes[name].setChecked(True)
        self.view.set_theme(th)
        self.compare.set_theme(th)
        dark = name in ("dark", "high-contrast")
        app = QApplication.instance()
        pal = QPalette()
        if dark:
            bg, base, text = QColor(th.colors["panel"]), QColor(th.colors["background"]), QColor(th.colors["text"])
            pal.setColor(QPalette.ColorRole.Window, bg)
            pal.setColor(QPalette.ColorRole.WindowText, text)
            pal.setColor(QPalette.ColorRole.Base, base)
            pal.setColor(QPalette.ColorRole.AlternateBase, bg)
            pal.setColor(QPalette.ColorRole.Text, text)
            pal.setColor(QPalette.ColorRole.Button, bg)
            pal.setColor(QPalette.ColorRole.ButtonText, text)
            pal.setColor(QPalette.ColorRole.ToolTipBase, base)
            pal.setColor(QPalette.ColorRole.ToolTipText, text)
            pal.setColor(QPalette.ColorRole.Highlight, QColor(th.colors["now"]))
            pal.setColor(QPalette.ColorRole.HighlightedText, QColor(th.colors["now_text"]))
            pal.setColor(QPalette.ColorRole.PlaceholderText, QColor(th.colors["muted"]))
        else:
            pal = app.style().standardPalette()
        app.setPalette(pal)
        self.editor.set_dark(dark)
        self.source.setStyleSheet(f"background: {th.colors['panel']}; color: {th.colors['text']};")
        self._style_plots()

    def _style_plots(self) -> None:
        if self._launch is None:
            return
        th = self.view.theme
        plot_bg, plot_fg = th.colors["background"], th.colors["text"]
        for w in (self.launch.glw, self.sweep.plot):
            w.setBackground(plot_bg)
        for item in (self.launch.plot, self.launch.hist, self.sweep.plot.getPlotItem()):
            for ax in ("left", "bottom"):
                item.getAxis(ax).setPen(plot_fg)
                item.getAxis(ax).setTextPen(plot_fg)
        if self._gpu and hasattr(self._gpu, "set_theme"):
            self._gpu.set_theme(th)        # the GPU panel's chart follows the theme too (once built)
