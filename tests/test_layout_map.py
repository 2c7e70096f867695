"""The layout map picture (viz.render.layout_map) and `warpviz layout`: CuTe's print_layout
table, every offset written and coloured by its bank, text never below 14 px at 1080p,
nothing overlapping, a dense grid said so, bad input exit 2."""

from __future__ import annotations

import pytest
from PySide6.QtCore import QRectF
from PySide6.QtGui import QColor, QImage, QPainter

from viz.cli import main
from viz.export import export_layout_map
from viz.layout_text import layout_map
from viz.render import theme
from viz.render.layout_map import bank_color, natural_size, paint_layout_map


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


def paint(m, size, th="light", scale=None):
    img = QImage(size[0], size[1], QImage.Format.Format_RGB32)
    p = QPainter(img)
    g = paint_layout_map(p, QRectF(0, 0, *size), m, theme(th), scale=scale)
    p.end()
    return img, g


def no_overlap(texts):
    boxes = [r for r, _, _ in texts]
    for i, a in enumerate(boxes):
        for b in boxes[i + 1:]:
            inter = a.intersected(b)
            assert inter.width() < 0.5 or inter.height() < 0.5, (a, b)


def test_print_layout_text_is_cutes():
    # CUTLASS media/docs/cpp/cute/01_layout.md, print_layout(s2xh4)
    assert layout_map("(2,(2,2)):(4,(2,1))").to_text() == "\n".join([
        "(2,(2,2)):(4,(2,1))",
        "      0   1   2   3",
        "    +---+---+---+---+",
        " 0  | 0 | 2 | 1 | 3 |",
        "    +---+---+---+---+",
        " 1  | 4 | 6 | 5 | 7 |",
        "    +---+---+---+---+"])


