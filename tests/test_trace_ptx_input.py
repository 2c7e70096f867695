"""Launch files of format 2 without a GPU: PTX modules as input (``ptx = "..."``: Triton,
Numba, CuPy and ``nvcc -ptx`` output), NULL pointers (``count = 0``) and buffers filled from
files (``file:`` raw bytes, ``npy:`` NumPy arrays without pickles).

Every PTX sample under tests/data/ptx/ (``NAME.ptx`` + ``NAME.launch.toml``; made by
tools/gpu/make_ptx_samples.py, and PTX that the GPU machine wrote from what Triton and CuPy
really launched can be dropped in beside them) is resolved, checked against its [[arg]]
tables, instrumented and assembled by the real ptxas. Every bad file of the new kinds exits
2 with one paragraph and the fix, before the GPU process starts.
"""

from __future__ import annotations

import pickle
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import tomlkit
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from helpers import HAVE_NVCC, have_pycuda
from viz.cli import main
from viz.trace import TraceError
from viz.trace import module as M
from viz.trace.launch import BUFFER_TYPES, load_launch, parse_launch
from viz.trace.record import host_buffer, request

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "ptx"
SAMPLES = sorted(DATA.glob("*.launch.toml"))
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")
ptxas = pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")


@pytest.fixture
def no_gpu_process(monkeypatch):
    """Fails the test if anything starts the GPU child process (the checks must come first)."""
    import viz.gpu.worker as worker

    class Refused:
        def __init__(self, *a, **kw):
            raise AssertionError("the GPU process was started")

    monkeypatch.setattr(worker, "ProcessSession", Refused)


def _one_paragraph(capsys, path: Path, *words: str) -> str:
    msg = capsys.readouterr().err
    assert msg.startswith(f"warpviz: {path}") and msg.count("\n") == 1 and "Fix:" in msg, msg
    assert "Traceback" not in msg
    for w in words:
        assert w in msg, (w, msg)
    return msg


# ---------------------------------------------------------------------------- the samples


def test_the_samples_are_there():
    names = {p.name.split(".")[0] for p in SAMPLES}
    assert {"triton_add", "triton_softmax", "triton_matmul", "triton_transpose", "numba_axpy"} <= names
    for p in SAMPLES:
        assert (p.parent / f"{p.name.split('.')[0]}.ptx").exists()


@ptxas
@pytest.mark.nvcc
@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_ptx_samples_resolve_instrument_and_assemble(path):
    """The whole build without a GPU: the entry found, the [[arg]] tables checked against the
    PTX's parameters, every memory instruction instrumented, both modules assembled by ptxas
    for the module's own target (Triton's wgmma kernels need sm_90a)."""
    from viz.trace.build import build

    la = load_launch(path)
    assert la.ptx and la.format == 2
    b = build(la)
    ptx = la.source_text
    h = M.header(ptx)
    assert b.arch == (h.target if h.suffix else "sm_90")
    assert b.entry in M.entry_names(ptx) and M.entry_names(b.ptx) == [b.entry]
    assert len(M.params(ptx, b.entry)) == len(la.args)
    assert b.instrs and all(i.function == b.entry for i in b.instrs)
    assert b.cubin[:4] == b"\x7fELF" and b.instrumented_cubin[:4] == b"\x7fELF"
    kinds = {i.kind for i in b.instrs}
    if "matmul" in path.name:                 # tl.dot on sm_90: cp.async into shared memory
        assert "cp.async" in kinds
    if path.name.startswith("triton"):        # Triton's line information names its Python file
        assert all(i.file.endswith(".py") and i.line > 0 for i in b.instrs)


