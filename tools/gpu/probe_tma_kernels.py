"""Triton kernels for the TMA / wgmma probe (tools/gpu/probe_tma.sh runs this on the H200).

Written for warpviz (not copied from Triton's tutorials; the matmul and the
attention forward have the shapes of Triton's matmul and fused-attention tutorials).

  python3 tools/gpu/probe_tma_kernels.py dump OUTDIR [NAME...]
      compile and run each case once on the GPU; write OUTDIR/NAME/{kernel.ptx, kernel.cubin,
      kernel.ttgir, launch.json} (grid, block, shared bytes, parameters, Triton metadata) and
      check the result against PyTorch (launch.json "check")
  python3 tools/gpu/probe_tma_kernels.py run [NAME...]
      compile (cached) and launch each case once, in order, without checking (for Nsight
      Compute: ncu --kernel-name regex:KERNELS; launch i is case i)
  python3 tools/gpu/probe_tma_kernels.py ptx OUTDIR [NAME...]      (no GPU: Triton >= 3.5)
      compile for sm_90a without a GPU and write the PTX only (how tests/data/ptx/tma_* were made)

Cases (fp32 unless said):
  copy2d_dev      1024x1024, 64x64 boxes, device-side descriptors (tl.make_tensor_descriptor),
                  TMA load, store through pointers
  copy2d_dev_st   the same with a TMA store
  copy2d_host     the same with host-side descriptors (TensorDescriptor, __grid_constant__ maps)
  load3d          8x256x256, 4x32x64 boxes, device descriptors, TMA load and TMA store
  oob2d           1000x1000 array, 64x64 boxes (partial boxes at the edges), TMA load and store
  oob2d_host      the same with host-side descriptors
  matmul          fp16 tl.dot 512^3, 128x128x64 tiles, 4 warps, 3 stages (pointer loads)
  matmul_tma      the same through tensor descriptors (TMA loads feeding wgmma)
  attention       fused-attention forward, fp16, Z=1 H=4 N_CTX=1024 D=64, 64x64 blocks, 4 warps,
                  num_stages=2 (online softmax, two tl.dot per K/V block, pointer loads)
  attention_tma   the same with K/V through tensor descriptors
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import triton
import triton.language as tl


@triton.jit
def copy2d_kernel(src, dst, M, N, BM: tl.constexpr, BN: tl.constexpr, TMA_STORE: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    sd = tl.make_tensor_descriptor(src, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    tile = sd.load([pm * BM, pn * BN])
    if TMA_STORE:
        dd = tl.make_tensor_descriptor(dst, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
        dd.store([pm * BM, pn * BN], tile)
    else:
        rows = pm * BM + tl.arange(0, BM)[:, None]
        cols = pn * BN + tl.arange(0, BN)[None, :]
        tl.store(dst + rows * N + cols, tile, mask=(rows < M) & (cols < N))


@triton.jit
def copy2d_host_kernel(sd, dd, BM: tl.constexpr, BN: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    tile = sd.load([pm * BM, pn * BN])
    dd.store([pm * BM, pn * BN], tile)


@triton.jit
def load3d_kernel(src, dst, A, B, C, BA: tl.constexpr, BB: tl.constexpr, BC: tl.constexpr):
    pa = tl.program_id(0)
    pb = tl.program_id(1)
    pc = tl.program_id(2)
    sd = tl.make_tensor_descriptor(src, shape=[A, B, C], strides=[B * C, C, 1], block_shape=[BA, BB, BC])
    dd = tl.make_tensor_descriptor(dst, shape=[A, B, C], strides=[B * C, C, 1], block_shape=[BA, BB, BC])
    t = sd.load([pa * BA, pb * BB, pc * BC])
    dd.store([pa * BA, pb * BB, pc * BC], t)


@triton.jit
def matmul_kernel(a, b, c, M, N, K, sam, sak, sbk, sbn, scm, scn,
                  BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    ap = a + rm[:, None] * sam + rk[None, :] * sak
    bp = b + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = tl.load(ap, mask=rk[None, :] < K - k * BK, other=0.0)
        y = tl.load(bp, mask=rk[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(x, y, acc)
        ap += BK * sak
        bp += BK * sbk
    cp = c + rm[:, None] * scm + rn[None, :] * scn
    tl.store(cp, acc.to(tl.float16), mask=(rm[:, None] < M) & (rn[None, :] < N))


@triton.jit
def matmul_tma_kernel(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    pm = tl.program_id(0)
    pn = tl.program_id(1)
    ad = tl.make_tensor_descriptor(a, shape=[M, K], strides=[K, 1], block_shape=[BM, BK])
    bd = tl.make_tensor_descriptor(b, shape=[K, N], strides=[N, 1], block_shape=[BK, BN])
    cd = tl.make_tensor_descriptor(c, shape=[M, N], strides=[N, 1], block_shape=[BM, BN])
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        x = ad.load([pm * BM, k * BK])
        y = bd.load([k * BK, pn * BN])
        acc = tl.dot(x, y, acc)
    cd.store([pm * BM, pn * BN], acc.to(tl.float16))


@triton.jit
def attention_kernel(Q, K, V, O, sm_scale, N_CTX,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD: tl.constexpr):
    # one program: BLOCK_M query rows of one (batch, head); q, k, v, o: [Z*H, N_CTX, HEAD]
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    base = bh.to(tl.int64) * N_CTX * HEAD
    offs_m = start_m * BLOCK_M + tl.arange(0, BLOCK_M)
    offs_n = tl.arange(0, BLOCK_N)
    offs_d = tl.arange(0, HEAD)
    q = tl.load(Q + base + offs_m[:, None] * HEAD + offs_d[None, :])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        kt = tl.load(K + base + (start_n + offs_n)[None, :] * HEAD + offs_d[:, None])
        qk = tl.dot(q, kt)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = tl.load(V + base + (start_n + offs_n)[:, None] * HEAD + offs_d[None, :])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    tl.store(O + base + offs_m[:, None] * HEAD + offs_d[None, :], acc.to(tl.float16))


@triton.jit
def attention_tma_kernel(Q, K, V, O, sm_scale, ROWS, N_CTX,
                         BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, HEAD: tl.constexpr):
    start_m = tl.program_id(0)
    bh = tl.program_id(1)
    qd = tl.make_tensor_descriptor(Q, shape=[ROWS, HEAD], strides=[HEAD, 1], block_shape=[BLOCK_M, HEAD])
    kd = tl.make_tensor_descriptor(K, shape=[ROWS, HEAD], strides=[HEAD, 1], block_shape=[BLOCK_N, HEAD])
    vd = tl.make_tensor_descriptor(V, shape=[ROWS, HEAD], strides=[HEAD, 1], block_shape=[BLOCK_N, HEAD])
    od = tl.make_tensor_descriptor(O, shape=[ROWS, HEAD], strides=[HEAD, 1], block_shape=[BLOCK_M, HEAD])
    row0 = bh * N_CTX
    q = qd.load([row0 + start_m * BLOCK_M, 0])
    m_i = tl.zeros([BLOCK_M], dtype=tl.float32) - float("inf")
    l_i = tl.zeros([BLOCK_M], dtype=tl.float32) + 1.0
    acc = tl.zeros([BLOCK_M, HEAD], dtype=tl.float32)
    qk_scale = sm_scale * 1.44269504
    for start_n in range(0, N_CTX, BLOCK_N):
        k = kd.load([row0 + start_n, 0])
        qk = tl.dot(q, k.T)
        m_ij = tl.maximum(m_i, tl.max(qk, 1) * qk_scale)
        qk = qk * qk_scale - m_ij[:, None]
        p = tl.math.exp2(qk)
        l_ij = tl.sum(p, 1)
        alpha = tl.math.exp2(m_i - m_ij)
        l_i = l_i * alpha + l_ij
        acc = acc * alpha[:, None]
        v = vd.load([row0 + start_n, 0])
        acc = tl.dot(p.to(tl.float16), v, acc)
        m_i = m_ij
    acc = acc / l_i[:, None]
    od.store([row0 + start_m * BLOCK_M, 0], acc.to(tl.float16))


# name: (kernel, signature, constexprs, num_warps, num_stages) for compiling without a GPU
ATTN = dict(Z=1, H=4, N_CTX=1024, HEAD=64, BLOCK_M=64, BLOCK_N=64)
SIGS = {
    "copy2d_dev": (copy2d_kernel, {"src": "*fp32", "dst": "*fp32", "M": "i32", "N": "i32"},
                   {"BM": 64, "BN": 64, "TMA_STORE": False}, 4, 3),
    "copy2d_dev_st": (copy2d_kernel, {"src": "*fp32", "dst": "*fp32", "M": "i32", "N": "i32"},
                      {"BM": 64, "BN": 64, "TMA_STORE": True}, 4, 3),
    "load3d": (load3d_kernel, {"src": "*fp32", "dst": "*fp32", "A": "i32", "B": "i32", "C": "i32"},
               {"BA": 4, "BB": 32, "BC": 64}, 4, 3),
    "matmul_tma": (matmul_tma_kernel, {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32"},
                   {"BM": 128, "BN": 128, "BK": 64}, 4, 3),
    "attention": (attention_kernel, {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "sm_scale": "fp32",
                                     "N_CTX": "i32"}, {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD": 64}, 4, 2),
    "attention_tma": (attention_tma_kernel, {"Q": "*fp16", "K": "*fp16", "V": "*fp16", "O": "*fp16", "sm_scale": "fp32",
                                             "ROWS": "i32", "N_CTX": "i32"},
                      {"BLOCK_M": 64, "BLOCK_N": 64, "HEAD": 64}, 4, 2),
    "matmul": (matmul_kernel, {"a": "*fp16", "b": "*fp16", "c": "*fp16", "M": "i32", "N": "i32", "K": "i32",
                               "sam": "i32", "sak": "i32", "sbk": "i32", "sbn": "i32", "scm": "i32", "scn": "i32"},
               {"BM": 128, "BN": 128, "BK": 64}, 4, 3),
}
CASES = ["copy2d_dev", "copy2d_dev_st", "copy2d_host", "load3d", "oob2d", "oob2d_host", "matmul", "matmul_tma",
         "attention", "attention_tma"]


def compile_ptx(outdir: str, names: list[str]) -> None:
    """PTX for sm_90a without a GPU (Triton's own compiler; no launch)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    out = Path(outdir)
    out.mkdir(parents=True, exist_ok=True)
    for name in names or list(SIGS):
        fn, sig, consts, warps, stages = SIGS[name]
        sig = dict(sig, **{k: "constexpr" for k in consts})
        src = ASTSource(fn, sig, consts)
        k = triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps, "num_stages": stages})
        (out / f"{name}.ptx").write_text(k.asm["ptx"])
        md = k.metadata
        info = {"name": md.name, "num_warps": md.num_warps, "shared": md.shared,
                "global_scratch_size": getattr(md, "global_scratch_size", None),
                "triton": triton.__version__}
        (out / f"{name}.json").write_text(json.dumps(info, indent=1))
        print(name, md.name, "shared", md.shared, "ptx lines", k.asm["ptx"].count("\n"))


