"""Random scenarios of the format 3 kinds (``warpviz validate --random N --kinds ...``).

Seeded like ``viz.gpu.randomgen`` (whose random index expressions they reuse): random
launches (partial warps included), ``cp.async`` of 4, 8 and 16 bytes (``.ca``/``.cg``)
between random global and shared indices and swizzles, shared ``atomic`` adds on few or
many bins (result used or not), and ``tma.load`` boxes in every swizzle mode followed by
random loads of the tile. Every scenario the model accepts can run on the GPU.
"""

from __future__ import annotations

import random

from ..engine import analyze
from .randomgen import _expr, _wrap
from ..scenario import Scenario, ScenarioError, loads

KINDS = ("cp.async", "atomic", "tma.load")
CP_TYPES = {4: "float", 8: "float2", 16: "float4"}
SWIZZLES = ["none", "xor", "xor:3", "diagonal", "cute:2,0,3", "cute:3,1,3"]


def _when(r: random.Random) -> str:
    if r.random() < 0.35:
        return f'when = "{_expr(r, 2)} % {r.randint(2, 5)} != 0"\n'
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
    at = f"s[{_wrap(_expr(r), rows)}][{_wrap(_expr(r), cols)}]"
    src = f"g[{_wrap(_expr(r), gsize)}]"
    if "j" in at + src and not loop:
        loop = 'for = { j = "0:2" }'
    text = f"""format = 3
title = "random cp.async"
[launch]
block = [{bx}]
grid = [{gx}]
[arrays.g]
space = "global"
type = "{t}"
shape = [{gsize}]
offset = {goff}
[arrays.s]
space = "shared"
type = "{t}"
shape = [{rows}, {cols}]
pad = {pad}
swizzle = "{swz}"
[[access]]
op = "cp.async"
at = "{at}"
from = "{src}"
cache = "{cache}"
{_when(r)}{loop}
"""
    if r.random() < 0.5:
        text += f'[[access]]\nop = "load"\nat = "s[{_wrap(_expr(r), rows)}][{_wrap(_expr(r), cols)}]"\n'
    return text


def atomic_text(r: random.Random) -> str:
    bins = r.choice([1, 2, 4, 8, 16, 32, 33, 64, 256, 1024])
    bx, gx = r.randint(1, 256), r.randint(1, 3)
    t = "int"          # float atomicAdd is a CAS loop on the H100: refused
    idx = r.choice([f"{_wrap(_expr(r), bins)}", f"(tid * {r.randint(1, 97)}) % {bins}",
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
        text += (f'[[access]]\nop = "load"\nat = "tile[{_wrap(_expr(r), rows)}][{_wrap(_expr(r), cols)}]"\n'
                 f"{_when(r)}")
    return text


MAKERS = {"cp.async": cp_async_text, "atomic": atomic_text, "tma.load": tma_text}


def scenarios(count: int, seed: int = 0, kinds: tuple[str, ...] = KINDS) -> list[tuple[str, Scenario]]:
    """``count`` random scenarios of ``kinds`` (in turn) that the model accepts, named
    random-KIND-SEED-K."""
    for k in kinds:
        if k not in MAKERS:
            raise ValueError(f"unknown kind {k!r}: the kinds are {', '.join(KINDS)}")
    r = random.Random(seed)
    out: list[tuple[str, Scenario]] = []
    tries = 0
    while len(out) < count and tries < count * 60:
        kind = kinds[len(out) % len(kinds)]
        tries += 1
        text = MAKERS[kind](r)
        if not text:
            continue
        name = f"random-{kind.replace('.', '')}-{seed}-{len(out)}"
        try:
            sc = loads(text, source=name, name=name)
            analyze(sc)
        except ScenarioError:
            continue
        out.append((name, sc))
    return out


__all__ = ["scenarios", "KINDS", "cp_async_text", "atomic_text", "tma_text"]
