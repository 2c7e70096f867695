"""The held-out set: real, unmodified kernels at sizes that fill the H100, never tuned on.

Nothing here was used to fit the cost model or its calibration, and none of it is a shipped
bench entry or a trace in assets/traces: NVIDIA's CUDA samples (transpose, matrixMul,
reduction; BSD-3, in the git-ignored ``.real/cuda-samples``, see tools/gpu/real_kernels.py),
the held-out kernels real_kernels.py writes (``.real/own``), and the Triton tutorials'
kernels as Triton 3.6.0 compiled them for sm_90 (tests/data/ptx, made by
tools/gpu/make_ptx_samples.py) at realistic sizes. Each launch takes 20 us or more on the
H100 (estimates in ``expect_us``: DRAM traffic at about 3 TB/s, or the sample's own FLOP
rate). Do not tune the model on these results: that would defeat the set's point.

Each case records only its first blocks (``blocks``: enough for at least 20,000 records and
at most about 60,000, so the cost model replays it in seconds); the prediction scales them to
the grid (``viz.gpu.tracemodel.coverage`` says when it may).

    python tools/gpu/heldout.py write [--real .real]       # the launch files, into REAL/heldout-*
    python tools/gpu/heldout.py list [--batches 4]         # name, launch file, --blocks, expected us
    python tools/gpu/heldout.py table RESULTS.json [--markdown]   # the docs' table (docs/GPU.md)

tools/gpu/heldout.sh runs the set on the GPU machine.
"""

from __future__ import annotations

import argparse
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from real_kernels import MATMUL, REDUCTION, TRANSPOSE, Case, write_own  # noqa: E402

PTX = ROOT / "tests" / "data" / "ptx"


@dataclass
class Held:
    case: Case
    blocks: int          # first blocks to record (linear indices 0..blocks-1)
    expect_us: float     # expected time on the H100 (for the time budget), not a prediction
    ptx: str = ""        # Triton: the PTX file (tests/data/ptx) copied beside the launch file
    batch: int = 1       # 1: the first 25 (2026-11-25); 2, 3 and 4: CUDA samples added 2026-11-26


