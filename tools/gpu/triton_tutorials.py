"""Trace Triton's matmul (03) and fused-attention (06) tutorials as published, on the GPU
machine, with ``warpviz.trace_triton(..., validate=True)`` (tools/gpu/triton_tutorials.sh).

The tutorial files are copied, unmodified, into the git-ignored ``.real/triton_tutorials/``
(from the Triton history as release/3.6.x was cut; its COMMIT file says which). Importing a
tutorial runs its unit test and benchmark, so this script loads only its definitions: every
import, function and class (the kernels exactly as written, compiled by Triton from the
tutorial file itself), and every other top-level statement that calls none of the
tutorial's own launching functions (configs, helpers such as ``is_hopper()``). The kernels
are then launched as the tutorials' wrappers launch them: the autotuner's choice for the
matmul (the tutorial's own ``matmul(a, b)`` runs first and tunes), the tutorial's test
configuration for attention (``PYTEST_VERSION`` set, as its own pytest run sets it), host
``TensorDescriptor``s on Hopper (``warp_specialize=False``, the path the tutorial takes), and
device descriptors (``warp_specialize=True``).

    python3 tools/gpu/triton_tutorials.py OUT_DIR [SECONDS]
    WV_TUTORIAL_CASES="06 causal host,03 matmul" ...     # only these cases

Measured on the H200 (12:24 UTC): 03 matmul equal on all 35 counters; 06 with host descriptors
refused by the driver then (the packed parameter buffer; launches with CUtensorMap [[arg]]s go
through cuLaunchKernel's kernelParams since); 06 with warp_specialize=True does not compile in
Triton 3.6 on sm_90 (its NVGPUWarpSpecialization pass fails: Triton's, before warpviz).
"""

from __future__ import annotations

import ast
import json
import os
import sys
import time
import traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TUT = ROOT / ".real" / "triton_tutorials"
PURE = ("is_", "supports_", "get_", "keep", "prune")


def load(path: Path) -> dict:
    """The tutorial's definitions (see the module doc), compiled from the file itself."""
    tree = ast.parse(path.read_text(), str(path))
    defined = {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}
    launching = {d for d in defined if not d.startswith(PURE)}
    body = []
    gone: set[str] = set()       # names only a dropped statement binds
    for n in tree.body:
        if isinstance(n, (ast.Import, ast.ImportFrom, ast.FunctionDef, ast.ClassDef)):
            body.append(n)
            continue
        names = {x.id for x in ast.walk(n) if isinstance(x, ast.Name)}
        stored = {x.id for x in ast.walk(n) if isinstance(x, ast.Name) and isinstance(x.ctx, ast.Store)}
        calls = {c.func.id for c in ast.walk(n) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)}
        if (isinstance(n, (ast.Expr, ast.For, ast.While)) or (isinstance(n, ast.If) and "__name__" in ast.dump(n.test))
                or calls & launching or (names - stored) & gone):
            gone |= stored
            continue
        gone -= stored
        body.append(n)
    g = {"__name__": path.stem, "__file__": str(path)}
    exec(compile(ast.Module(body=body, type_ignores=[]), str(path), "exec"), g)
    return g


def record(out: Path, case: str, fn, grid, args, **meta) -> None:
    import warpviz

    t0 = time.time()
    try:
        t = warpviz.trace_triton(fn, grid, args, validate=True, out=out / f"{case}.wvtrace", **meta)
        v = t.validation or {}
        bad = [r for r in v.get("rows", []) + v.get("other", []) if not r.get("match")]
        doc = {"case": case, "meta": {k: str(x) for k, x in meta.items()}, "match": t.match, "complete": t.complete,
               "validation": v, "other_metrics": t.analysis().other_metrics, "seconds": round(time.time() - t0, 1),
               "kinds": sorted({i["kind"] for i in t.header["instructions"]})}
        (out / f"{case}.json").write_text(json.dumps(doc, indent=1, default=str))
        print(f"{case}: match={t.match} complete={t.complete} rows={len(v.get('rows', []))}+{len(v.get('other', []))} "
              f"differ={len(bad)} ({time.time() - t0:.0f} s)", flush=True)
        for r in bad:
            print(f"    {r.get('metric')}: model {r.get('model')} ncu {r.get('hardware')}", flush=True)
    except Exception as err:  # noqa: BLE001 - one case's failure is reported, the next runs
        (out / f"{case}.error.txt").write_text(traceback.format_exc())
        print(f"{case}: FAILED {type(err).__name__}: {str(err)[:600]}", flush=True)


