"""The one-line reasons (`warpviz analyze`, the Figures panel) say only what is true for the
access at hand: every number a reason states is read back out of the English sentence by
pattern and compared with the figure it names, for every access of every built-in and of
random scenarios; a rule (the pair rule of wide loads, idle phases, partial warps) is
named only where it applied. Each reason must match one of the patterns below in full, so
a new sentence cannot slip by unchecked."""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, assume, example, given, settings

from helpers import access, global_array, scenario, shared_array
from reference import reference
from test_properties import load_or_skip, scenarios
from viz.engine import analyze, nominal_phases
from viz.report import explain_access, to_table
from viz.scenario import ScenarioError, runnable_builtins

N = r"(\d[\d,]*(?:\.\d+)?)"
SIZES = r"(\d+(?: \+ \d+)*)"
ACTIVE = ", counted only where a lane is active"


def num(text: str) -> float:
    return float(text.replace(",", ""))


def avg(a: int, b: int) -> str:
    """The figure a / b at the precision a reason states it."""
    return f"{a / b:,.2f}"


def sizes(text: str) -> list[int]:
    return [int(x) for x in text.split(" + ")]


def full(pattern: str, text: str):
    return re.fullmatch(pattern, text)


# ---------------------------------------------------------------------------- one row each


def check_instructions(d, sc, why):
    a = sc.accesses[d.index]
    k = sum(1 for ins in sc.instructions() if ins.access == a.index)
    parts = [size for _, size in a.parts]
    assert d.instructions_per_warp == k and d.part_bytes == parts
    if full("one per warp" + ACTIVE, why):
        assert k == 1
    elif m := full(N + r" per warp \(one per loop point\)" + ACTIVE, why):
        assert num(m[1]) == k and len(parts) == 1 and k > 1
    elif m := full(N + r" per warp \(one per part of the element: " + SIZES + r" B\)" + ACTIVE, why):
        assert num(m[1]) == k == len(parts) > 1 and sizes(m[2]) == parts
    elif m := full(N + r" per warp \(" + N + r" loop points x " + N + r" parts of the element: " + SIZES
                   + r" B\)" + ACTIVE, why):
        assert num(m[1]) == k == num(m[2]) * num(m[3]) and num(m[3]) == len(parts) > 1
        assert sizes(m[4]) == parts and num(m[2]) > 1
    else:
        raise AssertionError(f"unchecked reason: {why!r}")


def check_lanes(d, sc, value, why):
    inst, active = d.warp_instructions, d.active_lanes
    a = sc.accesses[d.index]
    assert value == f"{active / inst:.2f}/warp"
    if full("all 32 lanes are active in every warp instruction", why):
        assert active == 32 * inst
    elif m := full(N + r" on average per warp instruction: the lanes whose `when` holds \(inactive lanes "
                   r"make no access\)", why):
        assert m[1] == avg(active, inst) and active < 32 * inst and a.when is not None
    elif m := full(N + r" on average per warp instruction: ((?:ld|st)matrix\.x([124])(?:\.trans)?) reads the row "
                   r"addresses of the first (\d+) lanes only \(8 per matrix\)", why):
        assert m[1] == avg(active, inst) and a.matrix is not None and a.matrix.text == m[2]
        assert int(m[4]) == 8 * int(m[3]) == 8 * a.matrix.num < 32 and active == 8 * a.matrix.num * inst
    elif m := full(N + r" on average per warp instruction: the block size is not a multiple of 32, so its "
                   r"last warp is partial", why):
        assert m[1] == avg(active, inst) and active < 32 * inst and a.when is None
        assert sc.launch.threads_per_block % 32 != 0
    else:
        raise AssertionError(f"unchecked reason: {why!r}")


