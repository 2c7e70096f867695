"""Trace kernels nobody here wrote, as they are, and compare with Nsight Compute.

Families (each case a small launch, a few blocks, so that a trace is quick):

* ``cuda``: NVIDIA's CUDA samples, unmodified, from ``REAL/cuda-samples`` (files with
  ``main()``, host code and ``#include <helper_cuda.h>``): the transpose kernels
  (``Samples/6_Performance/transpose``), ``MatrixMulCUDA<32>``/``<16>`` and ``<8>`` (which the
  sample does not instantiate: warpviz does), and reductions with templates of several
  arguments, ``cooperative_groups`` and dynamic shared memory
  (``Samples/2_Concepts_and_Techniques/reduction``).
* ``own``: held-out kernels written for this check and not tuned on (a data-dependent
  shared-memory histogram fed from a ``file:``, a gather through an index array from an
  ``npy:``, a namespaced templated stencil with ``extern __shared__``), written to
  ``REAL/own``.
* ``triton``: the Triton tutorials' kernels (kernels/format2/triton_kernels.py) through
  ``warpviz.trace_triton``.
* ``cupy``: a CuPy ``RawKernel`` source compiled by NVRTC to PTX, through ``warpviz.trace_ptx``
  with CuPy arrays.
* ``numba``: a ``numba.cuda`` kernel's PTX (``cuda.compile_ptx``), through ``trace_ptx``.
* ``ship``: the launch files of kernels/format2 (a sample-style C++ program, Triton's and
  Numba's PTX), recorded into ``OUT/real/shipped/NAME.wvtrace``: the traces to copy into
  assets/traces (their names are the launch files' names, as the shipped traces' are).

On the GPU machine (from the repository root, the folder REAL carried beside it)::

    source tools/gpu/device_setup.sh
    python3 tools/gpu/real_kernels.py --real .real --out "$OUT/real" [--only cuda | --only own,triton,cupy,numba]

(tools/gpu/real_kernels.sh does that and more) writes ``OUT/real/``: ``traces/NAME.wvtrace`` (and ``NAME.json``, the ``--json`` output),
``launch/`` (the CUDA launch files written), ``ptx/NAME/`` (the launch folder of each
Python trace: its PTX, argN.npy and launch file, ready for tests/data/ptx), ``summary.md``
and ``summary.json`` (one row per case: records, complete, the ten metrics against Nsight
Compute, the counters outside the ten; rewritten after every case, and rows of earlier calls
with the same ``--out`` kept), and prints the table. Without a GPU::

    python tools/gpu/real_kernels.py --real .real --build-only

writes the launch files and builds every ``cuda``/``own`` case up to the instrumented
cubin (nvcc, name resolution, ptxas); tests/test_trace_samples.py does the same as tests.

Filling REAL (git-ignored; never part of the product): fetch NVIDIA/cuda-samples (the
session's ``fetch`` tool gives a git directory) and take the files with git::

    python tools/gpu/real_kernels.py --real .real --fill-from /work/.mirror/NVIDIA+cuda-samples/repo
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "kernels" / "format2"))        # triton_kernels.py

SAMPLE_FILES = (
    "Common/helper_cuda.h", "Common/helper_functions.h", "Common/helper_string.h", "Common/helper_timer.h",
    "Common/helper_image.h", "Common/exception.h", "Common/helper_math.h",
    "Samples/6_Performance/transpose/transpose.cu",
    "Samples/0_Introduction/matrixMul/matrixMul.cu",
    "Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu",
    "Samples/2_Concepts_and_Techniques/reduction/reduction.h",
    # the held-out set's second batch (tools/gpu/heldout.py, added 2026-11-26)
    "Samples/0_Introduction/vectorAdd/vectorAdd.cu",
    "Samples/2_Concepts_and_Techniques/convolutionSeparable/convolutionSeparable.cu",
    "Samples/2_Concepts_and_Techniques/convolutionSeparable/convolutionSeparable_common.h",
    "Samples/2_Concepts_and_Techniques/histogram/histogram256.cu",
    "Samples/2_Concepts_and_Techniques/histogram/histogram_common.h",
    "Samples/2_Concepts_and_Techniques/scalarProd/scalarProd.cu",
    "Samples/2_Concepts_and_Techniques/scalarProd/scalarProd_kernel.cuh",
    "Samples/5_Domain_Specific/fastWalshTransform/fastWalshTransform.cu",
    "Samples/5_Domain_Specific/fastWalshTransform/fastWalshTransform_kernel.cuh",
    "Samples/5_Domain_Specific/BlackScholes/BlackScholes.cu",
    "Samples/5_Domain_Specific/BlackScholes/BlackScholes_kernel.cuh",
    # the third batch (tools/gpu/heldout.py, added 2026-11-26)
    "Samples/2_Concepts_and_Techniques/scan/scan.cu",
    "Samples/2_Concepts_and_Techniques/scan/scan_common.h",
    "Samples/2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu",
    "Samples/2_Concepts_and_Techniques/sortingNetworks/sortingNetworks_common.cuh",
    "Samples/2_Concepts_and_Techniques/sortingNetworks/sortingNetworks_common.h",
    # the fourth batch: tensor cores through wmma (mma.sync, HMMA)
    "Samples/3_CUDA_Features/cudaTensorCoreGemm/cudaTensorCoreGemm.cu",
)
TRANSPOSE = "Samples/6_Performance/transpose/transpose.cu"
MATMUL = "Samples/0_Introduction/matrixMul/matrixMul.cu"
REDUCTION = "Samples/2_Concepts_and_Techniques/reduction/reduction_kernel.cu"


@dataclass
class Case:
    """One launch file: ``args`` as (type, count or value[, fill])."""

    name: str
    family: str
    source: str
    kernel: str
    block: list[int]
    grid: list[int]
    args: list[tuple]
    shared: int = 0
    include_dirs: list[str] = field(default_factory=lambda: ["Common"])
    note: str = ""

    def launch_text(self) -> str:
        lines = [f"# {self.family}: {self.note or self.kernel} (written by tools/gpu/real_kernels.py)",
                 "format = 2", f'title = "{self.name}"', f'source = "{self.source}"']
        if self.include_dirs:
            lines.append("include_dirs = [" + ", ".join(f'"{d}"' for d in self.include_dirs) + "]")
        lines += [f'kernel = "{self.kernel}"', f"block = {self.block}", f"grid = {self.grid}"]
        if self.shared:
            lines.append(f"shared_bytes = {self.shared}")
        for a in self.args:
            lines += ["", "[[arg]]", f'type = "{a[0]}"']
            if a[0].endswith("*"):
                lines.append(f"count = {a[1]}")
                if len(a) > 2:
                    lines.append(f'fill = "{a[2]}"')
            else:
                lines.append(f"value = {a[1]}")
        return "\n".join(lines) + "\n"


def cuda_cases() -> list[Case]:
    w = h = 128                                    # transpose: 4 x 4 tiles of 32 x 32, blocks of 32 x 16
    tr = [("float*", w * h, "zero"), ("float*", w * h, "random"), ("int", w), ("int", h)]
    out = [Case(f"sample_{k}", "cuda", TRANSPOSE, k, [32, 16], [w // 32, h // 32], tr,
                note=f"transpose.cu {k}") for k in ("copy", "transposeNaive", "transposeCoalesced",
                                                    "transposeNoBankConflicts", "transposeDiagonal",
                                                    "transposeCoarseGrained")]
    out.append(Case("sample_transposeNaive_mangled", "cuda", TRANSPOSE, "_Z14transposeNaivePfS_ii", [32, 16],
                    [w // 32, h // 32], tr, note="the same kernel named by its mangled name"))
    wa, ha, wb = 128, 64, 64                       # matrixMul: C (ha x wb) = A (ha x wa) B (wa x wb)
    for bs, made in ((32, "instantiated by the sample"), (16, "instantiated by the sample"),
                     (8, "not instantiated by the sample: warpviz instantiates it")):
        out.append(Case(f"sample_MatrixMulCUDA{bs}", "cuda", MATMUL, f"MatrixMulCUDA<{bs}>", [bs, bs],
                        [wb // bs, ha // bs], [("float*", ha * wb, "zero"), ("float*", ha * wa, "random"),
                                               ("float*", wa * wb, "random"), ("int", wa), ("int", wb)],
                        note=f"matrixMul.cu MatrixMulCUDA<{bs}>, {made}"))
    n = 4096
    red = lambda threads, blocks: [("int*", n, "random"), ("int*", blocks, "zero"), ("unsigned", n)]  # noqa: E731
    fred = lambda threads, blocks: [("float*", n, "random"), ("float*", blocks, "zero"), ("unsigned", n)]  # noqa: E731
    for kernel, threads, blocks, shared, args in (
            ("reduce6<int, 256, true>", 256, 8, 256 * 4, red(256, 8)),
            ("reduce4<int, 128>", 128, 16, 128 * 4, red(128, 16)),
            ("reduce3<float>", 128, 16, 128 * 4, fred(128, 16)),
            ("cg_reduce<int>", 256, 8, 256 * 4, red(256, 8)),
            ("multi_warp_cg_reduce<int, 256, 128>", 256, 8, 2 * 4, red(256, 8))):
        safe = kernel.replace("<", "_").replace(">", "").replace(", ", "_").replace(",", "_")
        out.append(Case(f"sample_{safe}", "cuda", REDUCTION, kernel, [threads], [blocks], args, shared,
                        note=f"reduction_kernel.cu {kernel} (dynamic shared memory"
                             + (", cooperative_groups)" if "cg" in kernel else ")")))
    return out


OWN_SOURCE = r"""// Held-out kernels for warpviz's checks on real code (not tuned on): written as a CUDA
// programmer would, with C++ templates, namespaces, dynamic shared memory and atomics.
#include <cstdio>

