"""Write a warpviz launch file (format 2) from one launch captured by launch_capture.cpp.

    python tools/gpu/capture_to_launch.py CAPTURE_DIR KERNEL.ptx OUT.launch.toml \
        --source REL.cu [--include DIR ...] [--title TEXT] [--arch-specific] [--relaxed-constexpr]

CAPTURE_DIR holds launch.json and alloc_K.bin (launch_capture.cpp); KERNEL.ptx is the
program's PTX (for each parameter's `.align`); OUT is written beside the source's folder
tree (the paths in it are relative to OUT's folder, the capture's data files too).

Each live allocation becomes a [[buffer]] filled from its captured bytes; each captured
tensor map whose 128 bytes sit inside a parameter becomes a [[tensormap]] with the
arguments the program gave cuTensorMapEncodeTiled (its address as a buffer and an offset);
each parameter becomes a struct [[arg]] (its captured bytes as `hex`, with a `map` field
where a tensor map sits and a `pointer` field for every aligned 8-byte word that points
into an allocation), or a pointer [[arg]] where it is one. warpviz encodes the maps again
for its own buffers' addresses when it launches.
"""

from __future__ import annotations

import argparse
import json
import os
import struct
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from viz.trace import module  # noqa: E402
from viz.trace.tensormaps import DTYPES, INTERLEAVE, L2_PROMOTION, OOB_FILL, SWIZZLE  # noqa: E402

_DT = {v[0]: k for k, v in DTYPES.items()}
_INV = {name: {v: k for k, v in table.items()} for name, table in
        (("interleave", INTERLEAVE), ("swizzle", SWIZZLE), ("l2_promotion", L2_PROMOTION), ("oob_fill", OOB_FILL))}


def _q(s: str) -> str:
    return json.dumps(s)


def convert(cap: dict, ptx: str, capture_rel: str, source: str, includes: list[str], title: str,
            arch_specific: bool, relaxed: bool) -> str:
    ps = module.params(ptx, cap["kernel"])
    if ps is None:
        raise SystemExit(f"the PTX has no entry {cap['kernel'][:80]}...")
    if len(ps) != len(cap["params"]):
        raise SystemExit(f"the PTX entry has {len(ps)} parameters, the capture {len(cap['params'])}")
    allocs = sorted(cap["allocations"], key=lambda a: a["address"])

    def owner(addr: int):
        for k, a in enumerate(allocs):
            if a["address"] <= addr < a["address"] + a["bytes"]:
                return k, addr - a["address"]
        return None

    used_allocs: set[int] = set()
    maps_out: list[str] = []
    map_by_bytes: dict[bytes, str] = {}
    for i, m in enumerate(cap["tensormaps"]):
        hit = owner(m["address"])
        raw = bytes.fromhex(m["hex"])
        if hit is None or raw in map_by_bytes:
            continue
        k, off = hit
        name = f"map{i}"
        map_by_bytes[raw] = name
        used_allocs.add(k)
        maps_out.append("\n".join([
            "[[tensormap]]", f"name = {_q(name)}", f"tensor = {_q(f'buf{k}')}", f"offset = {off}",
            f"dtype = {_q(_DT[m['dtype']])}", f"dims = {m['dims']}", f"strides = {m['strides']}", f"box = {m['box']}",
            f"element_strides = {m['element_strides']}", f"interleave = {_q(_INV['interleave'][m['interleave']])}",
            f"swizzle = {_q(_INV['swizzle'][m['swizzle']])}",
            f"l2_promotion = {_q(_INV['l2_promotion'][m['l2_promotion']])}",
            f"oob_fill = {_q(_INV['oob_fill'][m['oob_fill']])}"]))
    args_out: list[str] = []
    for p, c in zip(ps, cap["params"]):
        raw = bytes.fromhex(c["hex"])
        if len(raw) != p.bytes:
            raise SystemExit(f"parameter {p.name}: {len(raw)} bytes captured, the PTX says {p.bytes}")
        if not p.array and p.bytes == 8:
            hit = owner(struct.unpack("<Q", raw)[0])
            if hit is not None:
                used_allocs.add(hit[0])
                args_out.append(f'[[arg]]\ntype = "pointer"\nbuffer = {_q(f"buf{hit[0]}")}\noffset = {hit[1]}')
                continue
        fields = []
        taken = set()
        for at in range(0, len(raw) - 127, 64):
            name = map_by_bytes.get(raw[at:at + 128])
            if name:
                fields.append(f"[[arg.field]]\noffset = {at}\nmap = {_q(name)}")
                taken.update(range(at, at + 128))
        for at in range(0, len(raw) - 7, 8):
            if at in taken:
                continue
            hit = owner(struct.unpack("<Q", raw[at:at + 8])[0])
            if hit is not None:
                used_allocs.add(hit[0])
                fields.append(f"[[arg.field]]\noffset = {at}\npointer = {_q(f'buf{hit[0]}')}\nbuffer_offset = {hit[1]}")
        align = (p.align or p.bytes) if p.array else p.bytes     # a scalar parameter: its own size
        args_out.append("\n".join(["[[arg]]", 'type = "struct"', f"bytes = {p.bytes}", f"align = {align}",
                                   f"hex = {_q(raw.hex())}"] + fields))
    bufs = []
    for k, a in enumerate(allocs):
        if k not in used_allocs:
            continue
        bufs.append("\n".join(["[[buffer]]", f"name = {_q(f'buf{k}')}", 'type = "void*"', f"count = {a['bytes']}",
                               f"fill = {_q('file:' + capture_rel + '/' + a['file'])}"]))
    cl = cap.get("cluster", [1, 1, 1])
    notes = (f"Captured by tools/gpu/launch_capture.cpp from the program's own launch: grid {cap['grid']}, block "
             f"{cap['block']}, cluster {cl}, {cap['shared_bytes']} bytes of dynamic shared memory. warpviz launches "
             "it without a cluster (each block is a cluster of one); the kernel's TMA copies do not multicast.")
    head = ["format = 2", f"title = {_q(title)}", f"notes = {_q(notes)}", f"source = {_q(source)}",
            f"kernel = {_q(cap['kernel'])}", f"block = {list(cap['block'])}", f"grid = {list(cap['grid'])}",
            f"shared_bytes = {cap['shared_bytes']}", f"include_dirs = {json.dumps(includes)}"]
    if arch_specific:
        head.append("arch_specific = true")
    if relaxed:
        head.append("relaxed_constexpr = true")
    return "\n\n".join(["\n".join(head)] + bufs + maps_out + args_out) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("capture")
    ap.add_argument("ptx")
    ap.add_argument("out")
    ap.add_argument("--source", required=True)
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("--title", default="captured launch")
    ap.add_argument("--arch-specific", action="store_true")
    ap.add_argument("--relaxed-constexpr", action="store_true")
    a = ap.parse_args(argv)
    cap = json.loads(Path(a.capture, "launch.json").read_text())
    out = Path(a.out)
    rel = os.path.relpath(Path(a.capture).resolve(), out.parent.resolve())
    text = convert(cap, Path(a.ptx).read_text(), rel, a.source, a.include, a.title, a.arch_specific,
                   a.relaxed_constexpr)
    out.write_text(text)
    print(f"wrote {out} ({len(cap['params'])} parameters, {len(cap['tensormaps'])} tensor maps captured)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