PHASE_RULES = {
    r"(16)-byte rows of (?:ld|st)matrix\.x([124])(?:\.trans)?: one phase per 8x8 matrix": "matrix",
    r"(\d+)-byte accesses: one phase for all 32 lanes": "one",
    r"(8)-byte accesses: two half-warp phases": "none",
    r"(16)-byte accesses: four quarter-warp phases": "none",
    r"(8)-byte load whose lanes repeat addresses in pairs: one 32-lane phase instead of two half-warp phases":
        "all",
    r"(16)-byte load whose lanes repeat addresses in pairs: two 16-lane phases instead of four quarter-warp "
    r"phases": "all",
    r"(8)-byte load: two half-warp phases, but one 32-lane phase in the " + N + " of " + N
    + r" warp instructions whose lanes repeat addresses in pairs": "some",
    r"(16)-byte load: four quarter-warp phases, but two 16-lane phases in the " + N + " of " + N
    + r" warp instructions whose lanes repeat addresses in pairs": "some",
}


def check_phases(d, why):
    inst, ph = d.warp_instructions, d.phases
    m = full(N + r" per instruction \((.*)\)", why)
    assert m, f"unchecked reason: {why!r}"
    assert m[1] == avg(ph, inst)
    groups = {g["access_bytes"]: g for g in d.phases_by_size if g["warp_instructions"]}
    named, idle = [], 0
    for piece in m[2].split("; "):
        if full("1 phase with no active lane costs nothing", piece):
            idle = 1
            continue
        if p := full(N + " phases with no active lane cost nothing", piece):
            idle = num(p[1])
            assert idle > 1
            continue
        for pattern, kind in PHASE_RULES.items():
            if p := full(pattern, piece):
                break
        else:
            raise AssertionError(f"unchecked phase rule {piece!r} in {why!r}")
        size = int(p[1])
        g = groups[size]
        named.append(size)
        if kind == "matrix":
            assert d.matrices == int(p[2]) and g["paired_instructions"] == 0
        elif kind == "one":
            assert size <= 4
        elif kind == "none":
            assert g["paired_instructions"] == 0
        elif kind == "all":
            assert d.op == "load" and g["paired_instructions"] == g["warp_instructions"] > 0
        else:
            assert d.op == "load" and num(p[2]) == g["paired_instructions"] and num(p[3]) == g["warp_instructions"]
            assert 0 < num(p[2]) < num(p[3])
    assert sorted(named) == sorted(groups), why          # every size once, nothing else
    assert idle == d.idle_phases, why
    # The stated rules add up to the figure: nominal phases, halved where paired, less the idle ones
    # (ldmatrix / stmatrix: one phase per matrix).
    if d.matrices:
        assert ph == inst * d.matrices - idle
        return
    assert ph == sum(g["warp_instructions"] * nominal_phases(s) - g["paired_instructions"] * nominal_phases(s) // 2
                     for s, g in groups.items()) - idle


def rule_of(d, sc) -> str:
    """How the access's shared side is served, told from the scenario itself."""
    a = sc.accesses[d.index]
    if a.matrix is not None:
        return "matrix"
    if a.op == "cp.async":
        return "ldgsts"
    if a.op == "atomic":
        return "atom_add" if a.option("result") == "used" else "atom_inc"
    return "plain"


