"""CUDA C for the format 3 kinds in generated kernels (``viz.gpu.codegen``).

* ``cp.async`` is one ``cp.async.{ca,cg}.shared.global`` of the element's size per lane,
  then ``cp.async.wait_all`` (so a later access of the tile sees the data; waiting costs
  no memory instruction).
* ``atomic`` is ``atom.shared.add.u32`` (result used, kept alive in the running hash) or
  ``atomicAdd`` (result unused, as a histogram writes it); on a global array
  ``atom.global.add`` (used) or ``atomicAdd`` (unused: a RED), of an int, float or double.
* ``tma.load`` is ``cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes``
  by thread 0 with a real tensor map (``cuTensorMapEncodeTiled``, made by the runner) passed
  as a ``const __grid_constant__`` 128-byte kernel parameter; every thread then waits on the
  block's mbarrier.
* ``tma.store`` is ``cp.async.bulk.tensor.2d.global.shared::cta.bulk_group`` by thread 0
  after every thread's ``fence.proxy.async.shared::cta`` and a barrier (the tile's writes
  become visible to the TMA), then ``cp.async.bulk.commit_group`` and
  ``cp.async.bulk.wait_group.read 0`` (the tile may be written again) and a barrier.
"""


from __future__ import annotations

from dataclasses import dataclass

from ..expr import to_cuda

MAX_COMMENT = 200       # characters of a file-derived text in a comment of generated source


def c_comment(text, limit: int = MAX_COMMENT) -> str:
    """File-derived text (a scenario's title or file name, an access as written) made safe
    inside a ``//`` comment of generated CUDA source, which nvcc compiles: one line (every
    newline, carriage return, vertical tab and form feed a space), letters, digits,
    punctuation and symbols only (any control or format character a ``?``), no backslash
    (a line continuation would pull the next line of code into the comment), no trigraph
    ``??/``, no ``/*`` or ``*/``, cut to ``limit`` characters. A file named
    x<newline>#error pwned<newline>.toml gives ``// ... x #error pwned .toml``: a comment, not a line."""
    import unicodedata

    out = []
    for c in " ".join(str(text).split()):
        if " " <= c <= "~":
            out.append(c)
        elif c.isprintable() and unicodedata.category(c)[0] in "LNPS":
            out.append(c)
        else:
            out.append("?")
    s = "".join(out).replace("\\", "/")
    while "??" in s:
        s = s.replace("??", "?")
    while "/*" in s or "*/" in s:
        s = s.replace("/*", "/ *").replace("*/", "* /")
    if len(s) > limit:
        s = s[:limit] + "..."
    return s

TMA_OPS = ("tma.load", "tma.store")     # the kinds with a tensor map (one per access, in order)

TMAP_STRUCT = ("#ifndef WV_TENSOR_MAP\n#define WV_TENSOR_MAP\n"
               "struct __align__(64) WvTensorMap { unsigned long long wv_opaque[16]; };  // a CUtensorMap\n#endif")


def data_type(esize: int) -> tuple[int, int]:
    """(CUtensorMapDataType, TMA elements per scenario element): UINT8, UINT16 or UINT32,
    the types the H100 probe copied with (an 8- or 16-byte element is 2 or 4 UINT32)."""
    return {1: (0, 1), 2: (1, 1), 4: (2, 1), 8: (2, 2), 16: (2, 4)}[esize]


@dataclass(frozen=True)
class TensorMapSpec:
    """What the runner needs to encode one tensor map (``viz.kinds.tensormap``)."""

    array: str          # the global tensor
    start: int          # its base within one replica (start + offset)
    esize: int
    rows: int
    cols: int
    box_rows: int
    box_cols: int
    swizzle: str        # none | tma:32B | tma:64B | tma:128B

    def to_json(self) -> dict:
        return dict(self.__dict__)


def tensor_maps(sc) -> list[TensorMapSpec]:
    out = []
    for a in sc.accesses:
        if a.op in TMA_OPS:
            g = sc.array(a.source.array)
            brows, bcols = a.option("box")
            out.append(TensorMapSpec(g.name, g.base, g.type.size, g.shape[0], g.shape[1], brows, bcols,
                                     a.option("swizzle")))
    return out


def _indices(access, rename, prefix: str = "wv_") -> list[str]:
    idx_names = [f"{prefix}row", f"{prefix}col"] if len(access.indices) == 2 else [f"{prefix}col"]
    return [f"const long long {nm} = {to_cuda(node, rename)};" for nm, node in zip(idx_names, access.indices)]


def _elem(arr, rename, row: str, col: str) -> str:
    lay = dict(rename)
    lay.update({"row": row, "col": col})
    return to_cuda(arr.layout, lay)


