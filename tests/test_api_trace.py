"""Tracing from Python (``import warpviz``: ``trace_launch``, ``trace_ptx``, ``trace_triton``,
``open_trace``) without a GPU: the result object (figures equal to `warpviz analyze`, pictures,
inline display, save), the launch folder a launch from Python becomes (arrays, NULLs,
scalars typed by the PTX), what Triton's compiled kernel turns into, and one exception type
with the command line's paragraph for everything that cannot run here (no Triton, PyTorch,
PyCUDA or GPU; a bad argument; a bad kernel name). Tests that need PyTorch or CuPy are in
tests/test_trace_pyargs.py (no Qt there, so that the GPU machine runs them).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import types
from pathlib import Path

import numpy as np
import pytest

import warpviz
from helpers import HAVE_NVCC
from viz import api
from viz.cli import main
from viz.errors import WarpvizError
from viz.trace import tracefile
from viz.trace.launch import load_launch
from viz.trace.pyargs import ArgumentError, host_array, scalar_type, triton_params, write_launch_folder

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "ptx"
PNG = b"\x89PNG\r\n\x1a\n"
SHIPPED = ROOT / "assets" / "traces" / "transpose_tile_unpadded.wvtrace"
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


def test_import_warpviz_is_the_api_and_loads_nothing_heavy():
    assert warpviz.trace_triton is api.trace_triton and warpviz.scenario is api.scenario
    assert issubclass(warpviz.TraceFailed, warpviz.WarpvizError)
    code = ("import sys, warpviz; print(sorted(m for m in sys.modules if m.split('.')[0] in "
            "('PySide6', 'torch', 'triton', 'cupy', 'pycuda')))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------------- a recorded trace


def test_open_trace_gives_analyzes_figures_pictures_and_saves(tmp_path, capsys):
    t = warpviz.open_trace(SHIPPED)
    assert main(["analyze", str(SHIPPED), "--json"]) == 0
    cli = json.loads(capsys.readouterr().out)
    an = t.analysis()
    assert an.metrics == cli["metrics"] and an.accesses == cli["accesses"]
    assert an.other_metrics == cli.get("other_metrics", {}) and an.lines == cli.get("lines", [])
    assert an.table() in an._repr_html_() or "<pre>" in an._repr_html_()
    pic = t.picture(1, size=(640, 360))
    assert pic.png().startswith(PNG) and pic._repr_png_().startswith(PNG)
    other = t.picture(2, frame="first", warp=1, size=(640, 360))
    assert other.png().startswith(PNG) and other.png() != pic.png()
    page = t._repr_html_()
    assert "<table>" in page and "records" in page and "data:image/png;base64," in page
    assert t.kernel in repr(t) and f"{t.records:,} records" in repr(t)
    out = t.save(tmp_path / "copy.wvtrace")
    again = tracefile.load(out)
    assert again.records == t.records and again.header["kernel"] == t.kernel
    with pytest.raises(WarpvizError):
        t.save(tmp_path / "copy.png")
    with pytest.raises(WarpvizError):
        t.picture(10_000)
    with pytest.raises(WarpvizError):
        warpviz.open_trace(tmp_path / "none.wvtrace")


def test_trace_animation_is_a_video(tmp_path):
    t = warpviz.open_trace(SHIPPED)
    v = t.animation("1-2", frames="last", size=(320, 180), fps=2, hold=0.5)
    assert v.pictures == 2
    out = v.save(tmp_path / "t.gif")
    assert out.read_bytes()[:3] == b"GIF"


# ---------------------------------------------------------------------------- the launch folder


ADD_PTX = (DATA / "triton_add.ptx").read_text()


def test_a_launch_from_python_becomes_a_launch_folder(tmp_path):
    x = np.arange(4096, dtype=np.float32)
    y = np.ones((64, 64), np.float32)
    p = write_launch_folder(tmp_path, ADD_PTX, "add_kernel", (4,), 128, [x, y, np.zeros(4096, np.float32), 4096,
                                                                          None, None], title="add")
    la = load_launch(p)
    assert la.ptx and la.kernel == "add_kernel" and la.block == (128, 1, 1) and la.grid == (4, 1, 1)
    assert [a.as_dict() for a in la.args] == [
        {"type": "float*", "count": 4096, "fill": "npy:arg1.npy"},
        {"type": "float*", "count": 4096, "fill": "npy:arg2.npy"},
        {"type": "float*", "count": 4096, "fill": "npy:arg3.npy"},
        {"type": "int", "value": 4096},               # the PTX says .u32
        {"type": "void*", "count": 0, "fill": "zero"}, {"type": "void*", "count": 0, "fill": "zero"}]
    from viz.trace.record import host_buffer

    buf = host_buffer(la)
    assert np.array_equal(buf[:16384].view(np.float32), x)
    assert np.array_equal(buf[16384:32768].view(np.float32), y.reshape(-1))
    assert la.text.startswith("# Written by warpviz")


@pytest.mark.parametrize("value, ptype, size, want", [
    (3, "u32", 4, ("int", 3)), (3_000_000_000, "u32", 4, ("unsigned", 3_000_000_000)),
    (2.5, "f32", 4, ("float", 2.5)), (2, "f32", 4, ("float", 2.0)), (2.5, "f64", 8, ("double", 2.5)),
    (-5, "s64", 8, ("long long", -5)), (2**63, "u64", 8, ("unsigned long long", 2**63)),
    (200, "u8", 1, ("char", -56)), (True, "u8", 1, ("char", 1)), (np.int64(7), "u32", 4, ("int", 7)),
    (np.float32(1.5), "b32", 4, ("float", 1.5)), (2**40, None, None, ("long long", 2**40)),
])
def test_scalars_take_the_parameters_type(value, ptype, size, want):
    from viz.trace.module import Param

    p = None if ptype is None else Param("p", ptype, size, False, False)
    assert scalar_type(value, p, 1) == want


@pytest.mark.parametrize("value, ptype, size, words", [
    ("12", "u32", 4, "neither an array"), (2.5, "b16", 2, "4- and 8-byte"), (1 << 40, "u32", 4, None),
    (300, "u8", 1, "does not fit"),
])
def test_scalars_refused(value, ptype, size, words):
    from viz.trace.module import Param

    p = Param("p", ptype, size, False, False)
    if words is None:           # too big for 32 bits: the check against the PTX says so when the file is built
        t, v = scalar_type(value, p, 1)
        assert (t, v) == ("unsigned", 1 << 40) or t in ("int", "unsigned")
        return
    with pytest.raises(ArgumentError, match=words):
        scalar_type(value, p, 1)


def test_arrays_of_every_dtype_keep_their_bytes():
    for dt, t in [(np.float16, "half*"), (np.float32, "float*"), (np.float64, "double*"), (np.int8, "char*"),
                  (np.uint8, "char*"), (np.bool_, "char*"), (np.int16, "short*"), (np.int32, "int*"),
                  (np.uint32, "unsigned*"), (np.int64, "long long*"), (np.uint64, "long long*")]:
        a = (np.arange(12) % 2).astype(dt)
        h = host_array(a, 1)
        assert h.type == t and h.count == 12 and h.data.tobytes() == a.tobytes()
    c = np.arange(6).astype(np.complex64)
    h = host_array(c, 1)
    assert h.type == "float*" and h.count == 12 and h.data.tobytes() == c.tobytes()
    big = np.arange(8, dtype=">i4")
    assert host_array(big, 1).data.tobytes() == np.arange(8, dtype="<i4").tobytes()

    class DeviceArray:                    # Numba's device arrays: copy_to_host()
        def copy_to_host(self):
            return np.arange(5, dtype=np.float32)

    assert host_array(DeviceArray(), 1).data.tobytes() == np.arange(5, dtype=np.float32).tobytes()
    with pytest.raises(ArgumentError, match="not numbers"):
        host_array(np.array(["a"]), 3)
    with pytest.raises(ArgumentError, match="argument 2"):
        host_array(object(), 2)


def test_bad_python_launches_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ArgumentError, match="pointer, not a number"):
        write_launch_folder(tmp_path, ADD_PTX, "add_kernel", (4,), (128,), [1, None, None, 1, None, None])
    with pytest.raises(ArgumentError, match="grid"):
        write_launch_folder(tmp_path, ADD_PTX, "add_kernel", (1, 2, 3, 4), (128,), [])
    with pytest.raises(ArgumentError, match="text"):
        write_launch_folder(tmp_path, b"ptx", "add_kernel", (1,), (128,), [])
    with pytest.raises(ArgumentError, match="list"):
        write_launch_folder(tmp_path, ADD_PTX, "add_kernel", (1,), (128,), "x")


# ---------------------------------------------------------------------------- trace_ptx without a GPU


@nvcc
@pytest.mark.nvcc
def test_trace_ptx_builds_then_says_what_is_missing(tmp_path, monkeypatch):
    """Everything up to the GPU runs here (the launch folder, its checks, the instrumented
    build); then the one exception, with `warpviz trace`'s paragraph."""
    import viz.gpu.worker as worker
    from viz.gpu import GpuUnavailable

    built = []
    real_build = __import__("viz.trace.build", fromlist=["build"]).build

    def spy(launch, arch="sm_90"):
        b = real_build(launch, arch)
        built.append(b)
        return b

    monkeypatch.setattr("viz.trace.build.build", spy)

    class NoGpu:
        def __init__(self, *a, **kw):
            raise GpuUnavailable("PyCUDA is not installed (test)", "pycuda")

    monkeypatch.setattr(worker, "ProcessSession", NoGpu)
    x = np.random.default_rng(0).random(4096, dtype=np.float32)
    with pytest.raises(warpviz.TraceFailed) as err:
        warpviz.trace_ptx(ADD_PTX, "add_kernel", grid=(4,), block=(128,),
                          args=[x, x, np.empty_like(x), 4096, None, None], keep_folder=tmp_path / "f")
    assert err.value.kind == "missing" and str(err.value) == "cannot trace here: PyCUDA is not installed (test)"
    assert built and built[0].entry == "add_kernel" and built[0].arch == "sm_90a" and built[0].instrs
    assert np.array_equal(np.load(tmp_path / "f" / "arg1.npy"), x)


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("kernel, args, words", [
    ("mul_kernel", [None] * 6, "the PTX has no kernel `mul_kernel` (it has: add_kernel)"),
    ("add_kernel", [None, None, None, 1, None], "takes 6 parameter(s) but the file gives 5"),
    ("add_kernel", [np.zeros(4, np.float32)] * 3 + [np.zeros(4, np.int32), None, None],
     "parameter 4 of `add_kernel` is `.u32`"),
    ("add_kernel;rm", [None] * 6, "follows the name"),
])
def test_trace_ptx_errors_are_one_exception_with_the_cli_paragraph(tmp_path, kernel, args, words):
    with pytest.raises(warpviz.TraceFailed) as err:
        warpviz.trace_ptx(ADD_PTX, kernel, grid=(1,), block=(128,), args=args, keep_folder=tmp_path / "f")
    msg = str(err.value)
    assert err.value.kind == "launch" and words in msg and "Fix:" in msg and "\n" not in msg
    assert msg.startswith(str(tmp_path / "f"))