@ptxas
@pytest.mark.nvcc
def test_triton_source_lines_where_the_python_file_is_in_the_folder(tmp_path):
    """The trace carries the Python file a Triton PTX names when that file lies in the launch
    file's folder (instructions point at its lines); otherwise the PTX itself is the source
    and each instruction points at its PTX line, the Python line kept as `loc`."""
    from viz.trace.build import build
    from viz.gpu.trace_pipeline import _where, trace_sources

    shutil.copy(ROOT / "kernels" / "format2" / "triton_kernels.py", tmp_path / "kernels.py")
    ptx = (DATA / "triton_add.ptx").read_text()
    inside = re.sub(r'\.file\s+1\s+"[^"]*"', f'.file 1 "{tmp_path / "kernels.py"}"', ptx)
    (tmp_path / "add.ptx").write_text(inside)
    launch = (DATA / "triton_add.launch.toml").read_text().replace('ptx = "triton_add.ptx"', 'ptx = "add.ptx"')
    (tmp_path / "add.launch.toml").write_text(launch)
    la = load_launch(tmp_path / "add.launch.toml")
    b = build(la)
    sources = trace_sources(la, b.instrs)
    assert set(sources) == {"add.ptx", "kernels.py"}
    py = sources["kernels.py"].splitlines()
    for ins in b.instrs:
        w = _where(ins, la, sources)
        assert w == {"file": "kernels.py"}
        assert "tl.load" in py[ins.line - 1] or "tl.store" in py[ins.line - 1]
    # the same PTX naming a file outside the folder: never read; the PTX lines instead
    (tmp_path / "add.ptx").write_text(ptx.replace('.file\t1 "', '.file\t1 "/nonexistent'))
    la = load_launch(tmp_path / "add.launch.toml")
    b = build(la)
    sources = trace_sources(la, b.instrs)
    assert set(sources) == {"add.ptx"}
    lines = sources["add.ptx"].splitlines()
    for ins in b.instrs:
        w = _where(ins, la, sources)
        assert w["file"] == "add.ptx" and w["line"] == ins.line_no and w["loc"].endswith(f".py:{ins.line}")
        assert lines[w["line"] - 1].strip() == ins.ptx


@ptxas
@pytest.mark.nvcc
def test_ptx_without_line_information_shows_the_ptx(tmp_path):
    from viz.trace.build import build
    from viz.gpu.trace_pipeline import _where, trace_sources

    ptx = (DATA / "numba_axpy.ptx").read_text()
    bare = "\n".join(ln for ln in ptx.split("\n") if not ln.strip().startswith((".loc", ".file")))
    (tmp_path / "k.ptx").write_text(bare)
    (tmp_path / "k.launch.toml").write_text((DATA / "numba_axpy.launch.toml").read_text().replace(
        'ptx = "numba_axpy.ptx"', 'ptx = "k.ptx"'))
    la = load_launch(tmp_path / "k.launch.toml")
    b = build(la)
    sources = trace_sources(la, b.instrs)
    for ins in b.instrs:
        assert ins.file == "" and _where(ins, la, sources) == {"file": "k.ptx", "line": ins.line_no}


@nvcc
@pytest.mark.nvcc
def test_nvcc_ptx_of_a_rawkernel_traces_as_ptx(tmp_path):
    """A CuPy RawKernel is CUDA C compiled by NVRTC to PTX; nvcc -ptx of the same source is
    the same kind of module (extern "C" entry, .loc lines naming the .cu file)."""
    from viz.trace.build import build

    (tmp_path / "raw.cu").write_text('extern "C" __global__ void scale(float* y, const float* x, float a, int n) {\n'
                                     '  int i = blockIdx.x * blockDim.x + threadIdx.x;\n'
                                     '  if (i < n) y[i] = a * x[i];\n}\n')
    subprocess.run(["nvcc", "-ptx", "-arch=sm_80", "-lineinfo", "-o", str(tmp_path / "raw.ptx"),
                    str(tmp_path / "raw.cu")], check=True, capture_output=True, timeout=600)
    (tmp_path / "raw.launch.toml").write_text(
        'format = 2\nptx = "raw.ptx"\nkernel = "scale"\nblock = [128]\ngrid = [2]\n'
        '[[arg]]\ntype = "float*"\ncount = 256\n[[arg]]\ntype = "float*"\ncount = 256\nfill = "random"\n'
        '[[arg]]\ntype = "float"\nvalue = 2.0\n[[arg]]\ntype = "int"\nvalue = 256\n')
    la = load_launch(tmp_path / "raw.launch.toml")
    b = build(la)
    assert b.arch == "sm_90" and b.entry == "scale"          # sm_80 PTX assembled for the GPU's sm_90
    assert [(i.op, i.space, i.line) for i in b.instrs] == [("load", "global", 3), ("store", "global", 3)]


# ---------------------------------------------------------------------------- bad PTX launch files


