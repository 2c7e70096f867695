"""Markdown tables of a results file (for docs/GPU.md): python tools/gpu/report_md.py [FILE]."""

import sys

from viz.engine import METRIC_NAMES
from viz.gpu import results

SHORT = {
    "smsp__inst_executed_op_shared_ld.sum": "sh ld inst",
    "smsp__inst_executed_op_shared_st.sum": "sh st inst",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum": "sh ld wf",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum": "sh st wf",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": "sh ld conf",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": "sh st conf",
    "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum": "gl ld req",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": "gl ld sec",
    "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum": "gl st req",
    "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum": "gl st sec",
}


def counters_table(doc, section="scenarios"):
    out = ["| " + " | ".join(["name", *SHORT.values(), "model = counters"]) + " |",
           "|" + "---|" * (len(SHORT) + 2)]
    for name, e in doc[section].items():
        m, hw = e.get("model") or {}, e.get("counters") or {}
        if not m:
            out.append(f"| {name} | " + " | ".join([""] * len(SHORT)) + f" | {e.get('error', '')[:60]} |")
            continue
        cells = []
        for k in METRIC_NAMES:
            a, b = m.get(k, 0), hw.get(k)
            cells.append(f"{a:,}" if a == b else f"**{a:,} / {b if b is None else f'{b:,}'}**")
        ok = e.get("match")
        out.append(f"| {name} | " + " | ".join(cells) + f" | {'yes (10/10)' if ok else 'NO' if ok is False else '-'} |")
    return "\n".join(out)


def timing_table(doc, section="scenarios"):
    out = ["| name | median ms | spread | sector GB/s | DRAM GB/s (counters) | of cudaMemcpy | predicted ms (bound) | "
           "measured / predicted | result | timed at |", "|" + "---|" * 10]
    for name, e in doc[section].items():
        t = e.get("timing") or {}
        if not t:
            continue
        p = t.get("predicted") or {}
        s = t.get("scale") or {}
        at = ", ".join(f"{k}={v}" for k, v in (s.get("params") or {}).items())
        if s.get("replicas", 1) > 1:
            at = (at + ", " if at else "") + f"{s['replicas']} replicas"
        frac = t.get("fraction_of_memcpy")
        pred = f"{p['ms']:.4f} ({p['bound']})" if p else ""
        dram = t.get("dram_gbps")
        ratio = f"{t['median_ms'] / p['ms']:.2f}" if p and p.get("ms") else ""
        out.append(f"| {name} | {t['median_ms']:.4f} | {100 * t.get('spread', 0):.1f}% | {t.get('gbps') or 0:,.0f} | "
                   f"{'' if dram is None else f'{dram:,.0f}'} | {'' if not frac else f'{100 * frac:.1f}%'} | "
                   f"{pred} | {ratio} | {(e.get('check') or {}).get('status', '')} | {at} |")
    return "\n".join(out)


def bottleneck_table(doc, section="scenarios"):
    """Predicted bound beside what Nsight Compute measured on the timed launch."""
    units = ("DRAM", "L2", "L1", "shared pipe", "LSU issue")
    out = ["| name | predicted: bound (ms of ms) | measured: busiest unit | " + " | ".join(f"{u} %" for u in units)
           + " | L1 hit | L2 hit | occupancy | regs | top stalls |", "|" + "---|" * (len(units) + 8)]
    for name, e in doc[section].items():
        t = e.get("timing") or {}
        b = e.get("bottleneck")
        if not t or not b:
            continue
        p = t.get("predicted") or {}
        pred = f"{p['bound']} ({p.get('bound_ms', p['ms']):.4f} of {p['ms']:.4f})" if p else ""
        thr = b.get("throughput_pct") or {}
        bound = b.get("bound") or {}
        cells = [f"{thr[u]:.0f}" if thr.get(u) is not None else "" for u in units]
        pct = lambda v: "" if v is None else f"{v:.0f}%"  # noqa: E731
        stalls = ", ".join(f"{x['reason']} {100 * (x.get('share') or 0):.0f}%" for x in b.get("stalls") or [])
        out.append(f"| {name} | {pred} | {bound.get('unit', '')} {bound.get('pct_of_peak', 0):.0f}% | "
                   + " | ".join(cells) + f" | {pct(b.get('l1_hit_pct'))} | {pct(b.get('l2_hit_pct'))} | "
                   f"{pct(b.get('achieved_occupancy_pct'))} | {b.get('registers_per_thread') or ''} | {stalls} |")
    return "\n".join(out)


