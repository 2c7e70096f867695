"""An array's ``layout`` written as CuTe or Triton write it, in a scenario file: the same
figures as the equivalent swizzle, format 2, and every bad layout refused with the file,
line, field and fix (CLI exit 2)."""

from __future__ import annotations

import pytest

from viz.cli import main
from viz.engine import analyze
from viz.scenario import ScenarioError, loads

BASE = """format = 2
title = "t"
[launch]
block = [32]
grid = [1]
[arrays.tile]
space = "shared"
type = "half"
{array}
[[access]]
op = "load"
at = "tile[lane % 8][(lane / 8) * 8]"
"""


def sc(array: str, text: str = BASE):
    return loads(text.format(array=array), source="case.toml")


def metrics(s):
    return analyze(s).metrics


def test_cute_layout_gives_the_shape_and_the_same_figures_as_the_swizzle():
    a = sc('layout = "Sw<3,3,3> o (8,64):(64,1)"')
    b = sc('shape = [8, 64]\nswizzle = "tma:128B"')
    c = sc('shape = [8, 64]\nswizzle = "Sw<3,3,3>"')
    d = sc('shape = [8, 64]\nlayout = "NVMMASharedLayout(128)"')
    e = sc('shape = [8, 64]\nlayout = "SwizzledSharedLayout(8, 1, 8, [1, 0])"')
    assert a.array("tile").shape == (8, 64)
    assert metrics(a) == metrics(b) == metrics(c) == metrics(d) == metrics(e)
    plain = sc('shape = [8, 64]')
    # 32 lanes read 16-byte chunks at columns 0, 8, 16, 24 of rows 0..7: 4-byte words
    # 0..3 of each row: plain, every row's chunk 0 sits in banks 0-3 (8 lanes on 4 banks).
    m = metrics(a)
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"] < \
        metrics(plain)["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"]
    assert "layout Sw<3,3,3> o (8,64):(64,1)" in a.array("tile").describe()


def test_padded_cute_layout_uses_pad_for_storage():
    s = sc('layout = "(8,64):(65,1)"\npad = 1')
    arr = s.array("tile")
    assert arr.elements == 8 * 65 and arr.shape == (8, 64)


def err(array: str, text: str = BASE) -> ScenarioError:
    with pytest.raises(ScenarioError) as info:
        sc(array, text)
    return info.value


def test_codomain_overflow_names_file_line_field_and_fix():
    e = err('layout = "(8,64):(65,1)"')
    msg = str(e)
    assert msg.startswith("case.toml, line 9: arrays.tile: layout '(8,64):(65,1)': its codomain overflows")
    assert "lands on offset 518" in msg and "holds 512 elements" in msg and "Add pad = 1" in msg


@pytest.mark.parametrize("array, line, fragment", [
    ('shape = [8, 64]\nlayout = "SwizzledSharedLayout(8, 3, 8, [1, 0])"', 10, "per_phase = 3 is not a power of two"),
    ('shape = [8, 48]\nlayout = "SwizzledSharedLayout(8, 1, 8, [1, 0])"', 10, "contiguous extent 48"),
    ('layout = "(8,64:(64,1)"', 9, "expected ')'"),
    ('shape = [8, 32]\nlayout = "(8,64):(64,1)"', 10, "is 8x64 but the array's shape is [8, 32]"),
    ('shape = [8, 64]\nlayout = "(8,64):(64,1)"\nswizzle = "xor"', 11, "either layout or swizzle"),
    ('shape = [8, 64]\nlayout = "SwizzledSharedLayout(8, 1, 8, [1, 0])"\npad = 8', 10, "pad cannot be used"),
    ('shape = [8, 32]\nswizzle = "tma:128B"', 10, "rows of 128 bytes (64 elements), not 64"),
    ('shape = [8, 64]\nswizzle = "tma:96B"', 10, "tma:32B, tma:64B and tma:128B"),
    ('layout = 5', 9, "layout must be a string"),
])
def test_bad_layouts_are_refused_with_line_and_fix(array, line, fragment):
    e = err(array)
    assert e.line == line, str(e)
    assert fragment in str(e)
    assert e.where == "arrays.tile"


def test_layout_needs_format_2():
    e = err('layout = "(8,64):(64,1)"', BASE.replace("format = 2\n", ""))
    assert "layout is part of scenario format 2" in str(e) and "Add format = 2 at the top of the file" in str(e)
    e = err('shape = [8, 64]\nswizzle = "tma:128B"', BASE.replace("format = 2\n", "format = 1\n"))
    assert "declares format 1" in str(e)


def test_cli_exit_2_for_a_bad_layout(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    path.write_text(BASE.format(array='layout = "(8,64):(65,1)"'))
    assert main(["analyze", str(path)]) == 2
    out, errtext = capsys.readouterr()
    assert out == "" and "Traceback" not in errtext
    assert str(path) in errtext and "line 9" in errtext and "codomain overflows" in errtext


def test_generated_kernel_uses_the_layout_tree():
    from viz.gpu.codegen import generate
    src = generate(sc('layout = "Sw<3,3,3> o (8,64):(64,1)"')).source
    assert "^" in src and ">> 3LL" in src


def test_a_large_global_array_with_a_cute_layout():
    text = """format = 2
title = "big"
[launch]
block = [256]
grid = [16]
[arrays.a]
space = "global"
type = "float"
layout = "(4096,4096):(4096,1)"
[[access]]
op = "load"
at = "a[blockIdx.x][threadIdx.x]"
"""
    s = loads(text, source="big.toml")
    assert s.array("a").shape == (4096, 4096)
    assert metrics(s)["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 16 * 8 * 4
    with pytest.raises(ScenarioError, match="reaches offset 16781310, but the array \\[4096, 4096\\] holds"):
        loads(text.replace("(4096,1)", "(4097,1)"), source="big.toml")
    col = loads(text.replace("(4096,4096):(4096,1)", "(4096,4096):(1,4096)"), source="big.toml")
    assert metrics(col)["l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"] == 16 * 8 * 32