WAVEFRONTS = {
    "plain": "each phase costs the most distinct 32-bit words any one bank must deliver",
    "matrix": r"each phase \(one 8x8 matrix\) costs the most distinct 32-bit words any one bank holds among its 8 "
              "rows",
    "ldgsts": r"each phase costs the most writes any one bank takes, one per lane and word \(LDGSTS does not merge "
              r"lanes that write the same word\)",
    "atom_add": r"the bank with the most active lanes serves them one per wavefront \(ATOMS.ADD\); lanes on different "
                "banks go together",
    "atom_inc": r"the most distinct words any one bank holds \(ATOMS.POPC.INC adds up the lanes on one word in one "
                r"go\)",
}
# (no conflict, every phase as deep as the deepest, the deepest and the average) per rule
CONFLICTS = {
    "plain": (r"every phase is one wavefront: no bank must deliver two distinct words in one phase \(lanes that "
              r"ask for the same word share it\)",
              r"wavefronts - phases: in every phase the busiest bank delivers {N} distinct words \({N}-way "
              r"conflict\)",
              r"wavefronts - phases: in the worst phase one bank delivers {N} distinct words \({N}-way "
              r"conflict\); the busiest bank of a phase delivers {N} on average"),
    "matrix": (r"every phase is one wavefront: the 8 rows of each matrix lie on distinct banks \(a row whose "
               r"address several lanes give is moved once\)",
               r"wavefronts - phases: in every matrix the busiest bank holds {N} distinct words of its rows "
               r"\({N}-way conflict\)",
               r"wavefronts - phases: in the worst matrix one bank holds {N} distinct words of its rows "
               r"\({N}-way conflict\); the busiest bank of a matrix holds {N} on average"),
    "ldgsts": (r"every phase is one wavefront: no bank takes two writes in one phase",
               r"wavefronts - phases: in every phase the busiest bank takes {N} writes, one per lane and word "
               r"\({N}-way conflict; lanes that write the same word are not merged\)",
               r"wavefronts - phases: in the worst phase one bank takes {N} writes, one per lane and word "
               r"\({N}-way conflict\); the busiest bank of a phase takes {N} on average"),
    "atom_add": (r"every warp instruction is one wavefront: no bank has two active lanes",
                 r"wavefronts - phases: in every warp instruction the busiest bank serves {N} lanes one after "
                 r"another \({N}-way conflict\), whether they share an address or not",
                 r"wavefronts - phases: in the worst warp instruction one bank serves {N} lanes one after "
                 r"another \({N}-way conflict\); the busiest bank of a warp instruction serves {N} on average"),
    "atom_inc": (r"every warp instruction is one wavefront: no bank holds two distinct words \(the lanes on one "
                 r"word are added up in one go\)",
                 r"wavefronts - phases: in every warp instruction the busiest bank holds {N} distinct words "
                 r"\({N}-way conflict\)",
                 r"wavefronts - phases: in the worst warp instruction one bank holds {N} distinct words "
                 r"\({N}-way conflict\); the busiest bank of a warp instruction holds {N} on average"),
}


def check_wavefronts(d, sc, value, why):
    m = full(N + " per instruction: " + WAVEFRONTS[rule_of(d, sc)], why)
    assert value == f"{d.wavefronts:,}" and m and m[1] == avg(d.wavefronts, d.warp_instructions), why


def check_conflicts(d, sc, value, why):
    wf, ph, deepest = d.wavefronts, d.phases, d.max_wavefronts_per_phase
    assert value == f"{wf - ph:,}"
    none, every, worst = (p.replace("{N}", N) for p in CONFLICTS[rule_of(d, sc)])
    if full(none, why):
        assert wf == ph and deepest == 1
    elif m := full(every, why):
        assert num(m[1]) == num(m[2]) == deepest > 1 and wf == deepest * ph
    elif m := full(worst, why):
        assert num(m[1]) == num(m[2]) == deepest > 1 and m[3] == avg(wf, ph) and wf < deepest * ph
    else:
        raise AssertionError(f"unchecked reason: {why!r}")


def check_bytes(d, why):
    inst, br, active = d.warp_instructions, d.bytes_requested, d.active_lanes
    parts = d.part_bytes
    if m := full(N + r" B per request: " + N + r" active lanes x (\d+) B", why):
        assert m[1] == avg(br, inst) and m[2] == avg(active, inst) and [int(m[3])] == parts
        assert br == active * parts[0]
    elif m := full(N + r" B per request: each active lane asks for (\d+) B in (\d+) instructions \(" + SIZES
                   + r" B\)", why):
        assert m[1] == avg(br, inst) and int(m[2]) == sum(parts) == d.element_bytes
        assert int(m[3]) == len(parts) > 1 and sizes(m[4]) == parts
        assert br * len(parts) == active * sum(parts)   # the same lanes ask for every part
    else:
        raise AssertionError(f"unchecked reason: {why!r}")