# ---- on the GPU ----------------------------------------------------------------------------

def _setup():
    import torch

    def alloc(size, alignment, stream):
        return torch.empty(size, device="cuda", dtype=torch.int8)

    triton.set_allocator(alloc)
    return torch


def _case(name: str):
    """(kernel, grid, args, kwargs, check(), description)."""
    torch = _setup()
    g = torch.Generator(device="cuda").manual_seed(30)
    if name in ("copy2d_dev", "copy2d_dev_st", "copy2d_host", "oob2d", "oob2d_host"):
        n = 1000 if name.startswith("oob") else 1024
        x = torch.rand((n, n), device="cuda", generator=g, dtype=torch.float32)
        y = torch.zeros_like(x)
        grid = (triton.cdiv(n, 64), triton.cdiv(n, 64))
        if name.endswith("_host"):
            from triton.tools.tensor_descriptor import TensorDescriptor
            sd = TensorDescriptor.from_tensor(x, [64, 64])
            dd = TensorDescriptor.from_tensor(y, [64, 64])
            return copy2d_host_kernel, grid, (sd, dd), dict(BM=64, BN=64, num_warps=4), lambda: torch.equal(x, y), \
                f"{n}x{n} fp32, host TensorDescriptor maps, TMA load + TMA store, 64x64 boxes"
        store = name != "copy2d_dev"
        return copy2d_kernel, grid, (x, y, n, n), dict(BM=64, BN=64, TMA_STORE=store, num_warps=4), \
            lambda: torch.equal(x, y), f"{n}x{n} fp32, device descriptors, TMA load + {'TMA' if store else 'pointer'} store"
    if name == "load3d":
        A, B, C = 8, 256, 256
        x = torch.rand((A, B, C), device="cuda", generator=g, dtype=torch.float32)
        y = torch.zeros_like(x)
        grid = (A // 4, B // 32, C // 64)
        return load3d_kernel, grid, (x, y, A, B, C), dict(BA=4, BB=32, BC=64, num_warps=4), \
            lambda: torch.equal(x, y), "8x256x256 fp32, 4x32x64 boxes, device descriptors, TMA load + store"
    if name in ("matmul", "matmul_tma"):
        M = N = K = 512
        a = torch.randn((M, K), device="cuda", generator=g, dtype=torch.float16)
        b = torch.randn((K, N), device="cuda", generator=g, dtype=torch.float16)
        c = torch.empty((M, N), device="cuda", dtype=torch.float16)
        grid = (M // 128, N // 128)
        check = lambda: bool(torch.allclose(c.float(), (a.float() @ b.float()), atol=0.5, rtol=1e-2))
        if name == "matmul":
            return matmul_kernel, grid, (a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
                                         c.stride(0), c.stride(1)), \
                dict(BM=128, BN=128, BK=64, num_warps=4, num_stages=3), check, "fp16 512^3, 128x128x64, pointer loads"
        return matmul_tma_kernel, grid, (a, b, c, M, N, K), dict(BM=128, BN=128, BK=64, num_warps=4, num_stages=3), \
            check, "fp16 512^3, 128x128x64, tensor descriptors"
    if name in ("attention", "attention_tma"):
        Z, H, S, D = ATTN["Z"], ATTN["H"], ATTN["N_CTX"], ATTN["HEAD"]
        q, k, v = (torch.randn((Z * H, S, D), device="cuda", generator=g, dtype=torch.float16) for _ in range(3))
        o = torch.empty_like(q)
        scale = 0.125
        grid = (S // 64, Z * H)

        def check():
            ref = torch.softmax((q.float() @ k.float().transpose(1, 2)) * scale, dim=-1) @ v.float()
            return bool(torch.allclose(o.float(), ref, atol=2e-2, rtol=0))
        kw = dict(BLOCK_M=64, BLOCK_N=64, HEAD=D, num_warps=4, num_stages=2)
        if name == "attention":
            return attention_kernel, grid, (q, k, v, o, scale, S), kw, check, \
                f"Z={Z} H={H} N_CTX={S} D={D}, 64x64 blocks, pointer loads"
        return attention_tma_kernel, grid, (q, k, v, o, scale, Z * H * S, S), kw, check, \
            f"Z={Z} H={H} N_CTX={S} D={D}, 64x64 blocks, tensor descriptors"
    raise SystemExit(f"unknown case {name!r}: {', '.join(CASES)}")


def _param_info(args):
    out = []
    for a in args:
        t = type(a).__name__
        if hasattr(a, "data_ptr"):
            out.append({"type": "tensor", "dtype": str(a.dtype), "shape": list(a.shape), "ptr": a.data_ptr()})
        elif t == "TensorDescriptor":
            out.append({"type": "TensorDescriptor", "ptr": a.base.data_ptr(), "shape": list(a.shape),
                        "strides": list(a.strides), "block_shape": list(a.block_shape), "dtype": str(a.base.dtype)})
        else:
            out.append({"type": t, "value": a})
    return out


def run(name: str, repeat: int = 1):
    torch = _setup()
    fn, grid, args, kw, check, desc = _case(name)
    k = None
    for _ in range(repeat):
        k = fn[grid](*args, **kw)
    torch.cuda.synchronize()
    return k, grid, args, kw, check, desc


def dump(outdir: str, names: list[str]) -> None:
    out = Path(outdir)
    for name in names or CASES:
        d = out / name
        d.mkdir(parents=True, exist_ok=True)
        try:
            k, grid, args, kw, check, desc = run(name)
            md = k.metadata
            ok = check()
            for key, ext in (("ptx", "ptx"), ("ttgir", "ttgir"), ("cubin", "cubin")):
                if key in k.asm:
                    data = k.asm[key]
                    (d / f"kernel.{ext}").write_bytes(data if isinstance(data, bytes) else data.encode())
            info = {"case": name, "description": desc, "kernel": md.name, "grid": list(grid) + [1] * (3 - len(grid)),
                    "block": [32 * md.num_warps, 1, 1], "num_warps": md.num_warps,
                    "num_stages": getattr(md, "num_stages", None), "shared_bytes": md.shared,
                    "global_scratch_size": getattr(md, "global_scratch_size", None),
                    "global_scratch_align": getattr(md, "global_scratch_align", None),
                    "constexprs": {a: b for a, b in kw.items() if not a.startswith("num_")},
                    "params": _param_info(args), "check": ok, "triton": triton.__version__}
            (d / "launch.json").write_text(json.dumps(info, indent=1, default=str))
            print(f"{name}: kernel {md.name} grid {grid} warps {md.num_warps} shared {md.shared} check {ok}")
        except Exception as err:  # noqa: BLE001 - the probe records every failure and goes on
            (d / "error.txt").write_text(f"{type(err).__name__}: {err}")
            print(f"{name}: FAILED {type(err).__name__}: {err}")


if __name__ == "__main__":
    cmd = sys.argv[1] if len(sys.argv) > 1 else ""
    if cmd == "dump":
        dump(sys.argv[2], sys.argv[3:])
    elif cmd == "run":
        for case in sys.argv[2:] or CASES:     # one launch each, in this order (ncu's launch IDs)
            run(case)
            print(f"probe_tma_kernels: ran {case}", file=sys.stderr)
    elif cmd == "ptx":
        compile_ptx(sys.argv[2], sys.argv[3:])
    else:
        raise SystemExit(__doc__)