def _ptx_case(tmp_path: Path, sample: str = "triton_add", ptx_edit=None, launch_edit=None) -> Path:
    ptx = (DATA / f"{sample}.ptx").read_text()
    (tmp_path / "k.ptx").write_text(ptx_edit(ptx) if ptx_edit else ptx)
    text = (DATA / f"{sample}.launch.toml").read_text().replace(f'ptx = "{sample}.ptx"', 'ptx = "k.ptx"')
    p = tmp_path / "k.launch.toml"
    p.write_text(launch_edit(text) if launch_edit else text)
    return p


def _drop_last_arg(text: str) -> str:
    return text[:text.rindex("[[arg]]")]


@ptxas
@pytest.mark.nvcc
@pytest.mark.parametrize("ptx_edit, launch_edit, key, words", [
    (None, lambda t: t.replace('kernel = "add_kernel"', 'kernel = "softmax_kernel"'), "kernel",
     ["the PTX has no kernel `softmax_kernel` (it has: add_kernel)"]),
    (None, _drop_last_arg, "arg", ["`add_kernel` takes 6 parameter(s) but the file gives 5",
                                   "Triton's scratch pointers", "count = 0"]),
    (None, lambda t: t.replace('type = "int"\nvalue = 4096', 'type = "float*"\ncount = 4'), "arg 4.type",
     ["parameter 4 of `add_kernel` is `.u32` (4 bytes)"]),
    (None, lambda t: t.replace('type = "float*"\ncount = 4096\nfill = "random"', 'type = "long long"\nvalue = 0', 1),
     "arg 1.type", ["(a pointer)"]),
    (lambda p: p.replace(".version 8.7", ".version 99.9"), None, "ptx", ["ptxas", "refuses the PTX: line 5:",
                                                                          "99.9"]),
    (lambda p: p.replace("ret;", "ret_not_an_instruction;"), None, "ptx", ["refuses the PTX"]),
    (lambda p: re.sub(r"\.visible \.entry", ".visible .func", p), None, "ptx", ["no kernel (no `.entry`"]),
    (lambda p: p.replace(".address_size 64", ""), None, "ptx", ["64-bit"]),
    (lambda p: p.replace(".version 8.7\n", ""), None, "ptx", ["no `.version`"]),
    (None, lambda t: t.replace("block = [128]", "block = [256]"), "block",
     ["must be launched with a block of [128] (its .reqntid), not [256, 1, 1]", "32 x num_warps"]),
    (lambda p: p.replace(".reqntid 128", ".maxntid 64"), None, "block",
     ["takes at most 64 threads per block", "the launch has 128"]),
])
def test_bad_ptx_launch_files_exit_2_before_anything_runs(tmp_path, capsys, no_gpu_process, ptx_edit, launch_edit,
                                                          key, words):
    p = _ptx_case(tmp_path, ptx_edit=ptx_edit, launch_edit=launch_edit)
    assert main(["trace", str(p)]) == 2
    _one_paragraph(capsys, p, f"({key})", *words)


@ptxas
@pytest.mark.nvcc
def test_ptx_for_a_newer_gpu_is_refused_for_this_one(tmp_path):
    """The target is checked against the GPU that answers (sm_90 here), before the kernel runs."""
    from viz.trace.build import build

    p = _ptx_case(tmp_path, ptx_edit=lambda p: p.replace(".target sm_90a", ".target sm_100a"))
    with pytest.raises(TraceError) as err:
        build(load_launch(p), "sm_90")
    assert err.value.where == "ptx" and "targets sm_100a, a newer GPU than this one (sm_90)" in err.value.problem


@pytest.mark.parametrize("launch_edit, key, words", [
    (lambda t: t.replace("format = 2\n", ""), "ptx", ["`ptx` is launch-file format 2", "format = 2"]),
    (lambda t: t.replace('ptx = "k.ptx"', 'ptx = "k.ptx"\ninclude_dirs = ["."]'), "include_dirs",
     ["`include_dirs` is for compiling a CUDA source"]),
    (lambda t: t.replace('ptx = "k.ptx"', 'ptx = "k.ptx"\ndefines = { N = 1 }'), "defines", ["`defines`"]),
    (lambda t: t.replace('ptx = "k.ptx"', 'ptx = "k.ptx"\nsource = "k.cu"'), "ptx", ["both `source` and `ptx`"]),
    (lambda t: t.replace('ptx = "k.ptx"', 'ptx = "none.ptx"'), "ptx", ["does not exist"]),
    (lambda t: t.replace('ptx = "k.ptx"', 'ptx = "k.txt"'), "ptx", ["not a .ptx file"]),
    (lambda t: t.replace('ptx = "k.ptx"', 'ptx = "../k.ptx"'), "ptx", ["outside the launch file's folder"]),
    (lambda t: t.replace('ptx = "k.ptx"', 'ptx = "$(touch x).ptx"'), "ptx", ["'$'"]),
    (lambda t: t.replace('kernel = "add_kernel"', 'kernel = "add<int; x>"'), "kernel", ["';'"]),
    (lambda t: t.replace("count = 0", 'count = 0\nfill = "zero"'), "arg 5.fill", ["passed as NULL"]),
])
def test_bad_format_2_keys_are_refused_when_read(tmp_path, capsys, launch_edit, key, words):
    p = _ptx_case(tmp_path, launch_edit=launch_edit)
    (tmp_path / "k.txt").write_text("x")
    with pytest.raises(TraceError) as err:
        load_launch(p)
    assert err.value.where == key
    assert main(["trace", str(p)]) == 2
    _one_paragraph(capsys, p, *words)