def evidence_table(doc):
    """What the model computed from the addresses beside what Nsight Compute counted on the
    timed launch: DRAM bytes (reuse), sectors L1 sends to L2 (L1 hits), warp instructions."""
    out = ["| name | DRAM MB model / H100 | L1→L2 sectors (M) model / H100 | warp instructions (M) model / H100 |",
           "|---|---|---|---|"]
    for section in ("scenarios", "kernels"):
        for name, e in doc[section].items():
            p = ((e.get("timing") or {}).get("predicted") or {}).get("inputs")
            b = e.get("bottleneck")
            if not p or not b:
                continue
            dram = ((b.get("dram_bytes_read") or 0) + (b.get("dram_bytes_write") or 0)) / 1e6
            l2 = b.get("l2_sectors_from_l1")
            inst = b.get("warp_instructions")
            out.append(f"| {name} | {p['dram_bytes'] / 1e6:,.0f} / {dram:,.0f} | {p['l2_sectors_from_l1'] / 1e6:.2f} / "
                       f"{'' if l2 is None else f'{l2 / 1e6:.2f}'} | {p['warp_instructions'] / 1e6:.1f} / "
                       f"{'' if inst is None else f'{inst / 1e6:.1f}'} |")
    return "\n".join(out)


def accuracy_summary(doc, within=0.2):
    """How many timed entries the cost model predicts within 20%, and the worst ones."""
    rows = []
    for section in ("scenarios", "kernels"):
        for name, e in doc[section].items():
            t = e.get("timing") or {}
            p = t.get("predicted") or {}
            if t.get("median_ms") and p.get("ms"):
                rows.append((t["median_ms"] / p["ms"], name, p.get("bound", "")))
    # "within 20% of the measured median": |predicted - measured| <= 20% of measured
    ok = [r for r in rows if abs(1 / r[0] - 1) <= within]
    worst = sorted(rows, key=lambda r: -abs(1 / r[0] - 1))[:12]
    lines = [f"Within {100 * within:.0f}% of the measured median: {len(ok)} of {len(rows)} timed entries.\n",
             "| worst entries | measured / predicted | predicted bound |", "|---|---|---|"]
    lines += [f"| {n} | {r:.2f} | {b} |" for r, n, b in worst]
    return "\n".join(lines)


def sweeps_table(doc):
    out = []
    for name, sw in (doc.get("sweeps") or {}).items():
        pts = sw.get("points", [])
        out.append(f"**{name}**\n")
        out.append("| point | measured ms | predicted ms | measured / predicted |\n|---|---|---|---|")
        for p in pts:
            r = p["median_ms"] / p["predicted_ms"] if p.get("predicted_ms") else 0
            out.append(f"| {p['label']} | {p['median_ms']:.4f} | {p.get('predicted_ms') or 0:.4f} | {r:.2f} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    doc = results.load(sys.argv[1] if len(sys.argv) > 1 else None)
    c = doc["ceiling"]["memcpy_d2d"]
    print(f"Measured: {doc['label']} ({doc['measured_at']}). cudaMemcpy D2D 256 MiB: {c['gbps']:,.0f} GB/s "
          f"(median {c['timing']['median_ms']:.4f} ms, {c['timing']['runs']} runs).\n")
    print("### Model vs counters, built-in scenarios (generated kernels)\n")
    print(counters_table(doc))
    print("\n### Model vs counters, hand-written kernels (kernels/)\n")
    print(counters_table(doc, "kernels"))
    print("\n### Cost model accuracy\n")
    print(accuracy_summary(doc))
    if any(e.get("bottleneck") for sec in ("scenarios", "kernels") for e in doc[sec].values()):
        print("\n### Bottlenecks: predicted and measured (Nsight Compute on the timed launch)\n")
        print(bottleneck_table(doc))
        print()
        print(bottleneck_table(doc, "kernels"))
        print("\n### The model's inputs beside the counters (evidence)\n")
        print(evidence_table(doc))
    print("\n### Timings, built-in scenarios (generated kernels)\n")
    print(timing_table(doc))
    print("\n### Timings, hand-written kernels\n")
    print(timing_table(doc, "kernels"))
    print("\n### Sweeps\n")
    print(sweeps_table(doc))
