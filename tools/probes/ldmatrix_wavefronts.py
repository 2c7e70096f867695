"""ldmatrix / stmatrix probe on the H100 (ldmatrix_wavefronts.sh): cases, metric choice, results.

Standard library only (runs on the device machine before or without warpviz).

  python3 ldmatrix_wavefronts.py cases DIR            write DIR/cases.txt, DIR/cases_wide.txt (for
                                          ldmatrix_wavefronts.cu), DIR/cases.json (name, op, num,
                                          trans, warps, the exact per-lane byte offsets of
                                          every warp) and DIR/runs.txt (the ncu runs)
  python3 ldmatrix_wavefronts.py metrics BASE [ALL] DIR
                                          pick, from `ncu --query-metrics` (BASE) and
                                          `--query-metrics-mode all` (ALL, optional), every
                                          counter about shared memory / LDSM / STSM that
                                          exists; write DIR/metrics_core.txt (all cases)
                                          and DIR/metrics_wide.txt (the subset of cases)
  python3 ldmatrix_wavefronts.py collect DIR OUT.json CSV...
                                          merge ncu --csv outputs (launch order = the case
                                          order of the run each CSV is, DIR/runs.json)
                                          with the cases into OUT.json
  python3 ldmatrix_wavefronts.py --dry [DIR]         everything above on a made-up query and CSV, to
                                          test the script without a GPU (DIR, or a
                                          temporary folder)

Each case is ONE block of 32*warps threads executing exactly one ldmatrix/stmatrix per
warp (m8n8, b16) with the given row addresses (byte offsets into a 1024-byte aligned
shared buffer). Lane l supplies the row address of row l%8 of matrix l/8; for .x1 only
lanes 0-7 matter, for .x2 lanes 0-15 (the "unused" cases vary the others).
"""

from __future__ import annotations

import csv
import io
import json
import random
import re
import sys
from pathlib import Path

SMEM = 32768
OPS = {"ldsm": 0, "stsm": 1}


def sw(off: int, b: int, m: int = 4, s: int = 3) -> int:
    """CuTe Sw<B,M,S> on a byte offset (TMA 32/64/128-byte swizzle = Sw<1|2|3,4,3>)."""
    mask = ((1 << b) - 1) << (m + s)
    return off ^ ((off & mask) >> s)


