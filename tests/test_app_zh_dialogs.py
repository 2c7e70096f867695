"""Chinese all the way: Qt's own words in the file dialogs and message
boxes, Help → Keys as a table whose descriptions line up, the classroom's words beside the
formal terms where they are first met, and the stmatrix lessons' 填充."""

from __future__ import annotations

import tomllib
from pathlib import Path

from PySide6.QtCore import Qt, QTimer
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QFileDialog, QLabel, QMessageBox

from app_helpers import make_window, user_dirs, window  # noqa: F401 - fixtures
from viz import i18n

ROOT = Path(__file__).resolve().parents[1]


def _the_open_dialog(qtbot, w, start):
    """Press Ctrl+O as a user does and give back the file dialog that opens (closed after)."""
    seen = {}

    def look():
        d = QApplication.activeModalWidget()
        if isinstance(d, QFileDialog):
            seen["buttons"] = sorted(b.text().replace("(&O)", "") for b in d.findChild(QDialogButtonBox).buttons())
            seen["labels"] = [lab.text() for lab in d.findChildren(QLabel) if lab.text()]
            seen["native"] = d.testOption(QFileDialog.Option.DontUseNativeDialog)
            d.reject()
        else:
            QTimer.singleShot(50, look)

    QTimer.singleShot(0, look)
    start()
    qtbot.waitUntil(lambda: "buttons" in seen, timeout=20000)
    return seen


def test_in_chinese_the_open_dialog_is_chinese(qtbot, window):
    window.set_language("zh_CN")
    assert QApplication.testAttribute(Qt.ApplicationAttribute.AA_DontUseNativeDialogs)    # Qt's, translated
    seen = _the_open_dialog(qtbot, window, window.open_dialog)
    assert seen["buttons"] == sorted(["打开", "取消"])
    assert "查找范围(&L)：" in seen["labels"] and "文件名称(&N)：" in seen["labels"] \
        and "文件类型(&T)：" in seen["labels"]
    assert not any("Look in" in t or "File name" in t for t in seen["labels"])


def test_in_chinese_the_gpu_import_dialog_is_chinese(qtbot, window):
    window.set_language("zh_CN")
    p = window.gpu_panel
    seen = _the_open_dialog(qtbot, window, p.b_import.click)
    assert seen["buttons"] == sorted(["打开", "取消"])


def test_back_in_english_the_dialogs_are_english_again(qtbot, window):
    window.set_language("zh_CN")
    window.set_language("en")
    box = QMessageBox(QMessageBox.Icon.Warning, "x", "y", QMessageBox.StandardButton.Ok |
                      QMessageBox.StandardButton.Cancel)
    assert sorted(b.text() for b in box.buttons()) == ["&OK", "&Cancel"] or \
        sorted(b.text().replace("&", "") for b in box.buttons()) == ["Cancel", "OK"]
    window.set_language("zh_CN")
    box = QMessageBox(QMessageBox.Icon.Warning, "x", "y", QMessageBox.StandardButton.Ok |
                      QMessageBox.StandardButton.Cancel)
    assert sorted(b.text() for b in box.buttons()) == sorted(["确定", "取消"])


def test_keys_dialog_lines_up_in_a_table(qtbot, window):
    from viz.app.window import KEY_ROWS

    for lang in ("en", "zh_CN"):
        window.set_language(lang)
        window.a_keys.trigger()                 # Help → Keys (F1)
        dlg = window.keys_dialog
        qtbot.waitUntil(dlg.isVisible)
        from PySide6.QtWidgets import QTableWidget

        table = dlg.findChild(QTableWidget, "keysTable")
        rows = KEY_ROWS()
        assert table.rowCount() == len(rows) and table.columnCount() == 2
        assert [(table.item(i, 0).text(), table.item(i, 1).text()) for i in range(len(rows))] == rows
        # every description starts at the same x: the column's left edge
        xs = {table.visualItemRect(table.item(i, 1)).left() for i in range(len(rows))}
        assert len(xs) == 1
        # and no key overflows into it
        fm = table.fontMetrics()
        assert all(fm.horizontalAdvance(k) < table.columnWidth(0) for k, _ in rows)
        if lang == "zh_CN":
            assert table.horizontalHeaderItem(1).text() == "作用"
            assert rows[0][1] == i18n.tr("play / pause") != "play / pause"
        dlg.close()
    window.set_language("en")


def test_the_classroom_words_stand_beside_the_formal_terms(qtbot, window):
    from viz.app.figures import TERM_TIPS

    i18n.set_language("zh_CN")
    try:
        tips = TERM_TIPS()
        assert "bank 冲突" in tips["bank conflicts"] and "存储体冲突" in tips["bank conflicts"]
        assert "AMD" in tips["wavefronts"] and "线程束" in tips["wavefronts"]
        assert "（bank 冲突，4 路）" in i18n.tr(" = {n} bank conflicts ({ways}-way)", n=28, ways=4)
        # the Figures panel shows the gloss on the wavefronts row of a shared access
        window.session.go(instr=8, frame=0)
        qtbot.waitUntil(lambda: window.figures.tree.topLevelItemCount() > 0)
        names = {}
        for i in range(window.figures.tree.topLevelItemCount()):
            top = window.figures.tree.topLevelItem(i)
            for j in range(top.childCount()):
                names[top.child(j).text(0)] = top.child(j).toolTip(0)
        assert names.get("波前数") == tips["wavefronts"]
    finally:
        i18n.set_language("en")
    glossary = (ROOT / "docs" / "guide" / "glossary.zh.md").read_text("utf-8")
    assert "bank 冲突" in glossary and "AMD" in glossary


def test_the_stmatrix_lessons_say_padding_as_the_glossary_does():
    for name in ("stmatrix-accumulator", "stmatrix-accumulator-pad"):
        doc = tomllib.loads((ROOT / "assets" / "scenarios" / f"{name}.toml").read_text("utf-8"))
        text = doc.get("notes_zh", "") + doc.get("title_zh", "")
        assert "每行补" not in text and "填充" in text, name
