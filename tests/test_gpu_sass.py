"""Warp instructions from the compiled kernel (viz.toolchain.sass), without a GPU or CUDA tools:
the parser and control-flow graph on real SASS (tests/data/sass, made with nvcc 13.0 and the
pip wheel's cuobjdump / nvdisasm), exact loop trips of known kernels, the solver's
properties (hypothesis), JSON round trips, and the shipped results' profiles."""

import json
from pathlib import Path

import pytest

from viz.scenario import load
from hypothesis import given, settings
from hypothesis import strategies as st

from viz.engine import analyze
from viz.gpu import handwritten, sass_results
from viz.toolchain import sass
from viz.toolchain.sass import Cfg, dynamic_instructions, engine_counts, parse_sass, profile_of

DATA = Path(__file__).parent / "data" / "sass"


def function(file: str) -> tuple[str, list]:
    funcs = parse_sass((DATA / file).read_text())
    assert len(funcs) == 1, file
    return next(iter(funcs.items()))


def hand(name: str):
    return next(k for k in handwritten.manifest() if k.name == name)


# ---------------------------------------------------------------------------- parser and CFG


def test_parser_reads_addresses_predicates_opcodes_and_targets():
    name, ins = function("gemm_tiled.cuobjdump.sass")
    assert name == "gemm_tiled"
    assert [i.addr for i in ins] == list(range(0, 16 * len(ins), 16))      # every 16 bytes, no data line
    first = ins[0]
    assert (first.addr, first.opcode, first.operands, first.pred) == (0, "LDC", "R1, c[0x0][0x28]", None)
    branches = [i for i in ins if i.base == "BRA"]
    # the guard around the tile loop, the k loop's back edge, the tile loop's back edge, the end's self-loop
    assert [(i.addr, i.pred, i.target) for i in branches] == [
        (0xB0, "!P0", 0x380), (0x350, "P0", 0x2E0), (0x370, "!P1", 0x1C0), (0x3E0, None, 0x3E0)]
    assert [i.opcode for i in ins if i.kind] == ["LDG.E.CONSTANT", "LDG.E.CONSTANT", "STS", "STS", "LDS", "LDS",
                                                 "STG.E"]
    assert [i.kind for i in ins if i.kind] == ["global.load", "global.load", "shared.store", "shared.store",
                                               "shared.load", "shared.load", "global.store"]


def test_nvdisasm_labels_and_cuobjdump_addresses_give_one_graph():
    """The same cubin through nvdisasm -c (branch targets as labels) and cuobjdump (hex
    addresses): the same instructions, targets and profile."""
    a = function("copy_grid_stride.cuobjdump.sass")
    b = function("copy_grid_stride.nvdisasm.sass")
    assert a[0] == b[0] == "copy_grid_stride"
    assert [(i.addr, i.opcode, i.pred, i.target) for i in a[1]] == [(i.addr, i.opcode, i.pred, i.target) for i in b[1]]
    assert profile_of(a[1], a[0]) == profile_of(b[1], b[0])


def test_gemm_tiled_has_the_tile_loop_around_the_k_loop():
    _, ins = function("gemm_tiled.cuobjdump.sass")
    cfg = Cfg(ins)
    assert len(cfg.loops) == 2
    outer, inner = cfg.loops
    assert (outer.parent, inner.parent, outer.depth, inner.depth) == (None, 0, 1, 2)
    assert inner.blocks < outer.blocks
    head = lambda lp: ins[cfg.blocks[lp.header].start].addr  # noqa: E731
    assert (head(outer), head(inner)) == (0x1C0, 0x2E0)
    # the padding after the final EXIT (BRA to itself, NOPs) is never reached
    assert max(ins[cfg.blocks[b].end - 1].addr for b in cfg.reachable) < ins[-1].addr
    p = profile_of(ins, "gemm_tiled")
    top, tile, k, pre = p["regions"]
    assert tile["memory"] == {"global.load": 2, "shared.store": 2} and tile["parent"] == 0
    assert k["memory"] == {"shared.load": 2} and k["parent"] == 1
    assert k["trips"] == 16              # `#pragma unroll 1` k loop: counter from 0, +1, compared with 0x10
    assert tile["trips"] is None         # K / 16 is a kernel argument
    assert top["memory"] == {"global.store": 1}
    assert pre.get("follows") == [1]     # the guard before the tile loop runs once per entry
    assert p["static_instructions"] == sum(cfg.blocks[b].end - cfg.blocks[b].start for b in cfg.reachable) == 62


