"""The main window's compare mode (Ctrl+M: two scenarios side by side, the panels given their
sizes back when it ends), View → Every lane row and View → ldmatrix / stmatrix fragments.
Part of ``MainWindow`` (viz/app/window.py)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QTimer

from ..i18n import tr
from . import settings
from .window_docks import only_current_page_sizes


class WindowCompare:
    """Compare mode, Every lane row, the matrix fragments dialog. A part of ``MainWindow``: it uses
    the window's widgets and the other parts' methods through ``self``."""

    def show_matrix(self):
        """View → ldmatrix / stmatrix fragments (viz/app/matrix_dialog.py): one dialog, reused."""
        from .matrix_dialog import MatrixDialog

        dlg = getattr(self, "matrix_dialog", None)
        if dlg is None:
            dlg = self.matrix_dialog = MatrixDialog(self.session, self.theme_name, self)
        dlg.show()
        dlg.raise_()
        return dlg

    def set_every_row(self, on: bool) -> None:
        """View → Every lane row (Ctrl+R): the pictures keep every lane row (byte addresses,
        thread ids), folded as deep as it takes, instead of leaving some out for room."""
        for v in (self.view, self.compare.view_left, self.compare.view_right):
            v.rows = "all" if on else "auto"
            v.update()

    def set_compare(self, on: bool) -> None:
        if on and self.session.is_launch:
            self.statusBar().showMessage(tr("Record the launch file first (GPU panel): then its trace can be "
                                            "compared."), 8000)
            self.a_compare.setChecked(False)
            return
        # The comparison needs more room than one picture and squeezes the panels; they get their
        # sizes back when it is turned off (they lost rows every round trip before).
        if on and self.stack.currentIndex() == 0:
            self._pre_compare_docks = self._dock_sizes()
            self._pre_compare_geometry = None if self.presenting or self.isMaximized() else QRect(self.geometry())
        self.stack.setCurrentIndex(1 if on else 0)
        only_current_page_sizes(self.stack)
        if not on and self._pre_compare_docks and not self.presenting:
            sizes, self._pre_compare_docks = self._pre_compare_docks, None
            geometry, self._pre_compare_geometry = getattr(self, "_pre_compare_geometry", None), None
            if geometry is not None and not self.isMaximized():
                self.setGeometry(self._on_screen(geometry))   # its room may have grown the window
            self._resize_docks(sizes)
        elif on and not self.presenting:
            QTimer.singleShot(0, self, self._keep_on_screen)
        self.compare.set_active(on)
        if on:
            self.compare.ensure_partner()
            self.compare.set_theme(self.view.theme)
        settings.put("compare", on)

    def _keep_on_screen(self) -> None:
        """Never wider or taller than the screen (the comparison's room grew a 1280-px window
        past it): the panels give way, not the picture."""
        if self.presenting or self.isMaximized() or self.isFullScreen():
            return
        room = self._on_screen(self.geometry())
        if room != self.geometry():
            if room.width() < self.width():
                self.default_layout(room.width())
            self.setGeometry(room)

    def _compare_restored(self) -> None:
        """Compare mode comes back as it was left, and says so (it is easy to miss that the
        right half is not part of the scenario just opened)."""
        self.a_compare.setChecked(True)
        if self.a_compare.isChecked():
            self.statusBar().showMessage(tr("Compare mode is on, as when warpviz was last closed (Ctrl+M turns it "
                                            "off)"), 15000)