template <int BINS>
__global__ void histogram(const unsigned char* __restrict__ data, unsigned int* hist, int n)
{
    __shared__ unsigned int local[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) local[b] = 0;
    __syncthreads();
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        atomicAdd(&local[data[i] % BINS], 1u);
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) atomicAdd(&hist[b], local[b]);
}

__global__ void gather(float* out, const float* in, const int* idx, int n)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[idx[i]];
}

namespace own { namespace stencil {
template <typename T, int R>
__global__ void stencil1d(const T* in, T* out, int n)
{
    extern __shared__ unsigned char raw[];
    T* s = reinterpret_cast<T*>(raw);
    int g = blockIdx.x * blockDim.x + threadIdx.x;
    int l = threadIdx.x + R;
    s[l] = g < n ? in[g] : T(0);
    if (threadIdx.x < R) {
        s[l - R] = g >= R ? in[g - R] : T(0);
        s[l + blockDim.x] = g + blockDim.x < n ? in[g + blockDim.x] : T(0);
    }
    __syncthreads();
    T acc = T(0);
    for (int k = -R; k <= R; ++k) acc += s[l + k];
    if (g < n) out[g] = acc;
}
}}

int main()
{
    printf("these kernels are traced by warpviz; main() only makes this a program\n");
    return 0;
}
"""


def own_cases() -> list[Case]:
    n = 8192
    return [
        Case("own_histogram", "own", "own_kernels.cu", "histogram<64>", [256], [4],
             [("char*", n, "file:histogram_data.bin"), ("unsigned*", 64, "zero"), ("int", n)], include_dirs=[],
             note="a shared-memory histogram fed with skewed bytes from a file (data-dependent conflicts)"),
        Case("own_gather", "own", "own_kernels.cu", "gather", [128], [8],
             [("float*", 1024, "zero"), ("float*", 1024, "random"), ("int*", 1024, "npy:gather_idx.npy"),
              ("int", 1024)], include_dirs=[], note="a gather through an index permutation from an .npy"),
        Case("own_stencil", "own", "own_kernels.cu", "own::stencil::stencil1d<float, 3>", [128], [4],
             [("float*", 512, "random"), ("float*", 512, "zero"), ("int", 512)], shared=(128 + 6) * 4,
             include_dirs=[], note="a namespaced template with extern __shared__ (warpviz instantiates it)"),
    ]


def write_own(folder: Path) -> None:
    import numpy as np

    folder.mkdir(parents=True, exist_ok=True)
    (folder / "own_kernels.cu").write_text(OWN_SOURCE)
    rng = np.random.default_rng(20)
    skew = np.minimum(rng.geometric(0.08, 8192), 255).astype(np.uint8)   # most values small: hot bins
    (folder / "histogram_data.bin").write_bytes(skew.tobytes())
    np.save(folder / "gather_idx.npy", rng.permutation(1024).astype(np.int32))


def fill_real(real: Path, git_dir: Path) -> None:
    """Take SAMPLE_FILES from NVIDIA/cuda-samples (a git directory) into REAL/cuda-samples."""
    dest = real / "cuda-samples"
    for f in SAMPLE_FILES:
        out = subprocess.run(["git", f"--git-dir={git_dir}", "show", f"HEAD:{f}"], capture_output=True, check=True)
        (dest / f).parent.mkdir(parents=True, exist_ok=True)
        (dest / f).write_bytes(out.stdout)
    head = subprocess.run(["git", f"--git-dir={git_dir}", "rev-parse", "HEAD"], capture_output=True, text=True)
    (dest / "SOURCE.txt").write_text(f"NVIDIA/cuda-samples at {head.stdout.strip()}: {', '.join(SAMPLE_FILES)}\n")
    print(f"filled {dest} ({len(SAMPLE_FILES)} files)")


def write_launches(real: Path, cases: list[Case]) -> dict[str, Path]:
    """Each case's launch file beside its sources (the folder the paths are relative to)."""
    out = {}
    for c in cases:
        folder = real / ("cuda-samples" if c.family == "cuda" else "own")
        p = folder / f"{c.name}.launch.toml"
        p.write_text(c.launch_text())
        out[c.name] = p
    return out


