"""Atomics in scenarios (viz.kinds.atomics): global atomics (RED when the result is unused,
ATOM when it is read) and ptxas's warp aggregation of an address every lane shares, with
the validate cases of tools/gpu/atomic_cases (the model's figures in their [expected]
tables; `warpviz validate` compares them with the H100). With nvcc and nvdisasm here, the
generated kernel of every case is compiled and its SASS must be the form the model counts."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from viz.engine import analyze
from viz.kinds.atomics import aggregate_mask
from viz.scenario import ScenarioError, load, loads
from viz.warp import warp_detail

ROOT = Path(__file__).resolve().parents[1]
CASES = sorted((ROOT / "tools" / "gpu" / "atomic_cases").glob("*.toml"))
RED = ("smsp__inst_executed_op_global_red.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_red.sum",
       "l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum")
ATOM = ("smsp__sass_inst_executed_op_global_atom.sum", "l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum",
        "l1tex__t_sectors_pipe_lsu_mem_global_op_atom.sum")
S_WF = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"


def scenario(space="global", t="int", at="h[tid]", result="unused", when=None, block="[64]"):
    w = f'\nwhen = "{when}"' if when else ""
    return loads(f"""format = 3
[launch]
block = {block}
grid = [2]
[arrays.h]
space = "{space}"
type = "{t}"
shape = [2048]
[[access]]
op = "atomic"
at = "{at}"
result = "{result}"{w}
""", source="case.toml")


def test_there_are_validate_cases_for_every_shape_the_issue_names():
    names = {p.stem for p in CASES}
    for space in ("shared", "global"):
        for what in ("uniform", "colliding", "consecutive", "strided"):
            assert any(n.startswith(f"{space}-{what}") for n in names), (space, what)
        assert any(n.startswith(space) and n.endswith("-used") for n in names)
        assert any(n.startswith(space) and n.endswith("-unused") for n in names)
    assert any("double" in n for n in names)         # 8-byte


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_validate_cases_count_what_their_expected_table_says(path):
    sc = load(path)
    assert sc.expected and "validate" in sc.tags
    m = analyze(sc).metrics
    assert {k: m.get(k) for k in sc.expected} == dict(sc.expected)
    # atomics are outside the ten
    assert all(v == 0 for k, v in m.items() if k.endswith(("_op_ld.sum", "_op_st.sum")))


def test_global_atomics_are_requests_and_sectors_under_red_or_atom():
    m = analyze(scenario(at="h[tid]", result="unused")).metrics
    assert tuple(m[k] for k in RED) == (4, 4, 16) and not any(k in m for k in ATOM)
    m = analyze(scenario(at="h[tid * 8]", result="used")).metrics
    assert tuple(m[k] for k in ATOM) == (4, 4, 128) and not any(k in m for k in RED)
    m = analyze(scenario(t="double", at="h[tid]")).metrics
    assert tuple(m[k] for k in RED) == (4, 4, 32)                 # 8 bytes a lane: 8 sectors a warp


def test_uniform_address_is_aggregated_into_one_lane():
    sc = scenario(at="h[0]", result="used")
    assert sc.accesses[0].option("aggregate") == "lane31-full-warp"
    d = warp_detail(sc, 0, 1, 1)
    assert [ln.lane for ln in d.lanes if ln.active] == [31]       # the picture shows lane 31 doing it
    sc = scenario(space="shared", at="h[0]", result="used")
    assert analyze(sc).metrics[S_WF] == 4                          # the case in point: 1 a warp, not 32
    sc = scenario(space="shared", at="h[0]", result="used", when="lane < 20")
    assert analyze(sc).metrics[S_WF] == 4 * 20                     # partial warp: ptxas's per-lane fallback
    sc = scenario(at="h[blockIdx.x * 2 + 1]", result="unused")
    assert sc.accesses[0].option("aggregate") == "highest"
    d = warp_detail(sc, 0, 0, 0)
    assert [ln.lane for ln in d.lanes if ln.active] == [31]
    for at, t in (("h[warp]", "int"), ("h[0]", "float"), ("h[0]", "double"), ("h[lane]", "int")):
        assert scenario(at=at, t=t).accesses[0].option("aggregate") == "none", (at, t)
    # shared, result unused: ATOMS.POPC.INC combines the lanes itself
    assert scenario(space="shared", at="h[0]").accesses[0].option("aggregate") == "none"


def test_refused_atomics_say_why():
    with pytest.raises(ScenarioError, match="a global atomic adds to an int, a float or a double"):
        scenario(t="char")
    with pytest.raises(ScenarioError, match="compare-and-swap loop"):
        scenario(space="shared", t="float")
    with pytest.raises(ScenarioError, match="atomic adds to a 4-byte int"):
        scenario(space="shared", t="double")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.booleans(), min_size=1, max_size=100), st.sampled_from(["highest", "lane31-full-warp", "none"]))
def test_aggregate_mask_keeps_one_lane_or_all(lanes, how):
    nt = len(lanes)
    m = np.array(lanes, bool)[None, :]
    out = aggregate_mask(m, how, nt)[0]
    assert not (out & ~m).any() or how == "lane31-full-warp"
    for w in range(-(-nt // 32)):
        seg, got = m[0, w * 32:(w + 1) * 32], out[w * 32:(w + 1) * 32]
        if how == "none" or not seg.any():
            assert (got == seg).all()
        elif how == "highest":
            assert np.flatnonzero(got).tolist() == [int(np.flatnonzero(seg).max())]
        elif seg.size == 32 and seg.all():
            assert np.flatnonzero(got).tolist() == [31]
        else:
            assert (got == seg).all()


# ---------------------------------------------------------------------------- the SASS of the generated kernels


def _tools() -> bool:
    from viz.toolchain.compile import find_tool

    return bool(find_tool("nvcc") and find_tool("ptxas") and find_tool("nvdisasm"))


@pytest.mark.skipif(not _tools(), reason="needs nvcc, ptxas and nvdisasm")
@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_the_generated_kernel_has_the_sass_form_the_model_counts(path, tmp_path):
    """What the model assumes of ptxas (aggregated or not, which lane, RED or ATOM,
    combined words or lane by lane) is what ptxas emits for the kernel warpviz runs."""
    from viz.gpu.codegen import generate
    from viz.toolchain.compile import find_tool
    from viz.trace.build import NVCC_FLAGS, assemble
    from viz.trace.ptx import parse
    from viz.trace.reconcile import reconcile, sass_with_ptx_lines

    sc = load(path)
    acc = sc.accesses[0]
    (tmp_path / "k.cu").write_text(generate(sc, name="k").source)
    subprocess.run([find_tool("nvcc"), "-ptx", "-arch=sm_90", *NVCC_FLAGS, "-o", str(tmp_path / "k.ptx"),
                    str(tmp_path / "k.cu")], check=True, capture_output=True, timeout=600)
    ptx = (tmp_path / "k.ptx").read_text()
    instrs = parse(ptx).instrs
    m = reconcile(ptx, instrs, sass_with_ptx_lines(assemble(ptx)))
    atoms = [m["instructions"][i.id] for i in instrs if i.kind in ("atomic", "reduction")]
    assert len(atoms) == 1 and atoms[0].certain
    info = atoms[0]
    agg = acc.option("aggregate")
    assert (info.state, info.leader) == (("aggregated", agg) if agg != "none" else ("same", ""))
    space = sc.array(acc.array).space
    if space == "global":
        assert info.sass_op == ("red" if acc.option("result") == "unused" else "atom")
    else:
        assert info.atomic_rule == ("words" if acc.option("result") == "unused" else "lanes")


# ---------------------------------------------------------------------------- the H100 probe


def _probe():
    import importlib.util

    spec = importlib.util.spec_from_file_location("atomics_probe", ROOT / "tools" / "probes" / "atomics.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_probe_cases_cover_the_forms_and_their_model_agrees_with_earlier_h100_runs(tmp_path):
    """The probe's shared per-lane kernels are the forms measured in the kinds run of
    2026-11-23 (atom_u32, red_u32, atomicadd_cpp): where a pattern is the same, the model
    the probe prints equals what that H100 run counted."""
    import json

    probe = _probe()
    cases = probe.write_cases(str(tmp_path / "c.txt"), str(tmp_path / "c.json"))
    assert len(cases) == len((tmp_path / "c.txt").read_text().splitlines()) == 205
    kernels = {c["kernel"] for c in cases}
    assert kernels == set(probe.KERNELS) and all(any(c["mask"] == 0 and c["kernel"] == k for c in cases)
                                                 for k in kernels)       # a baseline per kernel
    doc = json.loads((ROOT / "assets" / "measurements" / "h100-kinds-2026-11-23.json").read_text())
    old = {(p["kernel"], tuple(p["s"]), p["mask"]): p["hardware"] for p in doc["probes"] if "s" in p}
    same = {"atom_u32": "s_atom_u32", "red_u32": "s_red_u32", "atomicadd_cpp": "s_popc_inc"}
    checked = 0
    for (k, s, mask), hw in old.items():
        if k not in same:
            continue
        for c in cases:
            if c["kernel"] == same[k] and tuple(c["off"]) == s and c["mask"] == mask:
                assert c["model"]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"] == \
                    hw["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"], c["name"]
                checked += 1
    assert checked >= 12
    uni = {c["name"]: c["model"] for c in cases if c["kernel"] == "su_v_used"}
    assert uni["su_v_used uniform when full"]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"] == 1
    assert uni["su_v_used uniform when lane<20"]["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_atom.sum"] == 20


MEASURED = ROOT / "assets" / "measurements" / "h100-atomics-2026-11-26.json"


def test_the_model_equals_every_atomic_the_h100_measured():
    """The 205 one-warp probes measured on the H100 (tools/probes/atomics.sh, 2026-11-26):
    the model's instructions, requests, sectors and wavefronts of each equal the counters,
    colliding global lanes (one pass a lane on an address) and the aggregated forms included."""
    import json

    probe = _probe()
    doc = json.loads(MEASURED.read_text())
    assert len(doc["cases"]) == 205
    differ = [c["name"] for c in doc["cases"]
              if any(c["hardware"].get(k, 0) != v for k, v in probe.model(c).items())]
    assert not differ
    by = {c["name"]: c for c in doc["cases"]}
    same = by["g_red_u32 same address"]
    assert probe.model(same)["l1tex__t_sectors_pipe_lsu_mem_global_op_red.sum"] == 32
    assert same["hardware"]["l1tex__t_requests_pipe_lsu_mem_global_op_red.sum"] == 1


@pytest.mark.parametrize("path", CASES, ids=lambda p: p.stem)
def test_validate_cases_expect_what_the_h100_counted(path):
    """Each validate case's expected table is what `warpviz validate` read on the H100."""
    import json

    hw = json.loads(MEASURED.read_text())["validate"][path.stem]
    sc = load(path)
    assert {k: hw[k] for k in sc.expected} == dict(sc.expected)


