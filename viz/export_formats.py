"""The export formats: one table that the exporter (``viz.export``), the app's export dialog
(``viz.app.export_dialog``), the command line (``viz.export_cli``) and the Python API
(``viz.api``) all read. A new format is one entry here and its writer in ``viz.export``
(docs/ARCHITECTURE.md, "A new export format").

The model layer: no Qt here (the writers paint with Qt, in ``viz.export``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from .i18n import sep, tr

SEQUENCE = "png-sequence"   # the one format that is a folder, not a file


@dataclass(frozen=True)
class ExportFormat:
    """One way to write pictures.

    ``name``: what ``Result.format``, the dialog's setting and the API's ``prefer`` say.
    ``extension``: the file's (``"/"``: a folder). ``label``: its name in the interface
    language (a function, so that it follows the language). ``animated``: it holds every
    selected frame in time (a still holds one picture: by default the summary, the last
    frame). ``video``: written through ffmpeg (an even width and height; ``fps`` applies).
    ``options``: the ``viz.export.Settings`` fields only it (and its kind) reads, beside the
    common size, theme, scale, captions and title. ``writer``: the name of the function in
    ``viz.export`` that writes it. ``vector``: drawn as shapes and text, not pixels."""

    name: str
    extension: str
    label: Callable[[], str]
    animated: bool
    writer: str
    video: bool = False
    options: tuple[str, ...] = ()
    vector: bool = False

    @property
    def still(self) -> bool:
        return not self.animated

    @property
    def is_folder(self) -> bool:
        return self.extension == "/"


# In the order the export dialog lists them (its default first).
FORMATS: tuple[ExportFormat, ...] = (
    ExportFormat("mp4", ".mp4", lambda: tr("MP4 video (H.264)"), animated=True, video=True,
                 options=("fps", "hold", "title_card"), writer="_write_video"),
    ExportFormat("webm", ".webm", lambda: tr("WebM video (VP9)"), animated=True, video=True,
                 options=("fps", "hold", "title_card"), writer="_write_video"),
    ExportFormat("gif", ".gif", lambda: tr("GIF animation"), animated=True, options=("hold", "title_card"),
                 writer="_write_gif"),
    ExportFormat("png", ".png", lambda: tr("PNG image (one frame)"), animated=False, writer="_write_png"),
    ExportFormat("svg", ".svg", lambda: tr("SVG image (one frame, vector)"), animated=False, vector=True,
                 writer="_write_svg"),
    ExportFormat(SEQUENCE, "/", lambda: tr("PNG sequence (a folder)"), animated=True, options=("title_card",),
                 writer="_write_sequence"),
)

BY_NAME: dict[str, ExportFormat] = {f.name: f for f in FORMATS}
NAMES: tuple[str, ...] = tuple(f.name for f in FORMATS)
STILLS: tuple[str, ...] = tuple(f.name for f in FORMATS if f.still)            # ("png", "svg")
VIDEOS: tuple[str, ...] = tuple(f.name for f in FORMATS if f.video)            # ("mp4", "webm")
BY_EXTENSION: dict[str, str] = {f.extension: f.name for f in FORMATS if not f.is_folder}   # ".png" -> "png"


def get(name: str) -> ExportFormat:
    """The format called ``name`` (KeyError for another name)."""
    return BY_NAME[name]


def extensions_text(kinds: tuple[str, ...] | None = None, last: str | None = None) -> str:
    """``.mp4, .webm, .gif, .png, .svg`` (of ``kinds``, default every file format), for messages and
    help, joined by ``, `` in the interface language's punctuation; ``last="or"``: ``.png or .svg``."""
    exts = [BY_NAME[k].extension for k in (kinds or NAMES) if not BY_NAME[k].is_folder]
    comma = sep(", ")
    if last and len(exts) > 1:
        return comma.join(exts[:-1]) + f" {last} " + exts[-1]
    return comma.join(exts)


def labels() -> dict[str, str]:
    """Each format's name in the interface language."""
    return {f.name: f.label() for f in FORMATS}


__all__ = ["ExportFormat", "FORMATS", "BY_NAME", "NAMES", "STILLS", "VIDEOS", "BY_EXTENSION", "SEQUENCE", "get",
           "extensions_text", "labels"]
