"""The atomics probe's cases, metrics and results (tools/probes/atomics.sh runs it on the
H100; every command also runs here, without a GPU):

  python3 tools/probes/atomics.py cases CASES.txt CASES.json
      every case: kernel (tools/probes/atomics.cu), active mask, uniform offset, per-lane
      byte offsets, and what warpviz's model counts for it
  python3 tools/probes/atomics.py metrics QUERY.txt OUT.txt
      the metrics to ask Nsight Compute for: the contract's ten, the atomics' own
      (shared ``..._op_atom``, global ``..._op_atom`` / ``..._op_red`` instructions, requests
      and sectors) and whatever else ``ncu --query-metrics`` lists about atomics
  python3 tools/probes/atomics.py collect CASES.json OUT.json NCU.csv...
      joins the cases with the counters of each launch (launch order, checked by kernel
      name), subtracts each kernel's baseline (the case with no active lane), and prints
      model vs H100 per case and metric
  python3 tools/probes/atomics.py --dry [DIR]
      no GPU: the cases, the metric choice on a made-up list, and the recheck of the model
      against counters equal to it (DIR, or a temporary folder)

What it measures: shared ATOMS.ADD (old value read, and ``red``), ATOMS.POPC.INC
(``atomicAdd(p, 1)``, result unused) and the single-lane ATOMS ptxas makes of an atomicAdd
on a uniform address; global RED and ATOM of 4 and 8 bytes (u32, u64, f32, f64) with the
same, consecutive and strided addresses, used and unused result, full and partial warps.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

LANES = range(32)
FULL = 0xFFFFFFFF
MASKS = {"full": FULL, "lane<20": (1 << 20) - 1, "lane==5": 1 << 5, "lane%2==0": 0x55555555, "none": 0}

SHARED_ATOM = ("smsp__inst_executed_op_shared_atom.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum",
               "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_atom.sum")
GLOBAL_ATOM = ("smsp__sass_inst_executed_op_global_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
               "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum")
GLOBAL_RED = ("smsp__inst_executed_op_global_red.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
              "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum")
WANTED = SHARED_ATOM + GLOBAL_ATOM + GLOBAL_RED + ("smsp__inst_executed_op_global_atom.sum",
                                                   "smsp__sass_inst_executed_op_global_red.sum",
                                                   "smsp__sass_inst_executed_op_shared_atom.sum")

# kernel: (space, bytes, SASS op: "atom" | "red" | "popc", aggregation as viz.kinds.build.aggregation names it)
KERNELS = {
    "s_atom_u32": ("shared", 4, "atom", "none"), "s_red_u32": ("shared", 4, "red", "none"),
    "s_popc_inc": ("shared", 4, "popc", "none"),
    "g_red_u32": ("global", 4, "red", "none"), "g_atom_u32": ("global", 4, "atom", "none"),
    "g_red_u64": ("global", 8, "red", "none"), "g_atom_u64": ("global", 8, "atom", "none"),
    "g_red_f32": ("global", 4, "red", "none"), "g_atom_f32": ("global", 4, "atom", "none"),
    "g_red_f64": ("global", 8, "red", "none"),
    # uniform address (a scalar parameter)
    "su_one_unused": ("shared", 4, "popc", "none"), "su_one_used": ("shared", 4, "atom", "highest"),
    "su_v_unused": ("shared", 4, "red", "highest"), "su_v_used": ("shared", 4, "atom", "lane31-full-warp"),
    "gu_one_unused": ("global", 4, "red", "highest"), "gu_one_used": ("global", 4, "atom", "highest"),
    "gu_v_used": ("global", 4, "atom", "lane31-full-warp"), "gu_u64_unused": ("global", 8, "red", "highest"),
    "gu_f32_unused": ("global", 4, "red", "none"),
}


def patterns(size: int, space: str) -> dict[str, list[int]]:
    """Per-lane byte offsets: same, consecutive, strided, colliding."""
    p = {
        "same address": [0] * 32,
        "consecutive": [i * size for i in LANES],
        "2 lanes per address": [(i // 2) * size for i in LANES],
        "4 lanes per address": [(i // 4) * size for i in LANES],
        "stride 32 B": [i * 32 for i in LANES],
        "stride 128 B": [i * 128 for i in LANES],
        "reversed": [(31 - i) * size for i in LANES],
    }
    if space == "shared":
        p["stride 2 words"] = [i * 8 for i in LANES]
        p["4 words of bank 0"] = [(i % 4) * 128 for i in LANES]
        p["8 words of bank 0, 4 lanes each"] = [(i // 4) * 128 for i in LANES]
    else:
        p["stride 64 B"] = [i * 64 for i in LANES]
        p["offset by one element"] = [(i + 1) * size for i in LANES]
        p["8 addresses in 8 lines"] = [(i % 8) * 128 for i in LANES]
    return p


def write_cases(txt: str, js: str) -> list[dict]:
    cases = []

    def add(kernel, name, off, mask=FULL, uoff=0):
        space, size, op, agg = KERNELS[kernel]
        c = {"idx": len(cases), "kernel": kernel, "name": name, "mask": mask, "uoff": uoff, "off": list(off),
             "space": space, "size": size, "op": op, "aggregate": agg}
        c["model"] = model(c)
        cases.append(c)

    for kernel, (space, size, _op, agg) in KERNELS.items():
        if kernel[1] == "u":                              # su_*, gu_*: uniform address
            for mname, m in MASKS.items():
                add(kernel, f"{kernel} uniform when {mname}", [0] * 32, m, 64)
            continue
        for pname, off in patterns(size, space).items():
            add(kernel, f"{kernel} {pname}", off)
        for mname in ("lane<20", "lane==5", "none"):
            add(kernel, f"{kernel} same address when {mname}", [0] * 32, MASKS[mname])
            add(kernel, f"{kernel} consecutive when {mname}", [i * size for i in LANES], MASKS[mname])
    Path(txt).write_text("".join(f"{c['idx']} {c['kernel']} {c['mask']:x} {c['uoff']} "
                                 + " ".join(map(str, c["off"])) + "\n" for c in cases))
    Path(js).write_text(json.dumps(cases, indent=1))
    return cases


def model(c: dict) -> dict[str, int]:
    """What warpviz counts for one case (viz.kinds.atomics, as a scenario would)."""
    import numpy as np

    from viz.kinds.atomics import aggregate_mask, count_atomic, count_global_atomic, full_warps

    reach = np.array([(c["mask"] >> i) & 1 == 1 for i in LANES])[None, :]
    addr = np.array([c["uoff"] if c["kernel"][1] == "u" else c["off"][i] for i in LANES], np.int64)[None, :]
    mask = aggregate_mask(reach, c["aggregate"], 32)
    issued = int(mask.any())
    if c["space"] == "shared":
        wf, ph, _a, _d = count_atomic(addr, mask, 1, c["op"] != "popc")
        fallback = full_warps(reach, 32) if c["aggregate"] == "lane31-full-warp" else 0
        return dict(zip(SHARED_ATOM, (issued + fallback, int(wf.sum()), int(wf.sum() - ph.sum()))))
    sectors = count_global_atomic(addr, mask, 1)
    names = GLOBAL_RED if c["op"] == "red" else GLOBAL_ATOM
    return dict(zip(names, (issued, issued, int(sectors.sum()))))


def recheck(results_json: str) -> int:
    """The model of today against the counters a run measured: the cases that differ."""
    doc = json.loads(Path(results_json).read_text())
    bad = []
    for c in doc["cases"]:
        m = model(c)
        if any(c["hardware"].get(k) != v for k, v in m.items()):
            bad.append((c["name"], m, {k: c["hardware"].get(k) for k in m}))
    for name, m, hw in bad:
        print(f"  DIFF {name}: model {m} H100 {hw}")
    print(f"atomics: {len(doc['cases'])} cases, {len(doc['cases']) - len(bad)} equal to the model")
    return 1 if bad else 0


def query_names(text: str) -> set[str]:
    names = set()
    for ln in text.splitlines():
        m = re.match(r"^\s*([a-z][a-z0-9_]*__[a-z0-9_]+(?:\.[a-z0-9_.]+)?)\b", ln)
        if m:
            names.add(m.group(1))
    return names


def pick_metrics(text: str) -> list[str]:
    """The wanted metrics that ncu lists (all of them when it lists none: then ncu says which
    it does not know), and the other atomics counters it has."""
    from viz.engine import METRIC_NAMES

    names = query_names(text)
    bases = {n[:-4] if n.endswith(".sum") else n for n in names}
    have = lambda m: not names or m in names or m[:-4] in bases  # noqa: E731
    out = [m for m in (*METRIC_NAMES, *WANTED) if have(m)]
    for b in sorted(bases):
        if re.search(r"(_op_atom|_op_red|atom_|red_)", b) and ("global" in b or "shared" in b) \
                and not b.endswith(("_pct", "_ratio", "_per_second")) and b + ".sum" not in out:
            out.append(b + ".sum")
    return out[:64]


def collect(cases_json: str, out_json: str, csv_paths: list[str]) -> dict:
    from viz.gpu.ncu import parse_launches

    cases = json.loads(Path(cases_json).read_text())
    by_idx = {c["idx"]: c for c in cases}
    for pth in csv_paths:
        if not Path(pth).exists():
            continue
        text = Path(pth).read_text(errors="replace")
        launched = [int(ln.split()[1]) for ln in text.splitlines() if ln.startswith("CASE ") and "LAUNCHED" in ln]
        prof = parse_launches(text)
        k = 0
        for i in launched:
            c = by_idx[i]
            while k < len(prof) and prof[k][0] != c["kernel"]:
                k += 1
            if k < len(prof):
                c["raw"] = prof[k][1]
                k += 1
    base = {c["kernel"]: c["raw"] for c in cases if c["mask"] == 0 and "raw" in c}
    ok = bad = 0
    for c in cases:
        if "raw" not in c:
            continue
        b = base.get(c["kernel"], {})
        c["hardware"] = {m: v - b.get(m, 0) for m, v in c["raw"].items()}
        c["match"] = all(c["hardware"].get(m) == v for m, v in c["model"].items())
        ok += c["match"]
        bad += not c["match"]
    Path(out_json).write_text(json.dumps({"what": "atomics probe (tools/probes/atomics.sh): counters minus the "
                                          "same kernel with no active lane", "cases": cases}, indent=1))
    print(f"atomics: {len(cases)} cases, {ok} equal to the model, {bad} differ -> {out_json}")
    for c in cases:
        if "hardware" not in c:
            print(f"  {c['name']}: no counters")
            continue
        hw = "  ".join(f"{m.split('__')[1][:44]}={c['hardware'].get(m)}" for m in c["model"])
        md = "  ".join(f"{v}" for v in c["model"].values())
        print(f"  {'ok ' if c['match'] else 'DIFF'} {c['name']:48s} H100: {hw}   model: {md}")
    return {"equal": ok, "differ": bad}


def dry(d: Path) -> int:
    from viz.engine import METRIC_NAMES

    cases = write_cases(str(d / "cases.txt"), str(d / "cases.json"))
    ms = pick_metrics("\n".join(f"{m[:-4]}  Counter  made up" for m in (*METRIC_NAMES, *WANTED)))
    assert set(METRIC_NAMES) <= set(ms), ms
    for c in cases:
        c["hardware"] = dict(model(c))
    (d / "results.json").write_text(json.dumps({"cases": cases}))
    assert recheck(str(d / "results.json")) == 0
    print(f"dry: {len(cases)} cases over {len(KERNELS)} kernels, {len(ms)} metrics; the recheck reads them")
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
        print(f"atomics: {len(cases)} cases over {len(KERNELS)} kernels")
        return 0
    if argv and argv[0] == "metrics":
        text = Path(argv[1]).read_text(errors="replace") if Path(argv[1]).exists() else ""
        ms = pick_metrics(text)
        Path(argv[2]).write_text(",".join(ms))
        print(f"atomics: {len(ms)} metrics")
        return 0
    if argv and argv[0] == "recheck":
        return recheck(argv[1])
    if argv and argv[0] == "collect":
        collect(argv[1], argv[2], argv[3:])
        return 0
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
