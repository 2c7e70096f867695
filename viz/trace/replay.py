"""Replay a trace with one shared array laid out differently (no GPU, no Qt).

A trace holds every lane's shared address of every warp-level execution. Re-mapping the
addresses that fall in one ``__shared__`` array and counting again with the same engine
(``viz.trace.analysis.analyze_trace``) gives exactly what the kernel with the new layout
would count, for the same accesses in the same order.

**The array.** ``resolve_array`` finds it:

* by ``--range START:END`` (byte offsets in the block's shared window, as ``analyze`` and the
  per-warp view show them): any array, dynamic shared memory included;
* by NAME, from the CUDA source the trace carries (``header.sources``): the
  ``__shared__`` declarations of the traced kernel's body (the whole file when the body is
  not found), their type, ``__align__`` and sizes (dimensions are evaluated with the launch
  file's ``defines`` and the file's ``#define``s). Static arrays are placed as ptxas places
  them (checked with nvcc 13.0 for sm_90, ``tests/test_replay.py``): in declaration order,
  each at the next multiple of its alignment, after the 1 KiB the GPU reserves at the start
  of the window (``RESERVED``: every shipped trace's first shared address is 1024); dynamic
  (``extern __shared__``) memory starts after the last static array at a 16-byte boundary.
  An array the compiler removed because it is never used would shift those after it: the
  replay says so when a recorded address falls outside every declared array.

**The layout.** SHAPE rows x cols of ELEM-bytes elements; the element (r, c) of the old
row-major layout goes to its new element offset (``Layout.table``):

  pad:N          r * (cols + N) + c
  xor            r * cols + (c ^ (r % cols))              cols a power of two
  xor:MASK       r * cols + (c ^ (r & MASK))              MASK < cols, cols a power of two
  swizzle:B,M,S  CuTe Swizzle<B,M,S> of the element offset o = r * cols + c: o ^ ((o >> S) & (((1<<B)-1) << M))
  diag           r * cols + (c + r) % cols
  bitrev         r * cols + rev(c)                         cols a power of two
  expr:EXPR      r * cols + EXPR                           EXPR over r, c (the scenario expression
                                                            language), the physical column in the row

Every layout must send the rows x cols elements to distinct places (checked first, naming two
elements that collide). A lane's byte is (r, c, byte within the element); its new address
is start + new element offset x ELEM + byte. Bytes of the array past rows x cols elements
(a shape smaller than the declaration) keep their place after the new elements.

**Accesses wider than an element** (``.v2``/``.v4``, a 16-byte ldmatrix/stmatrix row, a
16-byte ``cp.async``): the access moves with its first element. Where the layout keeps the
elements it covers consecutive (pad, XOR of whole vectors, a swizzle whose M covers the
width) that is exactly what the changed kernel does. Where it does not (a pad that makes the
row pitch no multiple of the vector, an XOR or swizzle whose granule is smaller than the
vector, or a vector left off its alignment), the changed kernel's compiler cannot emit that
vector: a plain shared load or store (``ld``/``st``, including the LDS.128 ptxas fused from
scalar loads) is counted as the narrower accesses it emits instead (``kept_width``: the widest
of 8 or 4 bytes, down to the element, the layout keeps everywhere; a float4 under pad:1 or xor
becomes 4 scalar accesses, as the H200 ran them), and the replay reports them in ``splits`` and
``split_lanes`` (``suggest`` ranks such layouts last). ldmatrix / stmatrix / cp.async rows cannot
be split and are counted at the first element's new place.

**Kinds.** Every kind whose records hold lane addresses is replayed the same way (plain
loads and stores, vectors, ldmatrix / stmatrix rows, cp.async's shared side, shared and
generic atomics, generic accesses' shared lanes). A kind whose records hold operands
(``TraceForm.slots == "operands"``: TMA boxes, wgmma descriptors) is counted by its form's
``replay`` hook, which counts its records with the shared bytes they name re-mapped (the
replayed trace carries the re-mapping: ``Trace.shared_remap``): a wgmma's core-matrix rows
are read from their new places (its gmma wavefronts and conflicts change with the layout), a
TMA box's 16-byte chunks are written to theirs (its global figures do not change; a chunk the
layout moves off a 16-byte boundary or splits is one the TMA cannot write, and its figures
say how many). A kind whose records hold operands and that has no ``replay`` is refused.

**Other arrays.** If the array grows, static arrays declared after it move as ptxas would
place them (declaration order, each aligned), and dynamic memory moves to the new end of the
static ones (16-byte aligned). With ``--range``, what lies at or after END moves by the
growth rounded up to 16 bytes. The launch's dynamic shared bytes grow when the array is in
dynamic memory.

**Cost.** Shared memory per block before / after (static arrays + dynamic bytes) and the
blocks per SM it allows (``blocks_per_sm``: the SM's shared memory with ``RESERVED`` per
block, the 2,048 threads and 32 blocks an SM holds; the H100/H200 figures of
``shared_limits``).
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field, replace
from typing import Callable

import numpy as np

from . import TraceError
from .tracefile import Trace

RESERVED = 1024                    # bytes the GPU reserves at the start of each block's shared window (sm_80+)
LAYOUT_FAMILIES = ("pad:N", "xor", "xor:MASK", "swizzle:B,M,S", "diag", "bitrev", "expr:EXPR")
MAX_ELEMENTS = 1 << 22             # rows x cols of a replayed array (a 16 MiB table; shared memory holds 227 KiB)
MAX_PAD = 1024
MAX_MATCHES = 64                   # places a function's name is looked for, functions followed (hostile sources)
MAX_ARRAY_BYTES = 1 << 24          # a declared array larger than this is not believed (shared memory: 227 KiB)
MAX_DECLARATIONS = 256             # __shared__ declarations read from a trace's sources
TYPE_BYTES = {"char": 1, "signed char": 1, "unsigned char": 1, "int8_t": 1, "uint8_t": 1, "bool": 1,
              "short": 2, "unsigned short": 2, "half": 2, "__half": 2, "__nv_bfloat16": 2, "int16_t": 2,
              "uint16_t": 2, "int": 4, "unsigned": 4, "unsigned int": 4, "float": 4, "int32_t": 4, "uint32_t": 4,
              "half2": 4, "__half2": 4, "double": 8, "long long": 8, "unsigned long long": 8, "int64_t": 8,
              "uint64_t": 8, "float2": 8, "int2": 8, "uint2": 8, "float4": 16, "int4": 16, "uint4": 16,
              "double2": 16}
VECTOR_ALIGN = {"float2": 8, "int2": 8, "uint2": 8, "float4": 16, "int4": 16, "uint4": 16, "double2": 16}
FIX_RANGE = "give the array by its byte range in the shared window: --range START:END"

# kind -> anything: kinds whose records hold operands that replay lets through without a TraceForm.replay hook
# (none ships: TMA and wgmma count their records re-mapped through their forms' replay hooks)
OPERAND_REPLAY: dict[str, Callable] = {}


class ReplayError(TraceError):
    """A replay that cannot be made: one paragraph naming the option or the trace, and the fix."""


def shared_limits(gpu: dict | None = None) -> dict:
    """Shared memory of the trace's GPU: per SM, most per block, reserved per block, threads
    and blocks per SM. The H100 / H200 (sm_90) figures; a GPU description module can answer here."""
    return {"per_sm": 228 * 1024, "per_block": 227 * 1024, "reserved": RESERVED, "threads_per_sm": 2048,
            "blocks_per_sm": 32, "gpu": (gpu or {}).get("name") or "H100/H200 (sm_90)"}


def blocks_per_sm(shared_bytes: int, threads_per_block: int, gpu: dict | None = None) -> dict:
    """Blocks of the launch one SM holds, limited by shared memory, threads and the block count."""
    lim = shared_limits(gpu)
    warps_threads = -(-threads_per_block // 32) * 32
    by_threads = lim["threads_per_sm"] // max(1, warps_threads)
    if shared_bytes > lim["per_block"]:
        by_shared = 0
    else:
        by_shared = lim["per_sm"] // (shared_bytes + lim["reserved"])
    blocks = min(by_threads, by_shared, lim["blocks_per_sm"])
    limit = "shared memory" if blocks == by_shared and by_shared < min(by_threads, lim["blocks_per_sm"]) else \
        "threads" if blocks == by_threads else "blocks per SM"
    return {"blocks": int(blocks), "by_shared": int(by_shared), "by_threads": int(by_threads), "limit": limit,
            "shared_per_sm": lim["per_sm"], "shared_per_block_max": lim["per_block"]}


# ---------------------------------------------------------------------------- the arrays (from the source)

@dataclass
class SharedArray:
    name: str
    type: str
    elem_bytes: int | None
    dims: tuple[int, ...] | None      # None: a size the source does not fix (extern, a template parameter)
    align: int
    dynamic: bool
    start: int = 0                    # byte offset in the shared window
    size: int = 0                     # bytes (dynamic: the launch's shared_bytes)
    declared: str = ""

    @property
    def end(self) -> int:
        return self.start + self.size


_DECL = re.compile(
    r"(?P<extern>\bextern\s+)?__shared__\s+(?:__align__\s*\(\s*(?P<a1>\d+)\s*\)\s+)?"
    r"(?P<type>(?:(?:unsigned|signed|const|volatile|long)\s+)*[A-Za-z_][\w:]*)\s+"
    r"(?:__align__\s*\(\s*(?P<a2>\d+)\s*\)\s+)?(?P<name>[A-Za-z_]\w*)\s*(?P<dims>(?:\[[^\]\n]*\]\s*)*)"
    r"(?:__align__\s*\(\s*(?P<a3>\d+)\s*\)\s*)?;")
_DIRECTIVE = re.compile(r"\s*#\s*(ifdef|ifndef|if|elif|else|endif)\b(.*)")
_DEFINE = re.compile(r"^[ \t]*#[ \t]*define[ \t]+([A-Za-z_]\w*)[ \t]+([^\n]+?)[ \t]*$", re.M)


def _template_names(text: str, kernel: str) -> tuple[dict[str, int], dict[str, str]]:
    """A template kernel's parameters bound to the instantiation the trace names
    (``tiles::transpose_padded<float, 32, 8>``): (value parameters, type parameters)."""
    m = re.search(r"<(.*)>\s*$", kernel or "")
    short = re.sub(r"<.*", "", kernel or "").split("::")[-1].strip()
    if not m or not re.fullmatch(r"[A-Za-z_]\w*", short):
        return {}, {}
    args = [a.strip() for a in m[1].split(",")]
    d = re.search(rf"template\s*<([^<>{{}};]*)>\s*(?:__\w+__\s+|static\s+|inline\s+)*void\s+{re.escape(short)}\s*\(",
                  text)
    if not d:
        return {}, {}
    values, types = {}, {}
    for param, arg in zip(d[1].split(","), args):
        words = param.split("=")[0].split()
        if len(words) < 2:
            continue
        name = words[-1]
        if words[0] in ("typename", "class"):
            types[name] = arg
        else:
            v = _int_of(arg.replace("true", "1").replace("false", "0"), values)
            if v is not None:
                values[name] = v
    return values, types


def _kernel_body(text: str, kernel: str) -> str | None:
    """The body of function ``kernel`` (a C++ name; the last part of a qualified one) in ``text``."""
    short = re.sub(r"<.*", "", kernel or "").split("::")[-1].strip()
    if not short or not re.fullmatch(r"[A-Za-z_]\w*", short):
        return None
    for n, m in enumerate(re.finditer(rf"\b{re.escape(short)}\s*(?:<[^;{{]*>)?\s*\(", text)):
        if n >= MAX_MATCHES:            # a hostile source: bounded work
            return None
        brace = text.find("{", m.end())
        semi = text.find(";", m.end())
        if brace < 0 or (0 <= semi < brace and ")" in text[m.end():semi] and "(" not in text[m.end():semi]):
            continue
        depth = 0
        for b in _BRACES.finditer(text, brace):
            depth += 1 if b.group() == "{" else -1
            if depth == 0:
                return text[brace:b.end()]
        return None                     # never closed: no later match closes either
    return None


_BRACES = re.compile(r"[{}]")
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*(?:<[^;(){}]*>)?\s*\(")


def _declaring_body(text: str, kernel: str, depth: int = 3, seen: set | None = None) -> str | None:
    """The kernel's body, or, when it declares no ``__shared__`` array, the bodies of the
    functions it calls that do (``__device__`` helpers, templates; three calls deep), in call order."""
    body = _kernel_body(text, kernel)
    if body is None or "__shared__" in body or depth == 0:
        return body
    seen = set() if seen is None else seen
    seen.add(kernel)
    parts = []
    for m in _CALL.finditer(body):
        name = m[1]
        if len(seen) > MAX_MATCHES:
            break
        if name in seen or name in ("if", "for", "while", "switch", "return", "sizeof"):
            continue
        seen.add(name)
        sub = _declaring_body(text, name, depth - 1, seen)
        if sub is not None and "__shared__" in sub:
            parts.append(sub)
    return "\n".join(parts) if parts else body


def _defines(trace: Trace, text: str) -> dict[str, int]:
    out: dict[str, int] = {}
    for name, value in _DEFINE.findall(text):
        v = _int_of(value.split("//")[0].strip(), out)
        if v is not None:
            out[name] = v
    try:
        lf = tomllib.loads(trace.header.get("launch_file") or "")
    except (tomllib.TOMLDecodeError, ValueError):
        lf = {}
    for k, v in (lf.get("defines") or {}).items() if isinstance(lf.get("defines"), dict) else ():
        if isinstance(v, int) and not isinstance(v, bool):
            out[str(k)] = v
        elif isinstance(v, str):
            iv = _int_of(v, out)
            if iv is not None:
                out[str(k)] = iv
    return out


def _int_of(text: str, names: dict[str, int]) -> int | None:
    from ..expr import ExprError, parse
    from ..lanes import evaluate_exact

    text = re.sub(r"\b(\d+)[uUlL]+\b", r"\1", text.strip())
    if not text or len(text) > 200:
        return None
    try:
        v = evaluate_exact(parse(text), names)
    except (ExprError, ValueError, KeyError, RecursionError, ZeroDivisionError, OverflowError):
        return None
    return v if isinstance(v, int) and 0 <= v < 1 << 40 else None


def _preprocess(text: str, names: dict[str, int]) -> str:
    """``text`` with the branches of ``#if``/``#ifdef``/``#ifndef``/``#else``/``#endif`` that
    ``names`` turn off blanked (``#elif`` and unknown conditions count as false)."""
    out, stack = [], []          # stack of (this branch on, some branch taken)
    off = 0                      # entries of the stack that are off
    for line in text.split("\n"):
        m = _DIRECTIVE.match(line)
        if m:
            d, rest = m[1], m[2].split("//")[0].strip()
            if d in ("ifdef", "ifndef", "if"):
                if off:              # inside a branch that is off: not evaluated
                    on = False
                elif d == "if":
                    on = bool(_int_of(re.sub(r"defined\s*\(?\s*(\w+)\s*\)?",
                                             lambda k: "1" if k[1] in names else "0", rest[:200]), names))
                else:
                    on = (rest in names) == (d == "ifdef")
                stack.append([on, on])
                off += not on
            elif d in ("elif", "else") and stack:
                was = stack[-1][0]
                now = False if d == "elif" else not stack[-1][1]
                stack[-1][0] = now
                off += (not now) - (not was)
            elif d == "endif" and stack:
                off -= not stack.pop()[0]
            out.append("")
            continue
        out.append("" if off else line)
    return "\n".join(out)


def declared_arrays(trace: Trace) -> list[SharedArray]:
    """The traced kernel's ``__shared__`` arrays, placed as ptxas places them (module doc);
    read once per trace (copies are returned)."""
    sources = trace.header.get("sources")
    key = (trace.header.get("kernel"), trace.header["launch"].get("shared_bytes"), trace.header.get("launch_file"))
    cached = getattr(trace, "_replay_arrays", None)
    if cached is None or cached[0][0] is not sources or cached[0][1:] != key:
        key = (sources, *key)
        cached = (key, _read_arrays(trace))
        try:
            trace._replay_arrays = cached
        except AttributeError:
            pass
    return [replace(a) for a in cached[1]]


def _read_arrays(trace: Trace) -> list[SharedArray]:
    sources = trace.header.get("sources") or {}
    kernel = str(trace.header.get("kernel") or "")
    found: list[SharedArray] = []
    for fname, text in sources.items():
        if not isinstance(text, str) or fname.endswith((".ptx", ".py")):
            continue
        body = _kernel_body(text, kernel)
        names = _defines(trace, text)
        text = _preprocess(text, names)
        body = _declaring_body(text, kernel)
        values, types = _template_names(text, kernel)
        names = {**names, **values}
        for m in _DECL.finditer(body if body is not None else text):
            if len(found) >= MAX_DECLARATIONS:
                break
            t = " ".join(m["type"].replace("const", "").replace("volatile", "").split())
            t = types.get(t, t)
            eb = TYPE_BYTES.get(t)
            align = next((int(a) for a in (m["a1"], m["a2"], m["a3"]) if a), None) or \
                VECTOR_ALIGN.get(t, eb or 16)
            dims_text = re.findall(r"\[([^\]]*)\]", m["dims"] or "")
            dims = tuple(_int_of(d, names) for d in dims_text) if dims_text else ()
            dynamic = bool(m["extern"])
            if dynamic or any(d is None for d in dims) or (dims_text and any(not d.strip() for d in dims_text)):
                dims = None if not dynamic else None
            found.append(SharedArray(m["name"], t, eb, dims, align, dynamic, declared=" ".join(m.group(0).split())))
    # place them: statics in order, aligned, after the reserved bytes; dynamic after the statics
    at = RESERVED
    for a in found:
        if a.dynamic:
            continue
        if a.dims is None or a.elem_bytes is None:
            a.size = 0
            continue
        size = math.prod(a.dims) * a.elem_bytes if a.dims else a.elem_bytes
        if size > MAX_ARRAY_BYTES:      # no GPU has it: a size read wrongly (or a hostile source)
            a.dims, a.size = None, 0
            continue
        at = -(-at // a.align) * a.align
        a.start, a.size = at, size
        at = a.end
    dyn_start = -(-at // 16) * 16
    for a in found:
        if a.dynamic:
            a.start, a.size = dyn_start, int(trace.header["launch"].get("shared_bytes") or 0)
    return found


def static_end(arrays: list[SharedArray]) -> int:
    ends = [a.end for a in arrays if not a.dynamic and a.size]
    return max(ends) if ends else RESERVED


def recorded_extent(trace: Trace) -> tuple[int, int]:
    """The smallest and largest+width shared byte any recorded lane touches (RESERVED, RESERVED if none)."""
    lo, hi = None, None
    for k, ins in enumerate(trace.instructions):
        rows = np.nonzero((trace.instr == k) & (trace.shared != 0) & (trace.flags == 0))[0]
        if not rows.size:
            continue
        a = trace.addresses(rows)
        bits = _bits(trace.shared[rows] & trace.active[rows])
        if not bits.any():
            continue
        v = a[bits]
        w = int(ins.get("width") or 1)
        lo = int(v.min()) if lo is None else min(lo, int(v.min()))
        hi = int(v.max()) + w if hi is None else max(hi, int(v.max()) + w)
    return (lo if lo is not None else RESERVED, hi if hi is not None else RESERVED)


def _bits(m: np.ndarray) -> np.ndarray:
    return ((m.astype(np.uint32)[:, None] >> np.arange(32, dtype=np.uint32)) & 1).astype(bool)


def parse_range(text: str) -> tuple[int, int]:
    m = re.fullmatch(r"\s*(0x[0-9a-fA-F]+|\d+)\s*:\s*(0x[0-9a-fA-F]+|\d+)\s*", str(text))
    if not m:
        raise ReplayError("--range", "", f"--range {str(text)[:40]!r} is not START:END",
                          "give two byte offsets in the shared window, e.g. --range 1024:5120")
    lo, hi = int(m[1], 0), int(m[2], 0)
    if not 0 <= lo < hi <= 1 << 24:
        raise ReplayError("--range", "", f"--range {lo}:{hi}: START must be below END, both in 0..16,777,216",
                          "give two byte offsets in the shared window, e.g. --range 1024:5120")
    return lo, hi


def resolve_array(trace: Trace, name: str | None, byte_range: tuple[int, int] | None = None) -> SharedArray:
    """The array to re-map, by name (the source's declarations) or by byte range."""
    src = str(trace.path or "trace")
    arrays = declared_arrays(trace)
    if byte_range is not None:
        lo, hi = byte_range
        match = next((a for a in arrays if a.size and a.start == lo and (name is None or a.name == name)), None)
        if match is not None:
            return replace(match, size=hi - lo)
        return SharedArray(name or f"shared[{lo}:{hi}]", "", None, None, 16, False, lo, hi - lo,
                           declared=f"bytes {lo}..{hi - 1} of the shared window")
    if not name:
        raise ReplayError(src, "--array", "no array given", "name the __shared__ array with --array NAME, or "
                          + FIX_RANGE)
    same = [a for a in arrays if a.name == name]
    if not same:
        names = sorted({a.name for a in arrays})
        known = (", ".join(names[:20]) + (f" and {len(names) - 20} more" if len(names) > 20 else "")) or "none"
        raise ReplayError(src, "--array", f"the trace's source declares no __shared__ array `{name[:60]}` in kernel "
                          f"`{str(trace.header.get('kernel'))[:80]}` (arrays found: {known})",
                          "use one of those names, or " + FIX_RANGE)
    a = same[0]
    if not a.size:
        why = "is an extern (dynamic) array, and the launch gives no dynamic shared memory" if a.dynamic else \
            "has a size warpviz cannot read from the source (a template parameter, a macro it cannot evaluate)"
        raise ReplayError(src, "--array", f"`{name}` {why}", FIX_RANGE)
    return a


# ---------------------------------------------------------------------------- layouts

@dataclass(frozen=True)
class Layout:
    text: str
    family: str
    rows: int
    cols: int
    table: np.ndarray = field(repr=False, compare=False)    # (rows*cols,) new element offset of element r*cols+c
    elements: int = 0                                        # elements the new layout spans (rows*(cols+pad))
    params: tuple = ()

    @property
    def pad(self) -> int:
        return self.params[0] if self.family == "pad" else 0


def _pow2(n: int) -> bool:
    return n > 0 and n & (n - 1) == 0


def _layout_error(text: str, problem: str, fix: str) -> ReplayError:
    return ReplayError("--layout", "", f"layout {str(text)[:60]!r}: {problem}", fix)


def parse_layout(text: str, rows: int, cols: int) -> Layout:
    """LAYOUT text -> its table over rows x cols elements (module doc); ReplayError naming the problem."""
    spec = str(text).strip()
    fams = ", ".join(LAYOUT_FAMILIES)
    if rows * cols > MAX_ELEMENTS:
        raise ReplayError("--shape", "", f"--shape {rows},{cols}: {rows * cols:,} elements, more than the "
                          f"{MAX_ELEMENTS:,} a replay takes", "give the shared array's real shape")
    r = np.repeat(np.arange(rows, dtype=np.int64), cols)
    c = np.tile(np.arange(cols, dtype=np.int64), rows)
    base = r * cols
    family, params, elements = spec.split(":", 1)[0], (), rows * cols
    needs_pow2 = "cols a power of two (XOR and bit reversal permute the bits of the column)"
    if spec.startswith("pad:"):
        n = _small_int(spec[4:], spec, "pad:N needs a whole number of elements, e.g. pad:1", 0, MAX_PAD)
        table, family, params, elements = r * (cols + n) + c, "pad", (n,), rows * (cols + n)
    elif spec == "xor":
        if not _pow2(cols):
            raise _layout_error(spec, f"needs {needs_pow2}; the shape has {cols} columns", "use pad:N or diag")
        table, params = base + (c ^ (r % cols)), (cols - 1,)
    elif spec.startswith("xor:"):
        if not _pow2(cols):
            raise _layout_error(spec, f"needs {needs_pow2}; the shape has {cols} columns", "use pad:N or diag")
        mask = _small_int(spec[4:], spec, "xor:MASK needs a whole number, e.g. xor:7", 0, cols - 1)
        table, family, params = base + (c ^ (r & mask)), "xor", (mask,)
    elif spec.startswith("swizzle:"):
        try:
            b, m, s = (int(x, 0) for x in spec[8:].split(","))
        except ValueError:
            raise _layout_error(spec, "swizzle:B,M,S needs three whole numbers", "e.g. swizzle:3,2,5 "
                                "(CuTe Swizzle<3,2,5>)") from None
        if not (0 <= b <= 16 and 0 <= m <= 24 and 0 <= s <= 24 and (b == 0 or s >= b)):
            raise _layout_error(spec, "CuTe Swizzle<B,M,S> needs 0<=B<=16, 0<=M,S<=24 and S>=B",
                                "e.g. swizzle:3,2,5")
        o = base + c
        table, family, params = o ^ ((o >> s) & (((1 << b) - 1) << m)), "swizzle", (b, m, s)
    elif spec == "diag":
        table = base + (c + r) % cols
    elif spec == "bitrev":
        if not _pow2(cols):
            raise _layout_error(spec, f"needs {needs_pow2}; the shape has {cols} columns", "use pad:N or diag")
        bits = cols.bit_length() - 1
        rev = np.zeros_like(c)
        for k in range(bits):
            rev |= ((c >> k) & 1) << (bits - 1 - k)
        table = base + rev
    elif spec.startswith("expr:"):
        table = base + _expr_column(spec, r, c, rows, cols)
        family = "expr"
    else:
        raise _layout_error(spec, "unknown layout", f"use one of {fams}")
    _check_bijective(spec, table, rows, cols, elements, family)
    return Layout(spec, family, rows, cols, table.astype(np.int64), elements, params)


def _small_int(text: str, spec: str, fix: str, lo: int, hi: int) -> int:
    from ..argcheck import to_int

    try:
        return to_int(text, f"layout {spec[:40]!r}:", lo, hi)
    except ValueError as err:
        raise ReplayError("--layout", "", str(err), fix) from None


def _expr_column(spec: str, r: np.ndarray, c: np.ndarray, rows: int, cols: int) -> np.ndarray:
    from ..expr import ExprError, names, parse
    from ..lanes import Evaluator, Lanes, Space

    try:
        tree = parse(spec[5:])
    except ExprError as err:
        raise _layout_error(spec, str(err), "write the physical column over r and c, e.g. expr:(c + r) % 32") \
            from None
    unknown = names(tree) - {"r", "c", "rows", "cols"}
    if unknown:
        raise _layout_error(spec, f"unknown name(s) {', '.join(sorted(unknown))[:80]}",
                            "an expr: layout uses r, c, rows and cols")
    n = r.size
    space = Space({"r": Lanes(t=r.reshape(1, n)), "c": Lanes(t=c.reshape(1, n)), "rows": Lanes.const(rows),
                   "cols": Lanes.const(cols)}, (1, n))
    value, faults = Evaluator(space).evaluate(tree)
    if faults:
        raise _layout_error(spec, faults[0].problem, "fix the expression")
    col = np.asarray(value.full((1, n)), np.int64).reshape(-1)
    bad = (col < 0) | (col >= cols)
    if bad.any():
        k = int(np.argmax(bad))
        raise _layout_error(spec, f"sends row {k // cols}, column {k % cols} to column {int(col[k])}, outside "
                            f"0..{cols - 1}", "the physical column must stay inside the row (use % cols)")
    return col


def _check_bijective(spec: str, table: np.ndarray, rows: int, cols: int, elements: int, family: str) -> None:
    bad = (table < 0) | (table >= max(elements, rows * cols))
    if bad.any():
        k = int(np.argmax(bad))
        raise _layout_error(spec, f"sends row {k // cols}, column {k % cols} to element {int(table[k])}, outside "
                            f"the {elements:,} elements of the array", "choose B, M, S inside the array's size")
    order = np.argsort(table, kind="stable")
    s = table[order]
    dup = np.nonzero(s[1:] == s[:-1])[0]
    if dup.size:
        a, b = sorted((int(order[dup[0]]), int(order[dup[0] + 1])))
        raise _layout_error(spec, f"is not a bijection: (row {a // cols}, column {a % cols}) and (row {b // cols}, "
                            f"column {b % cols}) both land on element {int(s[dup[0]])}",
                            "every element must get its own place")


# ---------------------------------------------------------------------------- the replay

@dataclass
class Replay:
    original: Trace
    trace: Trace                  # the replayed trace (a Trace like any other: analyse, draw, export)
    array: SharedArray
    layout: Layout
    elem_bytes: int
    shared_before: int
    shared_after: int
    occupancy_before: dict
    occupancy_after: dict
    moved: list[dict]             # other arrays that moved: name, from, to
    split_lanes: int              # lane accesses of vectors the layout cannot keep (split, and counted split)
    lanes_remapped: int
    notes: list[str]
    splits: list[dict] = field(default_factory=list)   # per split instruction: bytes, into_bytes, parts, executions
    _analysis: object = field(default=None, repr=False)
    _before: object = field(default=None, repr=False)

    @property
    def analysis(self):
        if self._analysis is None:
            from .analysis import analyze_trace

            self._analysis = analyze_trace(self.trace)
        return self._analysis

    @property
    def before(self):
        if self._before is None:
            from .analysis import analyze_trace

            self._before = analyze_trace(self.original)
        return self._before

    def summary(self) -> dict:
        return {"array": self.array.name, "declared": self.array.declared, "start": self.array.start,
                "bytes": self.array.size, "shape": [self.layout.rows, self.layout.cols],
                "elem_bytes": self.elem_bytes, "layout": self.layout.text,
                "shared_bytes_per_block": {"before": self.shared_before, "after": self.shared_after},
                "blocks_per_sm": {"before": self.occupancy_before, "after": self.occupancy_after},
                "moved": self.moved, "split_lanes": self.split_lanes, "splits": self.splits,
                "lanes_remapped": self.lanes_remapped, "notes": self.notes}


def shared_wavefronts(an) -> int:
    """All shared wavefronts of an analysis (loads, stores, atomics, ldmatrix, the shared side of generic)."""
    return int(sum(s.wavefronts for s in an.stats))


def replay(trace: Trace, array: str | None = None, shape: tuple[int, int] | None = None,
           elem_bytes: int | None = None, layout: str = "pad:1",
           byte_range: tuple[int, int] | None = None) -> Replay:
    """``trace`` with ``array`` (a name, or ``byte_range``) laid out by ``layout`` (module doc)."""
    arr = resolve_array(trace, array, byte_range)
    src = str(trace.path or "trace")
    eb = elem_bytes if elem_bytes is not None else arr.elem_bytes
    if eb is None:
        raise ReplayError(src, "--elem-bytes", f"the element size of `{arr.name}` is not known from the source",
                          "give it with --elem-bytes N (4 for float)")
    if shape is None:
        if arr.dims and len(arr.dims) >= 2:
            shape = (math.prod(arr.dims[:-1]), arr.dims[-1])
        else:
            raise ReplayError(src, "--shape", f"`{arr.name}` is not declared as a 2-D array",
                              "give its logical shape with --shape ROWS,COLS")
    rows, cols = shape
    if rows * cols * eb > arr.size:
        raise ReplayError(src, "--shape", f"--shape {rows},{cols} of {eb}-byte elements is {rows * cols * eb:,} "
                          f"bytes, more than the {arr.size:,} bytes of `{arr.name}` ({arr.declared[:80]})",
                          "give the array's real shape and element size")
    lay = parse_layout(layout, rows, cols)
    for k, ins in enumerate(trace.instructions):
        from ..kinds.registry import trace_kind

        f = trace_kind(ins.get("kind"))
        if f is not None and f.slots == "operands" and f.replay is None and np.any(trace.instr == k) \
                and ins["kind"] not in OPERAND_REPLAY:
            raise ReplayError(src, f"instruction {k}", f"records of `{ins['kind']}` hold operands (descriptors, "
                              "coordinates), not the lanes' shared addresses, and replay cannot re-map them yet",
                              "replay a trace without them, or give the kind's form a replay hook "
                              "(viz.kinds.registry.TraceForm.replay)")
    old_bytes = rows * cols * eb
    new_elems_bytes = lay.elements * eb
    growth = new_elems_bytes - old_bytes
    new_size = arr.size + growth
    arrays = declared_arrays(trace) if byte_range is None else []
    moved, shift = _placement(arrays, arr, new_size, growth)
    hi_old = arr.end

    def remap(a: np.ndarray) -> np.ndarray:
        out = a.copy()
        inside = (a >= arr.start) & (a < hi_old)
        rel = a[inside] - arr.start
        e, byte = rel // eb, rel % eb
        in_shape = e < rows * cols
        new_rel = np.where(in_shape, lay.table[np.minimum(e, rows * cols - 1)] * eb + byte, rel + growth)
        out[inside] = arr.start + new_rel
        after = a >= hi_old
        if after.any():
            out[after] = a[after] + shift(a[after])
        return out

    new_trace, remapped, split, splits = _remapped_trace(trace, remap, arr, lay, eb, rows, cols)
    # records that name shared memory by their operands (a TMA box, a wgmma's descriptors) are counted with their
    # shared bytes re-mapped (TraceForm.replay)
    new_trace.shared_remap = remap
    h = new_trace.header
    h["launch"] = dict(h["launch"])
    dyn = int(trace.header["launch"].get("shared_bytes") or 0)
    if arr.dynamic and growth:
        h["launch"]["shared_bytes"] = dyn + growth
    h["title"] = f"{trace.header.get('title', trace.header.get('kernel', ''))} — replayed: {arr.name} {lay.text}"
    h["name"] = f"{trace.header.get('name', '')}+{arr.name}-{lay.text}"
    h.pop("ncu", None)            # measured on the original kernel, not on this one
    h.pop("ncu_other", None)
    h["note"] = ((trace.header.get("note") or "") + f" Replayed by warpviz: `{arr.name}` ({arr.declared}) laid out "
                 f"as {lay.text}; every other access as recorded.").strip()
    if arrays:
        static_before = static_end(arrays) - RESERVED
        moves = _moves_all(arrays, arr, new_size)
        ends = [m["to"] + (new_size if a is arr or (a.name == arr.name and a.start == arr.start) else a.size)
                for a, m in zip(arrays, moves) if not a.dynamic and a.size]
        static_after = (max(ends) - RESERVED) if ends and not arr.dynamic else static_before
        before = static_before + dyn
        after = static_after + dyn + (growth if arr.dynamic else 0)
    else:       # by --range: the static part is what the recorded addresses reach
        before = max(dyn, recorded_extent(trace)[1] - RESERVED)
        after = before + (-(-growth // 16) * 16)
    tpb = trace.threads_per_block
    gpu = trace.header.get("gpu") if isinstance(trace.header.get("gpu"), dict) else None
    notes = []
    lo, hi = recorded_extent(trace)
    if arrays and byte_range is None:
        ends = max([a.end for a in arrays if a.size] or [RESERVED])
        if hi > ends:
            notes.append(f"recorded shared addresses reach byte {hi - 1}, past the {ends - 1} the declarations read "
                         "from the source cover: the compiler may have removed an unused array or placed them "
                         "otherwise; check with --range")
    for sp in splits:
        notes.append(f"the layout cannot keep the {sp['bytes']}-byte vector accesses of instruction "
                     f"{sp['instruction'] + 1} (line {sp['line']}): the changed kernel's compiler splits each into "
                     f"{sp['parts']} accesses of {sp['into_bytes']} bytes, and the replay counts them so: "
                     f"{sp['executions']:,} warp-level accesses became {sp['executions_after']:,}")
    return Replay(trace, new_trace, arr, lay, eb, before, after, blocks_per_sm(before, tpb, gpu),
                  blocks_per_sm(after, tpb, gpu), moved, split, remapped, notes, splits)


def _moves_all(arrays: list[SharedArray], arr: SharedArray, new_size: int) -> list[dict]:
    at, out = RESERVED, []
    for a in arrays:
        if a.dynamic or not a.size:
            out.append({"name": a.name, "from": a.start, "to": a.start})
            continue
        at = -(-at // a.align) * a.align
        size = new_size if (a.name == arr.name and a.start == arr.start) else a.size
        out.append({"name": a.name, "from": a.start, "to": at})
        at += size
    dyn = -(-at // 16) * 16
    for m, a in zip(out, arrays):
        if a.dynamic:
            m["to"] = dyn
    return out


def _placement(arrays: list[SharedArray], arr: SharedArray, new_size: int, growth: int):
    """(arrays that moved, shift(addresses) for addresses past the array's old end)."""
    if not arrays:
        delta = -(-growth // 16) * 16
        return [], (lambda a: np.full(a.shape, delta, np.int64))
    moves = _moves_all(arrays, arr, new_size)
    moved = [m for m, a in zip(moves, arrays) if m["to"] != m["from"] and not (a is arr or a.name == arr.name
                                                                               and a.start == arr.start)]
    spans = sorted(((a.start, a.end, m["to"] - m["from"]) for a, m in zip(arrays, moves) if a.size),
                   key=lambda t: t[0])
    last = spans[-1][2] if spans else 0

    def shift(a: np.ndarray) -> np.ndarray:
        out = np.full(a.shape, last, np.int64)
        for lo, hi, d in spans:
            out[(a >= lo) & (a < hi)] = d
        return out

    return moved, shift


VECTOR_KINDS = ("load", "store")      # plain ld/st.shared: the compiler may split them; ldmatrix & co. it cannot


def kept_width(lay: Layout, eb: int, width: int, start: int) -> int:
    """The widest access (bytes, ``width`` halved until it holds, at least ``eb``) the changed
    kernel's compiler can still emit for a vector of ``width`` bytes under ``lay``, decided by the
    layout alone as nvcc/ptxas decide at compile time: every aligned group of width/eb elements
    must stay consecutive in the new layout and start on a ``width``-byte boundary (a pad that
    makes the row pitch no multiple of the vector, an XOR or swizzle whose granule is smaller
    than the vector: no). Checked on the H200: sgemm_nt's float4 reads of ``Bs`` became 4 scalar
    loads under pad:1 and xor (tests/data/replay)."""
    n = lay.rows * lay.cols
    w = min(int(width), 16)
    while w > eb:
        per = w // eb
        if w % eb == 0 and per <= n:
            e0 = np.arange(0, n - per + 1, per, dtype=np.int64)
            ok = np.all((start + lay.table[e0] * eb) % w == 0)
            for k in range(1, per):
                ok = ok and bool(np.all(lay.table[e0 + k] == lay.table[e0] + k))
            if ok:
                return w
        w //= 2
    return eb


def _split_plan(trace: Trace, arr: SharedArray, lay: Layout, eb: int, rows: int, cols: int) -> dict:
    """{instruction: (width, new width, [instruction of each part])} for the vector accesses to the
    array that the new layout cannot keep."""
    sh_rows = np.nonzero((trace.shared != 0) & (trace.flags == 0))[0]
    if not sh_rows.size:
        return {}
    lo, hi = arr.start, arr.start + rows * cols * eb
    plan = {}
    for k in np.unique(trace.instr[sh_rows]):
        ins = trace.instructions[int(k)]
        w = int(ins.get("width") or 1)
        if ins.get("kind") not in VECTOR_KINDS or ins.get("space") != "shared" or w <= eb or w > 16:
            continue
        rk = sh_rows[trace.instr[sh_rows] == k]
        a = trace.addresses(rk)
        sh = _bits(trace.shared[rk]) & _bits(trace.active[rk])
        if not np.any((a[sh] >= lo) & (a[sh] < hi)):
            continue
        nw = kept_width(lay, eb, w, arr.start)
        if nw >= w:
            continue
        parts = w // nw
        info = ins.get("sass") if isinstance(ins.get("sass"), dict) else {}
        group = [int(g) for g in (info.get("group") or []) if isinstance(g, int)]
        pw = int(ins.get("ptx_width") or w)
        if (info.get("state") == "fused" and pw and nw % pw == 0 and len(group) == w // pw
                and group[0] == int(k) and all(0 <= g < len(trace.instructions) for g in group)):
            ids = [group[j * (nw // pw)] for j in range(parts)]     # the fused PTX accesses come back
        else:
            ids = [int(k)] * parts
        plan[int(k)] = (w, nw, ids)
    return plan


def _split_trace(trace: Trace, plan: dict) -> tuple[Trace, list[dict]]:
    """``trace`` with each record of a planned instruction replaced by its parts (the same lanes,
    each part ``new width`` bytes further on); (trace, what was split)."""
    if not plan:
        return trace, []
    n = trace.records
    reps = np.ones(n, np.int64)
    sel_rows = {}
    for k, (w, nw, ids) in plan.items():
        r = np.nonzero((trace.instr == k) & (trace.flags == 0))[0]
        sel_rows[k] = r
        reps[r] = len(ids)
    idx = np.repeat(np.arange(n), reps)
    starts = np.cumsum(reps) - reps
    part = np.arange(idx.size) - np.repeat(starts, reps)
    instr = trace.instr[idx].copy()
    offset = trace.offset[idx].astype(np.int64)
    table = [dict(i) for i in trace.instructions]
    split = []
    for k, (w, nw, ids) in plan.items():
        mine = trace.instr[idx] == k
        for j, kid in enumerate(ids):
            at = mine & (part == j)
            instr[at] = kid
            offset[at] += j * nw
        note = (f"replayed: the new layout cannot keep this {w}-byte vector access, so the changed kernel's "
                f"compiler splits it into {len(ids)} accesses of {nw} bytes a lane; counted so")
        for kid in dict.fromkeys(ids):
            d = dict(table[kid])
            d["width"] = nw
            d["ptx_width"] = min(int(d.get("ptx_width") or nw), nw)
            d["sass"] = {"state": "same", "certain": True, "sass": [], "width": nw, "ptx_width": d["ptx_width"],
                         "group": [], "first": None, "parts": 1, "leader": "", "atomic_rule": "", "sass_op": "",
                         "ptx_lines": [d.get("line_no")] if d.get("line_no") is not None else [],
                         "source_lines": [d.get("line")] if d.get("line") is not None else [], "note": note}
            table[kid] = d
        ex = int(sel_rows[k].size)
        lanes = int(_bits(trace.active[sel_rows[k]]).sum()) if ex else 0
        split.append({"instruction": k, "line": trace.instructions[k].get("line"), "bytes": w, "into_bytes": nw,
                      "parts": len(ids), "executions": ex, "executions_after": ex * len(ids), "lanes": lanes})
    off_dtype = trace.offset.dtype
    if offset.size and (offset.min() < np.iinfo(np.int32).min or offset.max() > np.iinfo(np.int32).max):
        off_dtype = np.int64
    header = dict(trace.header)
    header["instructions"] = table
    t = Trace(header, instr, trace.block[idx], trace.warp[idx], trace.active[idx], trace.pred[idx],
              trace.shared[idx], trace.global_[idx], trace.base[idx], offset.astype(off_dtype), trace.flags[idx],
              trace.path, trace.payload)
    return t, split


def _remapped_trace(trace: Trace, remap, arr: SharedArray, lay: Layout, eb: int, rows: int, cols: int):
    """A copy of ``trace`` whose vector accesses the layout cannot keep are split (``_split_plan``)
    and whose active shared lanes are re-mapped; (trace, lanes re-mapped, lane accesses split, splits)."""
    trace, splits = _split_trace(trace, _split_plan(trace, arr, lay, eb, rows, cols))
    sh_rows = np.nonzero((trace.shared != 0) & (trace.flags == 0))[0]
    base = trace.base.astype(np.int64).copy()
    offset = trace.offset.astype(np.int64).copy()
    remapped = 0
    if sh_rows.size:
        addr = trace.addresses(sh_rows)
        act = _bits(trace.active[sh_rows])
        sh = _bits(trace.shared[sh_rows]) & act
        new = addr.copy()
        new[sh] = remap(addr[sh])
        remapped = int((new[sh] != addr[sh]).sum())
        big = np.iinfo(np.int64).max
        nb = np.where(act, new, big).min(axis=1)
        nb = np.where(nb == big, 0, nb)
        base[sh_rows] = nb
        offset[sh_rows] = np.where(act, new - nb[:, None], 0)
    if offset.size and (offset.min() < np.iinfo(np.int32).min or offset.max() > np.iinfo(np.int32).max):
        off = offset
    else:
        off = offset.astype(trace.offset.dtype if trace.offset.dtype == np.int64 else np.int32)
    header = dict(trace.header)
    t = Trace(header, trace.instr, trace.block, trace.warp, trace.active, trace.pred, trace.shared,
              trace.global_, base.astype(np.uint64), off, trace.flags, None, trace.payload)
    return t, remapped, sum(s["lanes"] for s in splits), splits


# ---------------------------------------------------------------------------- suggest

@dataclass
class Candidate:
    layout: str
    wavefronts: int
    conflicts: int
    extra_bytes: int
    split_lanes: int
    blocks_per_sm: int
    seconds: float | None = None
    replay: Replay | None = field(default=None, repr=False)

    def as_dict(self) -> dict:
        return {"layout": self.layout, "shared_wavefronts": self.wavefronts, "conflicts": self.conflicts,
                "extra_shared_bytes": self.extra_bytes, "split_lanes": self.split_lanes,
                "blocks_per_sm": self.blocks_per_sm, "predicted_seconds": self.seconds}


def array_conflicts(trace: Trace, an=None) -> list[dict]:
    """Per declared array with recorded accesses: its shared wavefronts and conflicts (each
    instruction given to the array holding most of its shared lanes), and its source lines."""
    from .analysis import analyze_trace

    an = an if an is not None else analyze_trace(trace)
    arrays = [a for a in declared_arrays(trace) if a.size]
    out = {id(a): {"array": a, "wavefronts": 0, "conflicts": 0, "lines": {}} for a in arrays}
    for k, st in enumerate(an.stats):
        if not st.wavefronts:
            continue
        rows = np.nonzero((trace.instr == k) & (trace.shared != 0) & (trace.flags == 0))[0][:4096]
        if not rows.size:
            continue
        v = trace.addresses(rows)[_bits(trace.shared[rows] & trace.active[rows])]
        best = max(arrays, key=lambda a: int(((v >= a.start) & (v < a.end)).sum()), default=None)
        if best is None or not ((v >= best.start) & (v < best.end)).any():
            continue
        o = out[id(best)]
        o["wavefronts"] += st.wavefronts
        o["conflicts"] += st.conflicts
        line = int(st.instr.get("line") or 0)
        o["lines"][line] = o["lines"].get(line, 0) + st.conflicts
    res = [o for o in out.values() if o["wavefronts"]]
    res.sort(key=lambda o: -o["conflicts"])
    return res


def _unnamed_conflicts(trace: Trace, an, named: list[SharedArray]):
    """Conflicts on shared bytes no declared array covers (a kernel made by a macro, a template's
    array, a PTX kernel's dynamic memory): one range target over what those instructions touch,
    rows of 128 bytes of their narrowest access, else None."""
    lo, hi, width, wf, conf, lines = None, None, 16, 0, 0, {}
    for k, st in enumerate(an.stats):
        if st.conflicts <= 0:
            continue
        rows = np.nonzero((trace.instr == k) & (trace.shared != 0) & (trace.flags == 0))[0]
        if not rows.size:
            continue
        v = trace.addresses(rows)[_bits(trace.shared[rows] & trace.active[rows])]
        if any(((v >= a.start) & (v < a.end)).any() for a in named):
            continue
        w = int(st.instr.get("width") or 4)
        lo = int(v.min()) if lo is None else min(lo, int(v.min()))
        hi = int(v.max()) + w if hi is None else max(hi, int(v.max()) + w)
        width = min(width, max(1, w))
        wf, conf = wf + st.wavefronts, conf + st.conflicts
        line = int(st.instr.get("line") or 0)
        lines[line] = lines.get(line, 0) + st.conflicts
    if lo is None:
        return None
    eb = width if width in (1, 2, 4, 8, 16) else 4
    start = lo - lo % 128
    row = 128
    end = start + -(-(hi - start) // row) * row
    arr = SharedArray(f"shared[{start}:{end}]", "", eb, ((end - start) // row, row // eb), 16, False, start,
                      end - start, declared=f"bytes {start}..{end - 1} of the shared window (no declaration read "
                      "from the source covers them)")
    arr.wavefronts, arr.conflicts = wf, conf
    arr.lines = [{"line": ln, "conflicts": c} for ln, c in sorted(lines.items(), key=lambda t: -t[1])]
    return arr, (start, end)


def candidate_layouts(rows: int, cols: int, eb: int, access_bytes: int) -> list[str]:
    """The layout families ``suggest`` tries for a rows x cols array of eb-byte elements read
    ``access_bytes`` at a time (pads up to a 128-byte bank row; XOR masks; swizzles whose M
    keeps an access's elements together)."""
    out = [f"pad:{n}" for n in range(1, max(2, 128 // eb) + 1)]
    if _pow2(cols):
        out.append("xor")
        out += [f"xor:{m}" for m in (1, 3, 7, 15, 31, 63) if m < cols - 1]
        out.append("bitrev")
    out.append("diag")
    if _pow2(cols) and _pow2(rows * cols):
        m = max(0, (max(access_bytes, eb) // eb).bit_length() - 1)
        top = (rows * cols).bit_length() - 1
        for b in range(1, 6):
            lc = cols.bit_length() - 1
            # S + M = log2(cols): the row's low bits go into the column's bits M..M+B (a row of a bank
            # line per phase); S = log2(cols): rows two by two, ...
            for s in sorted({lc - m, lc, b + m}):
                if s >= b and b + m + s <= top + b and m + b <= top:
                    out.append(f"swizzle:{b},{m},{s}")
    seen, res = set(), []
    for x in out:
        if x not in seen:
            seen.add(x)
            res.append(x)
    return res


def suggest(trace: Trace, array: str | None = None, shape: tuple[int, int] | None = None,
            elem_bytes: int | None = None, byte_range: tuple[int, int] | None = None,
            predict: Callable | None = None, top: int = 5) -> dict:
    """The arrays whose conflicts cost the most and, for each, the layouts that cost least,
    ranked by shared wavefronts (then lanes split, extra shared memory, predicted time when
    ``predict`` (a Replay -> seconds or None) is given). Returns a plain document."""
    from .analysis import analyze_trace

    an = analyze_trace(trace)
    base_wf = shared_wavefronts(an)
    hot = array_conflicts(trace, an)
    doc = {"trace": str(trace.path or ""), "kernel": trace.header.get("kernel"), "shared_wavefronts": base_wf,
           "conflicts": int(sum(s.conflicts for s in an.stats)), "arrays": [], "ranked_by":
           "shared wavefronts, then lanes split, then extra shared memory" + (", then predicted time"
                                                                              if predict else ""),
           "hot": [{"array": o["array"].name, "wavefronts": o["wavefronts"], "conflicts": o["conflicts"],
                    "lines": [{"line": ln, "conflicts": c} for ln, c in sorted(o["lines"].items(),
                                                                                 key=lambda t: -t[1]) if c]}
                   for o in hot]}
    if byte_range is not None:
        targets = [(resolve_array(trace, array, byte_range), byte_range)]
    elif array is not None:
        targets = [(resolve_array(trace, array), None)]
    else:
        targets = [(o["array"], None) for o in hot if o["conflicts"]]
        unnamed = _unnamed_conflicts(trace, an, [o["array"] for o in hot])
        if unnamed is not None:
            targets.append(unnamed)
            doc["hot"].append({"array": unnamed[0].name, "wavefronts": unnamed[0].wavefronts,
                               "conflicts": unnamed[0].conflicts, "lines": unnamed[0].lines})
    base_seconds = predict(None) if predict else None
    for arr, rng in targets:
        eb = elem_bytes or arr.elem_bytes
        shp = shape or ((math.prod(arr.dims[:-1]), arr.dims[-1]) if arr.dims and len(arr.dims) >= 2 else None)
        if shp is None and eb:
            n = arr.size // eb
            c = 128 // eb
            shp = (n // c, c) if n % c == 0 and n >= c else None
        entry = {"array": arr.name, "declared": arr.declared, "shape": list(shp) if shp else None,
                 "elem_bytes": eb, "candidates": []}
        if shp is None or eb is None:
            entry["note"] = "give --shape ROWS,COLS and --elem-bytes N to try layouts on it"
            doc["arrays"].append(entry)
            continue
        access = max([int(i.get("width") or 0) for i in trace.instructions if i.get("space") != "global"] or [eb])
        cands = []
        for text in candidate_layouts(shp[0], shp[1], eb, access):
            try:
                rp = replay(trace, arr.name if rng is None else array, shp, eb, text, rng)
            except ReplayError:
                continue
            wf = shared_wavefronts(rp.analysis)
            cands.append(Candidate(text, wf, int(sum(s.conflicts for s in rp.analysis.stats)),
                                   rp.shared_after - rp.shared_before, rp.split_lanes,
                                   rp.occupancy_after["blocks"], None, rp))
        cands.sort(key=lambda c: (c.split_lanes > 0, c.wavefronts, c.extra_bytes, c.layout))
        best, families = [], set()
        for c in cands:           # the best of each family (the smallest pad that does best, ...)
            fam = c.replay.layout.family
            if fam not in families:
                families.add(fam)
                best.append(c)
        if predict:
            for c in best:
                c.seconds = predict(c.replay)
            best.sort(key=lambda c: (c.split_lanes > 0, c.wavefronts, c.extra_bytes,
                                     c.seconds if c.seconds is not None else math.inf))
        for c in best[:top]:
            d = c.as_dict()
            d["source"] = source_change(arr, c.replay.layout, eb, trace)
            entry["candidates"].append(d)
        entry["baseline_seconds"] = base_seconds
        doc["arrays"].append(entry)
    return doc


# ---------------------------------------------------------------------------- the source change

def _ctype(arr: SharedArray, eb: int) -> str:
    return arr.type or {1: "char", 2: "half", 4: "float", 8: "double", 16: "float4"}.get(eb, "float")


def source_change(arr: SharedArray, lay: Layout, eb: int, trace: Trace | None = None) -> dict:
    """The change to the source that gives ``lay``: CUDA C++ declaration and index (``tile[r][c]``
    read as element (r, c) of the old layout), and, for a Triton kernel, its shared layout."""
    R, C, t = lay.rows, lay.cols, _ctype(arr, eb)
    name = arr.name if re.fullmatch(r"[A-Za-z_]\w*", arr.name) else "ARRAY"
    f, p = lay.family, lay.params
    decl = f"__shared__ {t} {name}[{R}][{C}];" if not arr.dynamic else \
        f"extern __shared__ {t} {name}[];   // launch with {R * C * eb} bytes"
    flat = arr.dynamic
    if f == "pad":
        decl = f"__shared__ {t} {name}[{R}][{C + p[0]}];" if not flat else \
            f"extern __shared__ {t} {name}[];   // launch with {R * (C + p[0]) * eb} bytes"
        index = f"{name}[r][c]" if not flat else f"{name}[r * {C + p[0]} + c]"
    elif f == "xor":
        col = f"c ^ (r % {C})" if lay.text == "xor" else f"c ^ (r & {p[0]})"
        index = f"{name}[r][{col}]" if not flat else f"{name}[r * {C} + ({col})]"
    elif f == "swizzle":
        b, m, s = p
        mask = ((1 << b) - 1) << m
        decl = f"__shared__ {t} {name}[{R * C}];   // CuTe Swizzle<{b},{m},{s}> of the row-major offset" \
            if not flat else decl
        index = f"{name}[(r * {C} + c) ^ (((r * {C} + c) >> {s}) & {mask:#x})]"
    elif f == "diag":
        index = f"{name}[r][(c + r) % {C}]" if not flat else f"{name}[r * {C} + (c + r) % {C}]"
    elif f == "bitrev":
        bits = C.bit_length() - 1
        index = f"{name}[r][__brev(c) >> {32 - bits}]" if not flat else f"{name}[r * {C} + (__brev(c) >> {32 - bits})]"
    else:
        e = lay.text[5:].strip()
        index = f"{name}[r][{e}]" if not flat else f"{name}[r * {C} + ({e})]"
    out = {"cuda": {"declaration": decl, "index": index,
                    "note": f"every {name}[r][c] of the kernel becomes {index} (r, c: the row and column the "
                            f"kernel indexes now, in its {R} x {C} row-major view of the array)"}}
    if trace is not None and _is_triton(trace) and f in ("swizzle", "xor"):
        lc = C.bit_length() - 1
        if f == "swizzle" and p[2] + p[1] >= lc and p[1] + p[0] <= lc:
            b, m, s = p
            out["triton"] = {"vec": 1 << m, "per_phase": 1 << (s + m - lc), "max_phase": 1 << b,
                             "note": "a SwizzledSharedEncoding (ttg.swizzled_shared) with these vec / perPhase / "
                                     "maxPhase on the tile's shared buffer"}
        elif f == "xor" and lay.text == "xor":
            out["triton"] = {"vec": 1, "per_phase": 1, "max_phase": C,
                             "note": "a SwizzledSharedEncoding with vec=1, perPhase=1, maxPhase=cols"}
    elif f == "pad" and trace is not None and _is_triton(trace):
        out["triton"] = {"padding": p[0] * eb, "note": "a PaddedSharedEncoding ([rows*cols: +pad bytes]) "
                                                       "on the tile's shared buffer"}
    return out


def _is_triton(trace: Trace) -> bool:
    lf = trace.header.get("launch_file") or ""
    return "triton" in lf.lower() or any(str(k).endswith((".py", ".ptx")) for k in (trace.header.get("sources") or {}))


__all__ = ["RESERVED", "LAYOUT_FAMILIES", "OPERAND_REPLAY", "ReplayError", "SharedArray", "Layout", "Replay",
           "Candidate", "shared_limits", "blocks_per_sm", "declared_arrays", "resolve_array", "parse_range",
           "parse_layout", "replay", "suggest", "array_conflicts", "candidate_layouts", "source_change",
           "shared_wavefronts", "recorded_extent"]
