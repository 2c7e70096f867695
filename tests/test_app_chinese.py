"""The interface in Chinese shows no English: the main window over shared and global built-ins,
an error, compare mode, the GPU panel and the export dialog, read as a user sees them (every
visible label, button, menu entry, tab, tooltip, dock title, tree and table cell) plus every
text the painter draws. Runs of ASCII letters are allowed only for code (the scenario's own
names, CUDA and TOML words), units, file formats, key names and product names."""

from __future__ import annotations

import pyqtgraph as pg
from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QImage, QPainter
from PySide6.QtWidgets import (QAbstractButton, QComboBox, QDockWidget, QGroupBox, QLabel, QLineEdit, QMenu,
                               QTableWidget, QTabBar, QTreeWidget, QWidget)

from app_helpers import make_window, user_dirs, wait_analysis, window  # noqa: F401 - fixtures
from viz import i18n
from viz.export import title_lines
from viz.render import painter
from viz.scenario import resolve
from zh_scan import English


class RecordingPainter(QPainter):
    """A QPainter that keeps every string drawn through it (the painter calls these from Python)."""

    def __init__(self, device):
        super().__init__(device)
        self.texts: list[str] = []

    def drawText(self, *args):  # noqa: N802 - Qt's name
        self.texts += [a for a in args if isinstance(a, str)]
        return super().drawText(*args)

    def drawStaticText(self, *args):  # noqa: N802 - Qt's name
        self.texts += [a.text() for a in args if hasattr(a, "text") and callable(a.text)]
        return super().drawStaticText(*args)


def painted(draw) -> list[str]:
    img = QImage(1920, 1080, QImage.Format.Format_ARGB32)
    p = RecordingPainter(img)
    try:
        draw(p, QRectF(0, 0, 1920, 1080))
    finally:
        p.end()
    assert p.texts, "the painter drew no text"
    return p.texts


def widget_texts(root: QWidget, skip: tuple[QWidget, ...] = ()) -> list[str]:
    """What a user can read on ``root``'s visible widgets."""
    out = []
    for w in [root, *root.findChildren(QWidget)]:
        if not w.isVisible() or any(s is w or s.isAncestorOf(w) for s in skip):
            continue
        out.append(w.toolTip())
        if isinstance(w, (QLabel, QAbstractButton)):
            out.append(w.text())
        if isinstance(w, QLineEdit):
            out.append(w.placeholderText())
        if isinstance(w, QComboBox):
            out += [w.itemText(i) for i in range(w.count())] + [w.itemData(i, 3) or "" for i in range(w.count())]
        if isinstance(w, QTabBar):
            out += [w.tabText(i) for i in range(w.count())] + [w.tabToolTip(i) for i in range(w.count())]
        if isinstance(w, QDockWidget):
            out.append(w.windowTitle())
        if isinstance(w, QGroupBox):
            out.append(w.title())
        if isinstance(w, QTreeWidget):
            head = w.headerItem()
            out += [head.text(i) for i in range(w.columnCount())]
            stack = [w.topLevelItem(i) for i in range(w.topLevelItemCount())]
            while stack:
                it = stack.pop()
                out += [it.text(i) for i in range(w.columnCount())] + [it.toolTip(i) for i in range(w.columnCount())]
                stack += [it.child(i) for i in range(it.childCount())]
        if isinstance(w, QTableWidget):
            for c in range(w.columnCount()):
                out.append(w.horizontalHeaderItem(c).text() if w.horizontalHeaderItem(c) else "")
                out += [w.item(r, c).text() if w.item(r, c) else "" for r in range(w.rowCount())]
            out += [w.verticalHeaderItem(r).text() if w.verticalHeaderItem(r) else "" for r in range(w.rowCount())]
    return out


def menu_texts(win) -> list[str]:
    out = []
    for m in win.menuBar().findChildren(QMenu):
        out.append(m.title())
        out += [a.text() for a in m.actions()] + [a.toolTip() for a in m.actions()]
    return out


def frames_of(win, qtbot, eng: English, name: str, positions) -> None:
    s = win.session
    for instr, frame in positions:
        s.go(instr=instr, frame=frame)
        qtbot.waitUntil(lambda: s.detail is not None, timeout=10000)
        eng.scan(f"{name} source line", [win.source.text(), win.timeline.where.text()])
        eng.scan(f"{name} picture", painted(lambda p, r: painter.paint_frame(p, r, s.detail, s.frame)))
        eng.scan(f"{name} caption", [s.frame.caption])
        eng.scan(f"{name} lane tooltips", [win.view.lane_tooltip(k) for k in (0, 5, 31)])