def check_efficiency(d, value, why):
    requested, used, moved = d.bytes_requested, d.bytes_used, d.sectors * 32
    assert value == f"{100 * d.sector_efficiency:.1f}%" and abs(d.sector_efficiency - requested / moved) < 1e-4
    assert used <= min(requested, moved)
    m = full(r"bytes requested / bytes moved: (every byte moved is used|" + N + "% of the moved bytes are not used "
             r"by the warp)(?:; " + N + r"% of the requested bytes are asked for again by another lane \(one sector "
             r"serves them all\))?", why)
    assert m, f"unchecked reason: {why!r}"
    if m[2] is None:
        assert used == moved
    else:
        assert m[2] == f"{100 * (moved - used) / moved:.1f}" and used < moved
    if m[3] is None:
        assert requested == used
    else:
        assert m[3] == f"{100 * (requested - used) / requested:.1f}" and requested > used


def check_access(d, sc):
    inst = d.warp_instructions
    rows = explain_access(d)
    names = [r[0] for r in rows]
    if inst == 0:
        assert names == ["warp instructions", ""] and rows[1][2] == "no lane is active: the warp issues nothing"
    elif d.kind == "tma.load":   # checked in tests/test_kinds_async.py
        return
    elif d.kind == "tma.store":  # its figures: tests/test_kinds_tma_store.py
        assert names == ["warp instructions", "bytes written", "sectors", "swizzle"]
        assert [r[1] for r in rows] == [f"{inst:,}", f"{d.bytes_copied:,}", f"{d.sectors:,}", d.swizzle]
        return
    elif d.kind == "cp.async":
        assert names == ["warp instructions", "active lanes", "wavefronts", "phases", "bank conflicts", "requests",
                         "sectors"]
    elif d.space == "shared":
        assert names == ["warp instructions", "active lanes", "wavefronts", "phases", "bank conflicts"]
    else:
        assert names == ["warp instructions", "active lanes", "requests", "sectors", "lines", "bytes requested",
                         "bytes moved", "sector efficiency"]
    for name, value, why in rows:
        if name == "warp instructions":
            assert value == f"{inst:,}"
            check_instructions(d, sc, why)
        elif name == "active lanes":
            check_lanes(d, sc, value, why)
        elif name == "wavefronts":
            check_wavefronts(d, sc, value, why)
        elif name == "phases":
            assert value == f"{d.phases:,}"
            check_phases(d, why)
        elif name == "bank conflicts":
            check_conflicts(d, sc, value, why)
        elif name == "requests" and d.kind == "cp.async":
            assert value == f"{inst:,}" == f"{d.requests:,}" and "cp.async" in why
        elif name == "sectors" and d.kind == "cp.async":
            cg = sc.accesses[d.index].option("cache") == "cg"
            unit = (r"cp.async.cg \(L1 bypassed\) counts the distinct pairs of global 128-byte line and shared "
                    "32-byte sector, over the lanes whose 16-byte shared slot no later lane writes again") if cg else \
                "the distinct 32-byte sectors the active lanes copy from, as an LDG of the same width"
            m = full(N + " per request: " + unit, why)
            assert value == f"{d.sectors:,}" and m and m[1] == avg(d.sectors, inst), why
        elif name == "requests":
            assert value == f"{inst:,}" == f"{d.requests:,}"
            assert why == "one per warp instruction with an active lane, whatever the width"
        elif name in ("sectors", "lines"):
            unit = "the distinct 32-byte sectors the active lanes' bytes touch" if name == "sectors" else \
                "distinct 128-byte lines \\(4 sectors each\\)"
            m = full(N + " per request: " + unit, why)
            assert value == f"{getattr(d, name):,}" and m and m[1] == avg(getattr(d, name), inst), why
        elif name == "bytes requested":
            assert value == f"{d.bytes_requested:,}"
            check_bytes(d, why)
        elif name == "bytes moved":
            assert value == f"{d.sectors * 32:,}" and why == "sectors x 32 B"
        elif name == "sector efficiency":
            check_efficiency(d, value, why)


# ---------------------------------------------------------------------------- where they are checked


BUILTINS = runnable_builtins()


