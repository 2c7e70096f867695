"""Parsing the format 3 access kinds ``cp.async``, ``atomic`` and ``tma.load``.

Called by ``viz.scenario._Builder.build_access``; every problem is a ScenarioError that
names the access and the key (``at``, ``from``, ``cache``, ``result``, ``box``) and says
the fix. The kinds reuse the plain access's parsing (indices, loops, ``when``, bounds)
through the builder, so their expressions mean exactly what a load's do.
"""

from __future__ import annotations

import re
from dataclasses import replace

from ..expr import BUILTIN_NAMES, Num, names, parse
from ..i18n import tr
from ..layout import TMA_SWIZZLES
from ..scenario_parts import Access, ScenarioError, line_of
from .registry import kind_of

COMMON_KEYS = {"op", "at", "for", "when", "note"}
KEYS = {
    "cp.async": COMMON_KEYS | {"from", "cache"},
    "atomic": COMMON_KEYS | {"result"},
    "tma.load": {"op", "at", "from", "box", "for", "note"},
    "tma.store": {"op", "at", "from", "box", "for", "note"},
}
CP_ASYNC_SIZES = (4, 8, 16)
ATOMIC_TYPES = ("int",)
GLOBAL_ATOMIC_TYPES = {"int": 4, "float": 4, "double": 8}
TMA_MAX_BOX = 256        # elements per box dimension (cuTensorMapEncodeTiled)


def build_kind_access(b, k: int, raw: dict) -> Access:
    """The Access of a ``cp.async``, ``atomic`` or ``tma.load`` table (``b``: the builder): its
    kind (``viz.kinds.registry``) checks the keys and parses it."""
    op = raw["op"]
    kind = kind_of(op)
    where = f"access {k}"
    b.unknown_keys(raw, kind.keys, where)
    b.need_format(3, f"op = \"{op}\"", where, "op")
    return kind.parse(b, k, raw)


def parse_plain(b, k: int, raw: dict, op: str, at_key: str, as_op: str = "load") -> Access:
    """Parse ``raw[at_key]`` (with the table's loops and ``when``) as a plain access; its
    errors name the kind's op and key."""
    plain = {"op": as_op, "at": raw.get(at_key)}
    for key in ("for", "when"):
        if key in raw:
            plain[key] = raw[key]
    if plain["at"] is None:
        b.fail(f"access {k}", tr("missing {key!r}", key=at_key), _example(op), key=at_key)
    if not isinstance(plain["at"], str):
        b.fail(f"access {k}", tr("{key} must be a string, not {type}", key=at_key, type=type(plain["at"]).__name__),
               _example(op), key=at_key)
    try:
        return b.build_access(k, plain)
    except ScenarioError as err:
        w = re.sub(rf"^access {k} \({as_op} ", f"access {k} ({op} ", err.where)
        problem = err.problem
        if at_key != "at":
            if w.startswith(f"access {k} ({op} "):
                w = f"access {k} ({op}, {at_key} = {w[len(f'access {k} ({op} '):]}"
            problem = re.sub(r'^at = "', f'{at_key} = "', problem)
        raise ScenarioError(err.source, w, problem, err.fix,
                            _line(b, k, at_key) if at_key != "at" else err.line) from None


def _line(b, k: int, key: str):
    return line_of(b.text, f"access {k}", key)


EXAMPLES = {
    "cp.async": 'op = "cp.async", at = "tile[tid]", from = "src[blockIdx.x * 256 + tid]"',
    "atomic": 'op = "atomic", at = "hist[bin]"',
    "tma.load": 'op = "tma.load", at = "tile", from = "A[blockIdx.y * 8][0]"',
    "tma.store": 'op = "tma.store", at = "C[blockIdx.y * 8][0]", from = "tile"',
}


def _example(op: str) -> str:
    return tr("e.g. {example}", example=kind_of(op).example)


def _label(k: int, op: str, at: str) -> str:
    return f"access {k} ({op} {at})"


# ---------------------------------------------------------------------------- cp.async