def test_skippable_code_with_memory_instructions_is_its_own_unknown():
    """reduce_tree: each halving step is a one-trip loop behind a vote (its loop), the
    block sum's tail runs only in thread 0's warp (`@P1 EXIT` before it): a conditional
    stretch with the shared load and global store."""
    _, ins = function("reduce_tree.cuobjdump.sass")
    p = profile_of(ins, "reduce_tree")
    loops = [r for r in p["regions"] if r["loop"]]
    assert len(loops) == 8 and all(r["memory"] == {"shared.load": 2, "shared.store": 1} for r in loops)
    cond = [r for r in p["regions"] if r.get("conditional")]
    assert [c["memory"] for c in cond] == [{"global.store": 1, "shared.load": 1}]


def test_a_load_ptxas_hoisted_out_of_its_loop():
    """The generated kernel of boundary-n1003: ptxas moved the guarded load out of its
    one-trip loop into the loop's guarded preheader. The empty loop follows the preheader;
    the never-taken sink store is a conditional stretch of its own."""
    name, ins = function("boundary_n1003.cuobjdump.sass")
    p = profile_of(ins, name)
    r = p["regions"]
    empty = next(x for x in r if x["loop"] and not x["memory"])
    pre = next(x for x in r if x.get("conditional") and x["memory"] == {"global.load": 1})
    assert empty["follows"] == [r.index(pre)]
    assert any(x.get("conditional") and x["memory"] == {"global.store": 1} for x in r)


def test_a_subroutine_runs_once_per_call():
    """divk's 64-bit division: five CALL sites (four in the 4x unrolled loop, one in its
    remainder loop) of one RET-ended subroutine. With L loads (one division each) the
    subroutine runs L times; the entry block is not mistaken for a skippable stretch."""
    name, ins = function("divk_call.cuobjdump.sass")
    cfg = Cfg(ins)
    assert len(cfg.calls) == 5 and all(ins[cfg.blocks[c].start].addr == 0xD40 for _, c in cfg.calls)
    p = profile_of(ins, name)
    sub = [r for r in p["regions"] if "calls" in r]
    assert len(sub) == 1
    assert sorted(p["regions"][c]["memory"]["global.load"] for c in sub[0]["calls"]) == [1, 4, 4, 4, 4]
    assert not any(r.get("at") == "0x0000" for r in p["regions"])
    warps, loads = 64, 64 * 1000
    est = dynamic_instructions(p, {"global.load": loads, "global.store": warps}, warps)
    assert est.executions[p["regions"].index(sub[0])] == pytest.approx(loads)
    assert est.residual == pytest.approx(0, abs=1e-6)


# ---------------------------------------------------------------------------- dynamic counts


def test_gemm_tiled_loops_run_k_over_tile_and_k_times_per_warp():
    """With the engine's counts of gemm-tiled at the kernel's own size (M = N = K = 64,
    TILE = 16): the tile loop runs K / TILE = 4 times per warp, the k loop K = 64 times."""
    _, ins = function("gemm_tiled.cuobjdump.sass")
    p = profile_of(ins, "gemm_tiled")
    sc = handwritten.scenario_of(hand("gemm_tiled"), False)
    counts, warps = engine_counts(analyze(sc))
    K, T = sc.params["K"], sc.params["TILE"]
    assert warps == 16 * 8
    assert counts == {"global.load": 2 * warps * K // T, "shared.store": 2 * warps * K // T,
                      "shared.load": 2 * warps * K, "global.store": warps}
    est = dynamic_instructions(p, counts, warps)
    top, tile, k, pre = est.executions
    assert (top, pre) == (warps, warps)
    assert tile == pytest.approx(warps * K / T, rel=1e-9)
    assert k == pytest.approx(warps * K, rel=1e-9)
    assert est.residual == pytest.approx(0, abs=1e-6)
    sizes = [r["instructions"] for r in p["regions"]]
    assert est.instructions == pytest.approx(warps * (sizes[0] + sizes[3] + sizes[1] * K / T + sizes[2] * K))