def test_trace_launch_errors(tmp_path):
    with pytest.raises(warpviz.TraceFailed) as err:
        warpviz.trace_launch(tmp_path / "none.launch.toml")
    assert err.value.kind == "launch" and "cannot read" in str(err.value)
    p = DATA / "triton_add.launch.toml"
    with pytest.raises(warpviz.TraceFailed) as err:
        warpviz.trace_launch(p, blocks="9")
    assert "outside the grid's blocks 0..3" in str(err.value)


# ---------------------------------------------------------------------------- Triton


def test_trace_triton_names_what_is_missing(monkeypatch):
    monkeypatch.setitem(sys.modules, "triton", None)
    with pytest.raises(warpviz.TraceFailed) as err:
        warpviz.trace_triton(object(), (1,), ())
    assert err.value.kind == "missing" and "needs Triton, which is not installed" in str(err.value)
    monkeypatch.setitem(sys.modules, "triton", types.ModuleType("triton"))
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(warpviz.TraceFailed) as err:
        warpviz.trace_triton(object(), (1,), ())
    assert err.value.kind == "missing" and "needs PyTorch" in str(err.value)
    fake_torch = types.ModuleType("torch")
    fake_torch.cuda = types.SimpleNamespace(is_available=lambda: False)
    monkeypatch.setitem(sys.modules, "torch", fake_torch)
    with pytest.raises(warpviz.TraceFailed) as err:
        warpviz.trace_triton(object(), (1,), ())
    assert err.value.kind == "missing" and "torch.cuda.is_available() is False" in str(err.value)