@pytest.mark.parametrize("content, words", [
    (b"\xff\xfe.version 8.0", ["not UTF-8"]),
    (b".version 8.0\n.target sm_90\n.address_size 64\n\x00", ["NUL"]),
    (b"", ["no `.version`"]),
])
def test_ptx_that_is_not_text(tmp_path, content, words):
    p = _ptx_case(tmp_path)
    (tmp_path / "k.ptx").write_bytes(content)
    with pytest.raises(TraceError) as err:
        load_launch(p)
    assert err.value.where == "ptx" and all(w in str(err.value) for w in words)


def test_ptx_over_the_size_limit_is_not_read(tmp_path, monkeypatch):
    import viz.trace.launch as L

    p = _ptx_case(tmp_path)
    monkeypatch.setattr(L, "MAX_PTX_BYTES", 1000)
    with pytest.raises(TraceError) as err:
        load_launch(p)
    assert err.value.where == "ptx" and "over warpviz's limit of 1,000" in err.value.problem


FUZZ = settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


@FUZZ
@given(data=st.data())
def test_fuzzed_ptx_is_refused_or_resolves(tmp_path, data):
    """Random bit flips and cuts of a real Triton PTX: loading gives a Launch or a
    TraceError, and resolving its kernel a result or a TraceError, nothing else."""
    from viz.trace.build import kernel_ptx

    raw = bytearray((DATA / "triton_softmax.ptx").read_bytes())
    for _ in range(data.draw(st.integers(1, 8))):
        k = data.draw(st.integers(0, len(raw) - 1))
        raw[k] ^= 1 << data.draw(st.integers(0, 7))
    cut = data.draw(st.integers(0, len(raw)))
    if data.draw(st.booleans()):
        raw = raw[:cut]
    (tmp_path / "k.ptx").write_bytes(bytes(raw))
    (tmp_path / "k.launch.toml").write_text((DATA / "triton_softmax.launch.toml").read_text().replace(
        'ptx = "triton_softmax.ptx"', 'ptx = "k.ptx"'))
    try:
        la = load_launch(tmp_path / "k.launch.toml")
        kernel_ptx(la)
    except TraceError as err:
        assert str(err).startswith(str(tmp_path))


# ---------------------------------------------------------------------------- NULL and data fills


SOURCE = 'extern "C" __global__ void k(float* a, const int* idx, void* unused, int n) { }\n'


def _fill_launch(tmp_path: Path, fill: str, t: str = "int*", count: int = 64, fmt: str = "format = 2\n") -> Path:
    (tmp_path / "k.cu").write_text(SOURCE)
    p = tmp_path / "k.launch.toml"
    p.write_text(f'{fmt}source = "k.cu"\nkernel = "k"\nblock = [64]\ngrid = [1]\n'
                 '[[arg]]\ntype = "float*"\ncount = 64\n'
                 f'[[arg]]\ntype = "{t}"\ncount = {count}\nfill = "{fill}"\n'
                 '[[arg]]\ntype = "void*"\ncount = 0\n'
                 '[[arg]]\ntype = "int"\nvalue = 64\n')
    return p


