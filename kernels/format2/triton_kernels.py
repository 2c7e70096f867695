"""Triton kernels written after Triton's own tutorials (python/tutorials in the Triton
repository: 01-vector-add, 02-fused-softmax, 03-matrix-multiplication), plus a tiled
transpose, for tracing with ``warpviz.trace_triton`` on the GPU machine
(``tools/gpu/real_kernels.py``) and for making real Triton PTX without a GPU
(``tools/gpu/make_ptx_samples.py``: ``triton.compile`` for sm_90, no driver needed). The
PTX of the matmul and the softmax beside this file (``triton_*.ptx``, their launch files)
was made so, its ``.file`` line naming this file relative to the folder, so that their
traces carry these Python lines.

Each entry of ``CASES`` gives the kernel, how to make its arguments on the GPU (PyTorch
tensors, a few blocks' worth so that a trace is quick) and the signature Triton would
infer for them (for the offline compile). Nothing here is tuned for warpviz: the kernels
are the tutorials' code with the tutorials' block sizes.
"""

from __future__ import annotations

import triton
import triton.language as tl


@triton.jit
def add_kernel(x_ptr, y_ptr, output_ptr, n_elements, BLOCK_SIZE: tl.constexpr):
    pid = tl.program_id(axis=0)
    block_start = pid * BLOCK_SIZE
    offsets = block_start + tl.arange(0, BLOCK_SIZE)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    output = x + y
    tl.store(output_ptr + offsets, output, mask=mask)


@triton.jit
def softmax_kernel(output_ptr, input_ptr, input_row_stride, output_row_stride, n_rows, n_cols,
                   BLOCK_SIZE: tl.constexpr, num_stages: tl.constexpr):
    row_start = tl.program_id(0)
    row_step = tl.num_programs(0)
    for row_idx in tl.range(row_start, n_rows, row_step, num_stages=num_stages):
        row_start_ptr = input_ptr + row_idx * input_row_stride
        col_offsets = tl.arange(0, BLOCK_SIZE)
        input_ptrs = row_start_ptr + col_offsets
        mask = col_offsets < n_cols
        row = tl.load(input_ptrs, mask=mask, other=-float("inf"))
        row_minus_max = row - tl.max(row, axis=0)
        numerator = tl.exp(row_minus_max)
        denominator = tl.sum(numerator, axis=0)
        softmax_output = numerator / denominator
        output_row_start_ptr = output_ptr + row_idx * output_row_stride
        output_ptrs = output_row_start_ptr + col_offsets
        tl.store(output_ptrs, softmax_output, mask=mask)


@triton.jit
def matmul_kernel(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
                  BLOCK_SIZE_M: tl.constexpr, BLOCK_SIZE_N: tl.constexpr, BLOCK_SIZE_K: tl.constexpr,
                  GROUP_SIZE_M: tl.constexpr):
    pid = tl.program_id(axis=0)
    num_pid_m = tl.cdiv(M, BLOCK_SIZE_M)
    num_pid_n = tl.cdiv(N, BLOCK_SIZE_N)
    num_pid_in_group = GROUP_SIZE_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_SIZE_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_SIZE_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)) % M
    offs_bn = (pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)) % N
    offs_k = tl.arange(0, BLOCK_SIZE_K)
    a_ptrs = a_ptr + (offs_am[:, None] * stride_am + offs_k[None, :] * stride_ak)
    b_ptrs = b_ptr + (offs_k[:, None] * stride_bk + offs_bn[None, :] * stride_bn)
    accumulator = tl.zeros((BLOCK_SIZE_M, BLOCK_SIZE_N), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BLOCK_SIZE_K)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BLOCK_SIZE_K, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BLOCK_SIZE_K, other=0.0)
        accumulator = tl.dot(a, b, accumulator)
        a_ptrs += BLOCK_SIZE_K * stride_ak
        b_ptrs += BLOCK_SIZE_K * stride_bk
    c = accumulator.to(tl.float16)
    offs_cm = pid_m * BLOCK_SIZE_M + tl.arange(0, BLOCK_SIZE_M)
    offs_cn = pid_n * BLOCK_SIZE_N + tl.arange(0, BLOCK_SIZE_N)
    c_ptrs = c_ptr + stride_cm * offs_cm[:, None] + stride_cn * offs_cn[None, :]
    c_mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, c, mask=c_mask)