def parse_cp_async(b, k: int, raw: dict) -> Access:
    dst = parse_plain(b, k, raw, "cp.async", "at", "store")
    where = _label(k, "cp.async", dst.text)
    sarr = b.arrays[dst.array]
    if sarr.space != "shared":
        b.fail(where, tr("cp.async writes shared memory, but {name} is a global array", name=sarr.name),
               tr("name a shared array in at, and the global source in from"), key="at")
    if "from" not in raw:
        b.fail(where, tr("cp.async needs the global source: the key from is missing"),
               tr("add from = \"src[...]\" (a global element of the same size)"), key="op")
    src = parse_plain(b, k, raw, "cp.async", "from", "load")
    garr = b.arrays[src.array]
    if garr.space != "global":
        b.fail(where, tr("cp.async copies from global memory, but from names the shared array {name}",
                         name=garr.name), tr("name a global array in from"), key="from")
    if len(dst.parts) != 1 or dst.size not in CP_ASYNC_SIZES:
        n = sum(s for _, s in dst.parts)
        b.fail(where, tr("cp.async copies 4, 8 or 16 bytes per lane; {what} is {n} bytes",
                         what=dst.text, n=n),
               tr("use a shared element (or field) of 4, 8 or 16 bytes: float, float2, float4, int4"), key="at")
    if len(src.parts) != 1 or src.size != dst.size:
        n = sum(s for _, s in src.parts)
        b.fail(where, tr("from = \"{text}\" is {n} bytes but the destination is {size}", text=src.text, n=n,
                         size=dst.size),
               tr("copy elements of the same size (for example float4 to float4)"), key="from")
    cache = raw.get("cache", "cg" if dst.size == 16 else "ca")
    if cache not in ("ca", "cg"):
        b.fail(where, tr("cache must be \"ca\" or \"cg\", not {v!r}", v=cache),
               tr("ca caches in L1 and L2, cg in L2 only (16-byte copies)"), key="cache")
    if cache == "cg" and dst.size != 16:
        b.fail(where, tr("cp.async.cg copies 16 bytes only; this copy is {n} bytes", n=dst.size),
               tr("write cache = \"ca\" for 4- and 8-byte copies"), key="cache")
    return replace(dst, op="cp.async", source=src, options=(("cache", cache),))


# ---------------------------------------------------------------------------- atomic


def parse_atomic(b, k: int, raw: dict) -> Access:
    acc = parse_plain(b, k, raw, "atomic", "at", "store")
    where = _label(k, "atomic", acc.text)
    arr = b.arrays[acc.array]
    tname = arr.type.name if acc.field is None else next(f.type.name for f in arr.type.fields if f.name == acc.field)
    result = raw.get("result", "unused")
    if result not in ("used", "unused"):
        b.fail(where, tr("result must be \"used\" or \"unused\", not {v!r}", v=result),
               tr("unused: atomicAdd(&h[i], 1) as a histogram writes it; used: atom.shared.add whose old value is "
                  "read"), key="result")
    if arr.space == "shared":
        if tname == "float":
            b.fail(where, tr("atomicAdd on a shared float is a compare-and-swap loop on the H100 (LDS then "
                             "ATOMS.CAST.SPIN until no other lane interfered), which warpviz does not model"),
                   tr("count with an int histogram, as the built-ins shared-histogram-few-bins and -many-bins do"),
                   key="at")
        if len(acc.parts) != 1 or acc.size != 4 or tname not in ATOMIC_TYPES:
            b.fail(where, tr("atomic adds to a 4-byte int; {what} is {type}", what=acc.text, type=tname),
                   tr("make the array's type int"), key="at")
    elif len(acc.parts) != 1 or tname not in GLOBAL_ATOMIC_TYPES or acc.size != GLOBAL_ATOMIC_TYPES[tname]:
        b.fail(where, tr("a global atomic adds to an int, a float or a double; {what} is {type}", what=acc.text,
                         type=tname), tr("make the global array's type int, float or double"), key="at")
    return replace(acc, op="atomic", options=(("result", result), ("type", tname),
                                              ("aggregate", aggregation(arr.space, tname, result, acc))))


# Names whose value differs between the lanes of a warp: an address that uses none of them is
# the same for every lane, and ptxas can prove it (threadIdx is the only per-lane input of a
# generated kernel; params, blockIdx and loop counters are uniform).
THREAD_NAMES = frozenset({"threadIdx.x", "threadIdx.y", "threadIdx.z", "tid", "lane", "warp"})


def uniform_address(acc) -> bool:
    """Is the access's address the same for every lane of a warp, as ptxas sees it? (``warp``
    is the same for a warp's lanes, but ptxas cannot prove it: it counts as per-lane.)"""
    used = set().union(*(names(n) for n in acc.indices)) if acc.indices else set()
    return not (used & THREAD_NAMES)