def cp_async_body(a, arr, sc, rename) -> list[str]:
    src = a.source
    garr = sc.array(src.array)
    size = a.size
    cache = a.option("cache")
    body = _indices(a, rename)
    body.append(f"const long long wv_e = {_elem(arr, rename, 'wv_row', 'wv_col')};")
    body.append(f"const unsigned wv_a = wv_sbase + (unsigned)({arr.base}LL + wv_e * {arr.type.size}LL) + "
                f"{a.parts[0][0]}u;")
    body.append("{")
    body.extend("  " + ln for ln in _indices(src, rename, "wv_g"))
    body.append(f"  const long long wv_ge = {_elem(garr, rename, 'wv_grow', 'wv_gcol')};")
    body.append(f"  const unsigned char* wv_ga = g_{garr.name} + ({garr.offset}LL + wv_ge * {garr.type.size}LL) + "
                f"{src.parts[0][0]};")
    body.append(f'  asm volatile("cp.async.{cache}.shared.global [%0], [%1], {size};" :: "r"(wv_a), "l"(wv_ga) '
                ': "memory");')
    body.append("}")
    body.append('asm volatile("cp.async.wait_all;" ::: "memory");')
    if a.when is None:
        # Each LDGSTS in a region of its own (a loop that runs wv_one = 1 times, as `when`
        # makes it): ptxas then puts its three predicated-off LDS before every one (an
        # unrolled run of LDGSTS gets them before the first only), which
        # is what the model counts, however nvcc unrolls the scenario's loops.
        body = ["#pragma unroll 1", "for (int wv_r = 0; wv_r < wv_one; ++wv_r) {", *("  " + ln for ln in body), "}"]
    return body


def atomic_body(a, arr, sc, rename) -> list[str]:
    """Shared: ``result = "unused"``: ``atomicAdd(&h[i], 1)`` in CUDA C++, which nvcc turns
    into ATOMS.POPC.INC (lanes on one address combined); ``"used"``: ``atom.shared.add.u32``
    of lane + 1 whose old value enters the running hash (ATOMS.ADD: the lanes on one bank
    one per wavefront): the two forms the H100 probe measured. Global: ``atomicAdd(p, 1)``
    (a RED; int, float or double) and ``atom.global.add`` of lane + 1 whose old value enters
    the hash (an ATOM). On a warp-uniform address ptxas aggregates the integer forms
    (``viz.kinds.build.aggregation`` says which; the model counts what that SASS does)."""
    body = _indices(a, rename)
    body.append(f"const long long wv_e = {_elem(arr, rename, 'wv_row', 'wv_col')};")
    tname = a.option("type")
    if arr.space == "global":
        body.append(f"unsigned char* const wv_a = g_{arr.name} + ({arr.offset}LL + wv_e * {arr.type.size}LL + "
                    f"{a.parts[0][0]}LL);")
        ctype, one, ptx, reg, keep = {
            "int": ("unsigned", "1u", "u32", "r", "wv_o"),
            "float": ("float", "1.0f", "f32", "f", "__float_as_uint(wv_o)"),
            "double": ("double", "1.0", "f64", "d", "(unsigned)__double_as_longlong(wv_o)"),
        }[tname]
        if a.option("result") == "used":
            value = {"int": "(unsigned)wv_lane + 1u", "float": "(float)wv_lane + 1.0f",
                     "double": "(double)wv_lane + 1.0"}[tname]
            body.append(f'{{ {ctype} wv_o; asm volatile("atom.global.add.{ptx} %0, [%1], %2;" : "={reg}"(wv_o) : '
                        f'"l"(wv_a), "{reg}"({value}) : "memory"); WV_KEEP({keep}); }}')
        else:
            body.append(f"atomicAdd(({ctype}*)wv_a, {one});")
        return body
    off = f"({arr.base}LL + wv_e * {arr.type.size}LL + {a.parts[0][0]}LL)"
    if a.option("result") == "used":
        body.append(f"const unsigned wv_a = wv_sbase + (unsigned){off};")
        body.append('{ unsigned wv_o; asm volatile("atom.shared.add.u32 %0, [%1], %2;" : "=r"(wv_o) : "r"(wv_a), '
                    '"r"((unsigned)wv_lane + 1u) : "memory"); WV_KEEP(wv_o); }')
    else:
        body.append(f"atomicAdd((unsigned*)(wv_smem + {off}), 1u);")
    return body


