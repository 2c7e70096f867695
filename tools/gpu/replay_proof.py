"""The replay proof on the GPU: for each kernel of kernels/replay/, trace the kernel as
written and the kernel with the layout change applied in its source (a -D of the same file),
both with ``--validate`` (Nsight Compute); replay the first's trace with that layout and check

* the replay's counts equal the changed kernel's on every shared-memory counter (the ten's
  shared ones and the counters beside them: atomics, LDSM), and the changed kernel's trace
  equals Nsight Compute (``--validate``);
* the predicted change in time (the cost model on the replayed trace vs on the original, each
  with its kernel's registers and shared memory) is within 20% of the measured change
  (``warpviz bench --traces``: median of back-to-back launches).

Run from the repository root on the GPU machine (tools/gpu/replay_proof.sh does it)::

    python3 tools/gpu/replay_proof.py --out "$OUT/replay_proof" [--only transpose_coalesced,...] [--no-bench]

Writes ``OUT/summary.json`` and ``summary.md`` (rewritten after each step), the traces and the
bench results. Without a GPU, ``--build-only`` compiles and instruments every launch file.
A Triton kernel is not among them: Triton picks its shared layouts itself (its traces show no
conflicts to fix: assets/traces/triton_*), so there is no source change to apply by hand; the
identity replay of shipped Triton traces is checked in tests/test_replay.py.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
KERNELS = ROOT / "kernels" / "replay"
# (kernel as written, array, shape or None (its declaration's), elem bytes or None, layout, changed kernel)
CASES = [
    ("transpose_coalesced", "tile", None, None, "pad:1", "transpose_coalesced_pad1"),
    ("transpose_coalesced", "tile", None, None, "xor", "transpose_coalesced_xor"),
    ("sgemm_nt", "Bs", None, None, "pad:1", "sgemm_nt_pad1"),
    ("sgemm_nt", "Bs", None, None, "xor", "sgemm_nt_xor"),
    ("stencil_halo", "s", None, None, "pad:1", "stencil_halo_pad1"),
    ("histogram_lanes", "bins", None, None, "pad:1", "histogram_lanes_pad1"),
    ("ldmatrix_tile", "tile", (64, 64), None, "swizzle:3,3,3", "ldmatrix_tile_swz"),
]
WITHIN = 0.20


def shared_counters(metrics: dict, other: dict) -> dict:
    out = {k: v for k, v in metrics.items() if "shared" in k}
    out.update({k: v for k, v in other.items() if "shared" in k or "ldsm" in k})
    return out


def trace(name: str, out: Path, log) -> dict:
    path = out / f"{name}.wvtrace"
    t0 = time.time()
    p = subprocess.run([sys.executable, "-m", "viz.cli", "trace", str(KERNELS / f"{name}.launch.toml"), "--validate",
                        "--json", "--out", str(path)], capture_output=True, text=True, timeout=300)
    log(f"trace {name}: rc={p.returncode} in {time.time() - t0:.1f} s {p.stderr.strip()[-400:]}")
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        return {"error": (p.stderr or p.stdout)[-800:], "rc": p.returncode}
    v = doc.get("validation") or {}
    return {"rc": p.returncode, "path": str(path), "match": v.get("match"),
            "other_match": all(r.get("match") for r in v.get("other") or []),
            "rows": v.get("rows"), "other": v.get("other")}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--only", default="")
    ap.add_argument("--no-bench", action="store_true")
    ap.add_argument("--build-only", action="store_true")
    a = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    only = {x for x in a.only.split(",") if x}
    cases = [c for c in CASES if not only or c[0] in only]
    names = list(dict.fromkeys(n for c in cases for n in (c[0], c[5])))
    if a.build_only:
        from viz.trace.build import build
        from viz.trace.launch import load_launch

        for n in names:
            b = build(load_launch(KERNELS / f"{n}.launch.toml"), "sm_90")
            print(n, len(b.instrs), "memory instructions")
        return 0
    logf = open(out / "log.txt", "a")

    def log(msg: str) -> None:
        print(msg, flush=True)
        logf.write(msg + "\n")
        logf.flush()

    summary = {"cases": [], "traces": {}, "within": WITHIN}

    def save() -> None:
        (out / "summary.json").write_text(json.dumps(summary, indent=1))
        (out / "summary.md").write_text(markdown(summary))

    for n in names:
        summary["traces"][n] = trace(n, out, log)
        save()
    from viz.trace import tracefile
    from viz.trace.analysis import analyze_trace
    from viz.trace.replay import replay, shared_wavefronts

    for base, array, shape, eb, layout, changed in cases:
        row = {"kernel": base, "array": array, "layout": layout, "changed": changed,
               "shape": list(shape) if shape else None, "elem_bytes": eb}
        summary["cases"].append(row)
        try:
            t = tracefile.load(out / f"{base}.wvtrace")
            c = tracefile.load(out / f"{changed}.wvtrace")
        except Exception as err:  # noqa: BLE001 - a trace that failed is in its row
            row["error"] = f"{type(err).__name__}: {err}"[:400]
            save()
            continue
        rp = replay(t, array, shape, eb, layout)
        got = shared_counters(rp.analysis.metrics, rp.analysis.other_metrics)
        ca = analyze_trace(c)
        want = shared_counters(ca.metrics, ca.other_metrics)
        ncu = {k: c.header.get("ncu", {}).get(k, c.header.get("ncu_other", {}).get(k)) for k in want}
        keys = sorted(set(got) | set(want))
        row.update(replay={k: got.get(k, 0) for k in keys}, changed_trace={k: want.get(k, 0) for k in keys},
                   changed_ncu=ncu, counts_equal=all(got.get(k, 0) == want.get(k, 0) for k in keys),
                   ncu_equal=all(ncu.get(k) is None or int(ncu[k]) == want.get(k, 0) for k in keys),
                   wavefronts_before=shared_wavefronts(rp.before), wavefronts_after=shared_wavefronts(rp.analysis),
                   shared_bytes=[rp.shared_before, rp.shared_after], split_lanes=rp.split_lanes)
        tracefile.save(rp.trace, out / f"{base}+{layout.replace(':', '').replace(',', '-')}.replay.wvtrace")
        log(f"{base} {layout}: replay = changed on every shared counter: {row['counts_equal']}; "
            f"changed = Nsight Compute: {row['ncu_equal']}")
        save()
    if not a.no_bench:
        bench(summary, names, cases, out, log)
    save()
    log(markdown(summary))
    ok = all(r.get("counts_equal") and r.get("ncu_equal") and r.get("time_within", True) for r in summary["cases"])
    return 0 if ok else 1


def bench(summary: dict, names: list[str], cases, out: Path, log) -> None:
    """Time every traced launch, then per case the predicted and measured change."""
    paths = [str(out / f"{n}.wvtrace") for n in names] + [str(KERNELS / f"{n}.launch.toml") for n in names]
    t0 = time.time()
    p = subprocess.run([sys.executable, "-m", "viz.cli", "bench", "--traces", *paths, "--out",
                        str(out / "bench.json")], capture_output=True, text=True, timeout=400)
    log(f"bench: rc={p.returncode} in {time.time() - t0:.1f} s {p.stderr.strip()[-400:]}")
    try:
        doc = json.loads((out / "bench.json").read_text())
    except (OSError, json.JSONDecodeError) as err:
        summary["bench_error"] = str(err)
        return
    from viz.gpu.predict import device_of, predict_trace
    from viz.trace import tracefile
    from viz.trace.replay import replay

    model = device_of(doc)
    entries = doc.get("traces") or {}
    for row in summary["cases"]:
        b, c = entries.get(row["kernel"], {}), entries.get(row["changed"], {})
        tb, tc = (b.get("timing") or {}).get("median_ms"), (c.get("timing") or {}).get("median_ms")
        if not tb or not tc or "error" in row:
            row["time_error"] = b.get("error") or c.get("error") or "not timed"
            continue
        sets = ((b.get("timing") or {}).get("scale") or {}).get("buffer_sets")
        t = tracefile.load(out / f"{row['kernel']}.wvtrace")
        rp = replay(t, row["array"], tuple(row["shape"]) if row["shape"] else None, row["elem_bytes"], row["layout"])
        pb = predict_trace(t, model, resources=b.get("resources"), buffer_sets=sets).seconds
        res = dict(c.get("resources") or {})
        res.setdefault("shared_bytes", rp.shared_after)
        pc = predict_trace(rp.trace, model, resources=res, buffer_sets=sets).seconds
        measured, predicted = tc / tb, pc / pb
        row.update(measured_ms=[tb, tc], predicted_ms=[pb * 1e3, pc * 1e3], measured_change=measured,
                   predicted_change=predicted, time_within=abs(predicted / measured - 1) <= WITHIN)


def markdown(summary: dict) -> str:
    out = ["| kernel | array | layout | replay = changed kernel (shared counters) | changed = Nsight Compute | "
           "wavefronts before → after | measured time change | predicted | within 20% |",
           "|---|---|---|---|---|---|---|---|---|"]
    for r in summary["cases"]:
        if "error" in r:
            out.append(f"| {r['kernel']} | {r['array']} | {r['layout']} | error: {r['error'][:80]} | | | | | |")
            continue
        m = f"{r['measured_change']:.3f}" if "measured_change" in r else r.get("time_error", "")
        pr = f"{r['predicted_change']:.3f}" if "predicted_change" in r else ""
        out.append(f"| {r['kernel']} | {r['array']} | {r['layout']} | {r.get('counts_equal')} | {r.get('ncu_equal')} | "
                   f"{r.get('wavefronts_before', 0):,} → {r.get('wavefronts_after', 0):,} | {m} | {pr} | "
                   f"{r.get('time_within', '')} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    sys.exit(main())