def test_gemm_tiled_at_the_timed_size_matches_nsight_compute():
    """The timed launch (M = N = K = 1024, 4096 blocks): 311,492,608 warp instructions, as
    Nsight Compute counted them on the H100 (smsp__inst_executed.sum in the shipped file)."""
    from viz.gpu import results
    from viz.gpu.predict import analysis_of

    _, ins = function("gemm_tiled.cuobjdump.sass")
    an, blocks = analysis_of(handwritten.scenario_of(hand("gemm_tiled"), True))
    f = blocks / an.scenario.launch.blocks
    counts, warps = engine_counts(an)
    est = dynamic_instructions(profile_of(ins), {k: v * f for k, v in counts.items()}, warps * f)
    measured = results.load()["kernels"]["gemm_tiled"]["bottleneck"]["warp_instructions"]
    assert measured == 311_492_608
    assert round(est.instructions) == measured


def test_reduce_tree_counts_each_step_for_its_active_warps_only():
    """reduce_tree on the reduction-tree launch: every warp votes at each of the 8 steps, only
    warps with an active lane run a step's loop; thread 0's warp stores the sum. 9,280 warp
    instructions, as measured."""
    from viz.gpu import results

    _, ins = function("reduce_tree.cuobjdump.sass")
    sc = handwritten.scenario_of(hand("reduce_tree"), True)
    counts, warps = engine_counts(analyze(sc))
    est = dynamic_instructions(profile_of(ins), counts, warps)
    assert round(est.instructions) == results.load()["kernels"]["reduce_tree"]["bottleneck"]["warp_instructions"]


def test_no_disassembler_means_no_profile(monkeypatch):
    from viz.toolchain import compile as comp

    monkeypatch.setattr(comp, "find_tool", lambda name: None)
    assert sass.sass_text(b"\x7fELF") is None
    assert sass.profiles_of_cubin(b"\x7fELF") is None


def test_a_branch_to_an_unknown_label_is_named():
    text = "Function : k\n  /*0000*/  BRA `(.L_nowhere) ;\n"
    with pytest.raises(sass.SassError, match="line 2"):
        parse_sass(text)


# ---------------------------------------------------------------------------- properties


@st.composite
def launches(draw):
    """A profile whose unknown regions the kinds can tell apart group by group (every group
    of loops owns a kind; loops of one group hold multiples of one memory mix, as a 4x
    unrolled loop and its remainder do), a true count for each region, and the engine's
    counts those give."""
    kinds = list(sass.KINDS)
    ngroups = draw(st.integers(1, 4))
    own = draw(st.permutations(kinds))[:ngroups]
    shared_kinds = [k for k in kinds if k not in own]
    warps = draw(st.integers(1, 10_000))
    top_mem = {k: draw(st.integers(0, 2)) for k in draw(st.lists(st.sampled_from(kinds), max_size=3, unique=True))}
    regions = [{"loop": None, "parent": None, "depth": 0, "instructions": draw(st.integers(1, 60)),
                "memory": {k: v for k, v in top_mem.items() if v}}]
    truth = [float(warps)]
    for g in range(ngroups):
        mix = {own[g]: draw(st.integers(1, 3))}
        for k in draw(st.lists(st.sampled_from(shared_kinds), max_size=2, unique=True)) if shared_kinds else []:
            mix[k] = draw(st.integers(1, 3))
        for _ in range(draw(st.integers(1, 3))):
            mult = draw(st.integers(1, 4))
            if draw(st.booleans()) and draw(st.booleans()):
                # a stretch of the top level a branch can skip (at most once per warp)
                regions.append({"loop": None, "parent": 0, "depth": 0, "instructions": draw(st.integers(1, 40)),
                                "memory": {k: v * mult for k, v in mix.items()}, "conditional": True})
                truth.append(float(draw(st.integers(0, warps))))
                continue
            parent = draw(st.integers(0, len(regions) - 1))
            regions.append({"loop": f"0x{16 * len(regions):04x}", "parent": parent,
                            "depth": regions[parent]["depth"] + 1, "instructions": draw(st.integers(1, 40)),
                            "memory": {k: v * mult for k, v in mix.items()}, "trips": None})
            truth.append(float(draw(st.integers(0, 50)) * warps))
    for _ in range(draw(st.integers(0, 2))):
        # a guard with no memory instruction: runs as often as the unit it guards is entered
        u = draw(st.integers(1, len(regions) - 1))
        par = regions[u]["parent"]
        regions.append({"loop": None, "parent": par, "depth": regions[par]["depth"],
                        "instructions": draw(st.integers(1, 20)), "memory": {}, "follows": [u]})
        truth.append(min(truth[par], truth[u]))
    counts = {}
    for r, x in zip(regions, truth):
        for k, v in r["memory"].items():
            counts[k] = counts.get(k, 0) + v * x
    return {"version": sass.PROFILE_VERSION, "function": "k", "static_instructions":
            sum(r["instructions"] for r in regions), "regions": regions}, counts, warps, truth


