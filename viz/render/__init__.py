"""Rendering (pictures, above the model): the one painter (``paint_frame``), its views and themes.
Imports Qt; the model does not; viz.export and the app draw through it."""

from .painter import (Layout, PaintOptions, figures_row, layout, paint_compare, paint_frame,
                      paint_title_card)
from .text import NullPainter, TextItem
from .theme import DEFAULT_THEME, THEMES, Theme, theme, theme_names

__all__ = ["paint_frame", "paint_compare", "paint_title_card", "layout", "Layout", "PaintOptions", "Theme",
           "theme", "theme_names", "THEMES", "DEFAULT_THEME", "figures_row", "TextItem", "NullPainter"]