def test_null_pointer_and_file_data_reach_the_buffer(tmp_path):
    idx = (np.arange(64, dtype=np.int32) * 7919) % 64
    (tmp_path / "idx.bin").write_bytes(idx.tobytes())
    la = load_launch(_fill_launch(tmp_path, "file:idx.bin"))
    assert [a.is_null for a in la.args] == [False, False, True, False]
    off = la.buffer_offsets()
    assert off == [0, 256, -1, -1] and la.buffer_bytes == 512
    buf = host_buffer(la)
    assert np.array_equal(buf[256:512].view(np.int32), idx)
    req = request(la, b"")
    from viz.trace.record import _kernel_args

    args = _kernel_args(req, 1 << 40)
    assert [int(a) for a in args] == [1 << 40, (1 << 40) + 256, 0, 64]
    assert la.args[1].as_dict() == {"type": "int*", "count": 64, "fill": "file:idx.bin"}


@pytest.mark.parametrize("array, t, count", [
    (np.arange(64, dtype=np.int32), "int*", 64),
    (np.arange(64, dtype=np.uint32).reshape(8, 8), "int*", 64),          # signedness and shape are free
    (np.arange(64, dtype=">i4"), "int*", 64),                            # big-endian: converted
    (np.asfortranarray(np.arange(64, dtype=np.float32).reshape(8, 8)), "float*", 64),
    (np.arange(32, dtype=np.float32), "float2*", 16),                    # vector types count their components
    (np.arange(8, dtype=np.float64), "double*", 8),
    (np.arange(40, dtype=np.uint8), "void*", 40),
])
def test_npy_data_reaches_the_buffer_as_c_order_little_endian(tmp_path, array, t, count):
    np.save(tmp_path / "a.npy", array)
    la = load_launch(_fill_launch(tmp_path, "npy:a.npy", t, count))
    buf = host_buffer(la)
    want = np.ascontiguousarray(array).astype(array.dtype.newbyteorder("<")).tobytes()
    assert buf[256:256 + len(want)].tobytes() == want


def _pickled_npy(path: Path) -> None:
    np.save(path, np.array([{"a": 1}, None] * 32, dtype=object), allow_pickle=True)


@pytest.mark.parametrize("make, fill, t, count, words", [
    (lambda d: (d / "x.bin").write_bytes(b"\0" * 255), "file:x.bin", "int*", 64,
     ["has 255 bytes", "needs exactly 64 x 4 = 256 bytes"]),
    (lambda d: (d / "x.bin").write_bytes(b"\0" * 512), "file:x.bin", "int*", 64, ["set `count = 128`"]),
    (lambda d: None, "file:none.bin", "int*", 64, ["does not exist"]),
    (lambda d: (d / "sub").mkdir(), "file:sub", "int*", 64, ["not a regular file"]),
    (lambda d: None, "file:../x.bin", "int*", 64, ["outside the launch file's folder"]),
    (lambda d: None, "file:/etc/passwd", "int*", 64, ["not relative"]),
    (lambda d: _pickled_npy(d / "x.npy"), "npy:x.npy", "int*", 64, ["object", "never unpickles"]),
    (lambda d: (d / "x.npy").write_bytes(pickle.dumps([1, 2, 3])), "npy:x.npy", "int*", 64,
     ["not a NumPy .npy file"]),
    (lambda d: np.save(d / "x.npy", np.zeros(63, np.int32)), "npy:x.npy", "int*", 64, ["63 elements", "exactly 64"]),
    (lambda d: np.save(d / "x.npy", np.zeros(64, np.float32)), "npy:x.npy", "int*", 64, ["float32", "int32"]),
    (lambda d: np.save(d / "x.npy", np.zeros(64, np.int64)), "npy:x.npy", "int*", 64, ["int64"]),
    (lambda d: np.save(d / "x.npy", np.zeros(64, "U4")), "npy:x.npy", "int*", 64, ["plain numbers"]),
    (lambda d: np.save(d / "x.npy", np.zeros(64, [("a", np.int32)])), "npy:x.npy", "int*", 64, ["records"]),
    (lambda d: (np.save(d / "x.npy", np.zeros(64, np.int32)),
                (d / "x.npy").write_bytes((d / "x.npy").read_bytes()[:-4])), "npy:x.npy", "int*", 64,
     ["truncated"]),
])
def test_bad_data_files_exit_2_with_one_paragraph(tmp_path, capsys, make, fill, t, count, words):
    make(tmp_path)
    p = _fill_launch(tmp_path, fill, t, count)
    with pytest.raises(TraceError) as err:
        load_launch(p)
    assert err.value.where == "arg 2.fill"
    assert main(["trace", str(p)]) == 2
    _one_paragraph(capsys, p, *words)