@settings(max_examples=200, deadline=None)
@given(launches(), st.data())
def test_more_memory_executions_never_give_fewer_instructions(launch, data):
    """A loop that runs more (so its memory instructions execute more): never fewer warp
    instructions."""
    prof, counts, warps, truth = launch
    r = data.draw(st.integers(1, len(prof["regions"]) - 1))
    extra = data.draw(st.integers(1, 20)) * warps
    more = dict(counts)
    for k, v in prof["regions"][r]["memory"].items():
        more[k] = more.get(k, 0) + v * extra
    a = dynamic_instructions(prof, counts, warps).instructions
    b = dynamic_instructions(prof, more, warps).instructions
    assert b >= a * (1 - 1e-9) - 1e-6


@settings(max_examples=200, deadline=None)
@given(launches())
def test_groups_of_one_loop_are_counted_exactly(launch):
    """When every group holds one loop (each loop owns a kind), the counts pin every loop's
    executions: the estimate is the true number of warp instructions."""
    prof, counts, warps, truth = launch
    owners = {}
    for r in prof["regions"][1:]:
        if r["memory"]:
            owners[tuple(sorted(r["memory"]))] = owners.get(tuple(sorted(r["memory"])), 0) + 1
    if any(v > 1 for v in owners.values()):
        return
    est = dynamic_instructions(prof, counts, warps)
    want = sum(r["instructions"] * x for r, x in zip(prof["regions"], truth))
    assert est.instructions == pytest.approx(want, rel=1e-6, abs=1e-3)


@settings(max_examples=100, deadline=None)
@given(launches())
def test_a_profile_round_trips_through_json(launch):
    prof, counts, warps, _ = launch
    back = sass.check_profile(json.loads(json.dumps(prof)))
    assert back == prof
    assert dynamic_instructions(back, counts, warps) == dynamic_instructions(prof, counts, warps)


def test_real_profiles_round_trip_through_json():
    for f in DATA.glob("*.sass"):
        for name, ins in parse_sass(f.read_text()).items():
            p = profile_of(ins, name)
            assert sass.check_profile(json.loads(json.dumps(p))) == p, f.name


@pytest.mark.parametrize("bad, field", [
    ({"version": 99, "regions": []}, "version"),
    ({"version": 1, "regions": []}, "regions"),
    ({"version": 1, "regions": [{"instructions": -1, "parent": None}]}, r"regions\[0\].instructions"),
    ({"version": 1, "regions": [{"instructions": 1, "parent": None}, {"instructions": 1, "parent": 5}]},
     r"regions\[1\].parent"),
    ({"version": 1, "regions": [{"instructions": 1, "parent": None, "memory": {"LDX": 1}}]},
     r"regions\[0\].memory"),
    ({"version": 1, "regions": [{"instructions": 1, "parent": None}, {"instructions": 1, "parent": 0,
                                                                      "follows": [1]}]}, r"regions\[1\].follows"),
    ({"version": 1, "regions": [{"instructions": 1, "parent": None}, {"instructions": 1, "parent": 0,
                                                                      "trips": 0}]}, r"regions\[1\].trips"),
])
def test_a_broken_profile_is_refused_by_field(bad, field):
    with pytest.raises(ValueError, match=field):
        sass.check_profile(bad)


# ---------------------------------------------------------------------------- the shipped file


def _shipped_rows():
    from viz.gpu import results

    doc = results.load()
    if not any(((e.get("timing") or {}).get("resources") or {}).get("sass")
               for section in ("scenarios", "kernels") for e in doc[section].values()):
        pytest.skip("the shipped results file has no SASS profiles yet (python -m viz.gpu.sass_results fill)")
    return doc, sass_results.accuracy(doc)


