"""TOML syntax highlighting for the scenario text (a QSyntaxHighlighter)."""

from __future__ import annotations

import re

from PySide6.QtGui import QColor, QFont, QSyntaxHighlighter, QTextCharFormat, QTextDocument

IN_TRIPLE = 1  # block state: inside a """ multi-line string

_RULES = [
    ("table", re.compile(r"^\s*\[\[?[^\]]*\]\]?")),
    ("key", re.compile(r"^\s*[A-Za-z0-9_.\-\"]+(?=\s*=)")),
    ("number", re.compile(r"(?<![\w.])[-+]?(0x[0-9a-fA-F_]+|0b[01_]+|\d[\d_]*)(?![\w.])")),
    ("bool", re.compile(r"\b(true|false)\b")),
    ("string", re.compile(r'"(?:[^"\\]|\\.)*"|\'[^\']*\'')),
    ("comment", re.compile(r"#.*$")),
]

PALETTES = {
    "light": {"table": "#6f42c1", "key": "#005cc5", "number": "#b35900", "bool": "#b35900",
              "string": "#22863a", "comment": "#6a737d"},
    "dark": {"table": "#c792ea", "key": "#82aaff", "number": "#f78c6c", "bool": "#f78c6c",
             "string": "#c3e88d", "comment": "#7f8c98"},
}


class TomlHighlighter(QSyntaxHighlighter):
    def __init__(self, document: QTextDocument, dark: bool = False):
        super().__init__(document)
        self.set_dark(dark)

    def set_dark(self, dark: bool) -> None:
        self.formats = {}
        for kind, colour in PALETTES["dark" if dark else "light"].items():
            f = QTextCharFormat()
            f.setForeground(QColor(colour))
            if kind == "table":
                f.setFontWeight(QFont.Weight.Bold)
            if kind == "comment":
                f.setFontItalic(True)
            self.formats[kind] = f
        self.rehighlight()

    def highlightBlock(self, text: str) -> None:  # noqa: N802 - Qt's name
        start = 0
        if self.previousBlockState() == IN_TRIPLE:
            end = text.find('"""')
            if end < 0:
                self.setFormat(0, len(text), self.formats["string"])
                self.setCurrentBlockState(IN_TRIPLE)
                return
            self.setFormat(0, end + 3, self.formats["string"])
            start = end + 3
        self.setCurrentBlockState(0)
        rest = text[start:]
        for kind, rx in _RULES:
            for m in rx.finditer(rest):
                self.setFormat(start + m.start(), m.end() - m.start(), self.formats[kind])
        # A comment ends the line, so strings/numbers inside it stay comment-coloured.
        triple = rest.find('"""')
        if triple >= 0 and rest.count('"""') % 2 == 1:
            self.setFormat(start + triple, len(rest) - triple, self.formats["string"])
            self.setCurrentBlockState(IN_TRIPLE)
