"""Interface language: English source strings, translated from data catalogs at run time.

Catalogs are TOML tables in ``assets/translations/<code>.toml`` mapping an English string
to its translation (``"Wavefront {k} of {n}" = "第 {k}/{n} 个波前"``). Strings with no entry
stay English. The model uses this too (frame captions), so it imports no Qt; the app
re-renders when ``on_change`` listeners fire.
"""

from __future__ import annotations

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
    return out.format(**fmt) if fmt else out


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
