"""The scenario editor: a form for launch, params, arrays and accesses, and the TOML text.

Both edit the same text. A form change is written into the TOML with ``tomlkit`` (which
keeps the file's comments and layout). Every edit, form or text, is a step in the
editor's ``undo_stack`` of text snapshots (see ``undo.py``: Edit → Undo / Redo). Every
change goes to the Session at once; an invalid one shows its message at the field or the
line, while the views keep the last valid state. The text is never reverted: nothing typed is lost.
"""

from __future__ import annotations

import tomllib
from typing import Any, Callable

import tomlkit
from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QColor, QFont, QFontDatabase, QTextCursor, QTextFormat, QUndoStack
from PySide6.QtWidgets import (QComboBox, QFormLayout, QGroupBox, QHBoxLayout, QLabel, QLineEdit,
                               QPlainTextEdit, QScrollArea, QSpinBox, QTabWidget, QTextEdit,
                               QVBoxLayout, QWidget)

from ..i18n import sep, tr
from ..kinds.ldmatrix import OP_NAMES as MATRIX_OPS
from ..types import all_type_names
from ..scenario import KIND_OPS
from .highlight import TomlHighlighter
from .state import Session
from .undo import Snapshot, UndoKeys

SWIZZLES = ["none", "xor", "xor:4", "diagonal", "bitrev", "bitrev-xor", "cute:3,3,3", "cute:2,3,3",
            # format 2: CuTe's own spelling and the TMA's swizzle modes (viz.layout.parse_swizzle)
            "Sw<3,3,3>", "Sw<2,3,3>", "Sw<3,4,3>", "tma:32B", "tma:64B", "tma:128B"]
# format 3: the matrix ops (viz.kinds.ldmatrix) after the plain ones
OPS = ["load", "store", *MATRIX_OPS]
ERROR_STYLE = "color: #c62828;"
# The form shows this many params, arrays and accesses at most; a longer file is edited in the
# text (tens of thousands of widgets took minutes to lay out).
MAX_FORM_ITEMS = 64


def _value_text(v: Any) -> str:
    if isinstance(v, list):
        return ", ".join(str(x) for x in v)
    if isinstance(v, dict):   # an access's loops: j = 0:32:8, k = 0:4
        return ", ".join(f"{k} = {x}" for k, x in v.items())
    return "" if v is None else str(v)


class FieldError(ValueError):
    """A form value that cannot be written into the TOML (shown at the field)."""


