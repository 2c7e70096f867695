"""The app opens launch files of format 2 as a user would: a C++ template in a sample-style
program (its definition selected in the Source panel) and a Triton PTX module (the PTX shown),
each offered for recording like any launch file."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("PySide6")

from app_helpers import user_dirs, window  # noqa: E402,F401 - fixtures

ROOT = Path(__file__).resolve().parents[1]
FORMAT2 = ROOT / "kernels" / "format2"


def test_a_cpp_template_launch_file_selects_the_templates_definition(qtbot, window):
    path = FORMAT2 / "tiles_transpose_padded.launch.toml"
    assert window.open_path(path)
    s = window.session
    assert s.is_launch and s.launch.kernel == "tiles::transpose_padded<float, 32, 8>"
    lines = (FORMAT2 / "tiled_ops.cu").read_text().splitlines()
    want = next(n for n, ln in enumerate(lines, 1) if "void transpose_padded(" in ln)
    src = window.trace_source
    assert f"(line {want})" in src.note.text()
    assert "transpose_padded(" in src.source.textCursor().selectedText()


def test_a_ptx_launch_file_shows_the_ptx(qtbot, window):
    path = FORMAT2 / "triton_matmul.launch.toml"
    assert window.open_path(path)
    s = window.session
    assert s.is_launch and s.launch.ptx and s.launch.kernel == "matmul_kernel"
    src = window.trace_source
    assert ".entry matmul_kernel" in src.source.toPlainText()
    assert "matmul_kernel" in src.source.textCursor().selectedText()