def test_data_fill_and_null_need_format_2(tmp_path):
    (tmp_path / "x.bin").write_bytes(b"\0" * 256)
    with pytest.raises(TraceError) as err:
        load_launch(_fill_launch(tmp_path, "file:x.bin", fmt=""))
    assert err.value.where == "arg 2.fill" and "format = 2" in err.value.fix
    p = _fill_launch(tmp_path, "zero", fmt="")
    with pytest.raises(TraceError) as err:
        load_launch(p)
    assert err.value.where == "arg 3.count" and "format 2" in err.value.problem


def test_a_data_file_changed_after_loading_is_refused(tmp_path):
    np.save(tmp_path / "a.npy", np.arange(64, dtype=np.int32))
    la = load_launch(_fill_launch(tmp_path, "npy:a.npy"))
    np.save(tmp_path / "a.npy", np.arange(65, dtype=np.int32))
    with pytest.raises(TraceError) as err:
        host_buffer(la)
    assert "changed" in err.value.problem


@FUZZ
@given(st.binary(max_size=300), st.integers(0, 300))
def test_fuzzed_npy_headers_are_refused_or_read_exactly(tmp_path, junk, cut):
    """A .npy whose header or data is damaged is refused with a TraceError when the launch file
    is read, or its data is exactly the buffer's size; nothing is unpickled."""
    import io

    bio = io.BytesIO()
    np.save(bio, np.arange(64, dtype=np.int32))
    raw = bio.getvalue()
    raw = raw[:cut] + junk + raw[cut + len(junk):]
    (tmp_path / "a.npy").write_bytes(raw)
    try:
        la = load_launch(_fill_launch(tmp_path, "npy:a.npy"))
    except TraceError:
        return
    try:
        assert len(host_buffer(la)) == la.buffer_bytes
    except TraceError:
        pass


def test_format_2_launch_file_round_trips_through_toml(tmp_path):
    """A format 2 file written by a program (tomli-w) reads back as written."""
    np.save(tmp_path / "d.npy", np.ones(16, np.float32))
    shutil.copy(DATA / "numba_axpy.ptx", tmp_path / "k.ptx")
    doc = {"format": 2, "ptx": "k.ptx", "kernel": "axpy", "block": [256], "grid": [4],
           "arg": [{"type": "void*", "count": 0}, {"type": "void*", "count": 0}, {"type": "long long", "value": 1024},
                   {"type": "long long", "value": 4}, {"type": "float*", "count": 16, "fill": "npy:d.npy"}]}
    (tmp_path / "k.launch.toml").write_text(tomlkit.dumps(doc))
    la = load_launch(tmp_path / "k.launch.toml")
    assert [a.as_dict() for a in la.args][4] == {"type": "float*", "count": 16, "fill": "npy:d.npy"}
    assert la.args[4].path == (tmp_path / "d.npy").resolve()
    assert BUFFER_TYPES["void*"] == 1 and la.buffer_bytes == 256


# ---------------------------------------------------------------------------- on the GPU (-m gpu)


GPU_ONLY = pytest.mark.skipif(not (HAVE_NVCC and have_pycuda()), reason="needs PyCUDA, a GPU and nvcc")


@pytest.mark.gpu
@GPU_ONLY
@pytest.mark.parametrize("path", SAMPLES, ids=[p.name for p in SAMPLES])
def test_gpu_ptx_samples_trace_and_equal_nsight_compute(tmp_path, capsys, path):
    """Each PTX sample traced on the GPU, every block recorded, and the ten metrics equal to
    Nsight Compute's on the uninstrumented kernel."""
    import json

    out = tmp_path / "t.wvtrace"
    rc = main(["trace", str(path), "--validate", "--json", "--out", str(out)])
    captured = capsys.readouterr()
    doc = json.loads(captured.out)
    assert doc["trace"]["complete"], captured.err
    bad = [r for r in doc["validation"]["rows"] if not r["match"]]
    assert rc == 0 and not bad, bad
    assert out.stat().st_size > 0


# ---------------------------------------------------------------------------- cp.async zero-fill

