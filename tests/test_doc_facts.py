"""The docs' hardware facts stay tied to what was measured: every figure below is read out of
the shipped measurement files (the H100 calibration, the probes of cp.async, TMA copies and
atomics, and the device facts of 2026-11-26 in ``h100-lessons-2026-11-26.json``) and
looked for, in the sentence that states it, in the page that states it; where the model
takes part, the model's own count is compared too. The built-ins' README lists every
built-in. Nothing runs on a GPU."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest

from viz import assets
from viz.kinds.atomics import count_atomic
from viz.kinds.ldmatrix import STSM_INST_METRIC, fragment
from viz.scenario import builtin_names, load

ROOT = Path(__file__).resolve().parent.parent
M = assets.measurements_dir()
CAL = json.loads((assets.root() / "calibration" / "nvidia-h100-80gb-hbm3.json").read_text())["figures"]
KINDS = json.loads((M / "h100-kinds-2026-11-23.json").read_text())
FACTS = json.loads((M / "h100-lessons-2026-11-26.json").read_text())
PEAK = json.loads((assets.root() / "calibration" / "nvidia-h100-80gb-hbm3.json").read_text())["device"][
    "peak_bandwidth_gbs"]


def norm(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def page(rel: str) -> str:
    return norm((ROOT / rel).read_text(encoding="utf-8"))


def cal(name: str) -> float:
    return CAL[name]["value"]


# ---------------------------------------------------------------------------- docs/GPU.md: the H100's figures

CALIBRATION_PROSE = [
    ("DRAM: reads reach {:,.0f} GB/s, {:.1f}% of the {:,.0f} GB/s peak, writes {:,.0f} GB/s ({:.1f}%), a "
     "device-to-device `cudaMemcpy` {:,.0f} GB/s of reads plus writes ({:.1f}%).",
     [cal("dram_read_gbps"), 100 * cal("dram_read_gbps") / PEAK, PEAK, cal("dram_write_gbps"),
      100 * cal("dram_write_gbps") / PEAK, cal("dram_copy_gbps"), 100 * cal("dram_copy_gbps") / PEAK]),
    ("deliver {:,.0f} GB/s of chunks, {:.0f}% of the copy.",
     [cal("dram_scatter_gbps"), 100 * cal("dram_scatter_gbps") / cal("dram_copy_gbps")]),
    ("L2 hits stream at {:,.0f} GB/s with coalesced 16-byte loads (4 sectors per request), {:.1f}× DRAM",
     [cal("l2_read_gbps"), cal("l2_read_gbps") / cal("dram_read_gbps")]),
    ("one-sector requests (a random gather) at {:.1f} G sectors/s, {:.1f} TB/s of sectors.",
     [cal("l2_scatter_gsectors"), cal("l2_scatter_gsectors") * 32 / 1000]),
    ("go at {:.0f} G stores/s into an L2-resident matrix and {:.0f} G stores/s when DRAM takes the write-backs: "
     "{:.1f} ps each.", [cal("l2_partial_gstores"), cal("l2_partial_dram_gstores"), 1000 / cal("l2_partial_gstores")]),
    ("Coalesced 16-byte stores into L2 reach {:,.0f} GB/s", [cal("l2_write_gbps")]),
    ("L1 hits: {:.2f} sectors per clock per SM, {:.0f} of the 128 bytes an SM's L1 can deliver per clock (the "
     "streaming loop read {:,.0f} GB/s over the 132 SMs).",
     [cal("l1_sectors_per_clk_sm"), 32 * cal("l1_sectors_per_clk_sm"), cal("l1_read_gbps")]),
    ("A dependent load takes {:.0f} cycles from DRAM ({:.0f} ns), {:.0f} from L2, {:.0f} from L1 and {:.0f} from "
     "shared memory; a `__syncthreads()` {:.0f} cycles with 8 warps and {:.0f} with 32.",
     [CAL["dram_latency_ns"]["cycles"], cal("dram_latency_ns"), CAL["l2_latency_ns"]["cycles"],
      CAL["l1_latency_ns"]["cycles"], CAL["shared_latency_ns"]["cycles"], CAL["syncthreads_ns"]["cycles"],
      CAL["syncthreads_1024_ns"]["cycles"]]),
    ("Launches: {:.2f} µs per empty launch back to back (noisy, above); an empty 65,536-block grid takes {:.1f} µs, "
     "{:.1f} ns per block per SM.", [cal("launch_overhead_us"), cal("empty_grid_us"), cal("block_ns_per_sm")]),
]


@pytest.mark.parametrize("template,values", CALIBRATION_PROSE, ids=[t[:30] for t, _ in CALIBRATION_PROSE])
def test_gpu_md_prose_states_the_shipped_calibration(template, values):
    want = norm(template.format(*values))
    assert want in page("docs/GPU.md"), f"docs/GPU.md should say: {want!r}"


def test_the_prose_and_the_table_give_the_same_dram_read_rate():
    text = page("docs/GPU.md")
    table = re.search(r"\| `dram_read_gbps` \| ([\d,]+) GB/s", text)[1]
    prose = re.search(r"DRAM: reads reach ([\d,]+) GB/s", text)[1]
    assert table == prose == f"{cal('dram_read_gbps'):,.0f}"


# ---------------------------------------------------------------------------- memory-model: the probes counted

def test_memory_model_counts_the_probes_of_its_files():
    probes = KINDS["probes"]
    cp = sum(1 for p in probes if p["kernel"].startswith("cp_"))
    tma = [p for p in probes if p["kernel"] == "tma2d"]
    copies = [p for p in tma if (p.get("placement") or {}).get("bytes_written")]
    atomics = sum(1 for p in probes if p["kernel"].startswith(("atom", "red")))
    encodings = sum(1 for p in probes if p["kernel"] == "tma_encode")
    assert (cp, len(copies), len(tma) - len(copies), encodings, atomics) == (122, 58, 1, 9, 97)
    text = page("docs/memory-model.md")
    assert (f"{cp} `cp.async` probes (4, 8 and 16 bytes, `.ca` and `.cg`), {len(copies)} TMA tile copies with every "
            "swizzle mode (each copied tile read back element by element) and one launch with the mbarrier alone as "
            f"their baseline, {encodings} tensor-map encodings and {atomics} shared atomics") in text
    # every copy read box bytes / 32 sectors
    sec = "l1tex__m_xbar2l1tex_read_sectors_mem_global_op_tma_ld.sum"
    assert all(p["hardware"][sec] == p["box"][0] * p["box"][1] * p["esize"] // 32 for p in copies)
    assert f"box bytes / 32 in all {len(copies)} copies" in text


# ---------------------------------------------------------------------------- shared atomics


def _atomic(words, per_lane: bool) -> int:
    addr = np.array([[4 * w for w in words]], np.int64)
    wf = count_atomic(addr, np.ones((1, 32), np.bool_), 1, per_lane)[0]
    return int(wf[0, 0])


def test_atomics_facts_and_the_models_rules():
    k = FACTS["kernels"]
    wf = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"
    lanes = range(32)
    # ATOMS.ADD (old value used, or a weighted histogram): a bank's active lanes one per wavefront
    assert k["atomic_used_16x2"]["counters"][wf] == _atomic([i % 16 for i in lanes], True) == 2
    assert k["atomic_weighted_8x4"]["counters"][wf] == _atomic([i % 8 for i in lanes], True) == 4
    assert any(s.startswith("ATOMS.ADD RZ") for s in k["atomic_weighted_8x4"]["sass"])
    # ATOMS.POPC.INC (+ 1, result unused): a bank's distinct words
    assert k["atomic_inc_8x4"]["counters"][wf] == _atomic([i % 8 for i in lanes], False) == 1
    assert any(s.startswith("ATOMS.POPC.INC") for s in k["atomic_inc_8x4"]["sass"])
    # C++ atomicAdd, result used, one address: nvcc aggregates the warp into one lane
    uniform = k["atomic_used_uniform"]
    assert uniform["counters"][wf] == 1 and sum(s.startswith("@P0 ATOMS.ADD") for s in uniform["sass"]) == 1
    assert any(s.startswith("VOTEU.ANY") for s in uniform["sass"])
    text = page("docs/memory-model.md")
    assert "(8 bins of 4 lanes each: 4 wavefronts, against 1 for the `+ 1`" in text
    assert "one lane's `ATOMS.ADD`, `SHFL.IDX` to hand each lane its old value): 1 wavefront" in text
    for rel in ("README.md", "docs/scenario-format.md", "docs/guide/writing-scenarios.md", "docs/memory-model.md"):
        text = page(rel).replace("lays them out lane by lane for the picture", "")   # the picture, not atomics
        assert "lane by lane" not in text and "every lane in turn" not in text, rel
    for name in ("shared-histogram-few-bins", "shared-histogram-many-bins"):
        notes = load(name).notes
        assert "RED on shared memory" not in notes and "ATOMS.POPC.INC" in notes


# ---------------------------------------------------------------------------- counters: STSM and LDGSTS


def test_stsm_has_one_counter_name_in_the_docs():
    """The STSM instruction counter the docs name is the one the model and validate use; every
    form the docs mention is in Nsight Compute's listing on the H100 and read 1 for one STSM."""
    listed = set(FACTS["metric_listing"]["listed"])
    one = FACTS["kernels"]["stsm_x4"]["counters"]
    assert STSM_INST_METRIC == "smsp__inst_executed_op_shared_stsm.sum" and one[STSM_INST_METRIC] == 1
    for rel in ("README.md", "docs/memory-model.md", "docs/scenario-format.md", "docs/GPU.md", "docs/trace-format.md"):
        text = page(rel)
        names = set(re.findall(r"\b\w+__\w*stsm\b", text))
        assert names <= listed, (rel, names - listed)
        assert all(one[f"{n}.sum"] == 1 for n in names), rel
        assert "no `smsp__`" not in text and "SM level only" not in text, rel
    assert "smsp__inst_executed_op_shared_stsm" in page("docs/GPU.md")


