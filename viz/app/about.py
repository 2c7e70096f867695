"""Help → About warpviz: the version and where this copy runs from, where the shipped
measurements came from, and the licenses of everything it runs on.

The facts are gathered by plain functions (no Qt) from what is installed: versions and
licenses from each distribution's metadata (``importlib.metadata``; a frozen build keeps
the ``dist-info`` folders for this), measurements from ``assets/measurements/*.json``.
``install(window)`` adds the menu item and gives the window the warpviz icon.
"""

from __future__ import annotations

import json
import os
import platform
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QIcon
from PySide6.QtWidgets import (QDialog, QDialogButtonBox, QLabel, QPlainTextEdit, QSplitter, QTableWidget,
                               QTableWidgetItem, QTabWidget, QVBoxLayout, QWidget)

from .. import __version__, assets
from ..i18n import tr
from .lifetime import on_language_change

if TYPE_CHECKING:     # importlib.metadata costs a tenth of a second at start: imported when the box opens
    import importlib.metadata as md

LICENSE_FILE = re.compile(r"(LICEN[CS]E|COPYING|NOTICE)", re.I)
OSI_PREFIX = "License :: OSI Approved :: "


@dataclass(frozen=True)
class Component:
    name: str
    version: str
    license: str
    license_files: tuple[Path, ...] = ()


def _requirement_name(spec: str) -> str | None:
    """The distribution a requirement names, or None for one that only an extra asks for."""
    if re.search(r"extra\s*==", spec):
        return None
    m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
    return m.group(1) if m else None


def _license_of(dist: md.Distribution) -> str:
    """SPDX expression if given (PEP 639), else a one-line License field, else the classifiers."""
    meta = dist.metadata
    expression = meta.get("License-Expression")
    if expression:
        return expression
    text = (meta.get("License") or "").strip()
    if text and "\n" not in text and len(text) <= 80:
        return text
    classifiers = [c[len(OSI_PREFIX):] for c in meta.get_all("Classifier") or [] if c.startswith(OSI_PREFIX)]
    return ", ".join(classifiers) or tr("see its license file")


def _license_files(dist: md.Distribution) -> tuple[Path, ...]:
    found = []
    for f in dist.files or []:
        if LICENSE_FILE.search(f.name) and (f.name.endswith((".txt", ".md", ".rst")) or "." not in f.name):
            path = Path(str(dist.locate_file(f)))
            if path.is_file():
                found.append(path)
    return tuple(found)


def components(root: str = "warpviz", extras: tuple[str, ...] = ("gpu",)) -> list[Component]:
    """warpviz and every installed distribution it runs on (its requirements, recursively,
    plus those of ``extras`` that are installed), then Python itself; sorted by name."""
    seen: dict[str, Component] = {}

    import importlib.metadata as md

    def walk(name: str, with_extras: tuple[str, ...] = ()) -> None:
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in seen:
            return
        try:
            dist = md.distribution(name)
        except md.PackageNotFoundError:
            return  # an optional or platform-specific one that is not here
        seen[key] = Component(dist.metadata["Name"], dist.version, _license_of(dist), _license_files(dist))
        for spec in dist.requires or []:
            dep = _requirement_name(spec)
            if dep is None and any(re.search(rf"extra\s*==\s*['\"]{e}['\"]", spec) for e in with_extras):
                dep = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec).group(1)
            if dep:
                walk(dep)

    walk(root, extras)
    own = seen.pop(re.sub(r"[-_.]+", "-", root).lower(), None)
    out = sorted(seen.values(), key=lambda c: c.name.lower())
    python = Component("Python", platform.python_version(), "PSF-2.0")
    return ([own] if own else []) + out + [python]


@dataclass(frozen=True)
class Measurement:
    file: Path
    label: str
    device: str
    measured_at: str
    warpviz: str
    scenarios: int
    agreeing: int
    kernels: int


