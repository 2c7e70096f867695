"""Probe cases for cp.async, TMA 2-D tile copies and shared atomics on the H100.

Used by tools/probes/cp_async_tma_atomics.sh (the device run) and testable here without a GPU:

  python3 tools/probes/cp_async_tma_atomics.py cases CASES.txt CASES.json
      every case: kernel, active mask, per-lane shared and global byte offsets, TMA box
  python3 tools/probes/cp_async_tma_atomics.py metrics QUERY.txt GROUP OUT.txt
      from ``ncu --query-metrics-mode all`` output: the counters of GROUP that exist
      (cp | atom | tma), as a comma list for ``ncu --metrics``
  python3 tools/probes/cp_async_tma_atomics.py collect CASES.json PLACE.txt OUT.json NCU.csv...
      joins the cases with the counters of each launch (launch order, checked by kernel
      name) and with the TMA placements (which element landed at which shared byte)
  python3 tools/probes/cp_async_tma_atomics.py --dry [DIR]
      no GPU: the cases, a metric choice from a made-up list and a collect of made-up
      host output (DIR, or a temporary folder)

A case's offsets are bytes from a 1024-byte aligned shared base (``s``) and from a
256-byte aligned global buffer (``g``). Lanes whose bit is clear in ``mask`` do nothing.
"""

from __future__ import annotations

import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

LANES = range(32)
FULL = 0xFFFFFFFF

# ---------------------------------------------------------------- cases

MASKS = {"lane<8": 0x000000FF, "lane%2==0": 0x55555555, "lane>=16": 0xFFFF0000, "lane==5": 1 << 5,
         "lane%8==0": 0x01010101, "none": 0}


def _case(kernel, name, s, g=None, mask=FULL, esize=0, swz=0, bw=0, bh=0, x0=0, y0=0, mode=0, **extra):
    s = [int(v) for v in s]
    g = [int(v) for v in (g if g is not None else [0] * 32)]
    assert len(s) == 32 and len(g) == 32
    d = {"kernel": kernel, "name": name, "mask": mask, "s": s, "g": g}
    if kernel.startswith("tma"):
        d.update(esize=esize, swizzle=[0, 32, 64, 128][swz], swz=swz, box=[bw, bh], coord=[x0, y0], mode=mode)
    d.update(extra)
    return d


def swizzle_bytes(off: int, span: int) -> int:
    """The CUTLASS Swizzle<B,4,3> guess for TMA's 32/64/128-byte modes (what the probe checks):
    the 16-byte chunk index within a ``span``-byte row XORed with (byte offset / 128) mod
    (span / 16)."""
    if span == 0:
        return off
    b = {32: 1, 64: 2, 128: 3}[span]
    return off ^ (((off >> 7) & ((1 << b) - 1)) << 4)