def test_the_shipped_profiles_reproduce_the_shipped_instruction_counts():
    """Every timed entry with a profile: the count rebuilt from the file alone (no CUDA
    tool) is the ``warp_instructions`` its prediction used, and it is within 10% of what
    Nsight Compute measured on the same launch for every measured entry."""
    doc, rows = _shipped_rows()
    for r in rows:
        if r["section"] == "sweeps":
            continue
        inputs = doc[r["section"]][r["name"]]["timing"]["predicted"]["inputs"]
        assert inputs["warp_instructions"] == r["sass"], r["name"]
        if r["measured"] and r["section"] == "scenarios" and any(
                a.op == "tma.load" for a in load(r["name"]).accesses):
            # a TMA kernel's warps spin on their mbarrier as long as the box takes: the count
            # is the loop's one trip, a floor (0.44-0.97 of the measured on the H100)
            assert r["sass"] <= r["measured"], r["name"]
        elif r["measured"]:
            assert abs(r["sass"] / r["measured"] - 1) <= 0.10, r["name"]


# ---------------------------------------------------------------------------- the command line


def test_the_command_line_names_a_missing_file(tmp_path, capsys):
    assert sass_results.main(["table", str(tmp_path / "nope.json")]) == 2
    assert "nope.json" in capsys.readouterr().err


def test_fill_without_a_disassembler_says_which_tools(tmp_path, capsys, monkeypatch):
    from viz.toolchain import compile as comp
    from viz.gpu import results

    monkeypatch.setattr(comp, "find_tool", lambda name: None)
    out = tmp_path / "new.json"
    assert sass_results.main(["fill", str(results.shipped_path()), "--out", str(out)]) == 2
    assert "cuobjdump" in capsys.readouterr().err and not out.exists()


def _have_tools() -> bool:
    from viz.toolchain.compile import find_nvcc, find_tool

    return bool(find_nvcc() and (find_tool("cuobjdump") or find_tool("nvdisasm")))


@pytest.mark.skipif(not _have_tools(), reason="needs nvcc and cuobjdump or nvdisasm")
def test_fill_adds_profiles_that_predict_from_the_file_alone(tmp_path, capsys):
    """fill on a results file of two entries: each timed kernel compiled as the bench did,
    its profile in timing.resources.sass, and the table's count from the file within 1% of
    the measured one (exact with nvcc 13.0, as on the H100)."""
    from viz.gpu import results

    doc = results.load()
    doc["scenarios"] = {"coalesced": doc["scenarios"]["coalesced"]}
    doc["kernels"] = {"gemm_tiled": doc["kernels"]["gemm_tiled"]}
    doc["sweeps"] = {}
    src, out = tmp_path / "in.json", tmp_path / "out.json"
    results.save(doc, src)
    assert sass_results.main(["fill", str(src), "--out", str(out)]) == 0
    new = results.load(out)
    for section, name in (("scenarios", "coalesced"), ("kernels", "gemm_tiled")):
        prof = new[section][name]["timing"]["resources"]["sass"]
        assert sass.check_profile(prof)["regions"][0]["instructions"] > 0
        assert new[section][name]["timing"]["resources"]["registers"] == doc[section][name]["timing"]["resources"][
            "registers"]
    rows = {r["name"]: r for r in sass_results.accuracy(new)}
    assert set(rows) == {"coalesced", "gemm_tiled"}
    for r in rows.values():
        assert abs(r["sass"] / r["measured"] - 1) <= 0.01, r
    capsys.readouterr()
    assert sass_results.main(["table", str(out)]) == 0
    assert "2 measured entries" in capsys.readouterr().out


# ---------------------------------------------------------------------------- control bits


def test_control_bits_of_the_listing_give_stalls_scoreboards_and_waits():
    """The second word under each instruction holds what ptxas scheduled: copy_grid_stride's
    first S2R sets scoreboard 0 and the ISETP that reads its result waits on it; an LDC
    followed by independent work stalls 1 cycle; every instruction has its control bits."""
    _name, ins = function("copy_grid_stride.cuobjdump.sass")
    assert all(i.ctrl is not None for i in ins)
    assert sass.control_bits(0x000FE20000000800) == 0x7F1           # stall 1, yield, no scoreboards
    first = ins[0]
    assert (first.opcode, first.stall, first.write_barrier, first.read_barrier, first.waits_on) == ("LDC", 1, None,
                                                                                                  None, ())
    s2r = next(i for i in ins if i.base == "S2R")
    assert s2r.write_barrier is not None and sass.latency_class(s2r) == "s2r"
    waiting = [i for i in ins if s2r.write_barrier in i.waits_on]
    assert waiting and waiting[0].addr > s2r.addr
    ldg = next(i for i in ins if i.base == "LDG")
    assert sass.latency_class(ldg) == "global" and ldg.write_barrier is not None
    # both disassemblers give the same bits
    _n, other = function("copy_grid_stride.nvdisasm.sass")
    assert [i.ctrl for i in ins] == [i.ctrl for i in other]