def cases() -> list[Held]:
    out: list[Held] = []
    n = 4096                                    # transpose.cu: tiles of 32 x 32, blocks of 32 x 16
    tr = [("float*", n * n, "zero"), ("float*", n * n, "random"), ("int", n), ("int", n)]
    for k, blocks in (("copy", 1024), ("copySharedMem", 512), ("transposeNaive", 1024),
                      ("transposeCoalesced", 512), ("transposeNoBankConflicts", 512),
                      ("transposeDiagonal", 512), ("transposeCoarseGrained", 512), ("transposeFineGrained", 512)):
        out.append(Held(Case(f"heldout_{k}_4096", "cuda", TRANSPOSE, k, [32, 16], [n // 32, n // 32], tr,
                             note=f"transpose.cu {k}, 4096 x 4096 floats"), blocks, 45.0))
    m = 1024                                    # matrixMul.cu: C (m x m) = A B
    for bs, blocks, us in ((32, 2, 600.0), (16, 4, 700.0)):
        out.append(Held(Case(f"heldout_MatrixMulCUDA{bs}_1024", "cuda", MATMUL, f"MatrixMulCUDA<{bs}>", [bs, bs],
                             [m // bs, m // bs], [("float*", m * m, "zero"), ("float*", m * m, "random"),
                                                  ("float*", m * m, "random"), ("int", m), ("int", m)],
                             note=f"matrixMul.cu MatrixMulCUDA<{bs}>, 1024 x 1024"), blocks, us))
    e = 1 << 25                                 # reduction_kernel.cu: 32 M elements (128 MB)
    t = 256
    for kernel, per_thread, blocks_rec, us, kind in (
            ("reduce0<int>", 1, 128, 60.0, "int"), ("reduce1<int>", 1, 128, 60.0, "int"),
            ("reduce2<int>", 1, 128, 50.0, "int"), ("reduce3<float>", 2, 128, 45.0, "float"),
            ("reduce4<int, 256>", 2, 128, 45.0, "int"), ("reduce5<int, 256>", 2, 128, 45.0, "int")):
        grid = e // (t * per_thread)
        safe = kernel.replace("<", "_").replace(">", "").replace(", ", "_")
        out.append(Held(Case(f"heldout_{safe}_32M", "cuda", REDUCTION, kernel, [t], [grid],
                             [(f"{kind}*", e, "random"), (f"{kind}*", grid, "zero"), ("unsigned", e)], t * 4,
                             note=f"reduction_kernel.cu {kernel}, 32 M elements"), blocks_rec, us))
    for kernel, us in (("reduce6<int, 256, true>", 45.0), ("reduce7<int, 256, true>", 45.0), ("cg_reduce<int>", 45.0)):
        grid = 2048 if "cg_" not in kernel else e // (2 * t)
        safe = kernel.replace("<", "_").replace(">", "").replace(", ", "_")
        out.append(Held(Case(f"heldout_{safe}_32M", "cuda", REDUCTION, kernel, [t], [grid],
                             [("int*", e, "random"), ("int*", grid, "zero"), ("unsigned", e)], t * 4,
                             note=f"reduction_kernel.cu {kernel}, 32 M elements"), 16 if grid == 2048 else 128, us))
    e = 1 << 26                                 # the held-out kernels of real_kernels.py, larger
    out.append(Held(Case("heldout_own_histogram_64M", "own", "own_kernels.cu", "histogram<64>", [256], [1056],
                         [("char*", e, "random"), ("unsigned*", 64, "zero"), ("int", e)], include_dirs=[],
                         note="a shared-memory histogram of 64 M random bytes (grid-stride, 8 blocks per SM)"),
                    8, 60.0))
    e = 1 << 25
    out.append(Held(Case("heldout_own_stencil_32M", "own", "own_kernels.cu", "own::stencil::stencil1d<float, 3>",
                         [256], [e // 256], [("float*", e, "random"), ("float*", e, "zero"), ("int", e)],
                         shared=(256 + 6) * 4, include_dirs=[], note="a 7-point 1-D stencil of 32 M floats"),
                    512, 90.0))
    # Triton (tests/data/ptx: Triton 3.6.0, sm_90, the tutorials' block sizes); the two
    # trailing void* are Triton's scratch pointers.
    scratch = [("void*", 0), ("void*", 0)]
    e = 1 << 25
    out.append(Held(Case("heldout_triton_add_32M", "triton", "", "add_kernel", [128], [e // 1024],
                         [("float*", e, "random"), ("float*", e, "random"), ("float*", e, "zero"), ("int", e)]
                         + scratch, include_dirs=[], note="Triton tutorial add, 32 M floats"), 512, 140.0,
                    "triton_add.ptx"))
    rows, cols = 32768, 1000
    out.append(Held(Case("heldout_triton_softmax_32768x1000", "triton", "", "softmax_kernel", [128], [rows],
                         [("float*", rows * cols, "zero"), ("float*", rows * cols, "random"), ("int", cols),
                          ("int", cols), ("int", rows), ("int", cols)] + scratch, shared=4112, include_dirs=[],
                         note="Triton tutorial fused softmax, 32768 rows of 1000"), 64, 95.0, "triton_softmax.ptx"))
    m = 2048
    out.append(Held(Case("heldout_triton_matmul_2048", "triton", "", "matmul_kernel", [128], [(m // 64) ** 2],
                         [("half*", m * m, "random"), ("half*", m * m, "random"), ("half*", m * m, "zero"),
                          ("int", m), ("int", m), ("int", m), ("int", m), ("int", m), ("int", m)] + scratch,
                         shared=24576, include_dirs=[], note="Triton tutorial matmul (tl.dot, fp16), 2048^3"),
                    12, 60.0, "triton_matmul.ptx"))
    n = 4096
    out.append(Held(Case("heldout_triton_transpose_4096", "triton", "", "transpose_kernel", [128],
                         [n // 32, n // 32], [("float*", n * n, "zero"), ("float*", n * n, "random"), ("int", n),
                                              ("int", n), ("int", n), ("int", n)] + scratch, shared=4096,
                         include_dirs=[], note="Triton tiled transpose, 4096 x 4096 floats"), 256, 45.0,
                    "triton_transpose.ptx"))
    return out + batch2() + batch3() + batch4()


VECTOR_ADD = "Samples/0_Introduction/vectorAdd/vectorAdd.cu"
CONVOLUTION = "Samples/2_Concepts_and_Techniques/convolutionSeparable/convolutionSeparable.cu"
HISTOGRAM256 = "Samples/2_Concepts_and_Techniques/histogram/histogram256.cu"
SCALAR_PROD = "Samples/2_Concepts_and_Techniques/scalarProd/scalarProd.cu"
FWT = "Samples/5_Domain_Specific/fastWalshTransform/fastWalshTransform.cu"
BLACK_SCHOLES = "Samples/5_Domain_Specific/BlackScholes/BlackScholes.cu"
SCAN = "Samples/2_Concepts_and_Techniques/scan/scan.cu"
BITONIC = "Samples/2_Concepts_and_Techniques/sortingNetworks/bitonicSort.cu"
TENSOR_CORE_GEMM = "Samples/3_CUDA_Features/cudaTensorCoreGemm/cudaTensorCoreGemm.cu"


def batch2() -> list[Held]:
    """Eight more CUDA samples, unmodified, first timed on 2026-11-26 with predictions made
    before timing by the model of that day (after the store-merge rule of the AoS stream), at
    sizes that fill the H100. Block shapes are the samples' own."""
    out: list[Held] = []
    n = 1 << 24                                 # vectorAdd.cu: 16 M floats, 256 threads a block
    out.append(Held(Case("heldout_vectorAdd_16M", "cuda", VECTOR_ADD, "vectorAdd", [256], [n // 256],
                         [("float*", n, "random"), ("float*", n, "random"), ("float*", n, "zero"), ("int", n)],
                         note="vectorAdd.cu, 16 M floats"), 1024, 70.0, batch=2))
    w = 4096                                    # convolutionSeparable.cu on a 4096 x 4096 image
    img = [("float*", w * w, "zero"), ("float*", w * w, "random"), ("int", w), ("int", w), ("int", w)]
    out.append(Held(Case("heldout_convolutionRows_4096", "cuda", CONVOLUTION, "convolutionRowsKernel", [16, 4],
                         [w // (8 * 16), w // 4], img, note="convolutionSeparable.cu rows pass, 4096 x 4096"),
                    64, 50.0, batch=2))
    out.append(Held(Case("heldout_convolutionColumns_4096", "cuda", CONVOLUTION, "convolutionColumnsKernel",
                         [16, 8], [w // 16, w // (8 * 8)], img, note="convolutionSeparable.cu columns pass, 4096 x 4096"),
                    32, 50.0, batch=2))
    n = 1 << 24                                 # histogram256.cu: 64 MB of bytes as 16 M uints
    out.append(Held(Case("heldout_histogram256_64M", "cuda", HISTOGRAM256, "histogram256Kernel", [192], [240],
                         [("unsigned*", 240 * 256, "zero"), ("unsigned*", n, "random"), ("unsigned", n)],
                         note="histogram256.cu partial histograms, 64 MB (the sample's 240 x 192)"), 2, 80.0, batch=2))
    vn, en = 1024, 16384                        # scalarProd.cu: 1024 dot products of 16384 floats
    out.append(Held(Case("heldout_scalarProd_1024x16384", "cuda", SCALAR_PROD, "scalarProdGPU", [256], [128],
                         [("float*", vn, "zero"), ("float*", vn * en, "random"), ("float*", vn * en, "random"),
                          ("int", vn), ("int", en)], note="scalarProd.cu, 1024 x 16384 (the sample's 128 x 256)"),
                    4, 60.0, batch=2))
    n = 1 << 24                                 # fastWalshTransform.cu: 16 M floats in place
    out.append(Held(Case("heldout_fwtBatch2_16M", "cuda", FWT, "fwtBatch2Kernel", [256], [n // 1024, 1],
                         [("float*", n, "random"), ("float*", n, "random"), ("int", n // 4)],
                         note="fastWalshTransform.cu radix-4 pass over 16 M floats (stride N/4)"), 512, 50.0, batch=2))
    out.append(Held(Case("heldout_fwtBatch1_16M", "cuda", FWT, "fwtBatch1Kernel", [512], [n // 2048],
                         [("float*", n, "zero"), ("float*", n, "random"), ("int", 11)], shared=2048 * 4,
                         note="fastWalshTransform.cu in-shared-memory passes, 8192 blocks of 2048 floats"),
                    16, 50.0, batch=2))
    o = 1 << 23                                 # BlackScholes.cu: 8 M options, 2 per thread
    bs = [("float2*", o // 2, "zero"), ("float2*", o // 2, "zero")] + [("float2*", o // 2, "random")] * 3 + \
        [("float", 0.02), ("float", 0.30), ("int", o)]
    out.append(Held(Case("heldout_BlackScholes_8M", "cuda", BLACK_SCHOLES, "BlackScholesGPU", [128], [o // 2 // 128],
                         bs, note="BlackScholes.cu, 8 M options"), 1024, 60.0, batch=2))
    return out


def batch3() -> list[Held]:
    """Four more CUDA samples, run after batch 2 with the same model, predicted before
    timing: the scan's bottom-level pass and its uniform update, and the bitonic sort's
    shared-memory sort and global merge step, 16 M keys each, the samples' launch shapes."""
    n = 1 << 24
    out: list[Held] = []
    out.append(Held(Case("heldout_scanExclusiveShared_16M", "cuda", SCAN, "scanExclusiveShared", [256], [n // 1024],
                         [("int4*", n // 4, "zero"), ("int4*", n // 4, "random"), ("unsigned", 1024)],
                         note="scan.cu scanExclusiveShared: 16 K arrays of 1024 uints"), 64, 60.0, batch=3))
    out.append(Held(Case("heldout_uniformUpdate_16M", "cuda", SCAN, "uniformUpdate", [256], [n // 1024],
                         [("int4*", n // 4, "random"), ("unsigned*", n // 1024, "random")],
                         note="scan.cu uniformUpdate over 16 M uints"), 1024, 45.0, batch=3))
    keys = [("unsigned*", n, "zero"), ("unsigned*", n, "zero"), ("unsigned*", n, "random"), ("unsigned*", n, "random")]
    out.append(Held(Case("heldout_bitonicSortShared_16M", "cuda", BITONIC, "bitonicSortShared", [512], [n // 1024],
                         keys + [("unsigned", 1024), ("unsigned", 1)],
                         note="bitonicSort.cu bitonicSortShared: 16 K arrays of 1024 key-value pairs"), 8, 150.0,
                    batch=3))
    out.append(Held(Case("heldout_bitonicMergeGlobal_16M", "cuda", BITONIC, "bitonicMergeGlobal", [256], [n // 512],
                         keys + [("unsigned", n), ("unsigned", n), ("unsigned", n // 2), ("unsigned", 1)],
                         note="bitonicSort.cu bitonicMergeGlobal: the first merge step over 16 M pairs"), 512, 100.0,
                    batch=3))
    return out


def batch4() -> list[Held]:
    """The tensor-core GEMM sample (wmma, 16x16x16 half to float, 4096^3 as its macros fix
    it): the persistent `compute_gemm` (one block of 8 warps per SM, 64 KiB of dynamic shared
    memory, 128x128 tiles staged in shared memory) and `simple_wmma_gemm` (each warp loads its
    fragments from global memory). Added after batch 3, predicted before timing like the
    others. The model does not time the HMMA instructions themselves (a caveat says so)."""
    n = 4096
    mats = [("half*", n * n, "random"), ("half*", n * n, "random"), ("float*", n * n, "random"),
            ("float*", n * n, "zero"), ("float", 1.1), ("float", 1.2)]
    out = [Held(Case("heldout_compute_gemm_4096", "cuda", TENSOR_CORE_GEMM, "compute_gemm", [256], [132], mats,
                     shared=65536, note="cudaTensorCoreGemm.cu compute_gemm, 4096^3 (one block per SM)"), 1, 700.0,
                batch=4),
           Held(Case("heldout_simple_wmma_gemm_4096", "cuda", TENSOR_CORE_GEMM, "simple_wmma_gemm", [128, 4], [64, 64],
                     mats[:4] + [("int", n), ("int", n), ("int", n), ("float", 1.1), ("float", 1.2)],
                     note="cudaTensorCoreGemm.cu simple_wmma_gemm, 4096^3"), 4, 1500.0, batch=4)]
    return out


def launch_text(h: Held) -> str:
    c = h.case
    if not h.ptx:
        return c.launch_text()
    text = c.launch_text().replace(f'source = "{c.source}"\n', f'ptx = "{c.name}.ptx"\n')
    return text.replace("include_dirs = []\n", "")


def folder_of(real: Path, h: Held) -> Path:
    return real / {"cuda": "cuda-samples", "own": "own", "triton": "triton"}[h.case.family]


def write(real: Path) -> dict[str, Path]:
    """Every case's launch file (``heldout_NAME.launch.toml``) beside its sources; the
    Triton PTX copied beside its launch file. Returns {name: launch file}."""
    if not (real / "cuda-samples" / TRANSPOSE).exists():
        raise SystemExit(f"no CUDA samples in {real}/cuda-samples: see tools/gpu/real_kernels.py (--fill-from)")
    write_own(real / "own")
    out = {}
    for h in cases():
        folder = folder_of(real, h)
        folder.mkdir(parents=True, exist_ok=True)
        if h.ptx:
            shutil.copy(PTX / h.ptx, folder / f"{h.case.name}.ptx")
        p = folder / f"{h.case.name}.launch.toml"
        p.write_text(launch_text(h))
        out[h.case.name] = p
    return out


def table(doc: dict, markdown: bool) -> str:
    """The held-out table: kernel, launch, measured, predicted, ratio (predicted / measured),
    bound; then how many within 20% and the worst ratio."""
    rows, worst = [], None
    for name, e in (doc.get("traces") or {}).items():
        t = e.get("timing") or {}
        p = t.get("predicted") or {}
        L = e.get("launch") or {}
        dims = "x".join(str(x) for x in L.get("grid", []) if x != 1) + " x " + \
            "x".join(str(x) for x in L.get("block", []) if x != 1)
        if "median_ms" not in t or not p.get("ms"):
            why = (e.get("error") or t.get("predicted_error") or "not timed").removeprefix("TraceError: ")
            m = t["median_ms"] * 1e3 if "median_ms" in t else None
            rows.append((name, e.get("kernel", ""), dims, m, None, None, "", why.splitlines()[0].split(" Fix: ")[0][:200],
                         ""))
            continue
        r = p["ms"] / t["median_ms"]
        off = max(r, 1 / r)
        if worst is None or off > worst[0]:
            worst = (off, name, r)
        cov = (p.get("coverage") or {}).get("text", "")
        rows.append((name, e.get("kernel", ""), dims, t["median_ms"] * 1e3, p["ms"] * 1e3, r, p.get("bound", ""),
                     "", cov))
    ok = sum(1 for r in rows if r[5] is not None and abs(r[4] - r[3]) <= 0.2 * r[3])
    done = sum(1 for r in rows if r[5] is not None)
    out = []
    if markdown:
        out += ["| kernel | launch (grid x block) | measured µs | predicted µs | predicted / measured | bound |",
                "|---|---|---:|---:|---:|---|"]
        for name, k, dims, m, pr, r, b, why, _cov in rows:
            if r is None:
                out.append(f"| `{name}` (`{k}`) | {dims} | {'' if m is None else f'{m:.2f}'} | | | {why} |")
            else:
                mark = "" if abs(pr - m) <= 0.2 * m else " **"
                out.append(f"| `{name}` (`{k}`) | {dims} | {m:.2f} | {pr:.2f} | {r:.2f}{mark} | {b} |")
        out.append("")
    else:
        out.append(f"{'held-out launch':<44} {'measured us':>11} {'predicted us':>12} {'pred/meas':>9}  bound")
        for name, k, dims, m, pr, r, b, why, _cov in rows:
            out.append(f"{name:<44} {'' if m is None else f'{m:>11.2f}'} {why}" if r is None else
                       f"{name:<44} {m:>11.2f} {pr:>12.2f} {r:>9.2f}  {b}")
    w = f"; worst predicted/measured {worst[2]:.2f} (`{worst[1]}`)" if worst else ""
    out.append(f"{ok} of {done} held-out launches within 20% of the measured median "
               f"({len(rows) - done} without a timing or a prediction){w}.")
    return "\n".join(out)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("write")
    w.add_argument("--real", default=str(ROOT / ".real"))
    li = sub.add_parser("list")
    li.add_argument("--real", default=str(ROOT / ".real"))
    li.add_argument("--batches", default="", metavar="N,...", help="only these batches (default: all)")
    t = sub.add_parser("table")
    t.add_argument("file")
    t.add_argument("--markdown", action="store_true")
    a = ap.parse_args(argv)
    if a.cmd == "write":
        for name, p in write(Path(a.real).resolve()).items():
            print(name, p)
        return 0
    if a.cmd == "list":
        real = Path(a.real).resolve()
        only = {int(b) for b in a.batches.split(",") if b.strip()}
        for h in cases():
            if only and h.batch not in only:
                continue
            p = folder_of(real, h) / f"{h.case.name}.launch.toml"
            print(f"{h.case.name}\t{p}\t0-{h.blocks - 1}\t{h.expect_us:g}")
        return 0
    from viz.gpu import results

    print(table(results.load(a.file), a.markdown))
    return 0


if __name__ == "__main__":
    sys.exit(main())
