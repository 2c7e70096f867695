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
    out = ["| name | median ms | spread | sector GB/s | useful GB/s | of cudaMemcpy | predicted ms (bound) | "
           "ns per warp instr | result | timed at |", "|" + "---|" * 10]
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
        out.append(f"| {name} | {t['median_ms']:.4f} | {100 * t.get('spread', 0):.1f}% | {t.get('gbps') or 0:,.0f} | "
                   f"{t.get('useful_gbps') or 0:,.0f} | {'' if not frac else f'{100 * frac:.1f}%'} | "
                   f"{pred} | "
                   f"{t.get('ns_per_warp_instruction') or '':} | {(e.get('check') or {}).get('status', '')} | {at} |")
    return "\n".join(out)


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
    print("\n### Timings, built-in scenarios (generated kernels)\n")
    print(timing_table(doc))
    print("\n### Timings, hand-written kernels\n")
    print(timing_table(doc, "kernels"))
    print("\n### Sweeps\n")
    print(sweeps_table(doc))
