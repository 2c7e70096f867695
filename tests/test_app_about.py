"""Help → About warpviz, opened as a user would: the version, the shipped measurements'
source, and a license for every component, with its text on selection."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QTableWidget

from app_helpers import make_window, user_dirs, window  # noqa: F401 - fixtures
from viz import __version__, i18n
from viz.app import about


def open_about(qtbot, w):
    action = w.a_about
    assert action in w.m_help.actions()
    action.trigger()
    dialog = w.about_dialog
    qtbot.waitExposed(dialog)
    return dialog


def test_about_shows_version_measurements_and_licenses(qtbot, window):
    dialog = open_about(qtbot, window)
    assert f"warpviz {__version__}" in dialog.findChild(QLabel, "aboutHeading").text()
    assert f"warpviz {__version__} (source checkout)" in dialog.findChild(QLabel, "aboutVersion").text()
    shipped = about.measurements()
    text = dialog.findChild(QLabel, "aboutMeasurements").text()
    for m in shipped:
        assert m.device in text and m.file.name in text
    table = dialog.findChild(QTableWidget, "aboutLicenses")
    rows = {table.item(r, 0).text().lower(): table.item(r, 2).text() for r in range(table.rowCount())}
    for name in ("warpviz", "numpy", "numba", "llvmlite", "pyside6_essentials", "pyqtgraph", "python"):
        assert rows.get(name), f"{name} missing or without a license: {rows}"
    assert rows["warpviz"] == "MIT"
    numpy_row = next(r for r in range(table.rowCount()) if table.item(r, 0).text().lower() == "numpy")
    table.setCurrentCell(numpy_row, 0)
    assert "Copyright" in dialog.license_text.toPlainText()
    dialog.close()


def test_components_are_the_installed_requirements():
    names = {c.name.lower().replace("-", "_") for c in about.components()}
    assert {"warpviz", "numpy", "numba", "llvmlite", "pyside6_essentials", "shiboken6", "pyqtgraph",
            "imageio", "imageio_ffmpeg", "tomlkit", "python"} <= names
    assert "pytest" not in names and "hypothesis" not in names, "the test extra is not a dependency"


def test_about_follows_the_language_and_sets_the_icon(qtbot, window):
    assert not window.windowIcon().isNull()
    i18n.set_language("zh_CN")
    assert window.a_about.text() == "关于 warpviz"
    i18n.set_language("en")
    assert window.a_about.text() == "About warpviz"


def test_about_lists_the_described_gpus_and_which_are_calibrated(qtbot, window):
    dialog = open_about(qtbot, window)
    text = dialog.findChild(QLabel, "aboutVersion").text()
    assert "NVIDIA H100 80GB HBM3 (calibrated)" in text and "NVIDIA H200 (calibrated)" in text
    assert "NVIDIA A100-SXM4-80GB (not calibrated: run `warpviz calibrate` on it)" in text
    dialog.close()