def test_ldgsts_wavefront_counters_as_measured():
    text = page("docs/memory-model.md")
    assert "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts" not in FACTS["metric_listing"]["listed"]
    assert "does not list `l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ldgsts` (asked for anyway, it reads n/a)" \
        in text
    assert "not among its metrics" not in text


def test_the_never_true_lds_stand_before_the_first_of_an_unrolled_pair_only():
    sass = FACTS["kernels"]["cp_unrolled2"]["sass"]
    first = next(i for i, s in enumerate(sass) if s.startswith("LDGSTS"))
    assert [s.startswith("@!PT LDS") for s in sass[:first]] == [True] * 3
    assert sass[first + 1].startswith("LDGSTS")                     # the second follows at once: none before it
    assert FACTS["kernels"]["cp_unrolled2"]["counters"]["smsp__inst_executed_op_shared_ld.sum"] == 3 + 2
    assert "only the first gets them" in page("docs/memory-model.md")
    assert "before every LDGSTS" not in page("docs/trace-format.md")


def test_a_tma_box_off_16_bytes_faults_as_the_docs_say():
    cases = FACTS["tma_box_start"]["cases"]
    assert all(("illegal instruction" in c["outcome"]) == (c["first_byte"] % 16 != 0) for c in cases)
    assert {c["first_byte"] for c in cases if c["first_byte"] % 16} == {2, 12}
    assert "boxes starting at byte 2 (2-byte elements, no swizzle and 128B) and byte 12 (4-byte elements) each " \
           "ended their kernel with \"an illegal instruction was encountered\"" in page("docs/memory-model.md")


