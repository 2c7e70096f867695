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


# Each role's colour in each built-in theme, one row a role. colorblind is Okabe & Ito (2008):
# black, orange, sky blue, bluish green, yellow, blue, vermillion, reddish purple -
# distinguishable with every common form of colour blindness.
_COLOURS = """
role          light    dark     high-contrast  colorblind
background    #ffffff  #0f172a  #000000        #ffffff
panel         #f3f4f6  #1e293b  #000000        #f2f2f2
text          #111827  #f1f5f9  #ffffff        #000000
muted         #4b5563  #94a3b8  #ffffff        #444444
grid          #9ca3af  #475569  #ffffff        #999999
lane          #dbeafe  #1e3a8a  #000080        #cfe8f7
lane_text     #0f172a  #f8fafc  #ffffff        #000000
lane_off      #e5e7eb  #1f2937  #3a3a3a        #e6e6e6
lane_wait     #f1f5f9  #172033  #000000        #f5f5f5
served        #15803d  #4ade80  #00ff00        #009e73
now           #f59e0b  #fbbf24  #ffff00        #e69f00
now_text      #111827  #0f172a  #000000        #000000
word          #eef2ff  #27344d  #000000        #eaf4fb
word_text     #1e293b  #e2e8f0  #ffffff        #000000
link          #64748b  #94a3b8  #00ffff        #0072b2
sector        #bfdbfe  #1e40af  #0000ff        #56b4e9
byte_used     #1d4ed8  #93c5fd  #ffffff        #0072b2
good          #15803d  #4ade80  #00ff00        #009e73
bad           #b91c1c  #f87171  #ff4040        #d55e00
caption_bg    #1f2937  #020617  #ffffff        #000000
caption_text  #ffffff  #f8fafc  #000000        #ffffff
title_bg      #ffffff  #0f172a  #000000        #ffffff
title_text    #111827  #f8fafc  #ffffff        #000000
phase_a       #e0e7ff  #1e1b4b  #202020        #f0e4a0
phase_b       #fce7f3  #3b0a2a  #404040        #efd3e6
"""


def _palettes(table: str) -> dict[str, dict[str, str]]:
    head, *rows = table.strip().split("\n")
    names = head.split()[1:]
    return {name: {row.split()[0]: row.split()[1 + k] for row in rows} for k, name in enumerate(names)}


_PALETTES = _palettes(_COLOURS)
THEMES = {
    "light": Theme("light", _PALETTES["light"]),
    "dark": Theme("dark", _PALETTES["dark"]),
    "high-contrast": Theme("high-contrast", _PALETTES["high-contrast"], stroke=1.6),
    "colorblind": Theme("colorblind", _PALETTES["colorblind"]),
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