def test_colliding_global_atomic_lanes_count_a_sector_each():
    m = analyze(scenario(at="h[0]", t="float", result="unused")).metrics
    assert tuple(m[k] for k in RED) == (4, 4, 128)                # 4 warps x 32 lanes on one word
    m = analyze(scenario(at="h[lane / 2]", result="unused")).metrics
    assert tuple(m[k] for k in RED) == (4, 4, 16)                 # 2 sectors x 2 lanes a word, a warp


def test_probe_collect_subtracts_the_baseline_and_compares(tmp_path, capsys):
    probe = _probe()
    cases = probe.write_cases(str(tmp_path / "c.txt"), str(tmp_path / "c.json"))
    pick = [c for c in cases if c["kernel"] == "g_red_u32"]
    rows, lines = ['"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"'], []
    for n, c in enumerate(pick):
        lines.append(f"CASE {c['idx']} LAUNCHED g_red_u32")
        model = c["model"] if c["mask"] else {k: 0 for k in c["model"]}
        for k, v in model.items():
            # every launch counts 2 more instructions than the atomic (the baseline has them too)
            extra = 2 if k.startswith("smsp") else 0
            wrong = 1 if c["name"] == "g_red_u32 stride 128 B" and "sectors" in k else 0
            rows.append(f'"{n}","g_red_u32","{k}","","{v + extra + wrong}"')
    (tmp_path / "n.csv").write_text("\n".join(lines + rows) + "\n")
    got = probe.collect(str(tmp_path / "c.json"), str(tmp_path / "r.json"), [str(tmp_path / "n.csv")])
    assert got == {"equal": len(pick) - 1, "differ": 1}
    assert "DIFF g_red_u32 stride 128 B" in capsys.readouterr().out
