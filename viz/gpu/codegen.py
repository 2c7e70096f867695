"""CUDA C for any scenario, printed from its expression trees (never from its text).

One kernel per scenario. Its memory instructions are exactly the model's warp
instructions (``viz.scenario.expand_instructions``), so Nsight Compute's counters of the
kernel can be compared with ``viz.engine`` key by key:

* Every thread computes the scenario's names as ``long long`` locals (``threadIdx.x`` is
  signed 64-bit as in the model), params are inlined as literals (so divisions by them
  become multiplications), loop variables are ``long long`` loop counters.
* Accesses run in program order, each over its loop points. Consecutive accesses with
  the same loops share one loop nest (load ``in[j]``, store ``tile[j]`` in one
  iteration, as a hand-written kernel does); the totals do not depend on the order.
* Every access is one ``asm volatile`` PTX instruction per part of the element, of the
  element's width: 1, 2, 4, 8 (``.v2.b32``) or 16 bytes (``.v4.b32``, LDG.128/LDS.128).
  A whole ``float3`` or struct is one scalar instruction per component or field, as the
  model counts it. Nothing the compiler does can merge, split, hoist or drop them:
  NVVM never touches ``asm volatile``; shared accesses are ``.volatile``; a global
  access through which a thread touches a word twice (``repeated_accesses``) is
  ``.volatile`` too, so ptxas cannot reuse, forward or drop it.
* ``when`` is an ``if``, behind a warp vote and a one-trip loop, so a warp with no
  active lane branches over the instruction instead of issuing it predicated off (the
  model counts nothing for such a warp; the hardware counts a predicated-off shared
  instruction in ``smsp__inst_executed_op_shared_*``).
* Loads are kept alive without extra accesses: each loaded word enters a running hash
  in a register, stored only if ``(hash & wv_sink_mask) == wv_sink_value``, which with
  the runner's 0 and 1 never holds. ptxas drops a load whose value is provably unused,
  ``.volatile`` or not (so the hash must not cancel, as XOR did), and moves a load into
  the only branch that uses it (so the branch must depend on the hash, not on a flag).
* Stores write the thread's *carry*: 16 bytes that each load fills at the part's
  position in the element, so a copy copies and a transpose transposes.
* Shared arrays are carved from one ``extern __shared__`` byte buffer at exactly the
  model's offsets (``Array.base``); global arrays are pointer arguments to their
  256-byte aligned starts, with ``offset`` added in the kernel, as in the model.
* A barrier separates two accesses to one array when either is a store, so values flow
  between threads as in a real kernel; barriers cost no memory instructions.
* Replicas: launched with ``gridDim.x = grid.x * R``, block ``b`` runs the model's block
  ``b % grid.x`` on the ``b / grid.x``-th copy of the global arrays, ``wv_rep_bytes``
  further on (a multiple of 256, so every warp sees the same sectors and lines). That is
  how the runner fills the GPU with any scenario; R = 1 is exactly the model's launch.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from ..expr import Name, Node, names, to_cuda, to_text
from ..kinds import codegen as kinds_cg
from ..kinds.registry import kind_of
from ..scenario import KIND_OPS, Access, Array, Loop, Scenario

KERNEL_NAME = "wv_kernel"
REPLICA_ALIGN = 256

PRELUDE = r"""#ifndef WV_PRELUDE
#define WV_PRELUDE
// warpviz prelude: the expression language's functions on 64-bit C integers.
__device__ __forceinline__ long long wv_min(long long a, long long b) { return a < b ? a : b; }
__device__ __forceinline__ long long wv_max(long long a, long long b) { return a > b ? a : b; }
// rev(x, bits): the low `bits` bits of x reversed, higher bits dropped (bits 0..62).
__device__ __forceinline__ long long wv_rev(long long x, long long bits) {
    return bits <= 0 ? 0LL : (long long)(__brevll((unsigned long long)x) >> (64 - bits));
}
// Every loaded word enters a running hash that only the never-taken sink store reads.
// Not XOR: the hash must not cancel against anything, or ptxas proves a load's value
// unused and drops the load, volatile or not (seen on H100: the last load of a loop vanished).
#define WV_KEEP(x) (wv_acc = wv_acc * 0x01000193u + (x))
// Put `size` bytes (1 or 2) of `x` into carry word `w` at byte `b`, keeping the others.
__device__ __forceinline__ unsigned wv_insert(unsigned w, unsigned x, int b, int size) {
    const unsigned mask = (size == 1 ? 0xffu : 0xffffu) << (8 * b);
    return (w & ~mask) | ((x << (8 * b)) & mask);
}
#endif
"""


@dataclass(frozen=True)
class GeneratedKernel:
    """A scenario's kernel and what the runner needs to launch it."""

    name: str
    source: str
    block: tuple[int, int, int]
    grid: tuple[int, int, int]            # the model's grid (R = 1)
    shared_bytes: int                     # dynamic shared memory
    global_arrays: tuple[str, ...]        # pointer arguments, in order
    global_starts: tuple[int, ...]        # each array's start within one replica
    replica_bytes: int                    # one replica's global footprint, 256-aligned
    barriers: int                         # __syncthreads() between access groups
    tensor_maps: tuple = ()               # tma.load: viz.kinds.codegen.TensorMapSpec, the first parameters

    @property
    def key(self) -> str:
        """A content hash of the source: the compile cache's key."""
        return hashlib.sha256(self.source.encode()).hexdigest()[:20]

    def launch_grid(self, replicas: int = 1) -> tuple[int, int, int]:
        gx, gy, gz = self.grid
        return (gx * replicas, gy, gz)