# ---------------------------------------------------------------------------- the GPU runs


def summarise_validation(v: dict | None) -> dict:
    if not v:
        return {"match": None}
    bad = [f"{r['metric']}: trace {r['model']} ncu {r['hardware']}" for r in v.get("rows", []) if not r.get("match")]
    other = [f"{r['metric']}: trace {r['model']} ncu {r['hardware']}" for r in v.get("other", [])
             if not r.get("match")]
    guard = (v.get("sass_guard") or {}).get("problems") or []
    return {"match": v.get("match"), "mismatches": bad, "other_differs": other,
            "other_checked": len(v.get("other", [])), "sass_guard": guard}


def run_cli_case(c: Case, launch: Path, out: Path, validate: bool, timeout: int, sub: str = "traces") -> dict:
    traces = out / sub
    traces.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "viz.cli", "trace", str(launch), "--json", "--out", str(traces / f"{c.name}.wvtrace")]
    if validate:
        cmd.append("--validate")
    t0 = time.time()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout} s", "seconds": timeout}
    row = {"rc": proc.returncode, "seconds": round(time.time() - t0, 1)}
    (traces / f"{c.name}.json").write_text(proc.stdout)
    (traces / f"{c.name}.err").write_text(proc.stderr)
    try:
        doc = json.loads(proc.stdout)
    except ValueError:
        row["error"] = (proc.stderr.strip().splitlines() or ["no output"])[-1][:400]
        return row
    tr = doc.get("trace") or {}
    row.update(records=tr.get("records"), complete=tr.get("complete"), **summarise_validation(doc.get("validation")))
    return row


