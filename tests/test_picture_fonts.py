"""The pictures are drawn with the fonts warpviz ships (assets/fonts), not with whatever the
machine has: every character warpviz can draw is in them, they are registered before the
first picture, and the themes name them first."""

import importlib.util
import os
from pathlib import Path

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtGui import QFontInfo, QRawFont  # noqa: E402

from viz import assets  # noqa: E402
from viz.render import theme  # noqa: E402
from viz.render.text import condensed, font, register_fonts  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
FONTS = assets.root() / "fonts"


def _tool():
    spec = importlib.util.spec_from_file_location("make_picture_fonts", ROOT / "tools" / "make_picture_fonts.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


def _missing(path: Path, chars) -> list[str]:
    raw = QRawFont(str(path), 16)
    assert raw.isValid(), path
    return sorted(c for c in chars if not raw.supportsCharacter(ord(c)))   # ord: a str past Latin-1 is misread


def test_every_character_warpviz_draws_is_in_the_shipped_fonts():
    """Translations, lessons, built-in scenarios and the code's own strings: each character is
    in the shipped CJK subset (Chinese) or the shipped sans (the rest). A new translation
    with a new character fails here until ``python tools/make_picture_fonts.py`` is run."""
    tool = _tool()
    chars = tool.drawn_characters(ROOT)
    cjk = {c for c in chars if tool.is_cjk(c)}
    latin = chars - cjk
    assert len(cjk) > 500 and "扇" in cjk and "→" in latin      # the scan found the catalogs and the code
    fix = "; remake the subsets: python tools/make_picture_fonts.py (see assets/fonts/README.md)"
    for style in ("Regular", "Bold"):
        missing = _missing(FONTS / f"WarpvizCJK-{style}.otf", cjk)
        assert not missing, f"WarpvizCJK-{style} lacks {''.join(missing)!r}" + fix
    for name in ("WarpvizSans", "WarpvizSansCondensed", "WarpvizMono"):
        for style in ("Regular", "Bold"):
            missing = _missing(FONTS / f"{name}-{style}.ttf", latin)
            assert not missing, f"{name}-{style} lacks {''.join(missing)!r}" + fix


def test_the_checker_of_coverage_can_fail():
    """A character outside every subset is reported missing (the coverage test can fail)."""
    assert _missing(FONTS / "WarpvizCJK-Regular.otf", {"龘", "扇"}) == ["龘"]


def test_the_shipped_fonts_are_small_and_licensed():
    files = sorted(FONTS.glob("Warpviz*.[ot]tf"))
    assert len(files) == 8
    assert sum(f.stat().st_size for f in files) < 1.5 * 1024 * 1024
    readme = (FONTS / "README.md").read_text("utf-8")
    for f in files:
        assert f.name in readme
    assert "SIL OPEN FONT LICENSE Version 1.1" in (FONTS / "OFL-NotoSansCJK.txt").read_text("utf-8")
    assert "Bitstream Vera" in (FONTS / "LICENSE-DejaVu.txt").read_text("utf-8")


def test_pictures_are_drawn_with_the_shipped_fonts():
    """Registered once, named first by every theme: the font Qt picks is the shipped one,
    regular and bold, sans, condensed and mono, whatever the machine has installed."""
    got = register_fonts()
    assert set(got) == {"Warpviz Sans", "Warpviz Sans Condensed", "Warpviz Mono", "Warpviz CJK SC"}
    assert register_fonts() is got
    th = theme("light")
    for fams, want in ((th.sans, "Warpviz Sans"), (th.mono, "Warpviz Mono"), (condensed(th), "Warpviz Sans Condensed"),
                       (("Warpviz CJK SC",), "Warpviz CJK SC")):
        for bold in (False, True):
            info = QFontInfo(font(fams, 18, bold))
            assert info.family() == want and info.bold() == bold
