"""Arrays from PyTorch and CuPy as kernel arguments (``viz.trace.pyargs.host_array``): a
device array's contents are copied as the kernel sees them, from its first element over its
strides' span. These run where PyTorch or CuPy is installed (the GPU machine runs this file:
tools/gpu/real_kernels.py) and skip elsewhere; nothing here needs Qt."""

from __future__ import annotations

import numpy as np
import pytest

from viz.trace.pyargs import ArgumentError, host_array


@pytest.mark.parametrize("device", ["cpu", "cuda"])
def test_torch_tensors_give_their_strided_span(device):
    torch = pytest.importorskip("torch")
    if device == "cuda" and not torch.cuda.is_available():
        pytest.skip("no GPU for PyTorch here")
    base = torch.arange(64, dtype=torch.float32, device=device).reshape(8, 8)
    view = base[:, 2:6]                                    # strided: rows of 4 out of 8
    h = host_array(view, 1)
    span = 1 + 7 * 8 + 3                                   # from [0][2] to [7][5]
    assert h.type == "float*" and h.count == span
    assert np.array_equal(h.data, np.arange(2, 2 + span, dtype=np.float32))
    assert np.array_equal(host_array(base.t(), 1).data, np.arange(64, dtype=np.float32))   # a transposed view
    bf = torch.ones(4, dtype=torch.bfloat16, device=device)
    h = host_array(bf, 1)
    assert h.type == "short*" and h.data.tobytes() == bf.cpu().view(torch.int16).numpy().tobytes()
    h = host_array(torch.ones(3, dtype=torch.float16, device=device), 1)
    assert h.type == "half*" and h.count == 3


def test_cupy_arrays_give_their_strided_span():
    cupy = pytest.importorskip("cupy")
    try:
        base = cupy.arange(64, dtype=cupy.float32).reshape(8, 8)
    except Exception as err:  # noqa: BLE001 - CuPy without a GPU
        pytest.skip(f"CuPy cannot allocate here: {err}")
    h = host_array(base[:, 2:6], 1)
    assert h.type == "float*" and h.count == 60
    assert np.array_equal(h.data, np.arange(2, 62, dtype=np.float32))
    h = host_array(cupy.arange(6, dtype=cupy.complex64), 1)
    assert h.type == "float*" and h.count == 12
    with pytest.raises(ArgumentError, match="negative strides"):
        host_array(cupy.arange(4, dtype=cupy.float32)[::-1], 1)


# ---------------------------------------------------------------------------- on the GPU (-m gpu)


def _gpu_ready():
    import shutil

    from helpers import have_pycuda

    return shutil.which("nvcc") is not None and have_pycuda()


@pytest.mark.gpu
def test_gpu_trace_ptx_with_numpy_arrays_equals_nsight_compute(tmp_path):
    """A Numba kernel's PTX traced from Python with NumPy arrays (Numba's 7 parameters per
    array: NULL meminfo and parent, sizes, the data), validated against Nsight Compute."""
    if not _gpu_ready():
        pytest.skip("needs PyCUDA, a GPU and nvcc")
    from pathlib import Path

    import warpviz

    ptx = (Path(__file__).parent / "data" / "ptx" / "numba_axpy.ptx").read_text()
    x = np.arange(1024, dtype=np.float32)
    y = np.ones(1024, np.float32)
    out = np.zeros(1024, np.float32)
    arr = lambda a: [None, None, a.size, a.itemsize, a, a.size, a.itemsize]  # noqa: E731
    t = warpviz.trace_ptx(ptx, "axpy", grid=(4,), block=(256,), args=arr(out) + arr(x) + arr(y) + [2.0, 1024],
                          validate=True, out=tmp_path / "axpy.wvtrace")
    assert t.complete and t.match, t.validation
    m = t.analysis().metrics
    assert m["l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"] == 2 * 1024 // 32      # x and y, one request a warp
    assert warpviz.open_trace(tmp_path / "axpy.wvtrace").records == t.records


@pytest.mark.gpu
def test_gpu_trace_triton_softmax_equals_nsight_compute(tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    if not (_gpu_ready() and torch.cuda.is_available()):
        pytest.skip("needs PyCUDA, a GPU, nvcc and PyTorch on the GPU")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "kernels" / "format2"))
    import triton_kernels as TK

    import warpviz

    fn, grid, args, meta = TK.case_softmax(torch)
    t = warpviz.trace_triton(fn, grid, args, validate=True, out=tmp_path / "softmax.wvtrace", **meta)
    assert t.complete and t.match, t.validation
    assert t.header["input"] == "ptx" and t.header["kernel"] == "softmax_kernel"
    assert "triton_kernels.py" in t.header["sources"]                  # the Python lines, in the trace
    assert any(i["file"].endswith("triton_kernels.py") for i in t.header["instructions"])