def python_row(t, t0: float) -> dict:
    v = t.validation
    return {"records": t.records, "complete": t.complete, "seconds": round(time.time() - t0, 1),
            **summarise_validation(v)}


def run_triton(out: Path, validate: bool) -> dict[str, dict]:
    import torch

    import warpviz
    from triton_kernels import CASES

    rows = {}
    for name, make in CASES.items():
        t0 = time.time()
        try:
            fn, grid, args, meta = make(torch)
            t = warpviz.trace_triton(fn, grid, args, validate=validate, out=out / "traces" / f"{name}.wvtrace",
                                     keep_folder=out / "ptx" / name, **meta)
            rows[name] = python_row(t, t0)
            rows[name]["kernel"] = t.kernel
        except Exception as err:  # noqa: BLE001 - the table says what failed, the log has the rest
            rows[name] = {"error": f"{type(err).__name__}: {str(err)[:400]}", "seconds": round(time.time() - t0, 1)}
            traceback.print_exc()
    return rows


CUPY_SOURCE = r"""
extern "C" __global__ void transpose_tile(float* out, const float* in, int width, int height)
{
    __shared__ float tile[32][33];
    int x = blockIdx.x * 32 + threadIdx.x;
    int y = blockIdx.y * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < width && y + j < height) tile[threadIdx.y + j][threadIdx.x] = in[(y + j) * width + x];
    __syncthreads();
    x = blockIdx.y * 32 + threadIdx.x;
    y = blockIdx.x * 32 + threadIdx.y;
    for (int j = 0; j < 32; j += 8)
        if (x < height && y + j < width) out[(y + j) * height + x] = tile[threadIdx.x][threadIdx.y + j];
}
"""