def measurements() -> list[Measurement]:
    """The shipped measurement files (``assets/measurements/*.json``), newest first."""
    out = []
    for path in sorted(assets.measurements_dir().glob("*.json")):
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if not isinstance(doc, dict) or doc.get("format") != "warpviz-measurements":
            continue
        scenarios = doc.get("scenarios") or {}
        device = doc.get("device") or {}
        out.append(Measurement(
            file=path, label=str(doc.get("label", "")), device=str(device.get("name", "?")),
            measured_at=str(doc.get("measured_at", "")), warpviz=str(doc.get("warpviz", "")),
            scenarios=len(scenarios), agreeing=sum(1 for e in scenarios.values() if e.get("match") is True),
            kernels=len(doc.get("kernels") or {})))
    return sorted(out, key=lambda m: m.measured_at, reverse=True)


def how_installed() -> str:
    """Frozen folder, installed package, or checkout: where support questions start."""
    if getattr(sys, "frozen", False):
        return tr("frozen build")
    return tr("installed package") if "_data" in assets.root().parts else tr("source checkout")


def icon() -> QIcon:
    icons = assets.root() / "icons"
    ic = QIcon(str(icons / "warpviz.svg"))
    for png in sorted((icons / "png").glob("warpviz-*.png")):
        ic.addFile(str(png))
    return ic


class AboutDialog(QDialog):
    """Three tabs: warpviz (version, where it runs from), Measurements, Licenses."""

    def __init__(self, parent: QWidget | None = None):
        super().__init__(parent)
        self.setObjectName("aboutDialog")
        self.setWindowTitle(tr("About warpviz"))
        self.resize(760, 520)
        lay = QVBoxLayout(self)
        head = QLabel()
        head.setObjectName("aboutHeading")
        head.setTextFormat(Qt.TextFormat.RichText)
        head.setText(f"<h2>warpviz {__version__}</h2>"
                     + tr("See how a GPU serves a warp's memory: banks, wavefronts, sectors and lines."))
        head.setWordWrap(True)
        lay.addWidget(head)
        self.tabs = QTabWidget()
        self.tabs.addTab(self._about_tab(), tr("warpviz"))
        self.tabs.addTab(self._measurements_tab(), tr("Measurements"))
        self.tabs.addTab(self._licenses_tab(), tr("Licenses"))
        lay.addWidget(self.tabs)
        buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Close)
        buttons.rejected.connect(self.reject)
        lay.addWidget(buttons)

    def _about_tab(self) -> QWidget:
        try:
            from PySide6.QtCore import qVersion
            qt = qVersion()
        except ImportError:
            qt = "?"
        rows = [
            (tr("Version"), f"warpviz {__version__} ({how_installed()})"),
            (tr("License"), "MIT"),
            (tr("Running on"), f"Python {platform.python_version()}, Qt {qt}, "
                               f"{platform.system()} {platform.machine()}"),
            (tr("Built-in scenarios and data"), str(assets.root())),
            (tr("Compiled-code cache"), os.environ.get("NUMBA_CACHE_DIR", "")),
            (tr("GPUs described"), _gpus_text()),
        ]
        label = QLabel("<table>" + "".join(f"<tr><td><b>{k}</b>&nbsp;&nbsp;</td><td>{_html(v)}</td></tr>"
                                           for k, v in rows) + "</table>")
        label.setObjectName("aboutVersion")
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        label.setWordWrap(True)
        return label

    def _measurements_tab(self) -> QWidget:
        found = measurements()
        if not found:
            text = tr("No measurements are shipped with this copy.")
        else:
            parts = []
            for m in found:
                parts.append(
                    f"<p><b>{_html(m.device)}</b> ({_html(m.file.name)})<br>{_html(m.label)}<br>"
                    + tr("measured {when} with warpviz {version}: {n} scenarios, model and counters agree on "
                         "{agree}; {k} hand-written kernels", when=_html(m.measured_at[:10]),
                         version=_html(m.warpviz), n=m.scenarios, agree=m.agreeing, k=m.kernels) + "</p>")
            parts.append("<p>" + tr("The GPU panel shows these numbers beside the model; Import measurements "
                                    "there loads a file of your own (warpviz bench --all --out FILE).") + "</p>")
            text = "".join(parts)
        label = QLabel(text)
        label.setObjectName("aboutMeasurements")
        label.setTextFormat(Qt.TextFormat.RichText)
        label.setWordWrap(True)
        label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        label.setAlignment(Qt.AlignmentFlag.AlignTop | Qt.AlignmentFlag.AlignLeft)
        return label

    def _licenses_tab(self) -> QWidget:
        self.components = components()
        split = QSplitter(Qt.Orientation.Vertical)
        self.licenses = QTableWidget(len(self.components), 3)
        self.licenses.setObjectName("aboutLicenses")
        self.licenses.setHorizontalHeaderLabels([tr("component"), tr("version"), tr("license")])
        self.licenses.verticalHeader().hide()
        self.licenses.setEditTriggers(QTableWidget.EditTrigger.NoEditTriggers)
        self.licenses.setSelectionBehavior(QTableWidget.SelectionBehavior.SelectRows)
        self.licenses.setSelectionMode(QTableWidget.SelectionMode.SingleSelection)
        for row, c in enumerate(self.components):
            for col, value in enumerate((c.name, c.version, c.license)):
                self.licenses.setItem(row, col, QTableWidgetItem(value))
        self.licenses.resizeColumnsToContents()
        self.licenses.horizontalHeader().setStretchLastSection(True)
        self.license_text = QPlainTextEdit()
        self.license_text.setObjectName("aboutLicenseText")
        self.license_text.setReadOnly(True)
        self.license_text.setPlaceholderText(tr("Select a component to read its license."))
        self.licenses.currentCellChanged.connect(lambda row, *_: self._show_license(row))
        split.addWidget(self.licenses)
        split.addWidget(self.license_text)
        return split

    def _show_license(self, row: int) -> None:
        if not 0 <= row < len(self.components):
            return
        c = self.components[row]
        texts = []
        for path in c.license_files:
            try:
                texts.append(f"== {path.name} ==\n{path.read_text(encoding='utf-8', errors='replace')}")
            except OSError:
                continue
        self.license_text.setPlainText("\n\n".join(texts) or tr("{name} is licensed under {license}; its "
                                                                  "license text is not installed with it.",
                                                                  name=c.name, license=c.license))


