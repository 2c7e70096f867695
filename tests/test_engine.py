"""Exact counts for every measured example of docs/memory-model.md, and the engine's two paths agreeing."""

import numpy as np
import pytest

from helpers import access, global_array, scenario, shared_array
from viz.engine import analyze

WF_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"
WF_ST = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"
CF_LD = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum"
CF_ST = "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
INST_LD = "smsp__inst_executed_op_shared_ld.sum"
INST_ST = "smsp__inst_executed_op_shared_st.sum"
REQ_LD = "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum"
SEC_LD = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
REQ_ST = "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"
SEC_ST = "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum"


def both_paths(sc):
    fast, slow = analyze(sc), analyze(sc, shortcuts=False)
    assert fast.metrics == slow.metrics
    for a, b in zip(fast.stats, slow.stats):
        assert np.array_equal(a.per_warp, b.per_warp)
    return fast.metrics


# Measured on H100 (docs/memory-model.md), per warp instruction: (wavefronts, conflicts).
SHARED_CASES = {
    "tile[32][32] column": (shared_array("t", shape="[32, 32]"), "t[lane][0]", 32, 31),
    "tile[32][33] pad 1": (shared_array("t", shape="[32, 32]", extra="pad = 1"), "t[lane][0]", 1, 0),
    "tile[r][c ^ r]": (shared_array("t", shape="[32, 32]", extra='swizzle = "xor"'), "t[lane][3]", 1, 0),
    "tile[r][c ^ 4]": (shared_array("t", shape="[32, 32]", extra='swizzle = "xor:4"'), "t[lane][3]", 32, 31),
    "s[lane*2]": (shared_array(), "s[lane*2]", 2, 1),
    "s[lane*33]": (shared_array(shape="[1056]"), "s[lane*33]", 1, 0),
    "s[0] broadcast": (shared_array(), "s[0]", 1, 0),
    "float4 s[lane]": (shared_array(type_="float4", shape="[32]"), "s[lane]", 4, 0),
    "float2 s[lane*2]": (shared_array(type_="float2", shape="[64]"), "s[lane*2]", 4, 2),
    "s[lane]": (shared_array(), "s[lane]", 1, 0),
    "s[lane*32]": (shared_array(), "s[lane*32]", 32, 31),
    "diagonal": (shared_array("t", shape="[32, 32]", extra='swizzle = "diagonal"'), "t[lane][5]", 1, 0),
    "bitrev column": (shared_array("t", shape="[32, 32]", extra='swizzle = "bitrev"'), "t[lane][5]", 32, 31),
    "bitrev-xor": (shared_array("t", shape="[32, 32]", extra='swizzle = "bitrev-xor"'), "t[lane][5]", 1, 0),
    "cute 5,0,5": (shared_array("t", shape="[32, 32]", extra='swizzle = "cute:5,0,5"'), "t[lane][5]", 1, 0),
    "double column": (shared_array("t", "double", "[32, 32]"), "t[lane][0]", 32, 30),
    "double column pad": (shared_array("t", "double", "[32, 32]", "pad = 1"), "t[lane][0]", 2, 0),
    "char c[tid]": (shared_array("c", "char", "[128]"), "c[lane]", 1, 0),
    "char c[tid*4]": (shared_array("c", "char", "[128]"), "c[lane*4]", 1, 0),
    "short s[tid*2]": (shared_array("c", "short", "[128]"), "c[lane*2]", 1, 0),
    "char c[tid*128]": (shared_array("c", "char", "[4096]"), "c[lane*128]", 32, 31),
}


# 8- and 16-byte loads that repeat addresses in lane pairs take half the phases (H100 probes,
# docs/GPU.md); stores do not. (type, at, when, load wavefronts, load conflicts, store wavefronts)
WIDE_CASES = [
    ("float4", "s[0]", None, 2, 0, 4),
    ("float4", "s[lane/2]", None, 2, 0, 4),
    ("float4", "s[lane%2]", None, 2, 0, 4),
    ("float4", "s[lane%8]", None, 4, 0, 4),
    ("float4", "s[lane%4 == 0 ? 0 : 1]", None, 4, 0, 4),
    ("float4", "s[lane < 16 ? lane/4 : lane]", None, 4, 0, 4),
    ("float4", "s[lane]", "lane % 8 == 0", 4, 2, 4),
    ("float4", "s[(lane/2)*8]", None, 16, 14, 16),
    ("float4", "s[(lane%2)*8]", None, 4, 2, 8),
    ("double", "s[0]", None, 1, 0, 2),
    ("double", "s[lane/2]", None, 1, 0, 2),
    ("double", "s[lane%2]", None, 1, 0, 2),
    ("double", "s[lane%16]", None, 2, 0, 2),
    ("double", "s[lane]", "lane % 8 == 0", 2, 1, 2),
    ("double", "s[(lane/2)*16]", None, 16, 15, 16),
    ("float2", "s[lane*2]", None, 4, 2, 4),
]


@pytest.mark.parametrize("t, at, when, ld_wf, ld_conf, st_wf", WIDE_CASES)
def test_wide_loads_merge_phases_when_lanes_repeat_addresses(t, at, when, ld_wf, ld_conf, st_wf):
    sc = scenario(shared_array(type_=t) + access(at, when=when) + access(at, op="store", when=when))
    m = both_paths(sc)
    assert (m[WF_LD], m[CF_LD], m[WF_ST]) == (ld_wf, ld_conf, st_wf)