def cupy_ptx(source: str, arch: str = "compute_90") -> str:
    """NVRTC's PTX of ``source`` as CuPy compiles a RawKernel (CuPy's own NVRTC binding)."""
    from cupy_backends.cuda.libs import nvrtc

    prog = nvrtc.createProgram(source, "rawkernel.cu", [], [])
    try:
        nvrtc.compileProgram(prog, [f"-arch={arch}", "-lineinfo"])
        ptx = nvrtc.getPTX(prog)
    finally:
        nvrtc.destroyProgram(prog)
    return ptx.decode() if isinstance(ptx, bytes) else ptx


def run_cupy(out: Path, validate: bool) -> dict[str, dict]:
    import cupy

    import warpviz

    t0 = time.time()
    try:
        ptx = cupy_ptx(CUPY_SOURCE)
        k = cupy.RawKernel(CUPY_SOURCE, "transpose_tile")          # the kernel CuPy itself would launch
        w, h = 96, 64
        x = cupy.random.random((h, w), dtype=cupy.float32)
        y = cupy.zeros((w, h), dtype=cupy.float32)
        k((w // 32, h // 32), (32, 8), (y, x, cupy.int32(w), cupy.int32(h)))     # it runs as written
        t = warpviz.trace_ptx(ptx, "transpose_tile", grid=(w // 32, h // 32), block=(32, 8), args=[y, x, w, h],
                              title="CuPy RawKernel transpose_tile", sources={"rawkernel.cu": CUPY_SOURCE},
                              validate=validate, out=out / "traces" / "cupy_transpose.wvtrace",
                              keep_folder=out / "ptx" / "cupy_transpose")
        row = python_row(t, t0)
        row["kernel"] = "transpose_tile"
        return {"cupy_transpose": row}
    except Exception as err:  # noqa: BLE001
        traceback.print_exc()
        return {"cupy_transpose": {"error": f"{type(err).__name__}: {str(err)[:400]}"}}


def numba_expand(values):
    """Numba's calling convention: a 1-D array is 7 parameters (meminfo, parent, nitems,
    itemsize, data, shape, stride), a scalar one."""
    import numpy as np

    out = []
    for v in values:
        if isinstance(v, np.ndarray):
            out += [None, None, v.size, v.itemsize, v, v.size, v.itemsize]
        else:
            out.append(v)
    return out


def run_numba(out: Path, validate: bool) -> dict[str, dict]:
    import numpy as np

    if not hasattr(np, "row_stack"):
        # numba-cuda 0.x registers an overload of np.row_stack at import, which NumPy 2.4
        # removed (the GPU machine's NumPy): numba.cuda fails to import there before any
        # kernel. vstack is what row_stack was; this only lets Numba import.
        np.row_stack = np.vstack
    from numba import cuda, float32, int32

    import warpviz

    def saxpy_strided(y, x, a, n):
        i = cuda.grid(1)
        if i < n:
            y[i] = a * x[(i * 33) % n] + y[i]

    t0 = time.time()
    try:
        ptx, _ = cuda.compile_ptx(saxpy_strided, (float32[::1], float32[::1], float32, int32), cc=(9, 0),
                                  lineinfo=True)
        n = 1024
        x = np.random.default_rng(1).random(n, dtype=np.float32)
        y = np.zeros(n, np.float32)
        t = warpviz.trace_ptx(ptx, "saxpy_strided", grid=(n // 256,), block=(256,),
                              args=numba_expand([y, x, np.float32(2.0), n]), title="Numba saxpy_strided",
                              validate=validate, out=out / "traces" / "numba_saxpy.wvtrace",
                              keep_folder=out / "ptx" / "numba_saxpy")
        row = python_row(t, t0)
        row["kernel"] = "saxpy_strided"
        return {"numba_saxpy": row}
    except Exception as err:  # noqa: BLE001
        traceback.print_exc()
        return {"numba_saxpy": {"error": f"{type(err).__name__}: {str(err)[:400]}"}}


def table(rows: dict[str, dict], families: dict[str, str]) -> str:
    head = "| case | family | records | complete | ten vs ncu | outside the ten | s | notes |\n|---|---|---|---|---|---|---|---|"
    out = [head]
    for name, r in rows.items():
        if r.get("error"):
            out.append(f"| {name} | {families.get(name, '')} | - | - | - | - | {r.get('seconds', '')} | "
                       f"ERROR {r['error'][:160]} |")
            continue
        m = r.get("match")
        ten = "-" if m is None else ("all equal" if m else f"{len(r.get('mismatches', []))} differ")
        other = "-" if not r.get("other_checked") else (
            "equal" if not r.get("other_differs") else f"{len(r['other_differs'])} differ")
        notes = "; ".join(r.get("mismatches", []) + r.get("other_differs", []) +
                          [f"SASS guard: {p}" for p in r.get("sass_guard", [])])[:300]
        out.append(f"| {name} | {families.get(name, '')} | {r.get('records')} | {r.get('complete')} | {ten} | {other} "
                   f"| {r.get('seconds', '')} | {notes} |")
    return "\n".join(out)


def build_only(cases: list[Case], launches: dict[str, Path]) -> int:
    from viz.trace.build import build
    from viz.trace.launch import load_launch

    bad = 0
    for c in cases:
        t0 = time.time()
        try:
            b = build(load_launch(launches[c.name]))
            print(f"{c.name:44s} {b.label[:60]:60s} {len(b.instrs):4d} instrs {'(instantiated)' if b.instantiated else ''}"
                  f" {time.time() - t0:.1f} s")
        except Exception as err:  # noqa: BLE001
            bad += 1
            print(f"{c.name:44s} FAILED: {err}")
    return 1 if bad else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--real", default=str(ROOT / ".real"), help="the folder with cuda-samples/ (and own/, written)")
    ap.add_argument("--out", default=os.environ.get("OUT", "/tmp/wv-out") + "/real")
    ap.add_argument("--only", default="cuda,own,ship,triton,cupy,numba")
    ap.add_argument("--no-validate", action="store_true", help="record only (no Nsight Compute)")
    ap.add_argument("--build-only", action="store_true", help="no GPU: build the cuda/own cases up to the cubin")
    ap.add_argument("--fill-from", metavar="GITDIR", help="copy the CUDA samples' files from this git directory")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per CUDA case")
    a = ap.parse_args(argv)
    real = Path(a.real).resolve()
    if a.fill_from:
        fill_real(real, Path(a.fill_from))
        return 0
    only = set(a.only.split(","))
    cases = []
    if "cuda" in only:
        if not (real / "cuda-samples" / TRANSPOSE).exists():
            print(f"no CUDA samples in {real}/cuda-samples: fill it with --fill-from (see this script's help)")
        else:
            cases += cuda_cases()
    if "own" in only:
        write_own(real / "own")
        cases += own_cases()
    launches = write_launches(real, cases)
    if a.build_only:
        return build_only(cases, launches)
    out = Path(a.out)
    (out / "launch").mkdir(parents=True, exist_ok=True)
    (out / "traces").mkdir(parents=True, exist_ok=True)
    for name, p in launches.items():
        shutil.copy(p, out / "launch" / p.name)
    validate = not a.no_validate
    summary = out / "summary.json"
    rows: dict[str, dict] = json.loads(summary.read_text()) if summary.exists() else {}   # earlier calls' rows
    families = {k: v.get("family", "") for k, v in rows.items()}

    def keep(name: str, fam: str, row: dict) -> None:
        rows[name] = dict(row, family=fam)
        families[name] = fam
        summary.write_text(json.dumps(rows, indent=1))          # after every case: a cut-off run keeps its rows
        (out / "summary.md").write_text(table(rows, families) + "\n")
        print(name, row, flush=True)

    for c in cases:
        keep(c.name, c.family, run_cli_case(c, launches[c.name], out, validate, a.timeout))
    if "ship" in only:                  # kernels/format2: the traces to ship in assets/traces (same names)
        for p in sorted((ROOT / "kernels" / "format2").glob("*.launch.toml")):
            name = p.name[:-len(".launch.toml")]
            c = Case(name, "ship", "", name, [], [], [])
            keep(name, "ship", run_cli_case(c, p, out, validate, a.timeout, sub="shipped"))
    for fam, run in (("triton", run_triton), ("cupy", run_cupy), ("numba", run_numba)):
        if fam in only:
            try:
                got = run(out, validate)
            except ImportError as err:
                got = {fam: {"error": f"not installed here: {err}"}}
            for k, v in got.items():
                keep(k, fam, v)
    print(table(rows, families))
    return 0


if __name__ == "__main__":
    sys.exit(main())
