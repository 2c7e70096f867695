"""Write real PTX samples, each with a launch file, into tests/data/ptx/ (or --out):

* Triton (``kernels/format2/triton_kernels.py``: the tutorials' add, softmax and ``tl.dot``
  matmul, and a tiled transpose) compiled by ``triton.compile`` for sm_90. No GPU or driver
  is needed; Triton must be installed (``pip install triton``).
* Numba: ``numba.cuda.compile_ptx`` of an element-wise kernel and a shared-memory
  reduction, for sm_90 (no GPU needed).

Each sample is ``NAME.ptx`` and ``NAME.launch.toml`` (format 2, ``ptx = "NAME.ptx"``, a
launch of a few blocks, every parameter an [[arg]]: Triton's two scratch pointers as
``void*`` with ``count = 0``). The tests (tests/test_trace_ptx_input.py) take every pair
they find, so PTX made on the GPU machine (``tools/gpu/real_kernels.py`` writes the same
pairs from what Triton and CuPy really launched) can be dropped in beside these.

    python tools/gpu/make_ptx_samples.py [--out tests/data/ptx] [--only triton|numba]
    python tools/gpu/make_ptx_samples.py --ship        # kernels/format2: the shipped PTX launch files

With ``--ship`` the Triton matmul and softmax and the Numba block sum are written into
kernels/format2 (launch files to record for assets/traces), the Triton PTX's ``.file`` line
naming ``triton_kernels.py`` relative to that folder, so that the trace carries its lines.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "kernels" / "format2"))        # triton_kernels.py

# Triton: (case, block, grid, [[arg]] tables in the PTX's parameter order).
TRITON = {
    "triton_add": ([128], [4], [("float*", 4096), ("float*", 4096), ("float*", 4096), ("int", 4096)]),
    "triton_softmax": ([128], [8], [("float*", 8000), ("float*", 8000), ("int", 1000), ("int", 1000), ("int", 8),
                                    ("int", 1000)]),
    "triton_matmul": ([128], [4], [("half*", 16384), ("half*", 16384), ("half*", 16384), ("int", 128), ("int", 128),
                                   ("int", 128), ("int", 128), ("int", 128), ("int", 128)]),
    "triton_transpose": ([128], [4, 3], [("float*", 12288), ("float*", 12288), ("int", 128), ("int", 96),
                                         ("int", 96), ("int", 128)]),
}


def launch_text(name: str, title: str, made: str, kernel: str, block, grid, args, shared: int = 0) -> str:
    lines = [f"# {made}", "format = 2", f'title = "{title}"', f'ptx = "{name}.ptx"', f'kernel = "{kernel}"',
             f"block = {list(block)}", f"grid = {list(grid)}"]
    if shared:
        lines.append(f"shared_bytes = {shared}")
    for t, v in args:
        lines += ["", "[[arg]]", f'type = "{t}"']
        if t.endswith("*"):
            lines.append(f"count = {v}")
            if v and t != "void*":
                lines.append('fill = "random"')
        else:
            lines.append(f"value = {v}")
    return "\n".join(lines) + "\n"


SHIP = ("triton_matmul", "triton_softmax", "numba_block_sum")


def triton_samples(out: Path, names=None, relative: bool = False) -> None:
    import triton

    import triton_kernels
    from triton_kernels import compile_offline

    source = str(Path(triton_kernels.__file__).resolve())
    for name, (block, grid, args) in TRITON.items():
        if names is not None and name not in names:
            continue
        k = compile_offline(name)
        md = k.metadata
        ptx = k.asm["ptx"]
        extra = [("void*", 0), ("void*", 0)]        # global_scratch, profile_scratch: NULL when their size is 0
        if md.global_scratch_size or md.profile_scratch_size:
            print(f"{name}: needs scratch memory ({md.global_scratch_size}, {md.profile_scratch_size} bytes): skipped")
            continue
        if relative:                    # the Python file by its name: found beside the launch file
            ptx = ptx.replace(f'"{source}"', '"triton_kernels.py"')
        (out / f"{name}.ptx").write_text(ptx)
        made = (f"Made by tools/gpu/make_ptx_samples.py: Triton {triton.__version__} compiled {md.name} for sm_90 "
                f"(num_warps {md.num_warps}, num_stages {md.num_stages}, {md.shared} bytes of shared memory)")
        (out / f"{name}.launch.toml").write_text(
            launch_text(name, f"Triton {name[7:]} ({md.name})", made, md.name, [32 * md.num_warps], grid,
                        args + extra, md.shared))
        print(f"wrote {name}.ptx ({len(ptx):,} characters) and its launch file")


def numba_samples(out: Path, names=None) -> None:
    import numba
    from numba import cuda, float32, int32

    def axpy(out, x, y, a, n):
        i = cuda.grid(1)
        if i < n:
            out[i] = a * x[i] + y[i]

    def block_sum(out, x, n):
        s = cuda.shared.array(256, float32)
        t = cuda.threadIdx.x
        i = cuda.grid(1)
        s[t] = x[i] if i < n else 0.0
        cuda.syncthreads()
        stride = 128
        while stride > 0:
            if t < stride:
                s[t] += s[t + stride]
            cuda.syncthreads()
            stride //= 2
        if t == 0:
            out[cuda.blockIdx.x] = s[0]

    arr = float32[::1]
    cases = [("numba_axpy", axpy, (arr, arr, arr, float32, int32), [256], [4],
              [("array", 1024, "float*"), ("array", 1024, "float*"), ("array", 1024, "float*"), ("float", 2.0),
               ("int", 1024)]),
             ("numba_block_sum", block_sum, (arr, arr, int32), [256], [4],
              [("array", 4, "float*"), ("array", 1024, "float*"), ("int", 1024)])]
    for name, fn, sig, block, grid, args in cases:
        if names is not None and name not in names:
            continue
        ptx, _ = cuda.compile_ptx(fn, sig, cc=(9, 0), lineinfo=True)
        from viz.trace.module import entry_names

        entry = entry_names(ptx)[0]
        flat = []
        for a in args:
            if a[0] == "array":             # Numba passes an array as 7 parameters (1-D)
                _, n, t = a
                flat += numba_array_args(t, n)
            else:
                flat.append(a)
        (out / f"{name}.ptx").write_text(ptx)
        made = f"Made by tools/gpu/make_ptx_samples.py: numba {numba.__version__} cuda.compile_ptx for sm_90"
        (out / f"{name}.launch.toml").write_text(
            launch_text(name, f"Numba {fn.__name__}", made, fn.__name__, block, grid, flat))
        print(f"wrote {name}.ptx ({len(ptx):,} characters, entry {entry[:40]}...) and its launch file")


def numba_array_args(t: str, n: int) -> list[tuple[str, int]]:
    """The 7 parameters Numba passes for a 1-D array of ``n`` elements of buffer type ``t``:
    meminfo and parent (NULL), nitems, itemsize, data, shape[0], strides[0]."""
    from viz.trace.launch import BUFFER_TYPES

    size = BUFFER_TYPES[t]
    return [("void*", 0), ("void*", 0), ("long long", n), ("long long", size), (t, n), ("long long", n),
            ("long long", size)]


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(ROOT / "tests" / "data" / "ptx"))
    ap.add_argument("--only", choices=("triton", "numba"))
    ap.add_argument("--ship", action="store_true", help="write the shipped samples into kernels/format2")
    a = ap.parse_args(argv)
    out = ROOT / "kernels" / "format2" if a.ship else Path(a.out)
    names = SHIP if a.ship else None
    out.mkdir(parents=True, exist_ok=True)
    if a.only in (None, "triton"):
        triton_samples(out, names, relative=a.ship)
    if a.only in (None, "numba"):
        numba_samples(out, names)
    return 0


if __name__ == "__main__":
    sys.exit(main())