@pytest.mark.parametrize("name,sc", BUILTINS, ids=[n for n, _ in BUILTINS])
def test_every_reason_of_every_builtin_states_its_figures(name, sc):
    for d in analyze(sc).per_access():
        check_access(d, sc)


def check_against_reference(sc, an):
    """The figures the reasons name (pairs, idle phases, the deepest phase, bytes used) are those of the
    pure-Python reference, not only self-consistent."""
    extras: dict = {}
    try:
        reference(sc, extras)
    except Exception:
        return  # the reference refuses what the engine refuses (test_properties checks that)
    for s in an.stats:
        if s.space == "shared":
            e = extras[s.instruction.number]
            assert (s.paired, s.deepest) == (e["paired"], e["deepest"])
    for d in an.per_access():
        rows = [s for s in an.stats if s.instruction.access == d.index]
        if d.space == "shared":
            assert d.idle_phases == sum(extras[s.instruction.number]["idle"] for s in rows)
        else:
            assert d.bytes_used == sum(extras[s.instruction.number]["used"] for s in rows)


STRUCT = (global_array("g", "float", extra='fields = ["d:double", "f:float"]').replace('type = "float"\n', "")
          + shared_array("s", "float", "[64]", 'fields = ["d:double", "f:float"]').replace('type = "float"\n', ""))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(scenarios())
@example('[launch]\nblock = [64]\ngrid = [2]\n' + STRUCT + access("g[blockIdx.x * blockDim.x + threadIdx.x]")
         + access("s[threadIdx.x % 64]") + access("s[threadIdx.x / 2]", when="threadIdx.x < 40")
         + access("s[threadIdx.x % 64].f", op="store"))
@example('[launch]\nblock = [48]\ngrid = [1]\n' + shared_array("s", "double", "[64]")
         + access("s[lane / 2 + (lane & 16)]") + access("s[lane * (warp + 1) % 64]")
         + access("s[lane]", when="lane % 8 == 0"))
@example('[launch]\nblock = [64]\ngrid = [1]\n' + shared_array("s", "float4", "[64]")
         + access("s[warp == 0 ? lane / 2 : lane]") + access("s[lane]", op="store", when="lane < 9"))
def test_every_reason_of_random_scenarios_states_its_figures(text):
    sc = load_or_skip(text)
    try:
        an = analyze(sc)
    except ScenarioError:
        assume(False)
    for d in an.per_access():
        check_access(d, sc)
    check_against_reference(sc, an)


# ---------------------------------------------------------------------------- the reported cases


def reasons(sc) -> dict[tuple[int, str], str]:
    return {(d.index, name): why for d in analyze(sc).per_access() for name, _v, why in explain_access(d)}


def test_a_whole_struct_states_its_bytes_and_instructions():
    sc = scenario(STRUCT + access("g[threadIdx.x]") + access("s[threadIdx.x]"))
    why = reasons(sc)
    assert why[(0, "bytes requested")] == ("192.00 B per request: each active lane asks for 12 B in 2 instructions "
                                           "(8 + 4 B)")
    assert why[(0, "warp instructions")] == ("2 per warp (one per part of the element: 8 + 4 B), counted only "
                                             "where a lane is active")
    assert "8-byte accesses: two half-warp phases; 4-byte accesses: one phase for all 32 lanes" in why[(1, "phases")]
    table = to_table(analyze(sc))
    assert "struct{d:double,f:float} g[1048576], 12 B in 2 instructions: 8 + 4 B)" in table
    assert "x 8 B per request" not in table


@pytest.mark.parametrize("type_,at,pairs", [
    ("double", "s[lane]", False), ("double", "s[lane / 2]", True), ("double", "s[0]", True),
    ("float4", "s[lane]", False), ("float4", "s[lane / 2]", True), ("float2", "s[lane * 2]", False)])
def test_the_pair_rule_is_named_only_where_lanes_repeat_addresses_in_pairs(type_, at, pairs):
    sc = scenario(shared_array("s", type_, "[64]") + access(at) + access(at, op="store"))
    why = reasons(sc)
    assert ("repeat addresses in pairs" in why[(0, "phases")]) is pairs
    assert "pairs" not in why[(1, "phases")]      # stores keep the fixed phases


