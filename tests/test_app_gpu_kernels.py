"""The GPU panel's kernel tabs: a built-in's readable hand-written kernel (kernels/*.cu)
first, the generated kernel with its helper macros in the next tab."""

from __future__ import annotations

from PySide6.QtCore import Qt

from app_helpers import make_window, user_dirs  # noqa: F401 - fixture
from viz import assets
from viz.gpu.handwritten import for_scenario


def click_tab(qtbot, tabs, index: int) -> None:
    bar = tabs.tabBar()
    qtbot.mouseClick(bar, Qt.MouseButton.LeftButton, pos=bar.tabRect(index).center())
    assert tabs.currentIndex() == index


def tab_titles(p) -> list[str]:
    return [p.tabs.tabText(i) for i in range(p.tabs.count()) if p.tabs.isTabVisible(i)]


def test_the_hand_written_kernel_comes_first_then_the_generated_one(qtbot, user_dirs, tmp_path):  # noqa: F811
    w = make_window(qtbot, "transpose-tile-pad")
    assert w.launch is not None                     # builds the plot panels, the GPU panel with them
    w.docks["gpu"].show()
    w.docks["gpu"].raise_()
    p = w.gpu_panel
    assert tab_titles(p) == ["Model vs hardware", "Chart", "Kernel source", "Generated kernel", "SASS"]
    click_tab(qtbot, p.tabs, p.tabs.indexOf(p.hand_box))
    text = p.hand.toPlainText()
    assert text == (assets.kernels_dir() / "transpose.cu").read_text(encoding="utf-8")
    assert "#define WARP_IF" not in text and "ld.volatile.shared" not in text     # no generated helpers
    # The scenario's own kernel is selected and named with its line.
    selected = p.hand.textCursor().selectedText()
    assert selected == "TRANSPOSE(transpose_tile_pad1, Pad1, 1)"
    line = text.splitlines().index(selected) + 1
    assert f"kernels/transpose.cu: transpose_tile_pad1 (line {line})" in p.hand_info.text()

    click_tab(qtbot, p.tabs, p.tabs.indexOf(p.kernel))
    qtbot.waitUntil(lambda: 'extern "C" __global__' in p.kernel.toPlainText(), timeout=20000)
    assert "ld.volatile.shared.b32" in p.kernel.toPlainText()     # the generated kernel's helpers

    # A built-in whose kernel is a real function: its definition is selected.
    w.open_path(assets.scenario_dir() / "coalesced.toml")
    assert p.hand.textCursor().selectedText().startswith('extern "C" __global__ void copy_float(')
    # Two kernels copy vector-int4: both are named.
    assert [k.function for k in for_scenario("vector-int4")] == ["copy_int4", "copy_float4"]
    w.open_path(assets.scenario_dir() / "vector-int4.toml")
    assert "copy_int4 (line" in p.hand_info.text() and "copy_float4 (line" in p.hand_info.text()

    # No hand-written kernel (pad-row-48, or a file of one's own): only the generated tab.
    click_tab(qtbot, p.tabs, p.tabs.indexOf(p.hand_box))
    w.open_path(assets.scenario_dir() / "pad-row-48.toml")
    assert not p.tabs.isTabVisible(p.tabs.indexOf(p.hand_box))
    assert p.tabs.currentWidget() is p.kernel
    assert tab_titles(p) == ["Model vs hardware", "Chart", "Generated kernel", "SASS"]
    qtbot.waitUntil(lambda: "tile" in p.kernel.toPlainText(), timeout=20000)
    mine = tmp_path / "transpose-tile-pad.toml"       # same name, not the built-in: no claim of a copy
    mine.write_text((assets.scenario_dir() / "transpose-tile-pad.toml").read_text())
    w.open_path(mine)
    assert not p.tabs.isTabVisible(p.tabs.indexOf(p.hand_box))
    w.open_path(assets.scenario_dir() / "transpose-tile.toml")
    assert p.tabs.isTabVisible(p.tabs.indexOf(p.hand_box))
    assert p.hand.textCursor().selectedText().startswith('extern "C" __global__ void transpose_tile_padded(')
    w.close()