# ---------------------------------------------------------------------------- names


def _builtin_rename(sc: Scenario) -> dict[str, str]:
    bx, by, bz = sc.launch.block
    gx, gy, gz = sc.launch.grid
    ren = {
        "threadIdx.x": "wv_tx", "threadIdx.y": "wv_ty", "threadIdx.z": "wv_tz",
        "blockIdx.x": "wv_bx", "blockIdx.y": "wv_by", "blockIdx.z": "wv_bz",
        "blockDim.x": f"({bx}LL)", "blockDim.y": f"({by}LL)", "blockDim.z": f"({bz}LL)",
        "gridDim.x": f"({gx}LL)", "gridDim.y": f"({gy}LL)", "gridDim.z": f"({gz}LL)",
        "tid": "wv_tid", "lane": "wv_lane", "warp": "wv_warp",
    }
    for k, v in sc.params.items():
        ren[k] = f"({v}LL)"
    return ren


def _loop_var(var: str) -> str:
    return f"v_{var}"


def _expr(node: Node, rename: dict[str, str]) -> str:
    return to_cuda(node, rename)


# ---------------------------------------------------------------------------- groups


@dataclass
class _Group:
    loops: tuple[Loop, ...]
    accesses: list[Access]
    barrier_before: bool


def _loops_key(loops: tuple[Loop, ...]) -> tuple:
    return tuple((lp.var, lp.start, lp.stop, lp.step) for lp in loops)


def _conflicts(a: Access, earlier: list[Access]) -> bool:
    """Two accesses to one array, one of them a write (a store, cp.async, atomic or
    tma.load): a barrier must order them."""
    return any(b.array == a.array and (a.op != "load" or b.op != "load") for b in earlier)


def plan_groups(sc: Scenario) -> list[_Group]:
    """Program order, split where a barrier is needed, fused where the loops are equal."""
    groups: list[_Group] = []
    since_barrier: list[Access] = []
    for a in sc.accesses:
        barrier = _conflicts(a, since_barrier)
        if barrier:
            since_barrier = []
        if groups and not barrier and _loops_key(groups[-1].loops) == _loops_key(a.loops):
            groups[-1].accesses.append(a)
        else:
            groups.append(_Group(a.loops, [a], barrier))
        since_barrier.append(a)
    return groups


REPEAT_CHECK_LIMIT = 8_000_000   # thread-instructions the exact repeat check evaluates


def may_repeat(a: Access, sc: Scenario) -> bool:
    """Syntactic fallback: a loop variable the index does not use, or a second access with
    the same index, may touch one address twice in one thread."""
    used = set().union(*(names(n) for n in a.indices))
    if any(lp.var not in used for lp in a.loops):
        return True
    return any(b.index != a.index and b.array == a.array and b.indices == a.indices for b in sc.accesses)