def test_idle_phases_and_a_mixed_conflict_are_stated_as_they_are():
    # Lanes 0-7 active in an 8-byte load that does not pair: the second half-warp of both warps is idle.
    sc = scenario(shared_array("s", "double", "[64]") + access("s[lane]", when="lane < 8")
                  + access("s[warp == 0 ? lane * 16 % 64 : lane]", when="lane < 4"), block="[64]")
    why = reasons(sc)
    assert why[(0, "phases")] == "1.00 per instruction (8-byte accesses: two half-warp phases; 2 phases with no " \
                                 "active lane cost nothing)"
    assert why[(1, "bank conflicts")].startswith("wavefronts - phases: in the worst phase one bank delivers 4 "
                                                 "distinct words (4-way conflict); ")


# ---------------------------------------------------------------------------- the kinds: LDGSTS, ATOMS, LDSM


def kind_scenario(access_line: str, shared="float4", block="[32]") -> str:
    return f"""format = 3
title = "kind"
launch = {{ block = {block}, grid = [1] }}
arrays.g = {{ space = "global", type = "float4", shape = [1024] }}
arrays.s = {{ space = "shared", type = "{shared}", shape = [1024] }}
access = [{access_line}]
"""


def kind_reasons(text: str) -> tuple[dict, dict]:
    from viz.scenario import loads

    sc = loads(text, source="kind.toml")
    d = analyze(sc).per_access()[0]
    check_access(d, sc)                          # every number of every reason, as above
    return d, {name: why for name, _v, why in explain_access(d)}


def test_cp_async_with_every_lane_writing_one_slot_states_its_eight_writes_a_phase():
    """cp.async of 16 bytes, every lane to s[0]: four quarter-warp phases, each with 8 lanes on
    banks 0-3, 8 wavefronts each (the H100 counted 28 conflicts: 32 - 4), not '29 distinct words'."""
    d, why = kind_reasons(kind_scenario('{ op = "cp.async", at = "s[0]", from = "g[lane]" }'))
    assert (d.wavefronts, d.phases, d.bank_conflicts, d.max_wavefronts_per_phase) == (32, 4, 28, 8)
    assert why["wavefronts"] == ("32.00 per instruction: each phase costs the most writes any one bank takes, one per "
                                 "lane and word (LDGSTS does not merge lanes that write the same word)")
    assert why["bank conflicts"] == ("wavefronts - phases: in every phase the busiest bank takes 8 writes, one per "
                                     "lane and word (8-way conflict; lanes that write the same word are not merged)")
    assert why["sectors"] == ("1.00 per request: cp.async.cg (L1 bypassed) counts the distinct pairs of global "
                              "128-byte line and shared 32-byte sector, over the lanes whose 16-byte shared slot no "
                              "later lane writes again")


def test_cp_async_ca_with_one_deep_phase_states_the_deepest_and_the_average():
    d, why = kind_reasons(kind_scenario('{ op = "cp.async", at = "s[lane < 8 ? 0 : lane]", from = "g[lane * 2]", '
                                        'cache = "ca" }'))
    assert (d.wavefronts, d.phases, d.max_wavefronts_per_phase, d.sectors) == (11, 4, 8, 32)
    assert why["bank conflicts"] == ("wavefronts - phases: in the worst phase one bank takes 8 writes, one per lane "
                                     "and word (8-way conflict); the busiest bank of a phase takes 2.75 on average")
    assert why["sectors"] == ("32.00 per request: the distinct 32-byte sectors the active lanes copy from, as an LDG "
                              "of the same width")