def _compiled(name="add_kernel", signature=None, ptx=ADD_PTX, **md):
    meta = dict(name=name, num_warps=4, shared=0, num_ctas=1, global_scratch_size=0, profile_scratch_size=0,
                tensordesc_meta=[])
    meta.update(md)
    sig = signature or {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32",
                        "BLOCK_SIZE": "constexpr"}
    return types.SimpleNamespace(metadata=types.SimpleNamespace(**meta), asm={"ptx": ptx},
                                 src=types.SimpleNamespace(signature=sig))


def _python_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE):
    """Stands for the @triton.jit function: its file is carried as the kernel's source."""


def test_what_triton_launches_becomes_the_launch(tmp_path):
    x = np.arange(4096, dtype=np.float32)
    bound = {"x_ptr": x, "y_ptr": x, "output_ptr": x, "n_elements": 4096, "BLOCK_SIZE": 1024}
    ptx, name, block, shared, values, sources = api.triton_launch(_compiled(shared=512), bound, (4, 1, 1),
                                                                  types.SimpleNamespace(fn=_python_kernel))
    assert (name, block, shared) == ("add_kernel", (128,), 512)
    assert values[:4] == [x, x, x, 4096] and values[4:] == [None, None]      # Triton's two scratch pointers
    assert set(sources) == {Path(__file__).name}
    p = write_launch_folder(tmp_path, ptx, name, (4, 1, 1), block, values, shared)
    la = load_launch(p)
    assert la.shared_bytes == 512 and [a.is_null for a in la.args][-2:] == [True, True]
    # a kernel that needs global scratch memory gets it, per program (block)
    _, _, _, _, values, _ = api.triton_launch(_compiled(global_scratch_size=64), bound, (4, 2, 1))
    assert values[4].nbytes == 64 * 8 and values[5] is None