@pytest.mark.parametrize("line, want", [
    ("cp.async.cg.shared.global [ %r16 + 0 ], [ %rd7 + 0 ], 0x10, %r18;", "%r18"),       # Triton
    ("cp.async.ca.shared.global [ %r70 + 0 ], [ %rd5 + 0 ], 0x4, %r19;", "%r19"),
    ("cp.async.ca.shared.global [%r1], [%rd1], 16;", None),                             # nvcc's plain form
    ("@%p2 cp.async.cg.shared.global [%r1+16], [%rd1+16], 16, %p5;", "%p5"),            # ignore-src
    ("cp.async.cg.shared.global.L2::cache_hint [%r1], [%rd1], 16, %r2, %rd9;", "%r2"),
    ("cp.async.cg.shared.global.L2::cache_hint [%r1], [%rd1], 16, %rd9;", None),       # a policy only
    ("cp.async.ca.shared.global [%r1], [%rd1], 8, 0;", "0"),
])
def test_cp_async_source_operand(line, want):
    from viz.trace.ptx import MemInstr, cp_async_source

    ins = MemInstr(1, 1, line, "k", "cp.async.cg.shared.global", "cp.async", "load", "global", 16, "",
                   "%rd1", 1, "", 0)
    assert cp_async_source(ins) == want


def test_triton_cp_async_records_only_lanes_that_read_global():
    """Each cp.async of Triton's masked softmax and matmul PTX clears, before recording, the
    lanes whose src-size register is 0 from the global mask: those lanes are zero-filled and
    read nothing (on the H100 the whole-lane trace counted twice Nsight Compute's requests)."""
    from viz.trace.ptx import instrument_full, parse

    for name in ("triton_softmax.ptx", "triton_matmul.ptx"):
        text = (DATA / name).read_text()
        cps = [i for i in parse(text).instrs if i.kind == "cp.async" and i.space == "global"]
        assert cps, name
        out = instrument_full(text)[0].splitlines()
        for ins in cps:
            reg = ins.ptx.rstrip(";").rsplit(",", 1)[-1].strip()
            at = next(k for k, ln in enumerate(out) if ln.strip() == f"mov.u32 %wvr13, {ins.id};")
            start = max(k for k in range(at) if out[k].strip() == "{")
            block = [ln.strip() for ln in out[start:at]]
            assert f"setp.ne.u32 %wvp1, {reg}, 0;" in block, (name, ins.ptx)
            assert block.index("and.b32 %wvr3, %wvr3, %wvr9;") > block.index("mov.b32 %wvr3, %wvr0;")


@ptxas
@pytest.mark.nvcc
@pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")
def test_every_cp_async_source_form_instruments_and_assembles(tmp_path):
    """src-size as a register and as 0, ignore-src as a predicate (in a block written on one
    line), a guard predicate named without %: every cp.async found, the instrumented PTX
    assembles with ptxas, and an immediate 0 leaves no global lane."""
    from viz.trace.ptx import instrument_full

    src = tmp_path / "k.cu"
    src.write_text(r'''
extern "C" __global__ void k(const float* g, int n) {
    __shared__ float s[256];
    unsigned d = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
    const float* p = g + threadIdx.x;
    unsigned size = threadIdx.x < n ? 4u : 0u;
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;" :: "r"(d), "l"(p), "r"(size));
    asm volatile("{ .reg .pred q; setp.ge.s32 q, %2, %3; cp.async.ca.shared.global [%0], [%1], 4, q; }"
                 :: "r"(d), "l"(p), "r"((int)threadIdx.x), "r"(n));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, 0;" :: "r"(d), "l"(p));
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p cp.async.ca.shared.global [%0], [%1], 4;\n}\n"
                 :: "r"(d), "l"(p), "r"(size));           // CUTLASS's guarded form: a predicate without %
    asm volatile("cp.async.wait_all;");
}
''')
    ptx = tmp_path / "k.ptx"
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", str(src), "-o", str(ptx)], check=True, capture_output=True,
                   timeout=600)
    text, instrs, _ = instrument_full(ptx.read_text())
    cps = [i for i in instrs if i.kind == "cp.async" and i.space == "global"]
    assert len(cps) == 4 and cps[3].predicate == "p", cps       # the one-line block split, none missed
    lines = [ln.strip() for ln in text.splitlines()]
    assert "mov.b32 %wvr3, 0;" in lines and "not.b32 %wvr9, %wvr9;" in lines
    out = tmp_path / "k.instrumented.ptx"
    out.write_text(text)
    r = subprocess.run(["ptxas", "-arch=sm_90", str(out), "-o", str(tmp_path / "k.cubin")],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr
