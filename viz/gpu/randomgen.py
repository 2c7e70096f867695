"""Random scenarios, seeded, for checking the model against the counters beyond the built-ins.

Each is valid TOML of the contract: random launch shapes (partial warps included), a
global and a shared array of random types, layouts and offsets, 1-4 accesses with random
index expressions (every operator and function of the language), random ``when`` masks
and loops. Indices are wrapped into range, so every scenario that the model accepts can
run on the GPU. Nothing here needs hypothesis (the device runs it as it is).
"""

from __future__ import annotations

import random

from ..engine import analyze
from ..kinds.random_text import LEAVES, expr as _expr, global_and_shared, wrap as _wrap  # noqa: F401 - shared with the kinds' generators
from ..scenario import Scenario, ScenarioError, loads

TYPES = ["char", "short", "int", "float", "double", "float2", "int4", "float4", "float3"]
SWIZZLES = ["none", "xor", "xor:3", "diagonal", "bitrev", "bitrev-xor", "cute:2,0,3", "cute:3,1,3",
            "expr:(col * 5 + row) % COLS"]


def scenario_text(r: random.Random) -> str:
    bx, by = r.randint(1, 96), r.randint(1, 3)
    gx, gy = r.randint(1, 4), r.randint(1, 2)
    cols = r.choice([8, 16, 32, 64])
    rows = r.randint(2, 40)
    stype, gtype = r.choice(TYPES), r.choice(TYPES)
    swz = r.choice(SWIZZLES)
    pad = r.randint(0, 3) if not swz.startswith("cute") else 0
    gsize = r.choice([1024, 4096, 8192])
    goff = r.choice([0, 16, 32, 48, 64, 96])
    loop = r.choice(["", 'for = { j = "0:3" }', 'for = { j = "1:8:3" }', 'for = { j = "5:0:-2" }'])
    text = f"""title = "random"
[launch]
block = [{bx}, {by}]
grid = [{gx}, {gy}]
[params]
COLS = {cols}
{global_and_shared(gtype, gsize, goff, stype, rows, cols, pad, swz)}"""
    for _ in range(r.randint(1, 4)):
        op = r.choice(["load", "store"])
        if r.random() < 0.5:
            at = f"s[{_wrap(_expr(r), rows)}][{_wrap(_expr(r), cols)}]"
        else:
            at = f"g[{_wrap(_expr(r), gsize)}]"
        field = ""
        when = ""
        if r.random() < 0.4:
            when = f'when = "{_expr(r, 2)} % {r.randint(2, 5)} != 0"'
        uses_j = "j" in at or "j" in when
        lp = (loop or 'for = { j = "0:2" }') if uses_j else (loop if r.random() < 0.3 else "")
        text += f'[[access]]\nop = "{op}"\nat = "{at}{field}"\n{when}\n{lp}\n'
    return text


# ---------------------------------------------------------------------------- ldmatrix / stmatrix

MATRIX_OPS = ["ldmatrix.x1", "ldmatrix.x2", "ldmatrix.x4", "ldmatrix.x1.trans", "ldmatrix.x2.trans",
              "ldmatrix.x4.trans", "stmatrix.x1", "stmatrix.x2", "stmatrix.x4", "stmatrix.x1.trans",
              "stmatrix.x2.trans", "stmatrix.x4.trans"]
# Layouts that keep every 16-byte row (8 halfs) in one piece: plain with a pad of whole rows of
# 8, CuTe swizzles on 8-half chunks, and the TMA swizzles on rows of exactly their span.
MATRIX_LAYOUTS = [("none", None), ("pad", None), ("Sw<3,3,3>", 64), ("Sw<2,3,3>", 32), ("Sw<1,3,3>", 16),
                  ("Sw<3,3,4>", 64), ("tma:128B", 64), ("tma:64B", 32), ("tma:32B", 16)]


