"""Qt's own words in the interface language: the file dialogs' "Look in", "File name", "Open",
"Cancel", message boxes' buttons, the text fields' context menus.

PySide6 ships Qt's translations (``qtbase_zh_CN.qm`` under ``QLibraryInfo.TranslationsPath``);
``follow_language`` installs the one of the current language and swaps it on every change.
A platform's native file dialog speaks the system's language, not warpviz's, so in a language
other than English the dialogs are Qt's own (translated) ones.
"""

from __future__ import annotations

from PySide6.QtCore import QCoreApplication, QLibraryInfo, Qt, QTranslator

from .. import i18n

# warpviz's language -> the name of Qt's catalogues for it
QT_NAMES = {"zh_CN": "zh_CN"}
CATALOGUES = ("qtbase",)            # the widgets' words (qt_zh_CN.qm only points at qtbase and friends)

# Words Qt 6's dialogs use that its shipped catalogue lacks (it still has Qt 5's "Look in:"
# without the "&"): (context, English) -> translation, per language.
MISSING = {"zh_CN": {("QFileDialog", "&Look in:"): "查找范围(&L)：",
                     ("QFileDialog", "Files of &type:"): "文件类型(&T)："}}

_installed: list[QTranslator] = []
_following = False


class _Missing(QTranslator):
    """The few words of ``MISSING`` (installed after Qt's catalogue: asked first)."""

    def __init__(self, words: dict, parent=None):
        super().__init__(parent)
        self.words = words

    def translate(self, context, source, disambiguation=None, n=-1):  # noqa: D102 - Qt's
        return self.words.get((context, source))     # None: not ours, the next catalogue is asked

    def isEmpty(self) -> bool:  # noqa: N802 - Qt's name
        return not self.words


def translations_folder() -> str:
    return QLibraryInfo.path(QLibraryInfo.LibraryPath.TranslationsPath)


def apply(code: str) -> bool:
    """Install Qt's catalogues for ``code`` (removing the last ones); True when one loaded.
    English needs none. A missing catalogue is no error: those words stay English."""
    app = QCoreApplication.instance()
    if app is None:
        return False
    for t in _installed:
        app.removeTranslator(t)
    _installed.clear()
    name = QT_NAMES.get(code)
    loaded = False
    if name is not None:
        for cat in CATALOGUES:
            t = QTranslator(app)
            if t.load(f"{cat}_{name}", translations_folder()):
                app.installTranslator(t)
                _installed.append(t)
                loaded = True
        if code in MISSING:
            t = _Missing(MISSING[code], app)
            app.installTranslator(t)
            _installed.append(t)
    # Qt's own dialogs where the language is not the system's native dialogs' (English aside)
    app.setAttribute(Qt.ApplicationAttribute.AA_DontUseNativeDialogs, code != "en")
    return loaded


def follow_language() -> None:
    """Keep Qt's words in warpviz's language from now on (once per process)."""
    global _following
    apply(i18n.language())
    if not _following:
        _following = True
        i18n.on_change(apply)
