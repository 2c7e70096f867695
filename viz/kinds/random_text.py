"""Random scenario texts of the format 3 kinds (``warpviz validate --random N --kinds ...``),
each kind's generator named in its ``Kind.random_text``; and the random index expressions
they share with the plain random scenarios (``viz.gpu.randomgen``).

Seeded by the caller's ``random.Random``: random launches (partial warps included),
``cp.async`` of 4, 8 and 16 bytes (``.ca``/``.cg``) between random global and shared indices
and swizzles, shared ``atomic`` adds on few or many bins (result used or not), and
``tma.load`` boxes in every swizzle mode followed by random loads of the tile. Pure text:
``viz.gpu.randomkinds`` parses and keeps those the model accepts.
"""

from __future__ import annotations

import random

LEAVES = ["threadIdx.x", "threadIdx.y", "blockIdx.x", "blockIdx.y", "lane", "warp", "tid", "j"]


def expr(r: random.Random, depth: int = 3) -> str:
    if depth == 0 or r.randint(0, 3) == 0:
        return r.choice(LEAVES) if r.random() < 0.6 else str(r.randint(0, 40))
    op = r.choice(["+", "-", "*", "^", "&", "|", "<<", ">>", "/", "%", "?:", "min", "max", "rev"])
    a = expr(r, depth - 1)
    if op in ("<<", ">>"):
        return f"({a} {op} {r.randint(0, 5)})"
    if op in ("/", "%"):
        return f"({a} {op} {r.randint(1, 9)})"
    if op == "rev":
        return f"rev({a}, {r.randint(1, 6)})"
    b = expr(r, depth - 1)
    if op == "?:":
        return f"({a} < {r.randint(0, 20)} ? {b} : {a})"
    if op in ("min", "max"):
        return f"{op}({a}, {b})"
    return f"({a} {op} {b})"


def wrap(e: str, n: int) -> str:
    return f"((({e}) % {n}) + {n}) % {n}"


CP_TYPES = {4: "float", 8: "float2", 16: "float4"}
SWIZZLES = ["none", "xor", "xor:3", "diagonal", "cute:2,0,3", "cute:3,1,3"]


def global_and_shared(gtype: str, gsize: int, goff: int, stype: str, rows: int, cols: int, pad: int,
                      swz: str) -> str:
    """The arrays of a random scenario: ``g`` in global memory, ``s`` a shared tile."""
    return f"""[arrays.g]
space = "global"
type = "{gtype}"
shape = [{gsize}]
offset = {goff}
[arrays.s]
space = "shared"
type = "{stype}"
shape = [{rows}, {cols}]
pad = {pad}
swizzle = "{swz}"
"""


def _when(r: random.Random) -> str:
    if r.random() < 0.35:
        return f'when = "{expr(r, 2)} % {r.randint(2, 5)} != 0"\n'
    return ""


def cp_async_text(r: random.Random) -> str:
    size = r.choice([4, 8, 16])
    t = CP_TYPES[size]
    bx, gx = r.randint(1, 160), r.randint(1, 3)
    cols = r.choice([8, 16, 32])
    rows = r.randint(2, 24)
    swz = r.choice(SWIZZLES)
    pad = r.randint(0, 2) if not swz.startswith("cute") else 0
    gsize = r.choice([1024, 4096])
    goff = r.choice([0, 16, 32, 64]) // size * size
    cache = r.choice(["ca", "cg"]) if size == 16 else "ca"
    loop = r.choice(["", "", 'for = { j = "0:3" }'])
    at = f"s[{wrap(expr(r), rows)}][{wrap(expr(r), cols)}]"
    src = f"g[{wrap(expr(r), gsize)}]"
    if "j" in at + src and not loop:
        loop = 'for = { j = "0:2" }'
    text = f"""format = 3
title = "random cp.async"
[launch]
block = [{bx}]
grid = [{gx}]
{global_and_shared(t, gsize, goff, t, rows, cols, pad, swz)}[[access]]
op = "cp.async"
at = "{at}"
from = "{src}"
cache = "{cache}"
{_when(r)}{loop}
"""
    if r.random() < 0.5:
        text += f'[[access]]\nop = "load"\nat = "s[{wrap(expr(r), rows)}][{wrap(expr(r), cols)}]"\n'
    return text


def atomic_text(r: random.Random) -> str:
    bins = r.choice([1, 2, 4, 8, 16, 32, 33, 64, 256, 1024])
    bx, gx = r.randint(1, 256), r.randint(1, 3)
    t = "int"          # float atomicAdd is a CAS loop on the H100: refused
    idx = r.choice([f"{wrap(expr(r), bins)}", f"(tid * {r.randint(1, 97)}) % {bins}",
                    f"((tid * 2654435761) >> {r.randint(4, 12)}) % {bins}", f"lane % {bins}",
                    f"(lane / {r.choice([1, 2, 4, 8, 16])}) * {r.choice([1, 2, 32, 33])} % {bins}"])
    result = r.choice(["used", "unused"])
    loop = 'for = { j = "0:2" }' if "j" in idx else ""
    return f"""format = 3
title = "random atomic"
[launch]
block = [{bx}]
grid = [{gx}]
[arrays.hist]
space = "shared"
type = "{t}"
shape = [{bins}]
[[access]]
op = "atomic"
at = "hist[{idx}]"
result = "{result}"
{_when(r)}{loop}
"""


TMA_TYPES = {2: "half", 4: "float", 8: "float2", 16: "float4"}


def tma_text(r: random.Random) -> str:
    esize = r.choice([2, 4, 8, 16])
    t = TMA_TYPES[esize]
    swz = r.choice(["none", "tma:32B", "tma:64B", "tma:128B"])
    row_bytes = int(swz[4:-1]) if swz != "none" else r.choice([16, 32, 64, 128, 256])
    cols = max(1, row_bytes // esize)
    if cols * esize != row_bytes:
        return ""
    rows = r.randint(1, 32)
    gx, gy = r.randint(1, 3), r.randint(1, 2)
    bx = r.randint(1, 128)
    grows = rows * r.randint(1, 4) + r.randint(0, 8)
    gcols = cols * r.randint(1, 3) + r.choice([0, 16 // esize if esize < 16 else 1])
    ry = f"(blockIdx.x * {r.randint(0, 7)} + blockIdx.y) % {grows - rows + 1}"
    al = max(1, 16 // esize)            # the box's first byte must be 16-byte aligned (a misaligned one faults)
    cx = f"((blockIdx.x * {r.randint(0, 5)}) % {(gcols - cols) // al + 1}) * {al}"
    text = f"""format = 3
title = "random tma.load"
[launch]
block = [{bx}]
grid = [{gx}, {gy}]
[arrays.tile]
space = "shared"
type = "{t}"
shape = [{rows}, {cols}]
swizzle = "{swz}"
[arrays.A]
space = "global"
type = "{t}"
shape = [{grows}, {gcols}]
[[access]]
op = "tma.load"
at = "tile"
from = "A[{ry}][{cx}]"
"""
    for _ in range(r.randint(0, 2)):
        text += (f'[[access]]\nop = "load"\nat = "tile[{wrap(expr(r), rows)}][{wrap(expr(r), cols)}]"\n'
                 f"{_when(r)}")
    return text


__all__ = ["expr", "wrap", "cp_async_text", "atomic_text", "tma_text"]