def tile(pitch: int, c0: int = 0, b: int = 0) -> list[int]:
    """The usual 16x16 b16 sub-tile read by ldmatrix.x4 (CUTLASS/FlashAttention): lane l
    gives row l%16, 16-byte chunk c0 + l/16 of a row-major tile with `pitch` bytes a row,
    optionally swizzled with Sw<b,4,3>."""
    out = []
    for lane in range(32):
        o = (lane % 16) * pitch + (c0 + lane // 16) * 16
        out.append(sw(o, b) if b else o)
    return out


def f(fn) -> list[int]:
    return [fn(lane, lane // 8, lane % 8) for lane in range(32)]


def patterns() -> dict[str, list[int]]:
    """Per-lane row byte offsets (one warp). l = lane, m = matrix (l/8), r = row (l%8)."""
    p: dict[str, list[int]] = {}
    p["contig"] = f(lambda l, m, r: 16 * l)
    for s in (32, 48, 64, 80, 96, 112, 128, 144, 160, 192, 256, 272, 512, 1024):
        p[f"stride{s}"] = f(lambda l, m, r, s=s: s * l)
    p["same-addr"] = [0] * 32
    p["same-addr-per-matrix"] = f(lambda l, m, r: 16 * m)                 # each matrix one row 8x
    p["same-addr-per-matrix-samebank"] = f(lambda l, m, r: 128 * m)      # 4 matrices, 4 rows on banks 0-3
    p["matrices-identical"] = f(lambda l, m, r: 16 * r)                   # all matrices the same 8 rows
    p["pairs"] = f(lambda l, m, r: 16 * (l // 2))                         # rows repeated 2x
    p["quads"] = f(lambda l, m, r: 16 * (l // 4))                         # rows repeated 4x
    p["pairs-samebank"] = f(lambda l, m, r: 128 * (l // 2))               # 2 copies of each of 4 rows on one bank quad
    p["2way"] = f(lambda l, m, r: 16 * (r % 4) + 128 * (r // 4) + 256 * m)
    p["4way"] = f(lambda l, m, r: 16 * (r % 2) + 128 * (r // 2) + 512 * m)
    p["8way"] = f(lambda l, m, r: 128 * r + 1024 * m)
    p["mixed-1-2-4-8"] = [[16 * r, 16 * (r % 4) + 128 * (r // 4), 16 * (r % 2) + 128 * (r // 2), 128 * r][m]
                          + 4096 * m for m in range(4) for r in range(8)]
    p["mixed-8-4-2-1"] = [[128 * r, 16 * (r % 2) + 128 * (r // 2), 16 * (r % 4) + 128 * (r // 4), 16 * r][m]
                          + 4096 * m for m in range(4) for r in range(8)]
    # matrix m uses only half the banks (2-way inside); do two matrices on disjoint halves merge?
    p["half-banks"] = f(lambda l, m, r: 64 * (m % 2) + 16 * (r % 4) + 512 * (r // 4) + 1024 * (m // 2))
    p["half-banks-same-half"] = f(lambda l, m, r: 16 * (r % 4) + 512 * (r // 4) + 1024 * m)
    p["dup-2way"] = f(lambda l, m, r: 16 * (r % 4) + 128 * m)            # rows r, r+4 identical
    p["dup-across-matrices"] = f(lambda l, m, r: 16 * r + 128 * (m % 2))  # matrices 0,2 and 1,3 identical
    for pitch in (32, 64, 128, 144, 256, 272):
        p[f"tile-pitch{pitch}"] = tile(pitch)
    p["tile-pitch128-sw128"] = tile(128, 0, 3)
    p["tile-pitch128-sw128-c2"] = tile(128, 2, 3)
    p["tile-pitch128-c2"] = tile(128, 2)
    p["tile-pitch64-sw64"] = tile(64, 0, 2)
    p["tile-pitch32-sw32"] = tile(32, 0, 1)
    p["tile-pitch128-sw64"] = tile(128, 0, 2)
    p["tile-pitch128-sw32"] = tile(128, 0, 1)
    rng = random.Random(12)
    for i in range(3):
        p[f"rand-perm1k-{i}"] = [16 * x for x in rng.sample(range(64), 32)]
    for i in range(3):
        p[f"rand4k-{i}"] = [16 * rng.randrange(256) for _ in range(32)]
    for i in range(2):
        p[f"rand-rep-{i}"] = [16 * rng.randrange(24) for _ in range(32)]
    for i in range(2):
        p[f"rand32k-{i}"] = [16 * rng.randrange(SMEM // 16) for _ in range(32)]
    return p


# Variants of the lanes that .x1 / .x2 ignore: the rows they would name are changed.
def unused_variants(base: list[int], used: int) -> dict[str, list[int]]:
    return {
        "zero": base[:used] + [0] * (32 - used),
        "8way": base[:used] + [1024 + 128 * (i % 8) + 4096 * (i // 8) % 16384 for i in range(32 - used)],
        "rand": base[:used] + [16 * random.Random(used).randrange(SMEM // 16) for _ in range(32 - used)],
    }


def cases() -> list[dict]:
    p = patterns()
    out: list[dict] = []

    def add(name, op, num, trans, offs_per_warp):
        out.append({"name": name, "op": op, "num": num, "trans": trans, "warps": len(offs_per_warp),
                    "offsets": offs_per_warp})

    key = ["contig", "stride32", "stride64", "stride128", "same-addr", "matrices-identical", "pairs",
           "2way", "8way", "mixed-1-2-4-8", "half-banks", "dup-2way", "tile-pitch128", "tile-pitch128-sw128",
           "tile-pitch144", "rand-perm1k-0", "rand4k-0", "rand-rep-0"]
    # 1) ldmatrix, every pattern, .x1 .x2 .x4 (the rule's main evidence)
    for num in (4, 2, 1):
        for name, offs in p.items():
            add(f"ldsm.x{num}:{name}", "ldsm", num, 0, [offs])
    # 2) the lanes .x1 / .x2 ignore
    for num, used in ((1, 8), (2, 16)):
        for base in ("contig", "8way", "2way"):
            for v, offs in unused_variants(p[base], used).items():
                add(f"ldsm.x{num}:{base}+unused-{v}", "ldsm", num, 0, [offs])
    # 3) .trans on the key patterns
    for num in (4, 2, 1):
        for name in key:
            add(f"ldsm.x{num}.trans:{name}", "ldsm", num, 1, [p[name]])
    # 4) stmatrix: key patterns and a few more, .x4 .x2 .x1, then .trans
    st = key + ["stride16" if "stride16" in p else "stride48", "4way", "quads", "same-addr-per-matrix",
                "half-banks-same-half", "tile-pitch32", "tile-pitch64", "tile-pitch256", "tile-pitch64-sw64",
                "rand-perm1k-1", "rand4k-1", "rand32k-0"]
    for num in (4, 2, 1):
        for name in st:
            add(f"stsm.x{num}:{name}", "stsm", num, 0, [p[name]])
    for num in (4, 1):
        for v, offs in unused_variants(p["contig"], 8 * num if num < 4 else 32).items():
            if num < 4:
                add(f"stsm.x{num}:contig+unused-{v}", "stsm", num, 0, [offs])
    for num in (4, 2, 1):
        for name in ["contig", "8way", "2way", "same-addr", "pairs", "tile-pitch128", "tile-pitch128-sw128",
                     "rand4k-0"]:
            add(f"stsm.x{num}.trans:{name}", "stsm", num, 1, [p[name]])
    # 5) several warps in one block (counters add up per warp?), and warps with different patterns
    for op in ("ldsm", "stsm"):
        for name in ("contig", "8way", "2way", "tile-pitch128", "tile-pitch128-sw128"):
            add(f"{op}.x4:{name}*4warps", op, 4, 0, [p[name]] * 4)
        add(f"{op}.x4:contig|8way|2way|same-addr", op, 4, 0, [p["contig"], p["8way"], p["2way"], p["same-addr"]])
        add(f"{op}.x1:8way*8warps", op, 1, 0, [p["8way"]] * 8)
    for c in out:
        c["priority"] = (0 if (c["num"] == 4 or c["warps"] > 1) else 1) + (1 if c["trans"] and c["num"] < 4 else 0)
    out.sort(key=lambda c: c["priority"])     # stable: the most telling cases are profiled first
    for c in out:
        for offs in c["offsets"]:
            assert len(offs) == 32 and all(o % 16 == 0 and 0 <= o <= SMEM - 16 for o in offs), c["name"]
    return out


def wide_indices(cs: list[dict]) -> list[int]:
    """The cases profiled with every candidate counter (a spread of the kinds)."""
    want = {"contig", "8way", "2way", "same-addr", "pairs", "tile-pitch128-sw128", "rand4k-0", "half-banks"}
    return [i for i, c in enumerate(cs) if c["warps"] == 1 and c["name"].split(":")[1] in want and c["num"] == 4]


CHUNKS = 5


def case_lines(cs: list[dict]) -> str:
    lines = ["# name op num trans warps offsets (32 per warp)"]
    for c in cs:
        flat = [o for w in c["offsets"] for o in w]
        lines.append(" ".join([c["name"], str(OPS[c["op"]]), str(c["num"]), str(c["trans"]), str(c["warps"])]
                              + [str(o) for o in flat]))
    return "\n".join(lines) + "\n"


def write_cases(d: Path) -> list[dict]:
    """DIR/cases.json, DIR/cases.txt (all), DIR/cases_wide.txt (the wide subset) and
    DIR/runs.txt: one ncu run a line, "CSV CASEFILE FIRST LAST METRICSFILE", in order."""
    cs = cases()
    d.mkdir(parents=True, exist_ok=True)
    (d / "cases.txt").write_text(case_lines(cs))
    wide = wide_indices(cs)
    (d / "cases_wide.txt").write_text(case_lines([cs[i] for i in wide]))
    (d / "cases.json").write_text(json.dumps(cs))
    runs = []
    step = -(-len(cs) // CHUNKS)
    for k in range(CHUNKS):
        a, b = k * step, min(len(cs), (k + 1) * step)
        runs.append({"csv": f"core-{k + 1}.csv", "cases": "cases.txt", "first": a, "last": b,
                     "metrics": "metrics_core.txt", "indices": list(range(a, b))})
    # the wide run second: if time runs out, the last (least telling) core chunks go
    runs.insert(1, {"csv": "wide.csv", "cases": "cases_wide.txt", "first": 0, "last": len(wide),
                    "metrics": "metrics_wide.txt", "indices": wide})
    (d / "runs.json").write_text(json.dumps(runs))
    (d / "runs.txt").write_text("".join(f"{r['csv']} {r['cases']} {r['first']} {r['last']} {r['metrics']}\n"
                                        for r in runs))
    return cs


# ---- metrics ---------------------------------------------------------------------------

RELEVANT = re.compile(r"ldsm|stsm|shared|data_bank|lsu_wavefronts|lsuin_requests")
SKIP = re.compile(r"pct|per_second|peak|utilization|throughput|busy|_lookup|ldgsts|dsmem|global|local|"
                  r"_tex_|texture|surface|_atom|_red_|cycles|stall|warps_issue")
CORE = re.compile(r"ldsm|stsm|"
                  r"^l1tex__data_pipe_lsu_wavefronts_mem_shared(_op_ld|_op_st|_cmd_read|_cmd_write)?$|"
                  r"^l1tex__data_bank_conflicts_pipe_lsu_mem_shared(_op_ld|_op_st)?$|"
                  r"^l1tex__data_bank_(reads|writes)$|"
                  r"^smsp__(sass_)?inst_executed_op_shared(_ld|_st)?$|"
                  r"^l1tex__t_requests_pipe_lsu_mem_shared|"
                  r"^smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared|"
                  r"^l1tex__data_pipe_lsu_wavefronts$")
ALWAYS = ("smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
          "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum")
NAME = re.compile(r"^\s*((?:l1tex|smsp|sm|lts)__[a-z0-9_.]+)")


def names_in(text: str) -> list[str]:
    seen: dict[str, None] = {}
    for line in text.splitlines():
        m = NAME.match(line)
        if m:
            seen.setdefault(m.group(1), None)
    return list(seen)


def pick_metrics(base_text: str, all_text: str = "") -> tuple[list[str], list[str]]:
    """(core, wide) metric names with their .sum suffix, only ones the query listed."""
    base = [n for n in names_in(base_text) if "." not in n]
    full = set(names_in(all_text))
    cand = []
    for n in base:
        if not RELEVANT.search(n) or SKIP.search(n):
            continue
        if full and n + ".sum" not in full:
            continue                    # a ratio or throughput: no .sum
        cand.append(n)
    core = [n + ".sum" for n in cand if CORE.search(n)]
    # the contract's shared metrics first, whatever the filters said (they exist on sm_90)
    for m in ALWAYS:
        if m[:-4] in base and m not in core:
            core.append(m)
    if not core:                        # the query failed: the counters known to exist on sm_90
        core = list(ALWAYS) + ["smsp__inst_executed_op_ldsm.sum"]
    core = core[:24]
    wide = [n + ".sum" for n in cand][:90]
    for m in core:
        if m not in wide:
            wide.append(m)
    return core, wide


# ---- results ---------------------------------------------------------------------------

def _number(text: str):
    t = text.strip().replace(",", "")
    try:
        v = float(t)
    except ValueError:
        return None
    return int(v) if v == int(v) else v


def parse_csv(text: str) -> list[dict]:
    """ncu --csv output -> [{metric: value}] in launch order (ID column)."""
    lines = [ln for ln in text.splitlines() if ln.startswith('"')]
    by_id: dict[int, dict] = {}
    if not lines:
        return []
    for row in csv.DictReader(io.StringIO("\n".join(lines))):
        try:
            i = int(row.get("ID", ""))
        except ValueError:
            continue
        e = by_id.setdefault(i, {"kernel": row.get("Kernel Name", ""), "metrics": {}})
        if row.get("Metric Name"):
            e["metrics"][row["Metric Name"]] = _number(row.get("Metric Value", ""))
    return [by_id[k] for k in sorted(by_id)]


def lanes_view(c: dict) -> dict:
    """Derived facts about a case's addresses (for reading the JSON): per warp and matrix,
    the rows (byte offsets), how many distinct, and the worst bank-quad degree."""
    used = 8 * c["num"]
    warps = []
    for offs in c["offsets"]:
        mats = []
        for m in range(c["num"]):
            rows = offs[8 * m: 8 * m + 8]
            distinct = sorted(set(rows))
            quads: dict[int, int] = {}
            for o in distinct:
                quads[(o // 16) % 8] = quads.get((o // 16) % 8, 0) + 1
            mats.append({"rows": rows, "distinct": len(distinct), "max_per_bank_quad": max(quads.values())})
        allrows = sorted(set(offs[:used]))
        q: dict[int, int] = {}
        for o in allrows:
            q[(o // 16) % 8] = q.get((o // 16) % 8, 0) + 1
        warps.append({"matrices": mats, "distinct_rows": len(allrows), "max_per_bank_quad_all": max(q.values())})
    return {"warps": warps}


def collect(d: Path, out: Path, csv_paths: list[str]) -> dict:
    cs = json.loads((d / "cases.json").read_text())
    runs = {r["csv"]: r["indices"] for r in json.loads((d / "runs.json").read_text())}
    results = [{**c, "derived": lanes_view(c), "counters": {}, "profiled_by": []} for c in cs]
    notes = []
    for path in csv_paths:
        p = Path(path)
        if not p.exists():
            notes.append(f"{p.name}: missing")
            continue
        launches = parse_csv(p.read_text(errors="replace"))
        idx = runs.get(p.name, [])
        if len(launches) != len(idx):
            notes.append(f"{p.name}: {len(launches)} launches profiled for {len(idx)} cases")
        for k, launch in enumerate(launches[: len(idx)]):
            r = results[idx[k]]
            targs = re.findall(r"\d+", launch["kernel"].split("<", 1)[1].split(">")[0]) if "<" in launch["kernel"] else []
            if targs and targs[-3:] != [str(OPS[r["op"]]), str(r["num"]), str(r["trans"])]:
                notes.append(f"{p.name}: launch {k} is {launch['kernel']}, case {r['name']} expected")
            r["counters"].update({m: v for m, v in launch["metrics"].items() if v is not None})
            r["profiled_by"].append(p.name)
    doc = {"probe": "ldmatrix", "cases": results, "notes": notes,
           "profiled": sum(1 for r in results if r["counters"])}
    out.write_text(json.dumps(doc, indent=1))
    return doc


def summary(doc: dict) -> str:
    """One line per case: the shared counters that are not zero."""
    lines = []
    for r in doc["cases"]:
        c = r["counters"]
        keys = [k for k in c if ("shared" in k or "ldsm" in k or "stsm" in k or "data_bank" in k) and c[k]]
        short = " ".join(f"{k.split('__', 1)[1].replace('.sum', '')}={c[k]}" for k in sorted(keys))
        lines.append(f"{r['name']:<46} {short}")
    return "\n".join(lines)


# ---- dry run -------------------------------------------------------------------------

FAKE_BASE = """Device NVIDIA H100 80GB HBM3 (GH100)
------------------------------------------------------------------------------
Metric Name                                              Metric Description
l1tex__data_bank_conflicts_pipe_lsu_mem_shared           # of data bank conflicts generated by LSU pipe for shared memory
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld     # of shared memory data bank conflicts generated by LDS, LD, LDSM
l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st     # of shared memory data bank conflicts generated by STS, ST, STSM
l1tex__data_bank_reads                                   # of data bank reads
l1tex__data_pipe_lsu_wavefronts_mem_shared               # of shared memory wavefronts processed by Data-Stage
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld         # of shared memory wavefronts for loads
l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st         # of shared memory wavefronts for stores
l1tex__data_pipe_lsu_wavefronts_mem_shared.pct_of_peak   not a counter
l1tex__throughput                                        L1 throughput
smsp__inst_executed_op_ldsm                              # of warp instructions executed: LDSM
smsp__inst_executed_op_shared_ld                         # of warp instructions executed: LDS
smsp__inst_executed_op_shared_st                         # of warp instructions executed: STS
smsp__sass_inst_executed_op_ldsm                         # of warp instructions executed: LDSM
smsp__sass_average_data_bytes_per_wavefront_mem_shared   ratio
l1tex__t_sectors_pipe_lsu_mem_global_op_ld               global
"""


def dry(d: Path) -> int:
    cs = write_cases(d)
    all_text = "\n".join(n + s for n in names_in(FAKE_BASE) for s in (".sum", ".avg", ".max")
                         if "average" not in n and "throughput" not in n)
    core, wide = pick_metrics(FAKE_BASE, all_text)
    assert "smsp__inst_executed_op_ldsm.sum" in core and not any("global" in m or "pct" in m for m in wide), (core, wide)
    assert not any("average" in m for m in wide), wide
    (d / "metrics_core.txt").write_text(",".join(core))
    (d / "metrics_wide.txt").write_text(",".join(wide))
    runs = json.loads((d / "runs.json").read_text())

    def fake_csv(idx, metrics):
        buf = io.StringIO()
        w = csv.writer(buf, quoting=csv.QUOTE_ALL)
        w.writerow(["ID", "Process ID", "Kernel Name", "Metric Name", "Metric Unit", "Metric Value"])
        for k, i in enumerate(idx):
            c = cs[i]
            kn = f"void probe<{OPS[c['op']]}, {c['num']}, {c['trans']}>(const unsigned int *, unsigned int *)"
            for m in metrics:
                w.writerow([k, 1, kn, m, "", f"{(i * 7 + len(m)) % 40:,}"])
        return "==PROF== Connected\nldmatrix-case 0 x\n" + buf.getvalue()

    for r in runs:
        (d / r["csv"]).write_text(fake_csv(r["indices"], core if r["csv"].startswith("core") else wide))
    paths = [str(d / r["csv"]) for r in runs]
    doc = collect(d, d / "ldmatrix.json", paths)
    assert doc["profiled"] == len(cs), doc["profiled"]
    assert not doc["notes"], doc["notes"]
    assert all(len(r["profiled_by"]) in (1, 2) for r in doc["cases"])
    print(summary(doc)[:2000])
    print(f"dry: {len(cs)} cases ({len(runs[1]['indices'])} wide), {len(core)} core metrics, "
          f"{len(wide)} wide metrics; collect ok")
    return 0


def main(argv: list[str]) -> int:
    if not argv:
        print(__doc__)
        return 2
    cmd, args = argv[0], argv[1:]
    if cmd == "cases":
        cs = write_cases(Path(args[0]))
        print(len(cs))
    elif cmd == "metrics":
        base = Path(args[0]).read_text(errors="replace")
        all_text = Path(args[1]).read_text(errors="replace") if len(args) > 2 and Path(args[1]).exists() else ""
        d = Path(args[-1])
        core, wide = pick_metrics(base, all_text)
        (d / "metrics_core.txt").write_text(",".join(core))
        (d / "metrics_wide.txt").write_text(",".join(wide))
        print(f"{len(core)} core metrics: {' '.join(core)}")
        print(f"{len(wide)} wide metrics")
    elif cmd == "collect":
        doc = collect(Path(args[0]), Path(args[1]), args[2:])
        print(summary(doc))
        print(f"profiled {doc['profiled']} of {len(doc['cases'])} cases; notes: {doc['notes']}")
    elif cmd in ("dry", "--dry"):
        if args:
            return dry(Path(args[0]))
        import tempfile
        with tempfile.TemporaryDirectory() as t:
            return dry(Path(t))
    else:
        print(__doc__)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
