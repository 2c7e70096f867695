"""Real code nobody here wrote: NVIDIA's CUDA samples, unmodified (files with main(), host
code and helper headers; templates of one and several arguments; cooperative groups and
dynamic shared memory), and held-out kernels (tools/gpu/real_kernels.py), built without a GPU
the way `warpviz trace` builds them: nvcc, the kernel's name resolved (a template the sample
does not instantiate instantiated by warpviz), the arguments checked against the compiled
parameters, the instrumented module assembled by ptxas.

The samples are not part of warpviz: these tests use them where a checkout has them in
``.real/cuda-samples`` (or ``$WARPVIZ_REAL/cuda-samples``; fill it with
``python tools/gpu/real_kernels.py --fill-from GITDIR``) and skip otherwise. The held-out
kernels are written by the tool and always run.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from helpers import HAVE_NVCC
from viz.trace import TraceError
from viz.trace.launch import load_launch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools" / "gpu"))
import real_kernels as RK  # noqa: E402

REAL = Path(os.environ.get("WARPVIZ_REAL", ROOT / ".real"))
HAVE_SAMPLES = (REAL / "cuda-samples" / RK.TRANSPOSE).exists()
samples = pytest.mark.skipif(not HAVE_SAMPLES, reason=f"no CUDA samples in {REAL}/cuda-samples "
                             "(python tools/gpu/real_kernels.py --fill-from GITDIR)")
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")
CUDA = {c.name: c for c in RK.cuda_cases()}
OWN = {c.name: c for c in RK.own_cases()}


@pytest.fixture(scope="module")
def own_folder(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("real")
    RK.write_own(d / "own")
    RK.write_launches(d, list(OWN.values()))
    return d


@pytest.fixture(scope="module")
def sample_launches(tmp_path_factory) -> dict[str, Path]:
    """The samples' launch files, written beside a copy of the samples (the real folder is
    not written by the tests)."""
    import shutil

    d = tmp_path_factory.mktemp("real")
    shutil.copytree(REAL / "cuda-samples", d / "cuda-samples")
    return RK.write_launches(d, list(CUDA.values()))


@nvcc
@pytest.mark.nvcc
@samples
@pytest.mark.parametrize("name", sorted(CUDA))
def test_cuda_samples_build_as_they_are(sample_launches, name):
    from viz.trace.build import build

    c = CUDA[name]
    la = load_launch(sample_launches[name])
    b = build(la)
    text = la.source_text
    if c.source == RK.REDUCTION:                     # templates, cooperative groups, dynamic shared memory
        assert "cooperative_groups" in text and "extern __shared__" in text
    else:                                            # a program: main(), host code, helper headers
        assert "int main(" in text and "#include <helper_cuda.h>" in text
    assert b.entry.startswith("_Z") and b.instrs and b.instrumented_cubin
    assert all(i.function == b.entry for i in b.instrs)
    assert b.instantiated == ("MatrixMulCUDA8" in name)
    kinds = {i.space for i in b.instrs}
    if "Coalesced" in name or "NoBank" in name or "MatrixMul" in name or "reduce" in name:
        assert "shared" in kinds                        # the tiles and the reductions' shared memory
    if c.shared:
        assert la.shared_bytes == c.shared


@nvcc
@pytest.mark.nvcc
@samples
@pytest.mark.parametrize("source, kernel, words, fix", [
    (RK.TRANSPOSE, "transposeNothing", ["the source has no kernel `transposeNothing` (it has: copy(float*, float*, "
                                        "int, int), ", "transposeNoBankConflicts(float*, float*, int, int)"],
     "name one of its kernels"),
    (RK.MATMUL, "MatrixMulCUDA", ["`MatrixMulCUDA` names 2 kernels: MatrixMulCUDA<16>(float*, float*, float*, int, "
                                  "int) (mangled _Z13MatrixMulCUDAILi16EEvPfS0_S0_ii)"], "template arguments"),
    (RK.REDUCTION, "reduce6", ["`reduce6` names ", " kernels: reduce6<int, 512, true>(int*, int*, unsigned int)",
                               "and "], "template arguments"),
    (RK.MATMUL, "MatrixMulCUDA<float>", ["does not instantiate `MatrixMulCUDA<float>`", "nvcc says"],
     "template __global__ void MatrixMulCUDA<float>"),
])
def test_sample_names_that_do_not_resolve_say_what_exists(sample_launches, source, kernel, words, fix):
    from viz.trace.build import build

    folder = sample_launches["sample_copy"].parent
    p = folder / "bad.launch.toml"
    p.write_text(f'format = 2\nsource = "{source}"\ninclude_dirs = ["Common"]\nkernel = "{kernel}"\nblock = [32]\n'
                 'grid = [1]\n')
    with pytest.raises(TraceError) as err:
        build(load_launch(p))
    msg = str(err.value)
    assert err.value.where == "kernel" and "\n" not in msg and fix in err.value.fix
    for w in words:
        assert w in msg, (w, msg)
    assert len(msg) < 4000                               # 213 entries are not all listed


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("name", sorted(OWN))
def test_held_out_kernels_build(own_folder, name):
    from viz.trace.build import build
    from viz.trace.record import host_buffer

    la = load_launch(own_folder / "own" / f"{name}.launch.toml")
    b = build(la)
    assert b.instrs and b.instrumented_cubin
    assert b.instantiated == (name in ("own_histogram", "own_stencil"))
    buf = host_buffer(la)                               # the file: and npy: data reach the buffer
    assert len(buf) == la.buffer_bytes
    if name == "own_histogram":
        data = (own_folder / "own" / "histogram_data.bin").read_bytes()
        assert buf[:len(data)].tobytes() == data
        assert {(i.kind, i.space) for i in b.instrs} >= {("atomic", "shared"), ("reduction", "global")}


def test_launch_files_of_the_tool_are_format_2_and_load(own_folder):
    for name in OWN:
        la = load_launch(own_folder / "own" / f"{name}.launch.toml")
        assert la.format == 2 and la.kernel == OWN[name].kernel


FORMAT2 = sorted((ROOT / "kernels" / "format2").glob("*.launch.toml"))


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("path", FORMAT2, ids=[p.name for p in FORMAT2])
def test_shipped_format_2_launch_files_build(path):
    """kernels/format2: a sample-style C++ program (namespaces, templates, main(), a helper
    header, cooperative groups, dynamic shared memory) and Triton's and Numba's PTX, the
    launch files whose H100 traces are shipped in assets/traces."""
    from viz.trace.build import build

    la = load_launch(path)
    b = build(la)
    assert la.format == 2 and b.instrs and b.instrumented_cubin
    if path.name == "triton_wgmma_matmul.launch.toml":
        # compiled by tests/data/wgmma/triton35_matmul_128x128x64.py elsewhere: its PTX's `.file`
        # names that machine's /tmp/wg/tri/mm.py, outside the launch file's folder: only the PTX travels
        from viz.gpu.trace_pipeline import trace_sources

        assert set(trace_sources(la, b.instrs)) == {"triton_wgmma_matmul.ptx"}
    elif path.name.startswith("triton"):
        from viz.gpu.trace_pipeline import _where, trace_sources

        sources = trace_sources(la, b.instrs)
        assert "triton_kernels.py" in sources              # the Python lines travel with the trace
        assert all(_where(i, la, sources)["file"] == "triton_kernels.py" for i in b.instrs)


def test_the_shipped_format_2_set_has_each_family():
    names = {p.name for p in FORMAT2}
    assert {"tiles_transpose_padded.launch.toml", "block_sum_cg.launch.toml", "triton_matmul.launch.toml",
            "numba_block_sum.launch.toml"} <= names