def _html(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def show(window) -> AboutDialog:
    """Open the dialog (window-modal, without a nested event loop); kept as ``window.about_dialog``."""
    dialog = AboutDialog(window)
    dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
    window.about_dialog = dialog
    dialog.open()
    return dialog


def install(window) -> QAction:
    """Add Help → About warpviz to the main window (kept translated) and set its icon."""
    window.setWindowIcon(icon())
    action = QAction(window)
    action.setObjectName("about")
    action.setMenuRole(QAction.MenuRole.AboutRole)
    action.triggered.connect(lambda: show(window))
    window.m_help.addAction(action)

    def retranslate(_code: str = "") -> None:
        try:
            action.setText(tr("About warpviz"))
        except RuntimeError:  # the window is gone
            pass

    retranslate()
    on_language_change(window, retranslate)
    window.a_about = action
    return action


def _gpus_text() -> str:
    """The described GPUs (assets/gpus/), each calibrated or not (and the command that fixes it)."""
    from .. import gpus

    try:
        ds = gpus.descriptions()
    except gpus.GpuDescriptionError as err:
        return str(err)
    return "; ".join(d.name + " (" + (tr("calibrated") if d.calibration_path() is not None and d.calibration_path()
                                      .is_file() else tr("not calibrated: run `warpviz calibrate` on it")) + ")"
                     for d in ds)