def test_a_listing_without_encodings_has_no_issue_cycles():
    text = "Function : k\n        /*0000*/                   MOV R1, c[0x0][0x28] ;\n" \
           "        /*0010*/                   EXIT ;\n"
    ins = parse_sass(text)["k"]
    assert [i.ctrl for i in ins] == [None, None]
    prof = profile_of(ins, "k")
    assert "issue_cycles" not in prof["regions"][0]
    est = dynamic_instructions(prof, {}, 4, {"shfl": 24.0})
    assert est.instructions == 8 and est.issue_cycles == 0.0


def _instr(addr, op, stall=1, wbar=7, rbar=7, wait=0):
    ctrl = stall | (1 << 4) | (wbar << 5) | (rbar << 8) | (wait << 11)
    return sass.Instr(addr, op, "", None, None, ctrl)


def test_issue_of_counts_stalls_and_the_waits_on_variable_latency_results():
    """SHFL (sets scoreboard 0) -> 2 cycles -> FMNMX waits on it -> EXIT: the pass issues in
    1 + 2... stall cycles, plus what the shuffle's latency adds; a load's wait is taken
    off by the cycles issued under it."""
    seq = [_instr(0, "SHFL.BFLY", stall=2, wbar=0), _instr(16, "IADD3", stall=1),
           _instr(32, "FMNMX", stall=4, wait=0b1), _instr(48, "EXIT", stall=5)]
    cycles, waits = sass.issue_of(seq)
    assert cycles == 2 + 1 + 4 + 5 and waits == [["shfl", 0, 3]]
    region = {"instructions": 4, "issue_cycles": cycles, "waits": waits}
    assert sass.issue_cycles_of(region, {"shfl": 24.0}) == 12 + (24 - 3)
    assert sass.issue_cycles_of(region, {"shfl": 2.0}) == 12        # already ready: no wait
    ld = [_instr(0, "LDG.E", stall=1, wbar=1), _instr(16, "IADD3", stall=6), _instr(32, "FADD", stall=4, wait=0b10)]
    c2, w2 = sass.issue_of(ld)
    assert c2 == 11 and w2 == [["global", 0, 7]]
    assert sass.issue_cycles_of({"instructions": 3, "issue_cycles": c2, "waits": w2}, {"global": 34.0}) == 11 - 7


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(sass.LATENCY_CLASSES), st.integers(0, 40), st.integers(0, 40)),
                max_size=8), st.floats(0, 60), st.floats(0, 60))
def test_longer_latencies_never_give_fewer_cycles(raw, lat, more):
    """Property: a region's cycles grow (never shrink) with every latency, and are at least
    its issue cycles when it has no load waits."""
    waits, t = [], 0
    for cls, gap, step in raw:
        t += step
        waits.append([cls, t, t + gap])
    region = {"instructions": 1, "issue_cycles": t + 50, "waits": waits}
    base = {c: lat for c in sass.LATENCY_CLASSES}
    bigger = {c: lat + more for c in sass.LATENCY_CLASSES}
    a, b = sass.issue_cycles_of(region, base), sass.issue_cycles_of(region, bigger)
    assert b >= a >= region["issue_cycles"]


def test_check_profile_refuses_bad_waits():
    prof = {"version": 1, "regions": [{"parent": None, "instructions": 3, "memory": {}, "issue_cycles": 9,
                                       "waits": [["warp", 0, 2]]}]}
    with pytest.raises(ValueError, match="waits"):
        sass.check_profile(prof)
    prof["regions"][0]["waits"] = [["shfl", 0, 2]]
    prof["regions"][0]["issue_cycles"] = 2
    with pytest.raises(ValueError, match="issue_cycles"):
        sass.check_profile(prof)
