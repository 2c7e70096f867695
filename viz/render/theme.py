"""Themes for the painter: colours by role, font families with fallbacks, a type scale.

Colours are named by what they mean in the picture (a lane waiting, the wavefront being
served, a sector moved), never by hue, so every theme - light for slides, dark, high
contrast, colour-blind safe (Okabe & Ito's palette) - keeps the same meaning.
``Theme.scale`` multiplies every type size and stroke (presentation mode: large type).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property

from PySide6.QtGui import QColor

from ..argcheck import MAX_SCALE, MIN_SCALE, shown_value

# The shipped fonts first (assets/fonts, registered by viz.render.text.register_fonts): a
# picture looks and lays out the same on every machine; the rest are fallbacks only.
SANS = ("Warpviz Sans", "Warpviz CJK SC", "DejaVu Sans", "Noto Sans", "Noto Sans CJK SC", "Source Han Sans SC",
        "Microsoft YaHei", "PingFang SC", "WenQuanYi Micro Hei", "Arial", "Helvetica", "sans-serif")
MONO = ("Warpviz Mono", "Warpviz CJK SC", "DejaVu Sans Mono", "Noto Sans Mono", "Noto Sans Mono CJK SC", "Consolas",
        "Menlo", "Courier New", "monospace")

ROLES = (
    "background", "panel", "text", "muted", "grid",
    "lane", "lane_text", "lane_off", "lane_wait", "served", "now", "now_text",
    "word", "word_text", "link", "sector", "byte_used", "good", "bad",
    "caption_bg", "caption_text", "title_bg", "title_text", "phase_a", "phase_b",
)


@dataclass(frozen=True)
class Theme:
    """Colours (hex strings, by role), font families and a scale factor."""

    name: str
    colors: dict = field(hash=False, compare=True)
    scale: float = 1.0
    sans: tuple[str, ...] = SANS
    mono: tuple[str, ...] = MONO
    stroke: float = 1.0          # line width multiplier (high contrast draws thicker)

    @cached_property
    def _q(self) -> dict[str, QColor]:
        return {k: QColor(v) for k, v in self.colors.items()}

    def q(self, role: str) -> QColor:
        """The colour for ``role`` as a QColor (cached; callers must not modify it)."""
        return self._q[role]

    def scaled(self, scale: float) -> "Theme":
        return replace(self, scale=scale)


_LIGHT = {
    "background": "#ffffff", "panel": "#f3f4f6", "text": "#111827", "muted": "#4b5563", "grid": "#9ca3af",
    "lane": "#dbeafe", "lane_text": "#0f172a", "lane_off": "#e5e7eb", "lane_wait": "#f1f5f9",
    "served": "#15803d", "now": "#f59e0b", "now_text": "#111827",
    "word": "#eef2ff", "word_text": "#1e293b", "link": "#64748b", "sector": "#bfdbfe",
    "byte_used": "#1d4ed8", "good": "#15803d", "bad": "#b91c1c",
    "caption_bg": "#1f2937", "caption_text": "#ffffff", "title_bg": "#ffffff", "title_text": "#111827",
    "phase_a": "#e0e7ff", "phase_b": "#fce7f3",
}

_DARK = {
    "background": "#0f172a", "panel": "#1e293b", "text": "#f1f5f9", "muted": "#94a3b8", "grid": "#475569",
    "lane": "#1e3a8a", "lane_text": "#f8fafc", "lane_off": "#1f2937", "lane_wait": "#172033",
    "served": "#4ade80", "now": "#fbbf24", "now_text": "#0f172a",
    "word": "#27344d", "word_text": "#e2e8f0", "link": "#94a3b8", "sector": "#1e40af",
    "byte_used": "#93c5fd", "good": "#4ade80", "bad": "#f87171",
    "caption_bg": "#020617", "caption_text": "#f8fafc", "title_bg": "#0f172a", "title_text": "#f8fafc",
    "phase_a": "#1e1b4b", "phase_b": "#3b0a2a",
}

_HIGH_CONTRAST = {
    "background": "#000000", "panel": "#000000", "text": "#ffffff", "muted": "#ffffff", "grid": "#ffffff",
    "lane": "#000080", "lane_text": "#ffffff", "lane_off": "#3a3a3a", "lane_wait": "#000000",
    "served": "#00ff00", "now": "#ffff00", "now_text": "#000000",
    "word": "#000000", "word_text": "#ffffff", "link": "#00ffff", "sector": "#0000ff",
    "byte_used": "#ffffff", "good": "#00ff00", "bad": "#ff4040",
    "caption_bg": "#ffffff", "caption_text": "#000000", "title_bg": "#000000", "title_text": "#ffffff",
    "phase_a": "#202020", "phase_b": "#404040",
}

# Okabe & Ito (2008): black, orange, sky blue, bluish green, yellow, blue, vermillion,
# reddish purple - distinguishable with every common form of colour blindness.
_OKABE_ITO = {
    "background": "#ffffff", "panel": "#f2f2f2", "text": "#000000", "muted": "#444444", "grid": "#999999",
    "lane": "#cfe8f7", "lane_text": "#000000", "lane_off": "#e6e6e6", "lane_wait": "#f5f5f5",
    "served": "#009e73", "now": "#e69f00", "now_text": "#000000",
    "word": "#eaf4fb", "word_text": "#000000", "link": "#0072b2", "sector": "#56b4e9",
    "byte_used": "#0072b2", "good": "#009e73", "bad": "#d55e00",
    "caption_bg": "#000000", "caption_text": "#ffffff", "title_bg": "#ffffff", "title_text": "#000000",
    "phase_a": "#f0e4a0", "phase_b": "#efd3e6",
}

THEMES = {
    "light": Theme("light", _LIGHT),
    "dark": Theme("dark", _DARK),
    "high-contrast": Theme("high-contrast", _HIGH_CONTRAST, stroke=1.6),
    "colorblind": Theme("colorblind", _OKABE_ITO),
}
DEFAULT_THEME = "light"


def theme(name: str = DEFAULT_THEME, scale: float = 1.0) -> Theme:
    """A built-in theme by name (``light``, ``dark``, ``high-contrast``, ``colorblind``)."""
    try:
        base = THEMES[name]
    except KeyError:
        raise ValueError(f"unknown theme {name!r}; choose one of {', '.join(THEMES)}") from None
    if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not MIN_SCALE <= scale <= MAX_SCALE:
        raise ValueError(f"the theme scale {shown_value(scale)}: out of range; use {MIN_SCALE:g}..{MAX_SCALE:g}")
    return base.scaled(scale) if scale != 1.0 else base


def theme_names() -> list[str]:
    return list(THEMES)


# The themes' names as menus and dialogs show them (English; the app passes them through tr).
# Here rather than in viz.app.window so that the export dialog needs nothing from the window.
THEME_LABELS = {"light": "Light", "dark": "Dark", "high-contrast": "High contrast",
                "colorblind": "Colour-blind safe (Okabe-Ito)"}
