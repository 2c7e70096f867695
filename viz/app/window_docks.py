"""The main window's panels (docks) and their layout: the dock around each panel, the plot
panels (heat map, sweep) built after the first paint and the GPU panel when first shown, the
default panel sizes, and putting each panel back to a size it had. Part of ``MainWindow`` (viz/app/window.py)."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QGuiApplication
from PySide6.QtWidgets import QDockWidget, QSizePolicy, QStackedWidget, QVBoxLayout, QWidget

from ..i18n import tr
from . import settings


class WindowDocks:
    """The panels (docks) around the picture and their layout. A part of ``MainWindow``: it uses the
    window's widgets and the other parts' methods through ``self``."""

    def _build_plots(self) -> None:
        """The heat map and sweep panels, and the GPU panel's dock. Importing pyqtgraph costs a
        third of a second, so the first window shows the picture first and these a moment later.
        The GPU panel itself is built when its dock is first shown (``_gpu_dock``)."""
        if self._launch is not None:
            return
        from .launch import LaunchPanel
        from .sweep import SweepPanel

        self._launch = LaunchPanel(self.session)
        self._sweep = SweepPanel(self.session)
        self.docks["launch"].widget().set(self._launch)
        self.docks["sweep"].widget().set(self._sweep)
        self._launch.mode.setCurrentIndex(settings.get("heat_mode", 0, int, lo=0, hi=self._launch.mode.count() - 1))
        self._gpu_dock()
        self._style_plots()
        if "gpu" in self.docks:
            self.m_panels.addAction(self.docks["gpu"].toggleViewAction())
            self.docks["gpu"].setWindowTitle(tr("GPU"))
            if self.presenting:
                self.docks["gpu"].hide()

    @property
    def launch(self):
        self._build_plots()
        return self._launch

    @property
    def sweep(self):
        self._build_plots()
        return self._sweep

    def add_dock(self, key: str, widget: QWidget, area) -> QDockWidget:
        """``widget`` in a new dock ``dock_<key>`` (``self.docks[key]``) in ``area``: movable,
        floatable, closable. A panel's ``install(main)`` calls this (docs/ARCHITECTURE.md, "A panel")."""
        d = QDockWidget(self)
        d.setObjectName(f"dock_{key}")
        d.setWidget(widget)
        d.setFeatures(QDockWidget.DockWidgetFeature.DockWidgetMovable
                      | QDockWidget.DockWidgetFeature.DockWidgetFloatable
                      | QDockWidget.DockWidgetFeature.DockWidgetClosable)
        self.addDockWidget(area, d)
        self.docks[key] = d
        return d

    _dock = add_dock

    def _gpu_dock(self) -> None:
        """The GPU panel's dock, tabbed with the sweep. The panel (its measurements, caveats and
        GPU probe take most of a second) is built the first time the dock is on screen, or
        when ``gpu_panel`` is asked for: at a first start its tab lies behind the heat map's."""
        import importlib.util

        if importlib.util.find_spec(f"{__package__}.gpu_panel") is None:
            return                              # the app runs without it
        dock = self._dock("gpu", PanelHolder(), Qt.DockWidgetArea.BottomDockWidgetArea)
        self.tabifyDockWidget(self.docks["sweep"], dock)
        dock.visibilityChanged.connect(self._gpu_dock_shown)
        # built after restoreState: its visibility is kept separately
        dock.setVisible(settings.get("gpu_panel_shown", True, bool))

    def _gpu_dock_shown(self, visible: bool) -> None:
        if visible and self._gpu is None and not getattr(self, "closed", False):
            self._make_gpu_panel()

    @property
    def gpu_panel(self):
        """The GPU panel (``viz.app.gpu_panel.GpuPanel``), built now if it was not yet; None
        when it cannot be built (the status bar says why)."""
        self._build_plots()
        if self._gpu is None and "gpu" in self.docks:
            self._make_gpu_panel()
        return self._gpu or None

    def _make_gpu_panel(self) -> None:
        self._gpu = False                       # once, also when it fails
        try:
            from .gpu_panel import GpuPanel

            panel = GpuPanel(self)
        except Exception as err:  # noqa: BLE001 - the app must run without it
            self.statusBar().showMessage(tr("GPU panel unavailable: {err}", err=err), 10000)
            return
        self._gpu = panel
        self.docks["gpu"].widget().set(panel)
        panel.show()        # now, with its dock (a layout would show it an event later)
        if hasattr(panel, "set_theme"):
            panel.set_theme(self.view.theme)    # its chart follows the theme

    def default_layout(self, width: int | None = None) -> None:
        """Panel sizes for a first start: the picture gets most of the window (330 + 480 px of
        panels at 1920 px, in proportion on a narrower screen such as a 1280-px projector)."""
        w = min(1920, max(width or self.width(), 1024))
        self.resizeDocks([self.docks["library"], self.docks["figures"]], [round(330 * w / 1920), round(480 * w / 1920)],
                         Qt.Orientation.Horizontal)
        self.resizeDocks([self.docks["library"], self.docks["editor"]], [280, 600], Qt.Orientation.Vertical)
        # a short window (720 px) gives the lower panels (GPU chart, Source table) the larger share
        self.resizeDocks([self.docks["figures"], self.docks["launch"]], [430, 470] if self.height() >= 800 else
                         [300, 600], Qt.Orientation.Vertical)

    def _dock_sizes(self) -> dict[str, QSize]:
        """The sizes of the panels on screen (a tab behind another lies outside the window, its size stale)."""
        return {k: d.size() for k, d in self.docks.items()
                if d.isVisible() and not d.isFloating() and self.rect().contains(d.geometry())}

    def _on_screen(self, rect: QRect) -> QRect:
        """``rect`` (the window's inside) moved and shrunk so the whole window, frame included,
        lies within the screen's available area (no panel or controls row below its bottom)."""
        screen = self.screen() or QGuiApplication.primaryScreen()
        if screen is None:
            return QRect(rect)
        room = screen.availableGeometry()
        frame, inside = self.frameGeometry(), self.geometry()
        left, top = inside.left() - frame.left(), inside.top() - frame.top()
        right, bottom = frame.right() - inside.right(), frame.bottom() - inside.bottom()
        if self.isFullScreen() or not (0 <= top <= 64 and 0 <= left <= 32 and 0 <= right <= 32 and 0 <= bottom <= 32):
            left = top = right = bottom = 0          # no frame known yet: the window manager adds it
        w = max(1, min(rect.width(), room.width() - left - right))
        h = max(1, min(rect.height(), room.height() - top - bottom))
        x = min(max(rect.x(), room.left() + left), room.right() - right - w + 1)
        y = min(max(rect.y(), room.top() + top), room.bottom() - bottom - h + 1)
        return QRect(x, y, w, h)

    def _resize_docks(self, sizes: dict[str, QSize]) -> None:
        """Each panel back to the size it had (restoreState lets them drift a few pixels a round
        trip). resizeDocks counts a tabbed panel's tab bar in or out depending on the layout, so
        the sizes asked are corrected by what came out, a few times at most."""
        shown = {}
        for k, sz in sizes.items():
            d = self.docks.get(k)
            if d is not None and d.isVisible() and self.rect().contains(d.geometry()):
                shown[k] = (d, sz)
        ask = {k: (sz.width(), sz.height()) for k, (_, sz) in shown.items()}
        for _ in range(4):
            by_area: dict = {}
            for k, (d, _) in shown.items():
                by_area.setdefault(self.dockWidgetArea(d), []).append(k)
            for keys in by_area.values():
                docks = [shown[k][0] for k in keys]
                self.resizeDocks(docks, [ask[k][0] for k in keys], Qt.Orientation.Horizontal)
                self.resizeDocks(docks, [ask[k][1] for k in keys], Qt.Orientation.Vertical)
            self.layout().activate()
            off = {k: (sz.width() - d.width(), sz.height() - d.height()) for k, (d, sz) in shown.items()}
            if not any(dx or dy for dx, dy in off.values()):
                break
            ask = {k: (ask[k][0] + off[k][0], ask[k][1] + off[k][1]) for k in ask}


def only_current_page_sizes(stack: QStackedWidget) -> None:
    """A stacked widget is as wide as its widest page: let the hidden pages' sizes be ignored, so the
    compare page (two pictures side by side) does not keep the window wider than a 1280-px screen."""
    for k in range(stack.count()):
        page = stack.widget(k)
        policy = (QSizePolicy.Policy.Preferred if k == stack.currentIndex() else QSizePolicy.Policy.Ignored)
        page.setSizePolicy(policy, policy)
    stack.updateGeometry()


class PanelHolder(QWidget):
    """A dock's content before its panel is built."""

    def __init__(self):
        super().__init__()
        self._lay = QVBoxLayout(self)
        self._lay.setContentsMargins(0, 0, 0, 0)

    def set(self, panel: QWidget) -> None:
        self._lay.addWidget(panel)