@triton.jit
def transpose_kernel(out_ptr, in_ptr, M, N, stride_in, stride_out, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid_m = tl.program_id(0)
    pid_n = tl.program_id(1)
    rm = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
    rn = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
    mask = (rm[:, None] < M) & (rn[None, :] < N)
    tile = tl.load(in_ptr + rm[:, None] * stride_in + rn[None, :], mask=mask)
    tl.store(out_ptr + rn[:, None] * stride_out + rm[None, :], tl.trans(tile), mask=tl.trans(mask))


# ---------------------------------------------------------------------------- the cases

def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def case_add(torch):
    n = 4096
    x = torch.rand(n, device="cuda")
    y = torch.rand(n, device="cuda")
    out = torch.empty_like(x)
    return add_kernel, (_cdiv(n, 1024),), (x, y, out, n), {"BLOCK_SIZE": 1024}


def case_softmax(torch):
    rows, cols = 8, 1000
    x = torch.randn(rows, cols, device="cuda")
    y = torch.empty_like(x)
    return (softmax_kernel, (rows,), (y, x, x.stride(0), y.stride(0), rows, cols),
            {"BLOCK_SIZE": triton.next_power_of_2(cols), "num_stages": 2, "num_warps": 4})


def case_matmul(torch):
    m = n = k = 128
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.empty(m, n, device="cuda", dtype=torch.float16)
    meta = {"BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64, "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8, "num_warps": 4,
            "num_stages": 3}
    grid = (_cdiv(m, 64) * _cdiv(n, 64),)
    return (matmul_kernel, grid, (a, b, c, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0),
                                  c.stride(1)), meta)


def case_transpose(torch):
    m, n = 128, 96
    x = torch.randn(m, n, device="cuda")
    y = torch.empty(n, m, device="cuda")
    return (transpose_kernel, (_cdiv(m, 32), _cdiv(n, 32)), (y, x, m, n, x.stride(0), y.stride(0)),
            {"BLOCK_M": 32, "BLOCK_N": 32, "num_warps": 4})


CASES = {"triton_add": case_add, "triton_softmax": case_softmax, "triton_matmul": case_matmul,
         "triton_transpose": case_transpose}

# What Triton infers for the arguments of each case (pointer dtypes, ints; "D": divisible by
# 16, as Triton specializes tensors' addresses and sizes), for compiling without a GPU.
OFFLINE = {
    "triton_add": (add_kernel, {"x_ptr": "*fp32", "y_ptr": "*fp32", "output_ptr": "*fp32", "n_elements": "i32",
                                "BLOCK_SIZE": "constexpr"}, {"BLOCK_SIZE": 1024}, {}, (0, 1, 2, 3)),
    "triton_softmax": (softmax_kernel, {"output_ptr": "*fp32", "input_ptr": "*fp32", "input_row_stride": "i32",
                                        "output_row_stride": "i32", "n_rows": "i32", "n_cols": "i32",
                                        "BLOCK_SIZE": "constexpr", "num_stages": "constexpr"},
                       {"BLOCK_SIZE": 1024, "num_stages": 2}, {"num_warps": 4}, (0, 1)),
    "triton_matmul": (matmul_kernel, {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp16", "M": "i32", "N": "i32",
                                      "K": "i32", "stride_am": "i32", "stride_ak": "constexpr", "stride_bk": "i32",
                                      "stride_bn": "constexpr", "stride_cm": "i32", "stride_cn": "constexpr",
                                      "BLOCK_SIZE_M": "constexpr", "BLOCK_SIZE_N": "constexpr",
                                      "BLOCK_SIZE_K": "constexpr", "GROUP_SIZE_M": "constexpr"},
                      {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1, "BLOCK_SIZE_M": 64, "BLOCK_SIZE_N": 64,
                       "BLOCK_SIZE_K": 32, "GROUP_SIZE_M": 8}, {"num_warps": 4, "num_stages": 3},
                      (0, 1, 2, 3, 4, 5, 6, 8, 10)),
    "triton_transpose": (transpose_kernel, {"out_ptr": "*fp32", "in_ptr": "*fp32", "M": "i32", "N": "i32",
                                            "stride_in": "i32", "stride_out": "i32", "BLOCK_M": "constexpr",
                                            "BLOCK_N": "constexpr"},
                         {"BLOCK_M": 32, "BLOCK_N": 32}, {"num_warps": 4}, (0, 1, 2, 3, 4, 5)),
}


def compile_offline(name: str, arch: int = 90):
    """Triton's compiled kernel for ``name`` (``OFFLINE``) for sm_``arch``, without a GPU."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    fn, signature, constexprs, options, divisible = OFFLINE[name]
    attrs = {(k,): [["tt.divisibility", 16]] for k in divisible}
    src = ASTSource(fn, signature, constexprs=constexprs, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", arch, 32), options=options)
