"""The Notes panel: the current scenario's notes as Markdown, following the scenario, and
optional in presentation mode (a remembered View menu toggle)."""

from __future__ import annotations

from PySide6.QtGui import QTextDocument

from app_helpers import make_window, user_dirs, wait_analysis, window  # noqa: F401 - fixtures
from viz.app import settings
from viz.app.notes import notes_markdown
from viz.scenario import load


def blocks(doc: QTextDocument) -> list:
    b, out = doc.begin(), []
    while b.isValid():
        out.append(b)
        b = b.next()
    return out


def test_notes_panel_shows_the_scenarios_notes_as_paragraphs(qtbot, window):
    sc = load("transpose-tile")
    doc = window.notes.browser.document()
    texts = [b.text() for b in blocks(doc)]
    assert texts[0] == sc.title                                  # the heading
    assert blocks(doc)[0].blockFormat().headingLevel() == 2
    lines = [ln for ln in sc.notes.strip().splitlines() if ln.strip()]
    assert texts[1:] == lines                                    # one paragraph per line of the notes
    assert "GB/s" in doc.toPlainText()                          # the H100 figures are there


def test_notes_panel_follows_the_interface_language(qtbot, window):
    sc = load("transpose-tile")
    window.set_language("zh_CN")
    try:
        qtbot.waitUntil(lambda: sc.title_zh in window.notes.browser.toPlainText())
        text = window.notes.browser.toPlainText()
        assert sc.notes_zh.strip().splitlines()[0] in text and sc.notes.strip().splitlines()[0] not in text
    finally:
        window.set_language("en")
    qtbot.waitUntil(lambda: sc.title in window.notes.browser.toPlainText())


def test_notes_follow_the_scenario_on_screen(qtbot, window):
    window.library._clicked(window.library.item_for("coalesced"))
    wait_analysis(qtbot, window)
    text = window.notes.browser.toPlainText()
    assert load("coalesced").title in text and "100% sector efficiency" in text
    assert load("transpose-tile").notes.strip().splitlines()[0] not in text


def test_markdown_lists_code_and_paragraphs():
    md = notes_markdown("T", "First *line*.\nSecond line.\n- one\n- two\nAfter.\n```\na\nb\n```")
    doc = QTextDocument()
    doc.setMarkdown(md)
    bs = blocks(doc)
    texts = [b.text() for b in bs]
    assert texts[:3] == ["T", "First line.", "Second line."]
    assert [b.text() for b in bs if b.textList() is not None] == ["one", "two"]
    assert "After." in texts and "a" in texts and "b" in texts
    italic = [it.fragment().text() for it in _fragments(bs[1]) if it.fragment().charFormat().fontItalic()]
    assert italic == ["line"]                                    # Markdown is rendered


def _fragments(block):
    it = block.begin()
    while not it.atEnd():
        yield it
        it += 1


def test_notes_in_presentation_mode_is_a_remembered_toggle(qtbot, user_dirs):
    w = make_window(qtbot)
    dock = w.docks["notes"]
    assert not w.a_notes_presenting.isChecked()          # off by default: the picture alone
    w.a_present.setChecked(True)
    assert dock.isHidden()
    w.a_notes_presenting.setChecked(True)                # View → Notes in presentation mode
    qtbot.waitUntil(lambda: dock.isVisible())
    assert all(d.isHidden() for k, d in w.docks.items() if k != "notes")
    w.a_present.setChecked(False)
    w.a_present.setChecked(True)
    qtbot.waitUntil(lambda: dock.isVisible())
    w.a_present.setChecked(False)
    assert settings.get("notes_in_presentation", False, bool) is True
    w.close()
    w2 = make_window(qtbot)
    assert w2.a_notes_presenting.isChecked()
    w2.a_notes_presenting.setChecked(False)
    w2.a_present.setChecked(True)
    assert w2.docks["notes"].isHidden()
    w2.a_present.setChecked(False)
    w2.close()


def test_notes_panel_in_chinese(qtbot, window):
    from viz import i18n
    i18n.set_language("zh_CN")
    assert window.docks["notes"].windowTitle() == "备注"
    assert window.a_notes_presenting.text() == "演示模式中显示备注"


def test_hard_wrapped_notes_run_on_into_paragraphs():
    """Notes wrapped at 90 characters, as the guide's example is, read as Markdown: the lines
    of a paragraph run on, a blank line starts the next; notes written a paragraph a line
    (the built-ins) keep a paragraph per line."""
    wrapped = ("Each thread sums one column: a[r][col] for r = 0..R-1. At every step the 32 lanes of a\n"
               "warp read 32 neighbouring floats of one row: 4 sectors per request.\n\n"
               "A second paragraph,\nwrapped too.")
    doc = QTextDocument()
    doc.setMarkdown(notes_markdown("T", wrapped))
    texts = [b.text() for b in blocks(doc)]
    assert texts == ["T", "Each thread sums one column: a[r][col] for r = 0..R-1. At every step the 32 lanes of a "
                          "warp read 32 neighbouring floats of one row: 4 sectors per request.",
                     "A second paragraph, wrapped too."]
    doc.setMarkdown(notes_markdown("T", "One sentence.\nAnother one.\n"))
    assert [b.text() for b in blocks(doc)] == ["T", "One sentence.", "Another one."]