def tma_lines(a, arr, sc, rename, k: int) -> list[str]:
    """Thread 0 issues the copy; every thread of the block waits for it (mbarrier phase; a
    store: the bulk group). ``k`` counts this op's accesses; the tensor map's index counts
    every TMA access (``tensor_maps``), loads and stores alike. The map is 3-D: the tensor's
    columns and rows, then one plane per replica (``wv_rep_bytes`` apart, as every other
    global access of a replica is). A store writes its replica's plane, so replicas do not
    write one box over and over (measured 2026-11-29 on the H200: 32,768 replicas storing
    one 16 KiB tile took 6.5x the model's time, every SM writing the same lines); a load
    reads plane 0, the first replica's tensor, as it did with a 2-D map (every replica
    reads the same box from L2: the H100's box probes, ``tma_load.TMA_ROW_NS_BYTES``)."""
    k = [x.index for x in sc.accesses if x.op in TMA_OPS].index(a.index)
    if a.op == "tma.store":
        return tma_store_lines(a, arr, sc, rename, k)
    src = a.source
    nbytes = a.option("bytes")
    out = ["// " + c_comment(f"access {a.index}: tma.load {arr.name} <- box {list(a.option('box'))} at {src.text} "
                             f"(swizzle {a.option('swizzle')})", 400)]
    out.append("if (wv_tid == 0) {")
    out.extend("  " + ln for ln in _indices(src, rename))
    out.append('  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");')
    out.append(f'  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(wv_mbar), '
               f'"r"({nbytes}u) : "memory");')
    out.append('  asm volatile("cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes '
               '[%0], [%1, {%2, %3, %4}], [%5];"')
    factor = data_type(arr.type.size)[1]
    out.append(f'    :: "r"(wv_sbase + {arr.base}u), "l"((unsigned long long)&wv_tmap{k}), "r"((int)(wv_col * {factor})), '
               '"r"((int)wv_row), "r"(0), "r"(wv_mbar) : "memory");')
    out.append("}")
    out.append('asm volatile("{\\n.reg .pred P1;\\nWV_WAIT:\\n'
               'mbarrier.try_wait.parity.shared::cta.b64 P1, [%0], %1;\\n'
               '@P1 bra.uni WV_DONE;\\nbra.uni WV_WAIT;\\nWV_DONE:\\n}" :: "r"(wv_mbar), "r"(wv_tma_phase) : "memory");')
    out.append("wv_tma_phase ^= 1u;")
    return out


def tma_store_lines(a, arr, sc, rename, k: int) -> list[str]:
    """Every thread fences its writes of the tile for the async proxy; after a barrier thread 0
    stores the box and waits until the TMA has read the tile; a barrier releases the block."""
    src = a.source
    out = ["// " + c_comment(f"access {a.index}: tma.store box {list(a.option('box'))} at {src.text} <- {arr.name} "
                             f"(swizzle {a.option('swizzle')})", 400)]
    out.append('asm volatile("fence.proxy.async.shared::cta;" ::: "memory");')
    out.append("__syncthreads();")
    out.append("if (wv_tid == 0) {")
    out.extend("  " + ln for ln in _indices(src, rename))
    out.append('  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];"')
    factor = data_type(arr.type.size)[1]
    out.append(f'    :: "l"((unsigned long long)&wv_tmap{k}), "r"((int)(wv_col * {factor})), "r"((int)wv_row), '
               f'"r"((int)wv_rep), "r"(wv_sbase + {arr.base}u) : "memory");')
    out.append('  asm volatile("cp.async.bulk.commit_group;" ::: "memory");')
    out.append('  asm volatile("cp.async.bulk.wait_group.read 0;" ::: "memory");')
    out.append("}")
    out.append("__syncthreads();")
    return out


def kernel_params(sc) -> list[str]:
    """The tensor maps, first (a 64-byte aligned parameter at offset 0, 128, ...)."""
    return [f"const __grid_constant__ WvTensorMap wv_tmap{k}" for k, _ in enumerate(tensor_maps(sc))]


def kernel_prologue(sc, shared_bytes: int) -> list[str]:
    """mbarrier setup when the kernel has a tma.load (its 8 bytes after the arrays)."""
    if not any(a.op == "tma.load" for a in sc.accesses):
        return []
    mbar = -(-shared_bytes // 8) * 8
    return [
        f"const unsigned wv_mbar = wv_sbase + {mbar}u;",
        "unsigned wv_tma_phase = 0;",
        "if (wv_tid == 0) {",
        '  asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(wv_mbar) : "memory");',
        '  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");',
        "}",
        "__syncthreads();",
    ]


def extra_shared_bytes(sc, shared_bytes: int) -> int:
    """Shared bytes the kernel needs beyond the arrays (the TMA loads' mbarrier)."""
    if not any(a.op == "tma.load" for a in sc.accesses):
        return shared_bytes
    return -(-shared_bytes // 8) * 8 + 8


__all__ = ["TensorMapSpec", "tensor_maps", "cp_async_body", "atomic_body", "tma_lines", "tma_store_lines", "kernel_params",
           "kernel_prologue", "extra_shared_bytes", "TMAP_STRUCT", "TMA_OPS", "data_type"]
