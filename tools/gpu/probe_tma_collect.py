"""Helpers of tools/gpu/probe_tma.sh (the TMA / wgmma probe); every command runs here too.

  python3 tools/gpu/probe_tma_collect.py metrics QUERY_ALL.txt QUERY_BASE.txt OUT.txt WANTED.txt
      the metrics to ask Nsight Compute for: the ten warpviz compares (viz.engine.METRIC_NAMES),
      the TMA and gmma rows of the contract, shared/global instruction counters and every
      ``.sum`` metric the device lists whose name says tma, gmma, bulk, utma or tensor-map;
      only names this ncu knows (others listed in WANTED.txt as missing)
  python3 tools/gpu/probe_tma_collect.py table CSV [CASES.json]
      ncu's --csv output as a table per launch (with the case labels of probe_tma_cases)
"""

from __future__ import annotations

import csv
import io
import json
import re
import sys

TEN = ("smsp__inst_executed_op_shared_ld.sum", "smsp__inst_executed_op_shared_st.sum",
       "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
       "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
       "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
       "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum")
CONTRACT = (
    "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum", "l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum",
    "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld_dest_self.sum",
    "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld_dest_multicast.sum",
    "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_st.sum", "l1tex__m_l1tex2xbar_write_sectors_mem_global_op_tma_red.sum",
    "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_st.sum", "l1tex__m_l1tex2xbar_write_bytes_mem_global_op_tma_red.sum",
    "l1tex__m_l1tex2xbar_write_sectors_mem_dshared_op_tma_st.sum", "l1tex__m_l1tex2xbar_write_sectors_mem_dshared_op_tma_red.sum",
    "sm__inst_executed_pipe_tma.sum", "l1tex__tmain_requests.sum", "sm__sass_inst_executed_op_tma_ld.sum",
    "sm__sass_inst_executed_op_tma_st.sum", "sm__sass_inst_executed_op_tma_red.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_gmma.sum", "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_gmma.sum",
    "sm__sass_data_bytes_mem_shared_op_gmma.sum", "sm__inst_executed_pipe_tensor_op_gmma.sum",
    "smsp__sass_inst_executed_op_shared_ld.sum", "smsp__sass_inst_executed_op_shared_st.sum",
    "smsp__sass_inst_executed_op_ldsm.sum", "smsp__sass_inst_executed_op_stsm.sum", "smsp__inst_executed_op_ldsm.sum",
    "smsp__sass_inst_executed_op_ldgsts.sum", "smsp__inst_executed_op_ldgsts.sum",
    "smsp__sass_inst_executed_op_global_ld.sum", "smsp__sass_inst_executed_op_global_st.sum",
    "smsp__inst_executed_op_global_ld.sum", "smsp__inst_executed_op_global_st.sum",
    "smsp__sass_inst_executed_op_shared_atom.sum", "smsp__sass_inst_executed_op_global_atom.sum",
    "smsp__sass_inst_executed_op_global_red.sum", "smsp__inst_executed.sum", "smsp__sass_inst_executed_op_memory_128b.sum",
    "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum", "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldsm.sum",
    "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ldsm.sum", "l1tex__t_sectors_pipe_lsu_mem_global_op_ldgsts.sum",
    "smsp__sass_inst_executed_op_ld.sum", "smsp__sass_inst_executed_op_st.sum",
    "lts__t_sectors_srcunit_tex_op_read.sum", "lts__t_sectors_srcunit_tex_op_write.sum",
)
PATTERN = re.compile(r"tma|gmma|bulk|utma|tensormap|tmain|dshared|op_shared|_mem_shared_op", re.I)


def names(text: str) -> list[str]:
    out = []
    for line in text.splitlines():
        w = line.strip().split()
        if w and re.fullmatch(r"[a-z0-9_]+(\.[a-z0-9_.]+)?", w[0]):
            out.append(w[0])
    return out


def metrics(query_all: str, query_base: str, out: str, wanted_out: str) -> None:
    full = set(names(open(query_all).read()))
    base = set(names(open(query_base).read()))

    def known(m):
        return m in full or m.split(".")[0] in base or not (full or base)
    chosen = [m for m in dict.fromkeys(TEN + CONTRACT) if known(m)]
    missing = [m for m in dict.fromkeys(TEN + CONTRACT) if not known(m)]
    extra = sorted({(m if "." in m else m + ".sum") for m in (full or base) if PATTERN.search(m)
                    and (m.endswith(".sum") or "." not in m)})
    open(out.replace(".txt", "-core.txt"), "w").write(",".join(chosen))
    for m in extra:
        if m not in chosen and len(chosen) < 160:
            chosen.append(m)
    open(out, "w").write(",".join(chosen))
    open(wanted_out, "w").write("chosen:\n" + "\n".join(chosen) + "\n\nmissing on this ncu:\n" + "\n".join(missing) + "\n")
    print(f"probe_tma metrics: {len(chosen)} chosen ({len(extra)} found by name), {len(missing)} missing: {missing}")


def table(path: str, cases_path: str | None = None) -> None:
    lines = [ln for ln in open(path, errors="replace") if ln.startswith('"')]   # not the step's or ncu's own lines
    if not lines or not lines[0].startswith('"ID"'):
        print(f"{path}: no ncu CSV")
        return
    rows = list(csv.DictReader(io.StringIO("".join(lines))))
    launches: dict[str, dict] = {}
    for r in rows:
        e = launches.setdefault(r["ID"], {"kernel": r.get("Kernel Name"), "m": {}})
        e["m"][r.get("Metric Name")] = r.get("Metric Value")
    labels = {}
    if cases_path:
        try:
            cases = json.load(open(cases_path))["cases"]
        except (OSError, ValueError, KeyError) as err:
            print(f"{cases_path}: {err}")
            cases = []
        for c in cases:
            if c.get("order", -1) >= 0:
                labels[c["order"]] = c["label"]
    interesting = [m for m in CONTRACT[:19] + TEN]
    for i, (lid, e) in enumerate(sorted(launches.items(), key=lambda kv: int(kv[0]))):
        vals = {k: v for k, v in e["m"].items() if k in interesting and v not in ("0", "0.0", "", None)}
        print(f"[{lid}] {labels.get(i, e['kernel'])}: " + ", ".join(f"{k.split('.')[0]}={v}" for k, v in vals.items()))


if __name__ == "__main__":
    if sys.argv[1:2] == ["metrics"]:
        metrics(*sys.argv[2:6])
    elif sys.argv[1:2] == ["table"]:
        table(*sys.argv[2:4])
    else:
        raise SystemExit(__doc__)
