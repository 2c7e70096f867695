"""The replay proof on the GPU (``-m gpu``; tools/gpu/replay_proof.sh runs it on the device):
the kernel as written and with the layout change applied to its source, traced with
``--validate``; the replay of the first equals the second on every shared-memory counter.
Without a GPU, the launch files are compiled and instrumented (nvcc), so they are known to build."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from helpers import HAVE_NVCC, have_pycuda
from viz.cli import main
from viz.trace import tracefile
from viz.trace.analysis import analyze_trace
from viz.trace.launch import load_launch
from viz.trace.replay import replay

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels" / "replay"
CASES = [("transpose_coalesced", "tile", None, "pad:1", "transpose_coalesced_pad1"),
         ("transpose_coalesced", "tile", None, "xor", "transpose_coalesced_xor"),
         ("sgemm_nt", "Bs", None, "pad:1", "sgemm_nt_pad1"),     # float4 reads split into 4 loads: counted so
         ("sgemm_nt", "Bs", None, "xor", "sgemm_nt_xor"),
         ("stencil_halo", "s", None, "pad:1", "stencil_halo_pad1"),
         ("histogram_lanes", "bins", None, "pad:1", "histogram_lanes_pad1"),
         ("ldmatrix_tile", "tile", (64, 64), "swizzle:3,3,3", "ldmatrix_tile_swz")]
GPU = pytest.mark.skipif(not (have_pycuda() and HAVE_NVCC), reason="needs PyCUDA, a GPU and nvcc")


def _shared(an) -> dict:
    out = {k: v for k, v in an.metrics.items() if "shared" in k}
    out.update({k: v for k, v in an.other_metrics.items() if "shared" in k or "ldsm" in k})
    return out


@pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")
@pytest.mark.nvcc
@pytest.mark.parametrize("name", sorted({n for c in CASES for n in (c[0], c[4])}))
def test_the_proof_kernels_build(name):
    from viz.trace.build import build

    launch = load_launch(KERNELS / f"{name}.launch.toml")
    b = build(launch, "sm_90")
    assert b.cubin[:4] == b"\x7fELF" and launch.kernel in b.ptx and b.instrs


@pytest.mark.gpu
@GPU
@pytest.mark.parametrize("base,array,shape,layout,changed", CASES, ids=lambda x: str(x))
def test_replay_equals_the_changed_kernel_on_the_gpu(base, array, shape, layout, changed, tmp_path, capsys):
    paths = {}
    for name in (base, changed):
        paths[name] = tmp_path / f"{name}.wvtrace"
        rc = main(["trace", str(KERNELS / f"{name}.launch.toml"), "--validate", "--json", "--out", str(paths[name])])
        doc = json.loads(capsys.readouterr().out)
        assert rc == 0 and doc["validation"]["match"], doc["validation"]["rows"]
    rp = replay(tracefile.load(paths[base]), array, shape, None, layout)
    want = _shared(analyze_trace(tracefile.load(paths[changed])))
    got = _shared(rp.analysis)
    assert {k: got.get(k, 0) for k in want} == want
    assert set(got) <= set(want) | {k for k, v in got.items() if v == 0}