def _split_top(text: str) -> list[str]:
    """``text`` split at the commas outside parentheses (``min(a, b)`` stays whole)."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += (ch == "(") - (ch == ")")
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    return [x.strip() for x in parts + [cur] if x.strip()]


def _parse_for(text: str) -> dict[str, str]:
    """``j = 0:TILE:ROWS, k = 0:4`` as the table ``for`` takes (outermost loop first)."""
    out: dict[str, str] = {}
    for part in _split_top(text):
        var, eq, spec = part.partition("=")
        var, spec = var.strip(), spec.strip().strip('"')
        if not eq or not var.isidentifier() or not spec:
            raise FieldError(tr("write each loop as name = start:stop[:step], e.g. j = 0:32:8"))
        if var in out:
            raise FieldError(tr("loop variable {var} is given twice", var=var))
        out[var] = spec
    return out


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


def _put(table, key: str, value) -> None:
    """``table[key] = value``; a new key goes right after the table's last key, not after
    the comments that may end the table."""
    keys = list(table.keys())
    if key in table or not keys:
        table[key] = value
        return
    try:
        table.value._insert_after(keys[-1], key, value)
    except Exception:  # noqa: BLE001 - tomlkit's private API differs between versions: plain append
        table[key] = value


class TomlEdit(QPlainTextEdit):
    def __init__(self, parent=None):
        super().__init__(parent)
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont)
        self.setFont(font)
        self.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.setTabStopDistance(4 * self.fontMetrics().horizontalAdvance(" "))
        self.highlighter = TomlHighlighter(self.document())
        self.history = None   # EditorPanel's undo/redo (the app's history); the document keeps none
        self.setUndoRedoEnabled(False)

    def undo(self) -> None:
        if self.history is not None:
            self.history()
        else:
            super().undo()

    def redo(self) -> None:
        if self.history is not None:
            self.history(redo=True)
        else:
            super().redo()

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
        self.undo_stack = QUndoStack(self)   # every edit, form or text (see undo.py)
        self.undo_keys = UndoKeys(self.undo_stack, self.flush, self)
        self.text.installEventFilter(self.undo_keys)
        self.text.history = lambda redo=False: self.redo() if redo else self.undo()
        self.retranslate_undo = None
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
        trace = getattr(self.session, "is_trace", False) or getattr(self.session, "is_launch", False)
        self.text.setReadOnly(trace)                  # a launch file (a trace's, or to record): shown, not edited
        self.tabs.setTabEnabled(0, not trace)
        if trace:
            self.tabs.setCurrentIndex(1)
        if self.text.toPlainText() != self.session.text:
            self.text.blockSignals(True)
            self.text.setPlainText(self.session.text)
            self.text.blockSignals(False)
        self._debounce.stop()
        self.undo_stack.clear()   # another scenario (or recovered text): a new history
        self._structure = None
        self._sync_form()

    def _text_edited(self) -> None:
        self._last_field = None
        self._debounce.start()

    def _push_text(self) -> None:
        text = self.text.toPlainText()
        if text != self.session.text:
            before = self.session.text
            self.session.set_text(text)
            self.undo_stack.push(Snapshot(self, before, text, "text"))
            self.edited.emit()

    def flush(self) -> None:
        """Send a pending edit now (before saving, closing, tests)."""
        if self._debounce.isActive():
            self._debounce.stop()
            self._push_text()

    # -- undo ----------------------------------------------------------------

    def undo(self) -> None:
        self.flush()
        self.undo_stack.undo()

    def redo(self) -> None:
        self.flush()
        self.undo_stack.redo()

    def restore(self, text: str) -> None:
        """Show ``text`` (an undone or redone state) in the text, the form and the views."""
        self._debounce.stop()
        self._last_field = None
        self.text.blockSignals(True)
        self.text.replace_all(text)
        self.text.blockSignals(False)
        self.session.set_text(text)
        self._sync_form(force=True)
        self._show_error()   # no field keeps the mark of an edit that is undone
        self.edited.emit()

    # -- form ----------------------------------------------------------------

    def _raw(self) -> dict | None:
        try:
            return tomllib.loads(self.session.text)
        except (tomllib.TOMLDecodeError, RecursionError):     # deep TOML: the session shows the error
            return None

    def _sync_form(self, force: bool = False) -> None:
        """Show the text's values in the form; a field being typed into is left alone unless ``force``."""
        if getattr(self.session, "is_trace", False) or getattr(self.session, "is_launch", False):
            return
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
            if f.widget.hasFocus() and not force:
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
            for w in (widget, *widget.findChildren(QLineEdit)):
                w.installEventFilter(self.undo_keys)   # Ctrl+Z: the app's undo, not the field's
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
        def more(form: QFormLayout, shown: int, total: int) -> None:
            if total > shown:
                note = QLabel(tr("The form shows the first {shown} of {total:,}; edit the others in the text.",
                                 shown=shown, total=total))
                note.setWordWrap(True)
                form.addRow(note)

        params = raw.get("params", {}) or {}
        params = params if isinstance(params, dict) else {}
        if params:
            form = group(tr("Params"))
            more(form, MAX_FORM_ITEMS, len(params))
            for k in list(params)[:MAX_FORM_ITEMS]:
                e = QLineEdit()
                e.setToolTip(tr("An integer or an expression over earlier params"))
                add(form, k, ("params", k), e, (lambda e=e: _parse_value(e.text())))
        arrays = raw.get("arrays", {}) or {}
        arrays = arrays if isinstance(arrays, dict) else {}
        if len(arrays) > MAX_FORM_ITEMS:
            more(group(tr("Arrays")), MAX_FORM_ITEMS, len(arrays))
        for name, spec in list(arrays.items())[:MAX_FORM_ITEMS]:
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
                sw.setToolTip(tr("none, xor, xor:K, diagonal, bitrev, bitrev-xor, cute:B,M,S, expr:EXPR, `Sw<B,M,S>` "
                                 "or `tma:32B` / `tma:64B` / `tma:128B` (these need `format = 2`)") + "\n"
                              + tr("A swizzle acts on element offsets: for 2-byte elements the 128-byte swizzle "
                                   "is `Sw<3,3,3>` (on byte offsets the same swizzle is written `Sw<3,4,3>`)."))
                add(form, tr("Swizzle"), ("arrays", name, "swizzle"), sw, (lambda w=sw: w.currentText()))
            sp = QSpinBox()
            sp.setRange(0, 1 << 20)
            add(form, tr("Offset (bytes)"), ("arrays", name, "offset"), sp, (lambda w=sp: w.value()))
        access = raw.get("access", []) or []
        access = access if isinstance(access, list) else []
        if access:
            form = group(tr("Accesses"))
            more(form, MAX_FORM_ITEMS, len(access))
            for k, a in enumerate(access[:MAX_FORM_ITEMS]):
                if not isinstance(a, dict):
                    continue
                op = QComboBox()
                op.addItems(OPS)
                op.setToolTip(tr("`load` or `store`; `ldmatrix` / `stmatrix` (`.x1`, `.x2`, `.x4`, `.trans`) need "
                                 "`format = 3`"))
                op.addItems(KIND_OPS)      # format 3: cp.async, atomic, tma.load (their other keys: in the text)
                add(form, tr("{k}: op", k=k), ("access", k, "op"), op, (lambda w=op: w.currentText()))
                e = QLineEdit()
                add(form, tr("{k}: at", k=k), ("access", k, "at"), e, (lambda e=e: e.text()))
                e = QLineEdit()
                e.setPlaceholderText(tr("no loop"))
                e.setToolTip(tr("Loops, outermost first: name = start:stop[:step], e.g. j = 0:32:8, k = 0:4"))
                add(form, tr("{k}: for", k=k), ("access", k, "for"), e, (lambda e=e: _parse_for(e.text())))
                e = QLineEdit()
                e.setPlaceholderText(tr("every lane"))
                e.setToolTip(tr("The lanes that are active, e.g. threadIdx.x < 16 (empty: all)"))
                add(form, tr("{k}: when", k=k), ("access", k, "when"), e, (lambda e=e: e.text().strip()))
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
        try:
            value = f.read()
        except FieldError as err:
            f.error.setText(str(err))
            f.error.show()
            f.widget.setStyleSheet("border: 1px solid #c62828;")
            return
        cur = doc
        for k in f.path[:-1]:
            cur = cur[k]
        last = f.path[-1]
        if ((last in ("pad", "offset") and value == 0) or (last == "swizzle" and value in ("", "none"))
                or (last in ("when", "for") and not value)
                or (last == "shape" and value == [] and "layout" in cur)):     # the layout gives the shape
            if last in cur:
                del cur[last]
        else:
            if isinstance(value, dict):
                table = tomlkit.inline_table()
                table.update(value)
                value = table
            _put(cur, last, value)
        self._last_field = f
        f.error.hide()
        f.widget.setStyleSheet("")
        self.flush()   # text typed just before is its own step
        before = self.session.text
        self.text.blockSignals(True)
        self.text.replace_all(tomlkit.dumps(doc))
        self.text.blockSignals(False)
        self._debounce.stop()
        after = self.text.toPlainText()
        self.session.set_text(after)
        if after != before:
            self.undo_stack.push(Snapshot(self, before, after, "form", f.path))
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
            f.error.setText(err.problem + (sep(". ") + err.fix if err.fix else ""))
            f.error.show()
            f.widget.setStyleSheet("border: 1px solid #c62828;")

    def show_info(self, text) -> None:
        """The line above the editor: a text, or a function that makes it in the language of the
        moment (called again when the language changes)."""
        self._info = text
        shown = text() if callable(text) else text
        self.info.setText(shown)
        self.info.setVisible(bool(shown))

    def set_dark(self, dark: bool) -> None:
        self.text.highlighter.set_dark(dark)

    def retranslate(self) -> None:
        if callable(getattr(self, "_info", None)):
            self.show_info(self._info)
        self.tabs.setTabText(0, tr("Form"))
        self.tabs.setTabText(1, tr("TOML"))
        self._structure = None
        self._sync_form()
        self._show_error()
        if self.retranslate_undo is not None:
            self.retranslate_undo()
