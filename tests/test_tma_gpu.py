"""On the GPU (-m gpu; the device machine: bash tools/gpu/tma_validate.sh): Triton kernels that
move tiles with TMA (device-side tensor descriptors, tl.make_tensor_descriptor) and the
attention forward, traced with ``trace_triton(..., validate=True)``: every one of
the ten metrics and every counter outside them that Nsight Compute reads (the TMA rows of
docs/trace-format.md included) equal to the uninstrumented kernel's.

The kernels are tools/gpu/probe_tma_kernels.py's (written for this issue). With
WARPVIZ_TMA_OUT set, each case's validation is written there as JSON (and its trace).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CASES = ["copy2d_dev", "copy2d_dev_st", "load3d", "oob2d", "matmul_tma", "attention_tma", "attention", "matmul"]
if os.environ.get("WARPVIZ_TMA_CASES"):        # a subset, e.g. "copy2d_dev,oob2d" (tools/gpu/tma_validate.sh --traces-only)
    CASES = [c for c in os.environ["WARPVIZ_TMA_CASES"].split(",") if c in CASES]


def _ready():
    import shutil

    from helpers import have_pycuda

    return shutil.which("nvcc") is not None and have_pycuda()


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES)
def test_gpu_triton_tma_kernels_equal_nsight_compute(case, tmp_path):
    torch = pytest.importorskip("torch")
    pytest.importorskip("triton")
    if not (_ready() and torch.cuda.is_available()):
        pytest.skip("needs PyCUDA, a GPU, nvcc and PyTorch on the GPU")
    sys.path.insert(0, str(ROOT / "tools" / "gpu"))
    import probe_tma_kernels as K

    import warpviz

    fn, grid, args, kw, _check, desc = K._case(case)
    out = Path(os.environ.get("WARPVIZ_TMA_OUT") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    t = warpviz.trace_triton(fn, grid, args, validate=True, out=out / f"{case}.wvtrace", **kw)
    v = t.validation
    (out / f"{case}.json").write_text(json.dumps({"case": case, "description": desc, "validation": v,
                                                  "other_metrics": t.analysis().other_metrics}, indent=1,
                                                 default=str))
    bad = [r for r in v["rows"] if not r["match"]] + [r for r in v["other"] if not r["match"]]
    assert not bad, bad
    if not case.startswith(("attention", "matmul")):       # their wgmma is another kind's (complete with it)
        assert t.complete, t.header.get("note")
    kinds = {i["kind"] for i in t.header["instructions"]}
    if case.endswith(("_dev", "_st", "3d", "tma")):
        assert "tma" in kinds