def test_the_chinese_interface_shows_no_english(qtbot, user_dirs):  # noqa: F811 - fixture
    win = make_window(qtbot, "transpose-tile")
    try:
        win.set_language("zh_CN")
        qtbot.waitUntil(lambda: win.gpu_panel is not None and win._sweep is not None, timeout=20000)
        eng = English()
        library = (win.library.findChild(QTreeWidget), *win.library.findChildren(QComboBox))
        for name, positions in (("transpose-tile", [(0, 0), (8, 0), (8, 3), (8, 33)]),
                                ("transpose-tile-xor", [(8, 2)]),
                                ("aos-float3-r", [(0, 0), (0, 2), (0, 5)]),
                                ("float4-tile", [(4, 1), (4, 5)]),
                                ("double-tile", [(4, 0), (4, 3)]),
                                ("reduction-tree", [(0, 0), (3, 1)]),
                                ("boundary-n1003", [(0, 0)])):
            eng.scenario(name)
            win.open_path(resolve(name))
            wait_analysis(qtbot, win)
            frames_of(win, qtbot, eng, name, positions)
            toml_values = tuple(win.editor.findChildren(QComboBox))  # op, type, swizzle: TOML values
            for tab in (0, 1):
                win.editor.tabs.setCurrentIndex(tab)
                eng.scan(f"{name} window", widget_texts(win, skip=library + toml_values))
                eng.scan(f"{name} editor tooltips", [c.toolTip() for c in toml_values if c.isVisible()])
            for dock in ("launch", "sweep", "gpu"):
                win.docks[dock].raise_()
                qtbot.waitUntil(lambda: win.docks[dock].isVisible(), timeout=5000)
                eng.scan(f"{name} {dock} panel", widget_texts(win.docks[dock]))
            gpu_tabs = win.gpu_panel.tabs
            for k in range(gpu_tabs.count()):
                gpu_tabs.setCurrentIndex(k)
                eng.scan(f"{name} GPU tab {k}", widget_texts(gpu_tabs))

        # A built-in that the GPU refuses: its error, in the banner and the status bar.
        eng.scenario("misaligned-int2")
        win.open_path(resolve("misaligned-int2"))
        qtbot.waitUntil(lambda: win.session.error is not None, timeout=20000)
        qtbot.waitUntil(lambda: win.editor.banner.isVisible(), timeout=5000)
        assert "未应用" in win.editor.banner.text()
        eng.scan("error banner", [win.editor.banner.text(), win.statusBar().currentMessage()])

        # Compare mode: the unpadded tile beside the padded one.
        eng.scenario("transpose-tile-pad")
        win.open_path(resolve("transpose-tile"))
        wait_analysis(qtbot, win)
        # A sweep of the padding, as the sweep panel runs it, and the plots' axis titles.
        sw = win.sweep
        win.docks["sweep"].raise_()
        sw.dim.setCurrentIndex(next(k for k in range(sw.dim.count()) if sw.dim.itemData(k).target == "PAD"))
        sw.values.setText("0:2")
        qtbot.mouseClick(sw.run, Qt.MouseButton.LeftButton)
        qtbot.waitUntil(lambda: len(sw.results) == 2, timeout=30000)
        assert sw.status.text() == "已分析 2 / 2 个点。"
        eng.scan("sweep", widget_texts(win.docks["sweep"]))
        plots = [sw.plot.getPlotItem(), *(i for i in win.launch.glw.ci.items if isinstance(i, pg.PlotItem))]
        axes = [p.getAxis(side).labelText for p in plots for side in ("left", "bottom")]
        assert "每条共享内存读指令的波前数" in axes and "线程束数" in axes, axes
        eng.scan("plot axes", axes)
        win.a_compare.setChecked(True)
        win.compare.open_right(str(resolve("transpose-tile-pad")))
        qtbot.waitUntil(lambda: win.compare.right.detail is not None, timeout=20000)
        win.session.go(instr=8, frame=4)
        eng.scan("compare", widget_texts(win.compare))
        left, right = win.session, win.compare.right
        eng.scan("compare picture", painted(lambda p, r: painter.paint_compare(
            p, r, (left.detail, left.frame), (right.detail, right.frame))))
        win.a_compare.setChecked(False)

        # File → Export…
        from viz.app.export_dialog import show

        dialog = show(win)
        dialog.update_preview()
        eng.scan("export dialog", widget_texts(dialog) + [dialog.windowTitle()])
        dialog.instructions.setText("99")                    # the lecturer mistypes the instruction
        dialog.update_preview()
        qtbot.waitUntil(lambda: dialog.problem is not None, timeout=5000)
        assert dialog.problem == "指令 '99' 超出范围（1..16）", dialog.problem
        eng.scan("export dialog problem", [dialog.problem] + widget_texts(dialog))
        dialog.close()
        s = win.session
        eng.scan("title card", [*title_lines(s.scenario, [s.detail]),
                                *title_lines(s.scenario, [s.detail], [s.detail], ("甲", "乙"))])
        eng.scan("menus", menu_texts(win))
        from viz.app.window import KEYS_HELP

        eng.scan("keys", [KEYS_HELP()])
        assert eng.found == {}, "English in the Chinese interface:\n" + "\n".join(
            f"  {w}  ({where})" for w, where in sorted(eng.found.items()))
    finally:
        win.timeline.play(False)
        i18n.set_language("en")