def repeated_accesses(sc: Scenario, limit: int = REPEAT_CHECK_LIMIT) -> set[int] | None:
    """Global accesses through which some thread touches a 32-bit word that it touches
    again (in another loop point, part or access). ptxas reuses a repeated load, forwards
    a stored value to a later load and drops a store that is overwritten (measured on
    H100: three loads of one address in a j loop gave one request), so these accesses
    are emitted ``.volatile``, which ptxas must keep. Exact: evaluated over every thread of
    the launch with the model's own evaluator; None when the launch is too large."""
    import numpy as np

    from ..engine import evaluate_instruction
    from ..scenario import expand_instructions

    instrs = [i for i in expand_instructions(sc) if sc.array(sc.accesses[i.access].array).space == "global"]
    nb, tpb = sc.launch.blocks, sc.launch.threads_per_block
    if not instrs or nb * tpb * len(instrs) > limit:
        return None if instrs else set()
    blocks = np.arange(nb, dtype=np.int64)
    threads = np.arange(tpb, dtype=np.int64)
    gid = blocks.reshape(-1, 1) * tpb + threads.reshape(1, -1)
    words = max(a.start + a.footprint for a in sc.arrays if a.space == "global") // 4 + 2
    keys, owners = [], []
    for ins in instrs:
        lv = evaluate_instruction(sc, ins, blocks, threads)
        addr = np.broadcast_to(lv.addr.full((nb, tpb)), (nb, tpb))
        mask = np.broadcast_to(lv.mask, (nb, tpb))
        g, ad = gid[mask], addr[mask]
        for w in range(max(1, ins.size // 4)):
            keys.append(g * words + ad // 4 + w)
            owners.append(np.full(g.shape, ins.access, np.int64))
    k = np.concatenate(keys)
    o = np.concatenate(owners)
    order = np.argsort(k, kind="stable")
    ks, os_ = k[order], o[order]
    dup = np.zeros(ks.shape, bool)
    same = ks[1:] == ks[:-1]
    dup[1:] |= same
    dup[:-1] |= same
    return set(int(x) for x in np.unique(os_[dup]))


# ---------------------------------------------------------------------------- PTX


_PTX_SCALAR = {1: "u8", 2: "u16", 4: "b32"}


def carry_pos(a: Access, part_off: int, size: int) -> int:
    """Byte position of a part in the 16-byte carry: its offset from the access's first
    part (so ``p[i].y`` and ``out[i]`` meet at byte 0), wrapped into 16 bytes."""
    rel = (part_off - a.parts[0][0]) % 16
    if rel + size > 16 or rel % min(size, 4):
        rel = 0
    return rel


def _part_operands(space: str, pos: int, volatile: bool) -> tuple[str, str, str, int]:
    """A load's or store's state space, its ``.volatile`` qualifier, its address constraint and
    the carry word its part starts in."""
    return ("shared" if space == "shared" else "global", ".volatile" if volatile else "",
            '"r"' if space == "shared" else '"l"', pos // 4)


def _load_part(space: str, ptr: str, size: int, pos: int, volatile: bool) -> list[str]:
    st, q, addr, w = _part_operands(space, pos, volatile)
    if size in (1, 2):
        b = pos % 4
        return [
            "{ unsigned short wv_h;",
            f'  asm volatile("ld{q}.{st}.{_PTX_SCALAR[size]} %0, [%1];" : "=h"(wv_h) : {addr}({ptr}) : "memory");',
            f"  wv_v[{w}] = wv_insert(wv_v[{w}], (unsigned)wv_h, {b}, {size}); WV_KEEP((unsigned)wv_h); }}",
        ]
    if size == 4:
        return [f'asm volatile("ld{q}.{st}.b32 %0, [%1];" : "=r"(wv_v[{w}]) : {addr}({ptr}) : "memory");',
                f"WV_KEEP(wv_v[{w}]);"]
    if size == 8:
        return [f'asm volatile("ld{q}.{st}.v2.b32 {{%0, %1}}, [%2];" : "=r"(wv_v[{w}]), "=r"(wv_v[{w + 1}]) '
                f': {addr}({ptr}) : "memory");',
                f"WV_KEEP(wv_v[{w}]); WV_KEEP(wv_v[{w + 1}]);"]
    if size == 16:
        return [f'asm volatile("ld{q}.{st}.v4.b32 {{%0, %1, %2, %3}}, [%4];" : "=r"(wv_v[0]), "=r"(wv_v[1]), '
                f'"=r"(wv_v[2]), "=r"(wv_v[3]) : {addr}({ptr}) : "memory");',
                "WV_KEEP(wv_v[0]); WV_KEEP(wv_v[1]); WV_KEEP(wv_v[2]); WV_KEEP(wv_v[3]);"]
    raise ValueError(f"no memory instruction is {size} bytes wide")


def _store_part(space: str, ptr: str, size: int, pos: int, volatile: bool) -> list[str]:
    st, q, addr, w = _part_operands(space, pos, volatile)
    if size in (1, 2):
        b = pos % 4
        mask = "0xffu" if size == 1 else "0xffffu"
        return [f'asm volatile("st{q}.{st}.{_PTX_SCALAR[size]} [%0], %1;" :: {addr}({ptr}), '
                f'"h"((unsigned short)((wv_v[{w}] >> {8 * b}) & {mask})) : "memory");']
    if size == 4:
        return [f'asm volatile("st{q}.{st}.b32 [%0], %1;" :: {addr}({ptr}), "r"(wv_v[{w}]) : "memory");']
    if size == 8:
        return [f'asm volatile("st{q}.{st}.v2.b32 [%0], {{%1, %2}};" :: {addr}({ptr}), "r"(wv_v[{w}]), '
                f'"r"(wv_v[{w + 1}]) : "memory");']
    if size == 16:
        return [f'asm volatile("st{q}.{st}.v4.b32 [%0], {{%1, %2, %3, %4}};" :: {addr}({ptr}), "r"(wv_v[0]), '
                f'"r"(wv_v[1]), "r"(wv_v[2]), "r"(wv_v[3]) : "memory");']
    raise ValueError(f"no memory instruction is {size} bytes wide")


def _matrix_part(m) -> list[str]:
    """ldmatrix / stmatrix (viz.kinds.ldmatrix): one ``asm volatile`` instruction of the
    warp, every lane giving its row address ``wv_a`` (only the first 8 x num are used, so
    the others may be anything). ldmatrix fills carry words 0..num-1 (kept alive by the
    hash); stmatrix writes them."""
    regs = ", ".join(f"%{k}" for k in range(m.num))
    if m.is_load:
        outs = ", ".join(f'"=r"(wv_v[{k}])' for k in range(m.num))
        keep = " ".join(f"WV_KEEP(wv_v[{k}]);" for k in range(m.num))
        return [f'asm volatile("{m.ptx} {{{regs}}}, [%{m.num}];" : {outs} : "r"(wv_a) : "memory");', keep]
    ins = ", ".join(f'"r"(wv_v[{k}])' for k in range(m.num))
    regs = ", ".join(f"%{k + 1}" for k in range(m.num))
    return [f'asm volatile("{m.ptx} [%0], {{{regs}}};" :: "r"(wv_a), {ins} : "memory");']


# ---------------------------------------------------------------------------- emit


def _access_lines(a: Access, arr: Array, rename: dict[str, str], sc: Scenario, repeats: set[int] | None) -> list[str]:
    kind = kind_of(a.op)
    if kind is not None:     # a registered kind writes its own CUDA (its Kind.codegen)
        if kind.codegen is None:
            raise ValueError(f"access {a.index}: the kind {a.op!r} has no CUDA code generation")
        k = [x.index for x in sc.accesses if x.op == a.op].index(a.index)
        body = kind.codegen(a, arr, sc, rename, k)
        if kind.codegen_whole:          # tma.load: its lines are complete (thread 0 and the wait)
            return body
        # cp.async, atomic: their own instruction, the same `when`
        label = f"{a.op} {a.text}" + (f" <- {a.source.text}" if a.source is not None else "")
        return _when_wrapped(a, [f"// access {a.index}: {_c_comment(label, 400)}"], body, rename)
    label = f"{a.op_text} {arr.name}" + "".join(f"[{to_text(n)}]" for n in a.indices) + \
        (f".{a.field}" if a.field else "")
    out = [f"// access {a.index}: {_c_comment(label, 400)}"]
    body: list[str] = []
    idx_names = ["wv_row", "wv_col"] if len(a.indices) == 2 else ["wv_col"]
    for nm, node in zip(idx_names, a.indices):
        body.append(f"const long long {nm} = {_expr(node, rename)};")
    lay_ren = dict(rename)
    lay_ren.update({"row": "wv_row", "col": "wv_col"})
    body.append(f"const long long wv_e = {_expr(arr.layout, lay_ren)};")
    esize = arr.type.size
    volatile = arr.space == "shared" or (a.index in repeats if repeats is not None else may_repeat(a, sc))
    if arr.space == "shared":
        body.append(f"const unsigned wv_a = wv_sbase + (unsigned)({arr.base}LL + wv_e * {esize}LL);")
    else:
        body.append(f"unsigned char* const wv_a = g_{arr.name} + ({arr.offset}LL + wv_e * {esize}LL);")
    if a.matrix is not None:
        body.extend(_matrix_part(a.matrix))
        a_parts: tuple = ()
    else:
        a_parts = a.parts
    for off, size in a_parts:
        pos = carry_pos(a, off, size)
        ptr = f"wv_a + {off}u" if arr.space == "shared" else f"wv_a + {off}"
        if off == 0:
            ptr = "wv_a"
        emit = _load_part if a.op == "load" else _store_part
        body.extend(emit(arr.space, ptr, size, pos, volatile))
    return _when_wrapped(a, out, body, rename)


def _when_wrapped(a: Access, out: list[str], body: list[str], rename: dict[str, str]) -> list[str]:
    if a.when is None:
        out.append("{")
        out.extend("  " + ln for ln in body)
        out.append("}")
    else:
        out.append(f"{{ const bool wv_on = ({_expr(a.when, rename)}) != 0;")
        # A warp with no active lane must branch over the instruction: the model counts
        # nothing for it, but an instruction issued with every lane predicated off still
        # counts in smsp__inst_executed_op_shared_* (measured on H100). ptxas turns a short
        # `if` into predication, never a loop, so the access sits in a loop that runs
        # wv_one (= 1, a kernel argument) times.
        out.append("  if (__any_sync(wv_wmask, wv_on)) {")
        out.append("#pragma unroll 1")
        out.append("  for (int wv_r = 0; wv_r < wv_one; ++wv_r) { if (wv_on) {")
        out.extend("    " + ln for ln in body)
        out.append("  } } } }")
    return out


def _loop_open(loops: tuple[Loop, ...], rename: dict[str, str], depth: int) -> tuple[list[str], dict[str, str]]:
    lines = []
    ren = dict(rename)
    for k, lp in enumerate(loops):
        s, e, d = (_expr(n, ren) for n in (lp.start, lp.stop, lp.step))
        v = _loop_var(lp.var)
        ind = "  " * (depth + 2 * k)
        lines.append(f"{ind}{{ const long long wv_s{k} = {s}, wv_e{k} = {e}, wv_d{k} = {d};")
        lines.append(f"{ind}  for (long long {v} = wv_s{k}; wv_d{k} > 0 ? {v} < wv_e{k} : {v} > wv_e{k}; "
                     f"{v} += wv_d{k}) {{")
        ren[lp.var] = v
    return lines, ren


def kernel_name(index: int, label: str) -> str:
    return f"wv_{index:03d}_" + re.sub(r"[^A-Za-z0-9_]", "_", label)[:48]


def generate(sc: Scenario, name: str = KERNEL_NAME) -> GeneratedKernel:
    """The scenario's kernel as CUDA C (``extern "C" __global__ void name(...)``)."""
    rename = _builtin_rename(sc)
    bx, by, bz = sc.launch.block
    gx = sc.launch.grid[0]
    tpb = bx * by * bz
    globals_ = [a for a in sc.arrays if a.space == "global"]
    footprint = max((a.start + a.footprint for a in globals_), default=0)
    replica_bytes = max(REPLICA_ALIGN, -(-footprint // REPLICA_ALIGN) * REPLICA_ALIGN)
    shared_bytes = kinds_cg.extra_shared_bytes(sc, sc.shared_bytes)
    tmaps = kinds_cg.tensor_maps(sc)

    args = kinds_cg.kernel_params(sc) + [f"unsigned char* __restrict__ wv_g_{a.name}" for a in globals_]
    args += ["unsigned long long wv_rep_bytes", "unsigned* __restrict__ wv_sink", "unsigned wv_sink_mask",
             "unsigned wv_sink_value", "int wv_one"]
    L: list[str] = [PRELUDE]
    if tmaps:
        L.append(kinds_cg.TMAP_STRUCT)
    # a file's name and title are the file's word: one line of plain text (a name with a newline
    # and "#error" in it stays inside the comment)
    L.append(f"// warpviz kernel for {_c_comment(sc.name or sc.source)}: {_c_comment(sc.title)}")
    L.append(f"// block ({bx}, {by}, {bz}), grid {tuple(sc.launch.grid)}; launch gridDim.x = {gx} * replicas.")
    for a in sc.arrays:
        where = f"shared bytes {a.base}..{a.base + a.nbytes - 1}" if a.space == "shared" else f"start {a.start} + offset {a.offset}"
        L.append(f"//   {_c_comment(a.describe())}: {where}")
    L.append(f'extern "C" __global__ void __launch_bounds__({tpb}) {name}(')
    L.append("    " + ",\n    ".join(args) + ")")
    L.append("{")
    I = "  "  # noqa: E741
    if shared_bytes:
        L.append(I + "extern __shared__ __align__(1024) unsigned char wv_smem[];")
        L.append(I + "const unsigned wv_sbase = (unsigned)__cvta_generic_to_shared(wv_smem);")
    L.append(I + f"const unsigned wv_rep = blockIdx.x / {gx}u;")
    L.append(I + f"const long long wv_bx = (long long)(blockIdx.x - wv_rep * {gx}u);")
    L.append(I + "const long long wv_by = blockIdx.y, wv_bz = blockIdx.z;")
    L.append(I + "const long long wv_tx = threadIdx.x, wv_ty = threadIdx.y, wv_tz = threadIdx.z;")
    L.append(I + f"const long long wv_tid = wv_tx + wv_ty * {bx}LL + wv_tz * {bx * by}LL;")
    L.append(I + "const long long wv_lane = wv_tid % 32, wv_warp = wv_tid / 32;")
    if tpb % 32:
        L.append(I + f"const unsigned wv_wmask = wv_warp < {tpb // 32} ? 0xffffffffu : ((1u << {tpb % 32}) - 1u);")
    else:
        L.append(I + "const unsigned wv_wmask = 0xffffffffu;")
    L.append(I + "(void)wv_wmask; (void)wv_lane; (void)wv_warp; (void)wv_tid;")
    L.append(I + "(void)wv_bx; (void)wv_by; (void)wv_bz; (void)wv_tx; (void)wv_ty; (void)wv_tz;")
    L.extend(I + ln for ln in kinds_cg.kernel_prologue(sc, sc.shared_bytes))
    for a in globals_:
        L.append(I + f"unsigned char* const g_{a.name} = wv_g_{a.name} + (unsigned long long)wv_rep * wv_rep_bytes;")
    # The carry: what the last load brought, what the next store writes.
    L.append(I + "unsigned wv_v[4] = {(unsigned)wv_tid * 2654435761u, 0x01234567u, 0x89abcdefu, 0x76543210u};")
    L.append(I + "unsigned wv_acc = 0;")
    groups = plan_groups(sc)
    repeats = repeated_accesses(sc)
    barriers = 0
    for g in groups:
        if g.barrier_before:
            L.append(I + "__syncthreads();")
            barriers += 1
        opened, ren = _loop_open(g.loops, rename, 1)
        L.extend(opened)
        ind = "  " * (1 + 2 * len(g.loops))
        for a in g.accesses:
            L.extend(ind + ln for ln in _access_lines(a, sc.array(a.array), ren, sc, repeats))
        for k in reversed(range(len(g.loops))):
            L.append("  " * (1 + 2 * k) + "  } }")
    # The condition needs every loaded value, so ptxas must run the loads before it (with
    # `if (flag)` it sank the last loads into the never-taken branch: 0 requests on H100).
    L.append(I + "// Keeps every load alive: the runner passes mask 0 and value 1, so this store never runs.")
    L.append(I + "if ((wv_acc & wv_sink_mask) == wv_sink_value) *wv_sink = wv_acc;")
    L.append("}")
    return GeneratedKernel(name=name, source="\n".join(L) + "\n", block=tuple(sc.launch.block),
                           grid=tuple(sc.launch.grid), shared_bytes=shared_bytes,
                           global_arrays=tuple(a.name for a in globals_),
                           global_starts=tuple(a.start for a in globals_),
                           replica_bytes=replica_bytes, barriers=barriers, tensor_maps=tuple(tmaps))


_c_comment = kinds_cg.c_comment      # text safe inside a // comment (viz.kinds.codegen.c_comment)


def expected_instructions(sc: Scenario) -> dict[str, int]:
    """Memory instructions per thread if every access ran (the PTX static check's scale)."""
    from ..scenario import expand_instructions

    out = {"ld.shared": 0, "st.shared": 0, "ld.global": 0, "st.global": 0}
    for ins in expand_instructions(sc):
        a = sc.accesses[ins.access]
        if a.op in KIND_OPS:
            continue
        arr = sc.array(a.array)
        if a.matrix is not None:
            out[a.matrix.kind] = out.get(a.matrix.kind, 0) + 1
            continue
        out[("ld." if a.op == "load" else "st.") + arr.space] += 1
    return out


__all__ = ["GeneratedKernel", "generate", "plan_groups", "PRELUDE", "KERNEL_NAME", "expected_instructions"]