@nvcc
@pytest.mark.nvcc
def test_what_triton_launches_builds(tmp_path):
    """The real Triton PTX of the tutorial's matmul, with the arguments Triton's launcher
    passes (strides of 1 specialised away), checks out against the PTX and assembles."""
    from viz.trace.build import build

    sig = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32", "K": "i32",
           "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32", "stride_bn": "constexpr",
           "stride_cm": "i32", "stride_cn": "constexpr", "BLOCK_SIZE_M": "constexpr", "BLOCK_SIZE_N": "constexpr",
           "BLOCK_SIZE_K": "constexpr", "GROUP_SIZE_M": "constexpr"}
    a = np.zeros((128, 128), np.float16)
    bound = {"a_ptr": a, "b_ptr": a, "c_ptr": a, "M": 128, "N": 128, "K": 128, "stride_am": 128, "stride_ak": 1,
             "stride_bk": 128, "stride_bn": 1, "stride_cm": 128, "stride_cn": 1, "BLOCK_SIZE_M": 64,
             "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}
    compiled = _compiled("matmul_kernel", sig, (DATA / "triton_matmul.ptx").read_text(), shared=24576)
    ptx, name, block, shared, values, _ = api.triton_launch(compiled, bound, (4, 1, 1))
    b = build(load_launch(write_launch_folder(tmp_path, ptx, name, (4,), block, values, shared)))
    assert b.entry == "matmul_kernel" and b.arch == "sm_90a" and any(i.kind == "cp.async" for i in b.instrs)


@pytest.mark.parametrize("md, sig, words", [
    ({"num_ctas": 2}, None, "thread-block clusters"),
    ({"tensordesc_meta": [{"x": 1}]}, {"x_ptr": "tensordesc<fp32[4]>"}, "TensorDescriptor"),   # not one
    ({}, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "fp16",
          "BLOCK_SIZE": "constexpr"}, "16-bit floating-point"),
    ({}, {"x_ptr": "nvTmaDesc"}, "raw nvTmaDesc"),       # host TensorDescriptors are traced: tests/test_tensormaps.py
])
def test_what_warpviz_cannot_trace_from_triton_yet(md, sig, words):
    bound = {"x_ptr": None, "y_ptr": None, "output_ptr": None, "n_elements": 1, "BLOCK_SIZE": 4}
    with pytest.raises(WarpvizError, match=words):
        api.triton_launch(_compiled(signature=sig, **md), bound, (1, 1, 1))