@pytest.mark.parametrize("name", SHARED_CASES)
def test_shared_measured_examples(name):
    arr, at, wf, conf = SHARED_CASES[name]
    m = both_paths(scenario(arr + access(at)))
    assert (m[INST_LD], m[WF_LD], m[CF_LD]) == (1, wf, conf)


def test_stores_to_one_word_cost_one_wavefront():
    m = both_paths(scenario(shared_array() + access("s[0]", op="store")))
    assert (m[INST_ST], m[WF_ST], m[CF_ST]) == (1, 1, 0)
    m = both_paths(scenario(shared_array() + access("s[lane*32]", op="store")))
    assert (m[WF_ST], m[CF_ST]) == (32, 31)


def test_empty_phases_cost_nothing_and_idle_warps_issue_nothing():
    # float4: only quarter 0 active -> one phase, 1 wavefront.
    m = both_paths(scenario(shared_array(type_="float4", shape="[64]") + access("s[lane]", when="lane < 8")))
    assert (m[INST_LD], m[WF_LD], m[CF_LD]) == (1, 1, 0)
    # Warp 1 of a 64-thread block has no active lane: it issues nothing.
    m = both_paths(scenario(shared_array() + access("s[tid]", when="tid < 32"), block="[64]"))
    assert (m[INST_LD], m[WF_LD]) == (1, 1)


def test_partial_warp_of_a_block():
    # 36 threads: warp 0 full, warp 1 has 4 lanes.
    sc = scenario(global_array() + access("g[blockIdx.x * blockDim.x + threadIdx.x]"), block="[36]", grid="[3]")
    m = both_paths(sc)
    assert m[REQ_LD] == 6
    # Block b starts at byte 144 b: block 1's warp 0 covers bytes 144..271, sectors 4..8.
    an = analyze(sc)
    assert an.stats[0].per_warp.tolist() == [[4, 1], [5, 1], [4, 1]]
    assert an.stats[0].per_warp_active.tolist() == [[32, 4]] * 3


# Sectors per request, measured on H100.
GLOBAL_CASES = {
    "coalesced float": ("float", "g[i]", 4),
    "offset by one": ("float", "g[i + 1]", 5),
    "stride 2": ("float", "g[i * 2]", 8),
    "stride 8": ("float", "g[i * 8]", 32),
    "stride 32": ("float", "g[i * 32]", 32),
    "float2 sequential": ("float2", "g[i]", 8),
    "float4 sequential": ("float4", "g[i]", 16),
    "broadcast": ("float", "g[blockIdx.x]", 1),
    "char": ("char", "g[i]", 1),
    "double": ("double", "g[i]", 8),
}


@pytest.mark.parametrize("name", GLOBAL_CASES)
def test_global_measured_examples(name):
    t, at, per_request = GLOBAL_CASES[name]
    at = at.replace("i", "(blockIdx.x * blockDim.x + threadIdx.x)")
    m = both_paths(scenario(global_array(type_=t) + access(at), block="[256]", grid="[16]"))
    assert m[REQ_LD] == 128
    assert m[SEC_LD] == 128 * per_request


def test_aos_float3_field_is_12_sectors_and_whole_float3_is_three_instructions():
    aos = global_array("p", extra="").replace('type = "float"', 'fields = ["r:float", "g:float", "b:float"]')
    m = both_paths(scenario(aos + access("p[threadIdx.x].r")))
    assert (m[REQ_LD], m[SEC_LD]) == (1, 12)
    m = both_paths(scenario(global_array("v", "float3") + access("v[threadIdx.x]")))
    assert (m[REQ_LD], m[SEC_LD]) == (3, 36)


def test_stores_count_separately_from_loads():
    m = both_paths(scenario(global_array() + access("g[threadIdx.x]", op="store")))
    assert (m[REQ_LD], m[REQ_ST], m[SEC_ST]) == (0, 1, 4)


def test_loops_are_one_instruction_per_point_in_program_order():
    sc = scenario(shared_array("t", shape="[32, 32]") + access("t[threadIdx.y + j][threadIdx.x]", op="store", loops={"j": "0:32:8"})
                  + access("t[threadIdx.x][threadIdx.y + j]", loops={"j": "0:32:8"}), block="[32, 8]", grid="[2, 2]")
    ins = sc.instructions()
    assert [(i.access, dict(i.loop)["j"]) for i in ins] == [(0, 0), (0, 8), (0, 16), (0, 24), (1, 0), (1, 8), (1, 16), (1, 24)]
    m = both_paths(sc)
    warps = 4 * 8 * 4  # blocks x warps x loop points
    assert (m[INST_ST], m[WF_ST], m[CF_ST]) == (warps, warps, 0)
    assert (m[INST_LD], m[WF_LD], m[CF_LD]) == (warps, warps * 32, warps * 31)


def test_block_dependent_mask_and_swizzle_mixing_blocks_and_threads():
    sc = scenario(global_array() + access("g[(blockIdx.x ^ threadIdx.x) * 3]", when="blockIdx.x % 3 != 1"),
                  block="[64]", grid="[7]")
    both_paths(sc)
    sc = scenario(global_array() + access("g[blockIdx.x * 17 + threadIdx.x]", when="blockIdx.x % 2 == 0"),
                  block="[64]", grid="[9]")
    m = both_paths(sc)
    assert m[REQ_LD] == 5 * 2


def test_per_access_figures():
    sc = scenario(global_array() + access("g[threadIdx.x + 1]"))
    d = analyze(sc).per_access()[0]
    assert d.requests == 1 and d.sectors == 5 and d.bytes_requested == 128
    assert d.sector_efficiency == 0.8 and d.bytes_moved == 160 and d.lines == 2