def matrix_scenario_text(r: random.Random) -> str:
    """A random scenario of 1-3 ldmatrix / stmatrix accesses (format 3) on a shared tile of
    halfs (or of 16-byte int4 rows): random row expressions over lane, warp, block and a
    loop, wrapped into range; every row address is 16-byte aligned by construction."""
    bx = 32 * r.randint(1, 4)
    gx = r.randint(1, 3)
    swz, want_cols = r.choice(MATRIX_LAYOUTS)
    cols = want_cols or r.choice([8, 16, 32, 64, 128])
    pad = 8 * r.randint(1, 2) if swz == "pad" else 0
    rows = r.choice([16, 32, 64])
    as_int4 = swz in ("none", "pad") and r.random() < 0.25
    loop = r.choice(["", 'for = { j = "0:2" }', 'for = { j = "0:8:4" }'])
    if as_int4:
        array = f"""[arrays.s]
space = "shared"
type = "int4"
shape = [{rows}, {cols // 8}]
"""
    else:
        array = f"""[arrays.s]
space = "shared"
type = "half"
shape = [{rows}, {cols}]
""" + (f"pad = {pad}\n" if pad else "") + (f'swizzle = "{swz}"\n' if swz not in ("none", "pad") else "")
    text = f"""format = 3
title = "random ldmatrix / stmatrix"
[launch]
block = [{bx}]
grid = [{gx}]
{array}"""
    for _ in range(r.randint(1, 3)):
        op = r.choice(MATRIX_OPS)
        if r.random() < 0.5:     # the usual tile walk: lane l gives row l % 16 (+ more), chunk l / 16
            row = f"(lane % 16) + {r.choice([0, 16]) % rows}"
            chunk = f"(lane / 16) + {r.randint(0, 3)}"
        else:
            row, chunk = _expr(r), _expr(r)
        if "j" in loop and r.random() < 0.5:
            row = f"({row}) + j"
        row = _wrap(row, rows)
        chunk = _wrap(chunk, cols // 8)
        col = chunk if as_int4 else f"({chunk}) * 8"
        lp = loop if "j" in row else ""
        text += f'[[access]]\nop = "{op}"\nat = "s[{row}][{col}]"\n{lp}\n'
    return text


WIDE = {"double", "float2", "int2", "int4", "float4", "double2"}


def has_wide_shared(sc: Scenario) -> bool:
    """An 8- or 16-byte shared access: where loads may merge phases when lanes repeat
    addresses in pairs (docs/memory-model.md, "Wide loads whose lanes repeat addresses in pairs")."""
    return any(sc.array(a.array).space == "shared" and a.size >= 8 for a in sc.accesses)


KINDS = {"plain": ("random", scenario_text), "ldmatrix": ("random-ldmatrix", matrix_scenario_text)}


def scenarios(count: int, seed: int = 0, wide_shared: bool | None = None,
              kind: str = "plain") -> list[tuple[str, Scenario]]:
    """``count`` random scenarios that the model accepts (named random-SEED-K); with
    ``wide_shared`` True or False, only those with (or without) 8/16-byte shared accesses.
    ``kind``: "plain" (loads and stores) or "ldmatrix" (ldmatrix / stmatrix, named
    random-ldmatrix-SEED-K)."""
    prefix, make = KINDS[kind]
    r = random.Random(seed)
    out: list[tuple[str, Scenario]] = []
    tries = 0
    while len(out) < count and tries < count * 50:
        tries += 1
        text = make(r)
        try:
            sc = loads(text, source=f"{prefix}-{seed}-{len(out)}", name=f"{prefix}-{seed}-{len(out)}")
            analyze(sc)
        except ScenarioError:
            continue
        if wide_shared is not None and has_wide_shared(sc) != wide_shared:
            continue
        out.append((sc.name, sc))
    return out


__all__ = ["scenarios", "scenario_text", "matrix_scenario_text", "has_wide_shared", "KINDS"]