def matmul_case(out: Path) -> None:
    import torch

    g = load(TUT / "tutorial_03_matrix_multiplication.py")
    torch.manual_seed(0)
    a = torch.randn((512, 512), device="cuda", dtype=torch.float16)
    b = torch.randn((512, 512), device="cuda", dtype=torch.float16)
    c = g["matmul"](a, b)                          # the tutorial's own wrapper: the autotuner chooses
    assert torch.allclose(c, torch.matmul(a, b), atol=1e-2, rtol=0)
    kernel = g["matmul_kernel"]
    best = kernel.best_config
    print(f"03 matmul: autotuner chose {best}", flush=True)
    M, K = a.shape
    N = b.shape[1]
    c = torch.empty((M, N), device="cuda", dtype=torch.float16)
    kw = dict(best.kwargs)
    grid = (((M + kw["BLOCK_SIZE_M"] - 1) // kw["BLOCK_SIZE_M"]) * ((N + kw["BLOCK_SIZE_N"] - 1) // kw["BLOCK_SIZE_N"]),)
    record(out, "tutorial03_matmul", kernel.fn, grid,
           (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1)),
           ACTIVATION="", num_warps=best.num_warps, num_stages=best.num_stages, **kw)


def attention_case(out: Path, causal: bool, warp_specialize: bool) -> None:
    import torch

    os.environ["PYTEST_VERSION"] = "warpviz"      # the tutorial's own test configuration
    g = load(TUT / "tutorial_06_fused_attention.py")
    TensorDescriptor = g["TensorDescriptor"]
    Z, H, N_CTX, HEAD_DIM = 1, 2, 1024, 64
    torch.manual_seed(20)
    q = torch.empty((Z, H, N_CTX, HEAD_DIM), dtype=torch.float16, device="cuda").normal_(mean=0.0, std=0.5)
    k = torch.empty_like(q).normal_(mean=0.0, std=0.5)
    v = torch.empty_like(q).normal_(mean=0.0, std=0.5)
    sm_scale = 0.5
    o = g["attention"](q, k, v, causal, sm_scale, warp_specialize)   # the tutorial's own forward
    kernel = g["_attn_fwd"]
    best = kernel.best_config
    print(f"06 attention (causal={causal}, warp_specialize={warp_specialize}): config {best}", flush=True)
    # what the tutorial's forward() passes, rebuilt: host descriptors where it uses them
    M = torch.empty((Z, H, N_CTX), device="cuda", dtype=torch.float32)
    o = torch.empty_like(q)
    host = g["supports_host_descriptor"]() and not (g["is_hopper"]() and warp_specialize)
    if host:
        y_dim = Z * H * N_CTX
        dummy = [1, 1]
        descs = [TensorDescriptor(t, shape=[y_dim, HEAD_DIM], strides=[HEAD_DIM, 1], block_shape=dummy)
                 for t in (q, k, v, o)]
    else:
        descs = [q, k, v, o]
    nargs = dict(sm_scale=sm_scale, M=M, Z=Z, H=H, desc_q=descs[0], desc_k=descs[1], desc_v=descs[2],
                 desc_o=descs[3], N_CTX=N_CTX, HEAD_DIM=HEAD_DIM, FP8_OUTPUT=False, STAGE=3 if causal else 1,
                 warp_specialize=warp_specialize, IS_HOPPER=g["is_hopper"](), **best.kwargs)
    if best.pre_hook is not None:
        best.pre_hook(nargs)                      # the block shapes of the descriptors, as the autotuner sets them

    def alloc_fn(size: int, align: int, _):
        return torch.empty(size, dtype=torch.int8, device="cuda")

    import triton

    triton.set_allocator(alloc_fn)
    grid = ((N_CTX + best.kwargs["BLOCK_M"] - 1) // best.kwargs["BLOCK_M"], Z * H, 1)
    order = ["sm_scale", "M", "Z", "H", "desc_q", "desc_k", "desc_v", "desc_o"]
    meta = {k2: x for k2, x in nargs.items() if k2 not in order}
    case = f"tutorial06_attention_{'causal' if causal else 'full'}_{'ws_device_desc' if warp_specialize else 'host_desc'}"
    record(out, case, kernel.fn, grid, [nargs[n] for n in order], num_warps=best.num_warps,
           num_stages=best.num_stages, **meta)


def main(argv: list[str]) -> int:
    out = Path(argv[0])
    out.mkdir(parents=True, exist_ok=True)
    budget = float(argv[1]) if len(argv) > 1 else 200
    t0 = time.time()
    cases = [("06 causal host", lambda: attention_case(out, True, False)),
             ("03 matmul", lambda: matmul_case(out)),
             ("06 full host", lambda: attention_case(out, False, False)),
             ("06 causal ws device", lambda: attention_case(out, True, True))]
    only = [c.strip() for c in os.environ.get("WV_TUTORIAL_CASES", "").split(",") if c.strip()]
    for name, run in cases:
        if only and name not in only:
            continue
        if time.time() - t0 > budget:
            print(f"{name}: not run (time)", flush=True)
            continue
        try:
            run()
        except Exception:  # noqa: BLE001
            print(f"{name}: FAILED before tracing\n{traceback.format_exc()[-2000:]}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