def test_banks_are_of_the_first_byte():
    m = layout_map("Sw<3,3,3> o (8,64):(64,1)")
    assert m.banks[1, 0] == (72 * 2 // 4) % 32 == 4
    assert all(sorted(set(m.banks[r, ::2].tolist())) == list(range(32)) for r in range(8))


@pytest.mark.parametrize("text, shape, typ", [("Sw<3,3,3> o (8,64):(64,1)", None, "half"),
                                              ("SwizzledSharedLayout(8, 1, 8, [1, 0])", (16, 64), "half"),
                                              ("(32,32):(1,32)", None, "float")])
def test_natural_size_writes_every_offset_at_16px(text, shape, typ):
    m = layout_map(text, shape, typ)
    size = natural_size(m, theme())
    _, g = paint(m, size, scale=1.0)
    assert g.cell_px >= 14 and g.two_lines and not g.notes
    written = [t for _, t, _ in g.texts]
    for v in m.offsets.reshape(-1).tolist():
        assert str(v) in written
    assert min(px for _, _, px in g.texts) >= 14
    assert len(g.cells) == m.rows * m.cols


@pytest.mark.parametrize("th", ["light", "dark"])
def test_the_128_byte_swizzled_half_tile_fits_a_1080p_slide(th):
    m = layout_map("Sw<3,3,3> o (8,64):(64,1)")
    img, g = paint(m, (1920, 1080), th)
    assert g.cell_px >= 14 and not g.notes
    assert min(px for _, _, px in g.texts) >= 14
    no_overlap(g.texts)
    # each cell is painted in its bank's colour (sampled beside the text, inside the border)
    for k in (0, 9, 64 + 8, 7 * 64 + 63):
        r, c = divmod(k, 64)
        cell = g.cells[k]
        pix = QColor(img.pixel(int(cell.left() + 3), int(cell.top() + 3)))
        want = bank_color(int(m.banks[r, c]), theme(th))
        assert abs(pix.red() - want.red()) <= 2 and abs(pix.green() - want.green()) <= 2


def test_a_dense_grid_on_a_slide_says_the_numbers_are_left_out():
    m = layout_map("(64,64):(64,1)", None, "float")
    _, g = paint(m, (1920, 1080))
    assert g.cell_px == 0
    assert any("offsets not written: 64 x 64 cells" in t for _, t, _ in g.texts)
    assert min(px for _, _, px in g.texts) >= 14


def test_not_one_to_one_is_said():
    m = layout_map("(4,8):(0,1)", None, "float")
    _, g = paint(m, natural_size(m, theme()), scale=1.0)
    assert any("not one-to-one" in t for _, t, _ in g.texts)


def test_cli_prints_and_draws(tmp_path, capsys):
    assert main(["layout", "(2,(2,2)):(4,(2,1))"]) == 0
    assert capsys.readouterr().out.splitlines()[3] == " 0  | 0 | 2 | 1 | 3 |"
    out = tmp_path / "m.svg"
    assert main(["layout", "SwizzledSharedLayout(8, 1, 8, [1, 0])", "--shape", "8,64", "--out", str(out)]) == 0
    svg = out.read_text()
    assert ">72<" in svg and ">511<" in svg and "<svg" in svg
    png = tmp_path / "m.png"
    assert main(["layout", "NVMMASharedLayout(128)", "--shape", "8x64", "--out", str(png), "--size", "1080p"]) == 0
    assert QImage(str(png)).size().width() == 1920


@pytest.mark.parametrize("args, fragment", [
    (["(8,64"], "expected ')' but found the end. Write a CuTe layout"),
    (["SwizzledSharedLayout(8, 3, 8, [1, 0])", "--shape", "8,64"], "per_phase = 3 is not a power of two"),
    (["SwizzledSharedLayout(8, 1, 8, [1, 0])"], "needs the array's shape"),
    (["(8,64)", "--shape", "8,x"], "--shape '8,x'"),
    (["(8,64)", "--type", "quad"], "unknown type 'quad'"),
    (["(8,64)", "--out", "OUT.gif"], "a layout map is a picture: give a .png or .svg file"),
    (["(8,64)", "--out", "OUT.png", "--theme", "pink"], "unknown theme 'pink'"),
    (["(8,64)", "--out", "OUT.png", "--size", "huge"], "size 'huge' is not understood"),
])
def test_cli_bad_input_exits_2(tmp_path, capsys, args, fragment):
    args = [a.replace("OUT", str(tmp_path / "x")) for a in args]
    assert main(["layout", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and "Traceback" not in err and err.count("\n") == 1
    assert fragment in err
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("lang", ["en", "zh_CN"])
def test_natural_size_estimate_holds_in_both_languages(lang):
    from viz import i18n

    i18n.set_language(lang)
    try:
        m = layout_map("Sw<3,3,3> o (8,64):(64,1)")
        size = m.natural_size()
        _, g = paint(m, size, scale=1.0)
        assert g.two_lines and g.cell_px >= 16 and not g.notes
        no_overlap(g.texts)
        assert all(r.right() <= size[0] and r.bottom() <= size[1] for r, _, _ in g.texts)
    finally:
        i18n.set_language("en")


def test_export_layout_map_writes_atomically(tmp_path):
    m = layout_map("(2,(2,2)):(4,(2,1))")
    res = export_layout_map(m, tmp_path / "m.png")
    assert res.size == m.natural_size() and QImage(str(res.path)).width() == res.size[0]
    assert [p.name for p in tmp_path.iterdir()] == ["m.png"]


def test_a_map_too_wide_for_its_numbers_asks_for_a_size(tmp_path, capsys):
    assert main(["layout", "1024:1", "--out", str(tmp_path / "w.png")]) == 2
    assert "takes a" in capsys.readouterr().err and not list(tmp_path.iterdir())
    assert main(["layout", "1024:1", "--out", str(tmp_path / "w.png"), "--size", "1920x1080"]) == 0


def test_cli_draws_an_array_of_a_scenario(tmp_path, capsys):
    assert main(["layout", "transpose-tile-xor", "--array", "tile"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "tile: xor"
    row1 = [int(x) for x in out[5].split("|")[1:-1]]
    assert row1[:4] == [33, 32, 35, 34]                   # row 1: col ^ 1
    assert main(["layout", "transpose-tile", "--array", "nope"]) == 2
    assert "no array 'nope'" in capsys.readouterr().err
    assert main(["layout", "no-such-scenario", "--array", "tile"]) == 2
    assert "neither a file nor a built-in" in capsys.readouterr().err