@pytest.mark.parametrize("at,wavefronts,conflicts", [
    ("h[lane]", 1, "every warp instruction is one wavefront: no bank has two active lanes"),
    ("h[lane % 16]", 2, "wavefronts - phases: in every warp instruction the busiest bank serves 2 lanes one after "
                        "another (2-way conflict), whether they share an address or not"),
    ("h[lane % 8]", 4, "wavefronts - phases: in every warp instruction the busiest bank serves 4 lanes one after "
                       "another (4-way conflict), whether they share an address or not"),
    ("h[lane / 16 * 32]", 32, "wavefronts - phases: in every warp instruction the busiest bank serves 32 lanes one "
                              "after another (32-way conflict), whether they share an address or not"),
])
def test_atom_add_serves_a_banks_lanes_one_per_wavefront(at, wavefronts, conflicts):
    """ATOMS.ADD (the old value read) on the H100: 32 consecutive words 1 wavefront, 16 addresses
    x 2 lanes 2, 8 x 4 4, two words of bank 0 with 16 lanes each 32 (h100-kinds probes
    'distinct banks', 'lane/2', 'lane%8', 'lane/16*32')."""
    text = kind_scenario(f'{{ op = "atomic", at = "{at}", result = "used" }}').replace(
        'arrays.s = { space = "shared", type = "float4", shape = [1024] }', 'arrays.h = { space = "shared", type = '
        '"int", shape = [1024] }')
    d, why = kind_reasons(text)
    assert d.wavefronts == wavefronts and why["bank conflicts"] == conflicts
    assert why["wavefronts"] == (f"{wavefronts}.00 per instruction: the bank with the most active lanes serves them "
                                 "one per wavefront (ATOMS.ADD); lanes on different banks go together")


@pytest.mark.parametrize("at,wavefronts,conflicts", [
    ("h[lane % 8]", 1, "every warp instruction is one wavefront: no bank holds two distinct words (the lanes on one "
                       "word are added up in one go)"),
    ("h[(lane % 4) * 32]", 4, "wavefronts - phases: in every warp instruction the busiest bank holds 4 distinct "
                              "words (4-way conflict)"),
])
def test_atomicadd_plus_one_counts_a_banks_distinct_words(at, wavefronts, conflicts):
    text = kind_scenario(f'{{ op = "atomic", at = "{at}" }}').replace(
        'arrays.s = { space = "shared", type = "float4", shape = [1024] }', 'arrays.h = { space = "shared", type = '
        '"int", shape = [1024] }')
    d, why = kind_reasons(text)
    assert d.wavefronts == wavefronts and why["bank conflicts"] == conflicts


def test_ldmatrix_reasons_speak_of_matrices_and_rows():
    from viz.scenario import load

    for name, conflicts in (("ldmatrix-x4-tile", "wavefronts - phases: in every matrix the busiest bank holds 8 "
                                                 "distinct words of its rows (8-way conflict)"),
                            ("ldmatrix-x4-tile-sw128", "every phase is one wavefront: the 8 rows of each matrix lie "
                                                       "on distinct banks (a row whose address several lanes give is "
                                                       "moved once)")):
        sc = load(name)
        d = next(d for d in analyze(sc).per_access() if d.matrix_op)
        why = {n: w for n, _v, w in explain_access(d)}
        assert why["bank conflicts"] == conflicts, name


def test_the_kinds_reasons_in_chinese():
    from viz import i18n

    text = kind_scenario('{ op = "cp.async", at = "s[0]", from = "g[lane]" }')
    from viz.scenario import loads

    d = analyze(loads(text, source="kind.toml")).per_access()[0]
    i18n.set_language("zh_CN")
    try:
        why = {n: w for n, _v, w in explain_access(d)}
    finally:
        i18n.set_language("en")
    assert why["bank conflicts"] == ("波前数 − 阶段数：每个阶段中最忙的存储体都要承担 8 次写入，按每个通道、每个字各算一次"
                                     "（8 路冲突；写同一个字的通道不合并）")


def test_every_reason_template_of_the_kinds_has_a_chinese_entry():
    from viz import i18n
    from viz.report import _CONFLICTS_WHY, _WAVEFRONTS_WHY

    templates = list(_WAVEFRONTS_WHY.values()) + [t for three in _CONFLICTS_WHY.values() for t in three]
    assert len(templates) == 5 + 15 and i18n.missing("zh_CN", templates) == []
