#!/usr/bin/env python3
"""Make the fonts the pictures are drawn with (assets/fonts/*.ttf): subsets of DejaVu Sans
(Latin: sans, sans condensed, mono; regular and bold) and of Noto Sans CJK SC (Chinese;
regular and bold), cut down to the characters warpviz can draw and renamed ``Warpviz ...``
(a modified font must not keep its original name; the licences allow the rest).

Run it whenever a translation, a lesson or a built-in scenario brings a character the
subset lacks (tests/test_picture_fonts.py fails until then):

    apt-get install fonts-noto-cjk fonts-dejavu-core fonts-dejavu-extra   # the sources
    pip install fonttools                                                 # the subsetter
    python tools/make_picture_fonts.py

The characters: every non-ASCII character of assets/translations, assets/lessons,
assets/scenarios and viz/ (the strings the code draws), all of printable ASCII and
Latin-1 (``--common`` adds GB2312's level-1 hanzi, the 3,755 most common characters, at
about 3.5 MB more). What it made, and from which files, is in assets/fonts/README.md.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "assets" / "fonts"

DEJAVU = Path("/usr/share/fonts/truetype/dejavu")
NOTO_CJK = Path("/usr/share/fonts/opentype/noto")
# (output file, family name, style, source file, index in a .ttc, character set)
FACES = [
    ("WarpvizSans-Regular.ttf", "Warpviz Sans", "Regular", DEJAVU / "DejaVuSans.ttf", 0, "latin"),
    ("WarpvizSans-Bold.ttf", "Warpviz Sans", "Bold", DEJAVU / "DejaVuSans-Bold.ttf", 0, "latin"),
    ("WarpvizSansCondensed-Regular.ttf", "Warpviz Sans Condensed", "Regular",
     DEJAVU / "DejaVuSansCondensed.ttf", 0, "latin"),
    ("WarpvizSansCondensed-Bold.ttf", "Warpviz Sans Condensed", "Bold",
     DEJAVU / "DejaVuSansCondensed-Bold.ttf", 0, "latin"),
    ("WarpvizMono-Regular.ttf", "Warpviz Mono", "Regular", DEJAVU / "DejaVuSansMono.ttf", 0, "latin"),
    ("WarpvizMono-Bold.ttf", "Warpviz Mono", "Bold", DEJAVU / "DejaVuSansMono-Bold.ttf", 0, "latin"),
    # NotoSansCJK-*.ttc: face 2 is "Noto Sans CJK SC" (JP, KR, SC, TC, HK in that order)
    ("WarpvizCJK-Regular.otf", "Warpviz CJK SC", "Regular", NOTO_CJK / "NotoSansCJK-Regular.ttc", 2, "cjk"),
    ("WarpvizCJK-Bold.otf", "Warpviz CJK SC", "Bold", NOTO_CJK / "NotoSansCJK-Bold.ttc", 2, "cjk"),
]


def is_cjk(ch: str) -> bool:
    o = ord(ch)
    return 0x2E80 <= o <= 0x9FFF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF or 0x3000 <= o <= 0x303F


def drawn_characters(root: Path = ROOT) -> set[str]:
    """Every character warpviz may draw from its own files (translations, lessons, built-in
    scenarios, the code's strings), ASCII and Latin-1 included."""
    chars = {chr(c) for c in range(0x20, 0x7F)} | {chr(c) for c in range(0xA0, 0x100)}
    files = []
    for sub, pattern in (("assets/translations", "*.toml"), ("assets/lessons", "*.toml"),
                         ("assets/scenarios", "*.toml"), ("viz", "*.py")):
        files += sorted((root / sub).rglob(pattern))
    for f in files:
        chars |= {ch for ch in f.read_text("utf-8") if ord(ch) >= 0x80 and ch.isprintable()}
    return chars


def gb2312_level1() -> set[str]:
    out = set()
    for hi in range(0xB0, 0xD8):
        for lo in range(0xA1, 0xFF):
            try:
                out.add(bytes([hi, lo]).decode("gb2312"))
            except UnicodeDecodeError:
                pass
    return out


def subset(src: Path, index: int, chars: set[str], dest: Path, family: str, style: str) -> int:
    from fontTools import subset as ft_subset
    from fontTools.ttLib import TTFont

    font = TTFont(str(src), fontNumber=index, lazy=False)
    cmap = font.getBestCmap()
    keep = sorted(ord(c) for c in chars if ord(c) in cmap)
    opts = ft_subset.Options()
    opts.layout_features = ["kern", "liga", "locl", "ccmp", "mark", "mkmk", "vert", "halt", "palt"]
    opts.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14, 16, 17]
    opts.notdef_outline = True
    opts.hinting = True
    opts.glyph_names = False
    sub = ft_subset.Subsetter(opts)
    sub.populate(unicodes=keep)
    sub.subset(font)
    name = font["name"]
    full = f"{family} {style}" if style != "Regular" else family
    ps = f"{family.replace(' ', '')}-{style}"
    for rec in list(name.names):
        if rec.nameID in (1, 16):
            name.setName(family, rec.nameID, rec.platformID, rec.platEncID, rec.langID)
        elif rec.nameID in (2, 17):
            name.setName(style, rec.nameID, rec.platformID, rec.platEncID, rec.langID)
        elif rec.nameID == 3:
            name.setName(f"warpviz subset: {ps}", rec.nameID, rec.platformID, rec.platEncID, rec.langID)
        elif rec.nameID == 4:
            name.setName(full, rec.nameID, rec.platformID, rec.platEncID, rec.langID)
        elif rec.nameID == 6:
            name.setName(ps, rec.nameID, rec.platformID, rec.platEncID, rec.langID)
    # names in other languages (e.g. the CJK font's Chinese family name) would keep the old name
    name.names = [r for r in name.names if r.nameID not in (1, 4, 16) or r.langID in (0, 0x409)]
    if "CFF " in font:
        cff = font["CFF "].cff
        cff.fontNames = [ps]
        top = cff.topDictIndex[0]
        for attr, value in (("FullName", full), ("FamilyName", family)):
            if hasattr(top, attr):
                setattr(top, attr, value)
    dest.parent.mkdir(parents=True, exist_ok=True)
    font.recalcTimestamp = False        # the same characters make the same bytes (no churn in git)
    font.save(str(dest))
    return len(keep)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=OUT, help="where the fonts go (default assets/fonts)")
    ap.add_argument("--common", action="store_true", help="add GB2312 level-1 hanzi (about 3.5 MB more)")
    a = ap.parse_args(argv)
    missing = [str(src) for _, _, _, src, _, _ in FACES if not src.is_file()]
    if missing:
        print("missing source fonts (apt-get install fonts-noto-cjk fonts-dejavu-core fonts-dejavu-extra):\n  "
              + "\n  ".join(missing), file=sys.stderr)
        return 2
    drawn = drawn_characters()
    sets = {"latin": {c for c in drawn if not is_cjk(c)},
            "cjk": {c for c in drawn if is_cjk(c)} | ({c for c in drawn if c.isascii() and c.isprintable()})}
    if a.common:
        sets["cjk"] |= gb2312_level1()
    total = 0
    for fname, family, style, src, index, which in FACES:
        n = subset(src, index, sets[which], a.out / fname, family, style)
        size = (a.out / fname).stat().st_size
        total += size
        print(f"{fname}: {n} characters, {size / 1024:.0f} KiB (from {src.name})")
    print(f"total {total / 1024:.0f} KiB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