# ---------------------------------------------------------------------------- lessons


def test_gemm_tiled_states_the_lds128_fusion_that_ptxas_makes_when_unrolled():
    g = FACTS["gemm_tiled_sass"]
    unrolled = g["without it (unrolled)"]
    assert unrolled["LDS.128"] + unrolled["LDS"] == unrolled["shared loads per tile step"] == 20
    assert g["with #pragma unroll 1 (as shipped)"]["shared loads per tile step"] == 32
    sc = load("gemm-tiled")
    per_step = sum(1 for i in sc.instructions() if sc.accesses[i.access].array in ("As", "Bs")
                   and sc.accesses[i.access].op == "load") // 4                   # K/16 = 4 tile steps
    assert per_step == 32
    assert "a tile step then executes 4 LDS.128 and 16 LDS, 20 shared loads instead of 32" in norm(sc.notes)


def test_ldmatrix_fragment_sentence_of_the_notebook_guide():
    """Without .trans a row of 8 goes to four lanes, two elements each; with .trans a column."""
    for trans in (False, True):
        holders = {}
        for lane in range(32):
            for r, c in fragment(lane, 0, trans):
                holders.setdefault(c if trans else r, []).append(lane)
        assert all(len(v) == 8 and len(set(v)) == 4 for v in holders.values())
    assert "without `.trans` a row of 8 goes to four lanes, two elements each; with `.trans` a column does" in \
        page("docs/guide/notebooks.md")


def test_every_builtin_is_in_the_scenarios_readme():
    text = (ROOT / "assets" / "scenarios" / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([\w\-]+)` \| (.*?) \|", text, re.M)
    names = [n for n, _ in rows]
    assert sorted(names) == sorted(builtin_names()) and len(set(names)) == len(names)
    assert {n: t for n, t in rows} == {n: load(n).title for n in names}


# ---------------------------------------------------------------------------- counts the docs state

BUILTIN_COUNT_PROSE = [
    ("packaging/README.md", "`warpviz list` ({} built-ins, read from the installed `viz/_data`)"),
    ("docs/PERFORMANCE.md", "| wheel `warpviz-0.1.0-py3-none-any.whl` (code, {} scenarios, icons, kernels,"),
    ("docs/guide/install.md", "about 2.76 MB, with the {} built-in scenarios, icons,"),
]


@pytest.mark.parametrize("rel,template", BUILTIN_COUNT_PROSE, ids=[r for r, _ in BUILTIN_COUNT_PROSE])
def test_the_docs_count_the_builtins_there_are(rel, template):
    """A sentence stating how many built-ins ship states the number `warpviz list` shows."""
    want = norm(template.format(len(builtin_names())))
    assert want in page(rel), f"{rel} should say: {want!r}"