def test_triton_params_flatten_tuples_and_skip_constexprs():
    sig = {"p": "*fp32", "t": ("i32", ("i64", "constexpr")), "c": "constexpr", "n": "i32"}
    assert triton_params(sig, {"p": "P", "t": (1, (2, 3)), "c": 9, "n": 4}) == ["P", 1, 2, 4]
    with pytest.raises(ArgumentError, match="tuple of 2"):
        triton_params(sig, {"p": "P", "t": 1, "c": 9, "n": 4})
    with pytest.raises(ArgumentError, match="`n` was not given"):
        triton_params(sig, {"p": "P", "t": (1, (2, 3)), "c": 9})


def test_keep_folder_never_overwrites_the_users_files(tmp_path):
    """trace_ptx(keep_folder=d) with d/add_kernel.ptx of the user's: refused before anything
    is written (it was overwritten in place before any check); a folder of warpviz's own
    launch files is reused; other files in it stay."""
    x = np.ones(4096, np.float32)
    args = [x, x, np.zeros(4096, np.float32), 4096, None, None]
    d = tmp_path / "d"
    d.mkdir()
    (d / "add_kernel.ptx").write_text("// my kernel")
    (d / "arg1.npy").write_bytes(b"my data")
    (d / "notes.md").write_text("mine")
    with pytest.raises(api.TraceFailed, match=r"keep_folder: .*add_kernel.ptx, arg1.npy, which warpviz did not write"):
        api.trace_ptx(ADD_PTX, "add_kernel", (4,), (128,), args, keep_folder=d)
    assert sorted(os.listdir(d)) == ["add_kernel.ptx", "arg1.npy", "notes.md"]
    assert (d / "add_kernel.ptx").read_text() == "// my kernel" and (d / "arg1.npy").read_bytes() == b"my data"

    # an argument warpviz cannot pass: refused before the PTX is written
    e = tmp_path / "e"
    with pytest.raises(ArgumentError):
        write_launch_folder(e, ADD_PTX, "add_kernel", (4,), (128,), [x, object()])
    assert not e.exists()

    # warpviz's own launch folder, written twice: the second replaces its own files
    p = write_launch_folder(e, ADD_PTX, "add_kernel", (4,), (128,), args)
    (e / "mine.txt").write_text("mine")
    p2 = write_launch_folder(e, ADD_PTX, "add_kernel", (4,), (128,), [np.arange(4096, dtype=np.float32), *args[1:]])
    assert p == p2 and sorted(os.listdir(e)) == [".warpviz-written.json", "arg1.npy", "arg2.npy", "arg3.npy",
                                                 "kernel.launch.toml", "kernel.ptx", "mine.txt"]
    assert np.array_equal(np.load(e / "arg1.npy"), np.arange(4096, dtype=np.float32))