def aggregation(space: str, tname: str, result: str, acc) -> str:
    """How ptxas (CUDA 13, sm_90) compiles the generated kernel's atomicAdd, seen in its SASS
    (docs/memory-model.md, "Atomics"): on a warp-uniform address it aggregates the warp's
    lanes into one lane's atomic: "highest" (the highest active lane adds the count of lanes:
    a global integer atomicAdd whose result is unused), "lane31-full-warp" (an add whose old
    value is read: a warp scan, then lane 31 adds the total when all 32 lanes are active,
    every lane its own otherwise). "none": every lane does its own (a per-lane address, a
    float or double add, and a shared add whose result is unused, ATOMS.POPC.INC, which the
    hardware combines itself)."""
    if not uniform_address(acc) or tname != "int":
        return "none"
    if result == "used":
        return "lane31-full-warp"
    return "none" if space == "shared" else "highest"


# ---------------------------------------------------------------------------- tma.load


def parse_tma(b, k: int, raw: dict) -> Access:
    return _tma_box(b, k, raw, "tma.load")


def parse_tma_store(b, k: int, raw: dict) -> Access:
    return _tma_box(b, k, raw, "tma.store")


def _tma_box(b, k: int, raw: dict, op: str) -> Access:
    """A tma.load (``at`` the shared tile, ``from`` the box's first element in the global
    tensor) or a tma.store (``at`` the box's first element in the tensor, ``from`` the shared
    tile): the same checks on both sides. The Access is the tile's, its ``source`` the
    tensor's element (for either direction), its options the box, swizzle and bytes
    (its op says the direction)."""
    store = op == "tma.store"
    tile_key, tensor_key = ("from", "at") if store else ("at", "from")
    at = raw.get(tile_key)
    if not isinstance(at, str) or not re.fullmatch(r"\s*[A-Za-z_]\w*\s*", at):
        if store:
            b.fail(f"access {k}", tr("tma.store's from names the whole shared source array, not {at!r}", at=at),
                   _example(op), key="from")
        b.fail(f"access {k}", tr("tma.load's at names the whole shared destination array, not {at!r}", at=at),
               _example("tma.load"), key="at")
    name = at.strip()
    where = _label(k, op, name)
    arr = b.arrays.get(name)
    if arr is None:
        b.fail(where, tr("unknown array {array!r}", array=name), tr("arrays: {names}", names=", ".join(b.arrays)),
               key=tile_key)
    if arr.space != "shared" or len(arr.shape) != 2:
        if store:
            b.fail(where, tr("tma.store reads a 2-D shared array; {name} is not one", name=name),
                   tr("declare the tile as space = \"shared\", shape = [ROWS, COLS]"), key="from")
        b.fail(where, tr("tma.load writes a 2-D shared array; {name} is not one", name=name),
               tr("declare the tile as space = \"shared\", shape = [ROWS, COLS]"), key="at")
    if arr.pad:
        b.fail(where, tr("the TMA writes its box densely, so the destination cannot have pad"),
               tr("remove pad (use swizzle = \"tma:128B\" to avoid bank conflicts)"), key=tile_key)
    swz = arr.swizzle.text if not arr.swizzle.is_identity else "none"
    if swz != "none" and swz not in TMA_SWIZZLES:
        b.fail(where, tr("the TMA writes in one of its own swizzles (none, tma:32B, tma:64B, tma:128B), not {swz}",
                         swz=swz), tr("give the tile swizzle = \"tma:128B\" (or tma:64B, tma:32B, none)"),
               key=tile_key)
    src = parse_plain(b, k, {k2: v for k2, v in raw.items() if k2 != "when"}, op, tensor_key, "load")
    garr = b.arrays[src.array]
    if garr.space != "global" or len(garr.shape) != 2 or garr.pad or not garr.swizzle.is_identity:
        if store:
            b.fail(where, tr("at must name an element of a plain 2-D global array (the tensor), not {text}",
                             text=src.text), tr("declare the tensor as space = \"global\", shape = [ROWS, COLS]"),
                   key="at")
        b.fail(where, tr("from must name an element of a plain 2-D global array (the tensor), not {text}",
                         text=src.text), tr("declare the tensor as space = \"global\", shape = [ROWS, COLS]"),
               key="from")
    if garr.type.size != arr.type.size:
        b.fail(where, tr("the tensor's elements are {a} bytes but the tile's are {b}", a=garr.type.size,
                         b=arr.type.size), tr("give both arrays the same type"), key=tensor_key)
    if (garr.shape[1] * garr.type.size) % 16 or garr.base % 16:
        b.fail(where, tr("the TMA needs the tensor {g} to start at a multiple of 16 bytes and its rows to be a "
                         "multiple of 16 bytes; they are at byte {base} and {row} bytes long", g=garr.name,
                         base=garr.base, row=garr.shape[1] * garr.type.size),
               tr("make the tensor's row a multiple of 16 bytes and its offset a multiple of 16"), key=tensor_key)
    thread_names = {"threadIdx.x", "threadIdx.y", "threadIdx.z", "tid", "lane", "warp"}
    used = set().union(*(names(n) for n in src.indices))
    if used & thread_names:
        if store:
            b.fail(where, tr("at = \"{text}\" is the box's first element, one per block: it cannot depend on {n}",
                             text=src.text, n=sorted(used & thread_names)[0]),
                   tr("use blockIdx, params and loop variables only"), key="at")
        b.fail(where, tr("from = \"{text}\" is the box's first element, one per block: it cannot depend on {n}",
                         text=src.text, n=sorted(used & thread_names)[0]),
               tr("use blockIdx, params and loop variables only"), key="from")
    esize = arr.type.size
    rows, cols = arr.shape
    box = raw.get("box", [rows, cols])
    if (not isinstance(box, list) or len(box) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in box)):
        b.fail(where, tr("box must be [ROWS, COLS] (two integers), not {v!r}", v=box),
               tr("write box = [{r}, {c}] or leave it out (the tile's shape)", r=rows, c=cols), key="box")
    brows, bcols = box
    if not (1 <= brows <= TMA_MAX_BOX and 1 <= bcols <= TMA_MAX_BOX):
        b.fail(where, tr("box = [{r}, {c}]: each side must be 1 to {max} elements", r=brows, c=bcols,
                         max=TMA_MAX_BOX), tr("split the copy into several boxes"), key="box")
    factor = max(1, esize // 4)             # an 8- or 16-byte element is 2 or 4 UINT32 for the TMA
    if bcols * factor > TMA_MAX_BOX:
        b.fail(where, tr("box = [{r}, {c}]: the TMA copies at most {n} elements of {size} bytes per row",
                         r=brows, c=bcols, n=TMA_MAX_BOX // factor, size=esize),
               tr("split the copy into several boxes"), key="box")
    if swz in TMA_SWIZZLES:
        span = TMA_SWIZZLES[swz][1]
        if bcols * esize > span:
            b.fail(where, tr("box = [{r}, {c}]: with swizzle {swz} the box's inner side may be at most {span} bytes "
                             "({n} elements), but it is {bytes} bytes", r=brows, c=bcols, swz=swz, span=span,
                             n=span // esize, bytes=bcols * esize),
                   tr("make the box's inner side {n} elements (box = [{r}, {n}]), or use a wider swizzle",
                      n=span // esize, r=brows), key="box")
    if (bcols * esize) % 16:
        b.fail(where, tr("box = [{r}, {c}]: the TMA copies rows of a multiple of 16 bytes; this row is {bytes} bytes",
                         r=brows, c=bcols, bytes=bcols * esize),
               tr("make the inner side a multiple of {n} elements", n=16 // esize if esize < 16 else 1), key="box")
    if bcols != cols or brows > rows:
        b.fail(where, tr("box = [{r}, {c}] does not fit the tile {name}[{rows}][{cols}]: the TMA writes rows of the "
                         "box's width one after another", r=brows, c=bcols, name=name, rows=rows, cols=cols),
               tr("make the tile's shape [{r}, {c}] (or give box = [{rows}, {cols}])", r=brows, c=bcols, rows=rows,
                  cols=cols), key="box")
    gr, gc = garr.shape
    if brows > gr or bcols > gc:
        b.fail(where, tr("box = [{r}, {c}] does not fit the tensor {g}[{gr}][{gc}]", r=brows, c=bcols, g=garr.name,
                         gr=gr, gc=gc), tr("make the box smaller than the tensor"), key="box")
    align = 8 * TMA_SWIZZLES[swz][1] if swz in TMA_SWIZZLES else 128
    if arr.base % align:
        b.fail(where, tr("the tile {name} starts at shared byte {base}; the TMA's {swz} pattern repeats every {align} "
                         "bytes, so the tile must start at a multiple of {align}", name=name, base=arr.base, swz=swz,
                         align=align),
               tr("declare the tile first among the shared arrays (or make the arrays before it add up to a multiple "
                  "of {align} bytes)", align=align), key=tile_key)
    zero = Num(0)
    when = parse("tid == 0")
    acc = Access(k, op, name, name, (zero, zero), None, src.loops, when, "tid == 0",
                 ((0, esize),), src.line, source=src,
                 options=(("box", (brows, bcols)), ("swizzle", swz), ("bytes", brows * bcols * esize)))
    return acc


__all__ = ["build_kind_access", "KEYS", "EXAMPLES", "CP_ASYNC_SIZES", "BUILTIN_NAMES", "aggregation", "uniform_address",
           "THREAD_NAMES", "GLOBAL_ATOMIC_TYPES"]
