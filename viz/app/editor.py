"""The scenario editor: a form for launch, params, arrays and accesses, and the TOML text.

Both edit the same text. A form change is written into the TOML with ``tomlkit`` (which
keeps the file's comments and layout) as one undoable edit of the text. Every change goes
to the Session at once; an invalid one shows its message at the field or the line, while
the views keep the last valid state. The text is never reverted: nothing typed is lost.
"""

from __future__ import annotations

import tomllib
from typing import Any, Callable

import tomlkit
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QTextCursor, QTextFormat
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QPlainTextEdit, QScrollArea, QSpinBox, QTabWidget, QTextEdit,
                               QVBoxLayout, QWidget)

from ..i18n import tr
from ..types import all_type_names
from .highlight import TomlHighlighter
from .state import Session

SWIZZLES = ["none", "xor", "xor:4", "diagonal", "bitrev", "bitrev-xor", "cute:3,3,3", "cute:2,3,3"]
ERROR_STYLE = "color: #c62828;"


def _value_text(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    return "" if v is None else str(v)


def _parse_value(text: str) -> Any:
    """An int where the text is one, else the text (an expression over params)."""
    t = text.strip()
    try:
        return int(t, 0)
    except ValueError:
        return t


def _parse_list(text: str) -> list:
    return [_parse_value(x) for x in text.split(",") if x.strip()]


class _Field:
    """One form row: its widget, how it reads, and the label for its error message."""

    def __init__(self, path: tuple, widget: QWidget, read: Callable[[], Any], error: QLabel):
        self.path, self.widget, self.read, self.error = path, widget, read, error


class TomlEdit(QPlainTextEdit):
    def __init__(self, parent=None):
        super().__init__(parent)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(4 * self.fontMetrics().horizontalAdvance(" "))
        self.highlighter = TomlHighlighter(self.document())

    def mark_line(self, line: int | None) -> None:
        """Underline and tint the line an error points at (1-based); None clears."""
        sels = []
        if line:
            block = self.document().findBlockByNumber(line - 1)
            if block.isValid():
                sel = QTextEdit.ExtraSelection()
                sel.format.setBackground(QColor(255, 82, 82, 60))
                sel.format.setProperty(QTextFormat.Property.FullWidthSelection, True)
                sel.cursor = QTextCursor(block)
                sels.append(sel)
        self.setExtraSelections(sels)

    def replace_all(self, text: str) -> None:
        """Replace the text as one undoable edit, keeping the cursor's line and column."""
        if text == self.toPlainText():
            return
        cur = self.textCursor()
        line, col = cur.blockNumber(), cur.positionInBlock()
        edit = QTextCursor(self.document())
        edit.beginEditBlock()
        edit.select(QTextCursor.SelectionType.Document)
        edit.insertText(text)
        edit.endEditBlock()
        block = self.document().findBlockByNumber(min(line, self.document().blockCount() - 1))
        cur = QTextCursor(block)
        cur.movePosition(QTextCursor.MoveOperation.Right, n=min(col, block.length() - 1))
        self.setTextCursor(cur)


class EditorPanel(QWidget):
    edited = Signal()

    def __init__(self, session: Session, parent=None):
        super().__init__(parent)
        self.session = session
        self.tabs = QTabWidget()
        self.form_host = QScrollArea()
        self.form_host.setWidgetResizable(True)
        self.text = TomlEdit()
        self.text.setObjectName("tomlText")
        self.tabs.addTab(self.form_host, "")
        self.tabs.addTab(self.text, "")
        self.banner = QLabel()
        self.banner.setObjectName("errorBanner")
        self.banner.setWordWrap(True)
        self.banner.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.banner.setStyleSheet(ERROR_STYLE + "padding: 4px;")
        self.banner.hide()
        self.info = QLabel()
        self.info.setWordWrap(True)
        self.info.hide()
        lay = QVBoxLayout(self)
        lay.setContentsMargins(0, 0, 0, 0)
        lay.addWidget(self.info)
        lay.addWidget(self.tabs, 1)
        lay.addWidget(self.banner)
        self.fields: dict[tuple, _Field] = {}
        self._structure = None
        self._last_field: _Field | None = None
        self._debounce = QTimer(self)
        self._debounce.setSingleShot(True)
        self._debounce.setInterval(15)
        self._debounce.timeout.connect(self._push_text)
        self.text.textChanged.connect(self._text_edited)
        session.textChanged.connect(self._load_text)
        session.changed.connect(self._sync_form)
        session.errorChanged.connect(self._show_error)
        self.retranslate()

    # -- text ----------------------------------------------------------------

    def _load_text(self) -> None:
        if self.text.toPlainText() != self.session.text:
            self.text.blockSignals(True)
            self.text.setPlainText(self.session.text)
            self.text.blockSignals(False)
        self._structure = None
        self._sync_form()

    def _text_edited(self) -> None:
        self._last_field = None
        self._debounce.start()

    def _push_text(self) -> None:
        text = self.text.toPlainText()
        if text != self.session.text:
            self.session.set_text(text)
            self.edited.emit()

    def flush(self) -> None:
        """Send a pending edit now (before saving, closing, tests)."""
        if self._debounce.isActive():
            self._debounce.stop()
            self._push_text()

    # -- form ----------------------------------------------------------------

    def _raw(self) -> dict | None:
        try:
            return tomllib.loads(self.session.text)
        except tomllib.TOMLDecodeError:
            return None

    def _sync_form(self) -> None:
        raw = self._raw()
        if raw is None:
            return
        arrays = raw.get("arrays", {}) if isinstance(raw.get("arrays"), dict) else {}
        access = raw.get("access", []) if isinstance(raw.get("access"), list) else []
        structure = (tuple(raw.get("params", {}) or {}), tuple(arrays),
                     tuple("fields" in (a or {}) for a in arrays.values()), len(access))
        if structure != self._structure:
            self._structure = structure
            self._build_form(raw)
            return
        for f in self.fields.values():
            if f.widget.hasFocus():
                continue
            self._set_widget(f.widget, self._lookup(raw, f.path))

    @staticmethod
    def _lookup(raw: dict, path: tuple) -> Any:
        cur: Any = raw
        for k in path:
            try:
                cur = cur[k]
            except (KeyError, IndexError, TypeError):
                return None
        return cur

    @staticmethod
    def _set_widget(w: QWidget, value: Any) -> None:
        w.blockSignals(True)
        if isinstance(w, QSpinBox):
            w.setValue(int(value or 0) if not isinstance(value, str) else 0)
        elif isinstance(w, QComboBox):
            text = _value_text(value) or w.itemText(0)
            if w.isEditable():
                w.setCurrentText(text)
            else:
                i = w.findText(text)
                w.setCurrentIndex(max(i, 0))
        elif isinstance(w, QLineEdit):
            if w.text() != _value_text(value):
                w.setText(_value_text(value))
        w.blockSignals(False)

    def _build_form(self, raw: dict) -> None:
        self.fields.clear()
        host = QWidget()
        outer = QVBoxLayout(host)
        outer.setContentsMargins(6, 6, 6, 6)

        def group(title: str) -> QFormLayout:
            box = QGroupBox(title)
            form = QFormLayout(box)
            form.setFieldGrowthPolicy(QFormLayout.FieldGrowthPolicy.AllNonFixedFieldsGrow)
            outer.addWidget(box)
            return form

        def add(form: QFormLayout, label: str, path: tuple, widget: QWidget, read, kind: str = "value"):
            err = QLabel()
            err.setStyleSheet(ERROR_STYLE)
            err.setWordWrap(True)
            err.hide()
            col = QWidget()
            v = QVBoxLayout(col)
            v.setContentsMargins(0, 0, 0, 0)
            v.setSpacing(1)
            v.addWidget(widget)
            v.addWidget(err)
            form.addRow(label, col)
            f = _Field(path, widget, read, err)
            self.fields[path] = f
            widget.setObjectName("field:" + ".".join(str(p) for p in path))
            self._set_widget(widget, self._lookup(raw, path))
            apply = lambda *_: self._apply_field(f)  # noqa: E731
            if isinstance(widget, QSpinBox):
                widget.valueChanged.connect(apply)
            elif isinstance(widget, QComboBox):
                widget.currentTextChanged.connect(apply)
            else:
                widget.textEdited.connect(apply)

        form = group(tr("Launch"))
        for key, label in (("block", tr("Block (threads)")), ("grid", tr("Grid (blocks)"))):
            e = QLineEdit()
            e.setToolTip(tr("1 to 3 numbers or expressions, x first, e.g. 32, 8"))
            add(form, label, ("launch", key), e, (lambda e=e: _parse_list(e.text())))
        params = raw.get("params", {}) or {}
        if params:
            form = group(tr("Params"))
            for k in params:
                e = QLineEdit()
                e.setToolTip(tr("An integer or an expression over earlier params"))
                add(form, k, ("params", k), e, (lambda e=e: _parse_value(e.text())))
        arrays = raw.get("arrays", {}) or {}
        for name, spec in arrays.items():
            if not isinstance(spec, dict):
                continue
            form = group(tr("Array {name}", name=name))
            space = QComboBox()
            space.addItems(["global", "shared"])
            add(form, tr("Space"), ("arrays", name, "space"), space, (lambda w=space: w.currentText()))
            if "fields" in spec:
                e = QLineEdit()
                add(form, tr("Fields"), ("arrays", name, "fields"), e,
                    (lambda e=e: [x.strip() for x in e.text().split(",") if x.strip()]))
            else:
                t = QComboBox()
                t.addItems(all_type_names())
                add(form, tr("Type"), ("arrays", name, "type"), t, (lambda w=t: w.currentText()))
            e = QLineEdit()
            add(form, tr("Shape"), ("arrays", name, "shape"), e, (lambda e=e: _parse_list(e.text())))
            if "layout" in spec:      # a CuTe or Triton layout (format 2) places every element itself
                e = QLineEdit()
                e.setToolTip(tr("A CuTe layout such as Sw<3,3,3> o (8,64):(64,1), or a Triton one such as "
                                "SwizzledSharedLayout(8, 1, 8, [1, 0])"))
                add(form, tr("Layout"), ("arrays", name, "layout"), e, (lambda e=e: e.text()))
            elif isinstance(spec.get("shape"), list) and len(spec["shape"]) == 2:
                if isinstance(spec.get("pad", 0), int):
                    sp = QSpinBox()
                    sp.setRange(0, 4096)
                    add(form, tr("Pad (elements per row)"), ("arrays", name, "pad"), sp, (lambda w=sp: w.value()))
                else:
                    e = QLineEdit()
                    add(form, tr("Pad (elements per row)"), ("arrays", name, "pad"), e,
                        (lambda e=e: _parse_value(e.text())))
                sw = QComboBox()
                sw.setEditable(True)
                sw.addItems(SWIZZLES)
                sw.setToolTip(tr("none, xor, xor:K, diagonal, bitrev, bitrev-xor, cute:B,M,S or expr:EXPR"))
                add(form, tr("Swizzle"), ("arrays", name, "swizzle"), sw, (lambda w=sw: w.currentText()))
            sp = QSpinBox()
            sp.setRange(0, 1 << 20)
            add(form, tr("Offset (bytes)"), ("arrays", name, "offset"), sp, (lambda w=sp: w.value()))
        access = raw.get("access", []) or []
        if access:
            form = group(tr("Accesses"))
            for k, a in enumerate(access):
                if not isinstance(a, dict):
                    continue
                op = QComboBox()
                op.addItems(["load", "store"])
                add(form, tr("{k}: op", k=k), ("access", k, "op"), op, (lambda w=op: w.currentText()))
                e = QLineEdit()
                add(form, tr("{k}: at", k=k), ("access", k, "at"), e, (lambda e=e: e.text()))
        outer.addStretch(1)
        old = self.form_host.takeWidget()
        self.form_host.setWidget(host)
        if old is not None:
            old.deleteLater()

    def _apply_field(self, f: _Field) -> None:
        """Write one form value into the TOML text (comments kept) and re-analyse."""
        try:
            doc = tomlkit.parse(self.text.toPlainText())
        except Exception as err:  # noqa: BLE001 - tomlkit raises several kinds; the text has a syntax error
            f.error.setText(tr("Fix the TOML text first: {err}", err=err))
            f.error.show()
            return
        value = f.read()
        cur = doc
        for k in f.path[:-1]:
            cur = cur[k]
        last = f.path[-1]
        if (last in ("pad", "offset") and value == 0) or (last == "swizzle" and value in ("", "none")) or \
                (last == "shape" and value == [] and "layout" in cur):     # the layout gives the shape
            if last in cur:
                del cur[last]
        else:
            cur[last] = value
        self._last_field = f
        self.text.blockSignals(True)
        self.text.replace_all(tomlkit.dumps(doc))
        self.text.blockSignals(False)
        self._debounce.stop()
        self.session.set_text(self.text.toPlainText())
        self.edited.emit()
        self._last_field = f

    # -- errors --------------------------------------------------------------

    def _show_error(self) -> None:
        err = self.session.error
        for f in self.fields.values():
            f.error.hide()
            f.widget.setStyleSheet("")
        if err is None:
            self.banner.hide()
            self.text.mark_line(None)
            return
        line = err.line
        msg = err.message()
        self.banner.setText(tr("Not applied (the views show the last valid state): {msg}", msg=msg))
        self.banner.show()
        self.text.mark_line(line)
        if self._last_field is not None:
            f = self._last_field
            f.error.setText(err.problem + (f". {err.fix}" if err.fix else ""))
            f.error.show()
            f.widget.setStyleSheet("border: 1px solid #c62828;")

    def show_info(self, text: str) -> None:
        self.info.setText(text)
        self.info.setVisible(bool(text))

    def set_dark(self, dark: bool) -> None:
        self.text.highlighter.set_dark(dark)

    def retranslate(self) -> None:
        self.tabs.setTabText(0, tr("Form"))
        self.tabs.setTabText(1, tr("TOML"))
        self._structure = None
        self._sync_form()
        self._show_error()
