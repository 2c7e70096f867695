"""Interface language: English source strings, translated from data catalogs at run time.

Catalogs are TOML tables in ``assets/translations/<code>.toml`` mapping an English string
to its translation (``"Wavefront {k} of {n}" = "第 {k}/{n} 个波前"``). Strings with no entry
stay English. The model uses this too (frame captions), so it imports no Qt; the app
re-renders when ``on_change`` listeners fire.
"""

from __future__ import annotations

import re
import string
import tomllib
from typing import Callable

from . import assets

LANGUAGES = {"en": "English", "zh_CN": "简体中文"}
_current = "en"
_catalogs: dict[str, dict[str, str]] = {}
_listeners: list[Callable[[str], None]] = []


def _catalog(code: str) -> dict[str, str]:
    if code not in _catalogs:
        path = assets.root() / "translations" / f"{code}.toml"
        try:
            _catalogs[code] = {k: v for k, v in tomllib.loads(path.read_text("utf-8")).items()
                               if isinstance(v, str)}
        except (OSError, tomllib.TOMLDecodeError):
            _catalogs[code] = {}
    return _catalogs[code]


def tr(text: str, /, **fmt) -> str:
    """Translate ``text`` into the current language, then fill ``{name}`` fields."""
    out = _catalog(_current).get(text, text) if _current != "en" else text
    if not fmt:
        return out
    return _spaced(out, fmt) if _current == "zh_CN" else out.format(**fmt)


_CJK = re.compile(r"[\u3400-\u9fff]")
_LATIN = re.compile(r"[A-Za-z0-9]")


def _seam(a: str, b: str) -> bool:
    """A Chinese character beside a Latin letter or digit (either order)."""
    return bool(a and b) and bool((_CJK.match(a) and _LATIN.match(b)) or (_LATIN.match(a) and _CJK.match(b)))


def _spaced(template: str, fmt: dict) -> str:
    """``template.format(**fmt)`` with a space where a filled-in field meets the text beside it
    Chinese-to-Latin (计算 + cp.async -> 计算 cp.async), as Chinese typesetting puts one."""
    pieces: list[tuple[str, bool]] = []
    for literal, field, spec, conv in string.Formatter().parse(template):
        if literal:
            pieces.append((literal, False))
        if field is not None:
            one = "{" + field + ("!" + conv if conv else "") + (":" + spec if spec else "") + "}"
            value = one.format(**fmt)
            if value:
                pieces.append((value, True))
    out = ""
    prev_field = False
    for text, is_field in pieces:
        if out and (is_field or prev_field) and _seam(out[-1], text[0]):
            out += " "
        out += text
        prev_field = is_field
    return out


def language() -> str:
    return _current


def set_language(code: str) -> None:
    global _current
    if code not in LANGUAGES:
        raise ValueError(f"unknown language {code!r}; available: {', '.join(LANGUAGES)}")
    if code != _current:
        _current = code
        for fn in list(_listeners):
            fn(code)


def on_change(fn: Callable[[str], None]) -> Callable[[], None]:
    """Call ``fn(code)`` after every language change; returns the function that stops it
    (a widget calls that when it is destroyed: ``viz.app.lifetime.on_language_change``)."""
    _listeners.append(fn)

    def remove() -> None:
        if fn in _listeners:
            _listeners.remove(fn)

    return remove


def missing(code: str, strings: list[str]) -> list[str]:
    """Strings that the catalog of ``code`` does not translate (for tests)."""
    cat = _catalog(code)
    return [s for s in strings if s not in cat]


_FULL_WIDTH = {": ": "：", "; ": "；", ", ": "，", ". ": "。", ".": "。", " (": "（", ")": "）"}


def sep(text: str) -> str:
    """Punctuation joined in code (``": "``, ``"; "``, ``", "``, ``". "``, ``" ("``, ``")"``), in the
    current language: the ASCII form in English, the full-width form (``：；，。（）``) in Chinese."""
    return _FULL_WIDTH.get(text, text) if _current == "zh_CN" else text