def cp_cases(rng: random.Random) -> list[dict]:
    out = []
    for kernel, n in (("cp_ca4", 4), ("cp_ca8", 8), ("cp_ca16", 16), ("cp_cg16", 16)):
        contig = [i * n for i in LANES]
        # shared side, global contiguous
        shared = {
            "contiguous": contig,
            "same address": [0] * 32,
            "pairs share": [(i // 2) * n for i in LANES],
            "quads share": [(i // 4) * n for i in LANES],
            "reversed": [(31 - i) * n for i in LANES],
            "swizzled 128B (row=lane/8, chunk^row)": [(i // 8) * 128 + (((i % 8) ^ (i // 8)) * 16) % 128
                                                    for i in LANES] if n == 16 else
            [(i // 8) * 128 + ((((i % 8) * n // 16) ^ (i // 8)) % 8) * 16 + (i * n) % 16 for i in LANES],
            "random permutation": [v * n for v in rng.sample(range(32), 32)],
            "random with repeats": [rng.randrange(64) * n for _ in LANES],
        }
        for st in (16, 32, 64, 128, 256):
            if st >= n:
                shared[f"stride {st} B"] = [i * st for i in LANES]
        shared["every row on same banks (stride 128 B, +n pad)"] = [i * (128 + n) for i in LANES]
        for pname, s in shared.items():
            out.append(_case(kernel, f"{kernel} shared {pname}", s, contig, side="shared", pattern=pname))
        # global side, shared contiguous
        glob = {
            "same address": [0] * 32,
            "shifted by one element": [i * n + n for i in LANES],
            "shifted by 32 B": [i * n + 32 for i in LANES],
            "random in 64 KB": [rng.randrange(65536 // n) * n for _ in LANES],
            "reversed": [(31 - i) * n for i in LANES],
        }
        for st in (16, 32, 64, 128, 256):
            if st > n:
                glob[f"stride {st} B"] = [i * st for i in LANES]
        for pname, gv in glob.items():
            out.append(_case(kernel, f"{kernel} global {pname}", contig, gv, side="global", pattern=pname))
        for mname, m in MASKS.items():
            out.append(_case(kernel, f"{kernel} contiguous when {mname}", contig, contig, mask=m, side="mask",
                             pattern="contiguous", when=mname))
        out.append(_case(kernel, f"{kernel} stride 128 B both when lane<8", [i * 128 for i in LANES],
                         [i * 128 for i in LANES], mask=MASKS["lane<8"], side="mask", pattern="stride 128 B",
                         when="lane<8"))
    return out


def atom_patterns(rng: random.Random) -> dict[str, list[int]]:
    """Word indices (4-byte bins) per lane."""
    p = {
        "distinct banks (lane)": list(LANES),
        "stride 2 words": [2 * i for i in LANES],
        "stride 4 words": [4 * i for i in LANES],
        "stride 32 words (same bank, distinct words)": [32 * i for i in LANES],
        "same address": [0] * 32,
        "2 lanes per address (lane/2)": [i // 2 for i in LANES],
        "4 lanes per address (lane/4)": [i // 4 for i in LANES],
        "8 lanes per address (lane/8)": [i // 8 for i in LANES],
        "16 lanes per address (lane/16)": [i // 16 for i in LANES],
        "2 addresses, lane%2": [i % 2 for i in LANES],
        "8 addresses, lane%8": [i % 8 for i in LANES],
        "2 words of bank 0 (lane/16*32)": [(i // 16) * 32 for i in LANES],
        "4 words of bank 0 (lane%4*32)": [(i % 4) * 32 for i in LANES],
        "8 words of bank 0 (lane/4*32)": [(i // 4) * 32 for i in LANES],
        "pairs on bank 0 words (lane/2*32)": [(i // 2) * 32 for i in LANES],
        "same bank mixed: lanes 0-15 word 0, 16-31 distinct banks": [0 if i < 16 else i for i in LANES],
    }
    for bins, seeds in ((4, (1, 2)), (8, (3,)), (32, (4, 5)), (256, (6, 7)), (1024, (8,))):
        for sd in seeds:
            r = random.Random(sd * 7919 + bins)
            p[f"random {bins} bins (seed {sd})"] = [r.randrange(bins) for _ in LANES]
    rng.shuffle(list(p))
    return p


def atom_cases(rng: random.Random) -> list[dict]:
    out = []
    pats = atom_patterns(rng)
    small = ["distinct banks (lane)", "stride 32 words (same bank, distinct words)", "same address",
             "4 lanes per address (lane/4)", "8 words of bank 0 (lane/4*32)", "random 8 bins (seed 3)",
             "random 256 bins (seed 6)"]
    for kernel in ("atom_u32", "red_u32", "atom_f32", "red_f32", "atomicadd_cpp"):
        names = list(pats) if kernel in ("atom_u32", "red_u32") else small
        for pname in names:
            out.append(_case(kernel, f"{kernel} {pname}", [w * 4 for w in pats[pname]], pattern=pname,
                             words=pats[pname]))
        for mname in ("lane<8", "lane%2==0", "lane==5", "none"):
            for pname in ("distinct banks (lane)", "same address"):
                if kernel not in ("atom_u32", "red_u32") and pname != "same address":
                    continue
                out.append(_case(kernel, f"{kernel} {pname} when {mname}", [w * 4 for w in pats[pname]],
                                 mask=MASKS[mname], pattern=pname, when=mname, words=pats[pname]))
    return out


def tma_cases() -> list[dict]:
    out = []
    zero = [0] * 32
    for esize in (2, 4):
        for swz, span in enumerate((0, 32, 64, 128)):
            inners = [span] if span else [64, 128, 256]
            if span == 128:
                inners = [64, 128]
            if span == 64:
                inners = [32, 64]
            for inner in inners:
                for bh, (x0, y0) in ((8, (0, 0)), (8, (16 // esize * 4, 3)), (32, (0, 0))):
                    bw = inner // esize
                    out.append(_case("tma2d", f"tma2d e{esize} swz{span or 'none'} box {bw}x{bh} at ({x0},{y0})",
                                     zero, mask=0, esize=esize, swz=swz, bw=bw, bh=bh, x0=x0, y0=y0, mode=1))
        # partly outside the tensor (TMA fills the rest)
        bw = 128 // esize
        out.append(_case("tma2d", f"tma2d e{esize} swz128 box {bw}x8 partly outside", zero, mask=0, esize=esize,
                         swz=3, bw=bw, bh=8, x0=256 - bw // 2, y0=124, mode=1, note="box crosses the tensor edge"))
    # boxes starting 16 bytes into a 32-byte sector (device run 2: which sectors does the TMA count?)
    for esize, bw, x0 in ((2, 8, 8), (2, 16, 8), (4, 12, 4), (4, 8, 12)):
        out.append(_case("tma2d", f"tma2d e{esize} swznone box {bw}x8 at ({x0},0), 16 B into a sector", zero, mask=0,
                         esize=esize, swz=0, bw=bw, bh=8, x0=x0, y0=0, mode=1))
    # baselines: mbarrier only, no copy
    out.append(_case("tma2d", "tma2d baseline: mbarrier only", zero, mask=0, esize=2, swz=0, bw=64, bh=8, mode=0))
    # LDS.128 after TMA: 8 rows x 128 B (64 x u16), lanes read 16-byte chunks.
    for swz, span in enumerate((0, 32, 64, 128)):
        row = span or 128
        bw = row // 2
        rows = 8 if row == 128 else 8 * 128 // row
        reads = {
            "column of chunks (row=lane%8, chunk=lane/8)": [(i % 8, i // 8) for i in LANES],
            "row of chunks (row=lane/8, chunk=lane%8)": [(i // 8, i % 8) for i in LANES],
        }
        for rname, rc in reads.items():
            chunks = row // 16
            s = []
            for r, c in rc:
                logical = (r * 8 + c) * 16 if row == 128 else ((r * 8 + c) // chunks) * row + ((r * 8 + c) % chunks) * 16
                s.append(swizzle_bytes(logical, span))
            out.append(_case("tma2d", f"tma2d swz{span or 'none'} box {bw}x{rows} then LDS.128 {rname}", s, mask=FULL,
                             esize=2, swz=swz, bw=bw, bh=rows, mode=1 | 4, read=rname,
                             read_logical=[list(v) for v in rc]))
    # encode only: boxes the driver must refuse (or accept)
    for esize, swz, bw, bh, why in ((2, 3, 128, 8, "128B swizzle, inner box 256 B"),
                                    (2, 2, 64, 8, "64B swizzle, inner box 128 B"),
                                    (2, 1, 32, 8, "32B swizzle, inner box 64 B"),
                                    (2, 0, 512, 8, "no swizzle, inner box 512 elements"),
                                    (2, 0, 256, 8, "no swizzle, inner box 256 elements"),
                                    (2, 3, 64, 256, "box 256 rows"),
                                    (2, 3, 64, 300, "box 300 rows (> 256)"),
                                    (2, 0, 4, 8, "inner box 8 B (< 16 B)"),
                                    (4, 3, 64, 8, "128B swizzle, u32 inner box 256 B")):
        out.append(_case("tma_encode", f"encode e{esize} swz{[0, 32, 64, 128][swz] or 'none'} box {bw}x{bh}: {why}",
                         zero, mask=0, esize=esize, swz=swz, bw=bw, bh=bh, why=why))
    return out


def all_cases() -> list[dict]:
    rng = random.Random(12)
    cases = cp_cases(rng) + atom_cases(rng) + tma_cases()
    for i, c in enumerate(cases):
        c["idx"] = i
    return cases


def case_line(c: dict) -> str:
    t = c.get
    head = [c["idx"], c["kernel"], f"{c['mask']:x}", t("esize", 0), t("swz", 0), *(t("box") or [0, 0]),
            *(t("coord") or [0, 0]), t("mode", 0)]
    return " ".join(str(v) for v in head + c["s"] + c["g"])


def write_cases(txt: str, js: str) -> list[dict]:
    cases = all_cases()
    Path(txt).write_text("".join(case_line(c) + "\n" for c in cases))
    Path(js).write_text(json.dumps(cases, indent=0))
    return cases


# ---------------------------------------------------------------- metrics

_COMMON = [r"^smsp__inst_executed_op_(shared|global|ldgsts|generic|ldsm|stsm)",
           r"^smsp__sass_inst_executed_op_(shared|global|ldgsts|atom|red|ld$|st$)",
           r"^l1tex__data_pipe_lsu_wavefronts(_mem_shared)?(_op_ld|_op_st|_op_atom|_op_red|_op_ldgsts|_cmd_read|_cmd_write)?$",
           r"^l1tex__data_bank_conflicts_pipe_lsu(_mem_shared)?(_op_\w+|_cmd_\w+)?$",
           r"^l1tex__data_bank_(reads|writes)$"]
GROUPS = {  # the kind's own patterns first (the list is cut at MAX_METRICS)
    "cp": [r"ldgsts", r"^l1tex__t_(requests|sectors)_pipe_lsu_mem_global_op_ld$",
           r"^l1tex__t_(sectors|requests)_pipe_lsu_mem_global_op_ld_(lookup_hit|lookup_miss)$",
           r"^l1tex__data_bank_(reads|writes)\w*$", r"set_conflicts\w*ld",
           r"^l1tex__m_xbar2l1tex_read_(bytes|sectors)$", r"^lts__t_sectors_srcunit_tex_op_read$"] + _COMMON,
    "atom": [r"^(l1tex|smsp|sm)__\w*shared\w*(atom|_red)\w*$", r"^(l1tex|smsp|sm)__\w*(atom|_red)\w*shared\w*$",
             r"^smsp__\w*(atom|_red)\w*$", r"^l1tex__data_bank_(reads|writes)\w*$", r"set_conflicts\w*(atom|red)",
             r"^l1tex__\w*(atom|_red)\w*$"] + _COMMON,
    "tma": [r"^(l1tex|smsp|sm)__\w*(tma|utma|bulk|tensor_map)\w*$", r"^l1tex__data_bank_(reads|writes)\w*$",
            r"^l1tex__data_pipe_\w*wavefronts\w*$", r"^smsp__inst_executed_op_\w*$",
            r"^l1tex__m_xbar2l1tex_read_(bytes|sectors)$", r"^lts__t_sectors_srcunit_tex_op_read$"] + _COMMON,
}
MAX_METRICS = 64
# Always wanted where they exist (the ten contract metrics and the kind's own instruction counts).
CORE = ["smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
        "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
        "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"]
FALLBACK = CORE + ["smsp__inst_executed_op_ldgsts.sum", "smsp__inst_executed_op_shared_atom.sum"]


def query_names(text: str) -> set[str]:
    """Every metric name in ``ncu --query-metrics[-mode all]`` output (first column)."""
    names = set()
    for ln in text.splitlines():
        m = re.match(r"^\s*([a-z][a-z0-9_]*__[a-z0-9_]+(?:\.[a-z0-9_.]+)?)\b", ln)
        if m:
            names.add(m.group(1))
    return names


def pick_metrics(text: str, group: str) -> list[str]:
    names = query_names(text)
    with_sum = {n for n in names if n.endswith(".sum")}
    bases = {n[:-4] for n in with_sum} or {n for n in names if "." not in n}
    picked = [m for m in CORE if not names or m in with_sum or m[:-4] in bases]
    for pat in GROUPS[group]:
        for b in sorted(bases):
            if re.search(pat, b) and not b.endswith(("_pct", "_ratio", "_per_second")):
                m = b + ".sum"
                if m not in picked:
                    picked.append(m)
    extra = [m for m in FALLBACK if m not in picked and (m in with_sum or m[:-4] in bases)]
    picked += extra
    return picked[:MAX_METRICS]


# ---------------------------------------------------------------- collect


def parse_status(text: str):
    """Host-program output -> ({idx: status}, {idx: placement words})."""
    status, place = {}, {}
    for ln in text.splitlines():
        p = ln.split()
        if len(p) >= 3 and p[0] == "CASE":
            status[int(p[1])] = " ".join(p[2:])
        elif len(p) >= 3 and p[0] == "PLACE":
            place[int(p[1])] = [int(w, 16) for w in p[3:]]
    return status, place


def decode_placement(c: dict, words: list[int]) -> dict:
    """Which element (row, col) of the tensor landed at each byte offset of the tile."""
    esize, (bw, bh), (x0, y0) = c["esize"], c["box"], c["coord"]
    raw = b"".join(w.to_bytes(4, "little") for w in words)
    elems = [int.from_bytes(raw[i:i + esize], "little") for i in range(0, len(raw), esize)]
    sentinel = (1 << (8 * esize)) - 1
    # check the swizzle guess: logical offset of (r, c) in the box -> byte offset
    span = c["swizzle"]
    row_bytes = bw * esize
    mism = 0
    checked = 0
    for r in range(bh):
        for col in range(bw):
            gr, gc = y0 + r, x0 + col
            if gr >= 128 or gc >= 256:
                continue
            logical = r * row_bytes + col * esize
            off = swizzle_bytes(logical, span)
            checked += 1
            if off // esize >= len(elems) or elems[off // esize] != (gr * 256 + gc) % (1 << (8 * esize)):
                mism += 1
    box_bytes = bw * bh * esize
    written = sum(1 for k in range(len(elems)) if elems[k] != sentinel) * esize
    return {"bytes_written": written, "box_bytes": box_bytes, "guess_checked": checked,
            "guess_mismatches": mism,
            "elements": elems, "element_is": "row * 256 + col of the tensor (mod 2^(8*esize)); all ones = not written"}


def collect(cases_json: str, place_txt: str, out_json: str, csv_paths: list[str]) -> dict:
    from viz.gpu.ncu import parse_launches

    cases = json.loads(Path(cases_json).read_text())
    status, place = parse_status(Path(place_txt).read_text() if Path(place_txt).exists() else "")
    by_idx = {c["idx"]: c for c in cases}
    for c in cases:
        c["status"] = status.get(c["idx"], "not run")
    for pth in csv_paths:
        if not Path(pth).exists():
            continue
        text = Path(pth).read_text(errors="replace")
        st, _ = parse_status(text)
        launched = [i for i, s in st.items() if s.startswith("LAUNCHED")]
        prof = parse_launches(text)
        k = 0
        for i in launched:
            c = by_idx[i]
            while k < len(prof) and prof[k][0] != c["kernel"]:
                k += 1
            if k < len(prof):
                c.setdefault("counters", {}).update(prof[k][1])
                k += 1
    for i, words in place.items():
        by_idx[i]["placement"] = decode_placement(by_idx[i], words)
    res = {"cases": cases}
    Path(out_json).write_text(json.dumps(res, indent=1))
    n = sum(1 for c in cases if c.get("counters"))
    print(f"cp_async_tma_atomics collect: {len(cases)} cases, {n} with counters, {len(place)} placements -> {out_json}")
    return res


def dry(d: Path) -> int:
    cases = write_cases(str(d / "cases.txt"), str(d / "cases.json"))
    lines = (d / "cases.txt").read_text().splitlines()
    assert len(lines) == len(cases) and all(len(ln.split()) == 10 + 64 for ln in lines), "case lines"
    query = "\n".join(f"{m[:-4]}  Counter  sum of something" for m in FALLBACK + ["smsp__inst_executed_op_ldgsts_cache_access"])
    for group in GROUPS:
        ms = pick_metrics(query, group)
        assert ms[:len(CORE)] == CORE and len(ms) <= MAX_METRICS, (group, ms)
    place = "".join(f"CASE {c['idx']} LAUNCHED\n" for c in cases)
    (d / "place.txt").write_text(place)
    doc = collect(str(d / "cases.json"), str(d / "place.txt"), str(d / "results.json"), [])
    assert all(c["status"] == "LAUNCHED" for c in doc["cases"])
    kinds = {}
    for c in cases:
        kinds[c["kernel"]] = kinds.get(c["kernel"], 0) + 1
    print(f"dry: {len(cases)} cases {kinds}; metrics picked for {', '.join(GROUPS)}; collect ok")
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--dry":
        if len(argv) > 1:
            return dry(Path(argv[1]))
        import tempfile
        with tempfile.TemporaryDirectory() as t:
            return dry(Path(t))
    if argv and argv[0] == "cases":
        cases = write_cases(argv[1], argv[2])
        kinds = {}
        for c in cases:
            kinds[c["kernel"]] = kinds.get(c["kernel"], 0) + 1
        print(f"cp_async_tma_atomics: {len(cases)} cases", kinds)
        return 0
    if argv and argv[0] == "metrics":
        text = Path(argv[1]).read_text(errors="replace") if Path(argv[1]).exists() else ""
        ms = pick_metrics(text, argv[2])
        Path(argv[3]).write_text(",".join(ms))
        print(f"cp_async_tma_atomics: {len(ms)} metrics for {argv[2]}")
        return 0
    if argv and argv[0] == "fallback":
        Path(argv[1]).write_text(",".join(FALLBACK))
        return 0
    if argv and argv[0] == "collect":
        collect(argv[1], argv[2], argv[3], argv[4:])
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
