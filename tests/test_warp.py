"""The single-warp detail: which wavefront serves each lane, broadcast, phases, sector bytes."""

import pytest

from helpers import access, global_array, scenario, shared_array
from viz.warp import phase_lanes, warp_detail


def test_column_read_serves_one_lane_per_wavefront():
    d = warp_detail(scenario(shared_array("t", shape="[32, 32]") + access("t[lane][0]")), 0)
    assert d.wavefronts == 32 and d.conflicts == 31
    assert [ln.wavefront for ln in d.lanes] == list(range(32))
    assert {bw.bank for bw in d.bank_words} == {0}
    assert [ln.byte_addr for ln in d.lanes[:3]] == [0, 128, 256]


def test_broadcast_is_one_word_fanning_out():
    d = warp_detail(scenario(shared_array() + access("s[0]")), 0)
    assert d.wavefronts == 1 and len(d.bank_words) == 1
    assert d.bank_words[0].lanes == tuple(range(32))
    assert all(ln.wavefront == 0 for ln in d.lanes)


def test_two_way_conflict_orders_words_by_first_lane():
    d = warp_detail(scenario(shared_array() + access("s[lane*2]")), 0)
    assert d.wavefronts == 2
    # Lanes 0..15 hit banks 0,2,..,30 first; lanes 16..31 bring the second word of each bank.
    assert [ln.wavefront for ln in d.lanes] == [0] * 16 + [1] * 16


def test_float4_quarter_warp_phases():
    d = warp_detail(scenario(shared_array(type_="float4", shape="[32]") + access("s[lane]")), 0)
    assert d.phases == phase_lanes(16) and len(d.phases) == 4
    assert d.wavefronts == 4 and d.wavefront_phase == (0, 1, 2, 3)
    assert d.lanes[9].words == (36, 37, 38, 39) and d.lanes[9].wavefront == 1


def test_inactive_and_missing_lanes():
    d = warp_detail(scenario(shared_array() + access("s[tid]", when="lane % 2 == 0"), block="[40]"), 0, 0, 1)
    assert [ln.exists for ln in d.lanes] == [True] * 8 + [False] * 24
    assert [ln.active for ln in d.lanes[:8]] == [True, False] * 4
    assert d.active_lanes == 4 and d.lanes[1].wavefront == -1


def test_global_sectors_and_used_bytes():
    d = warp_detail(scenario(global_array() + access("g[threadIdx.x + 1]")), 0)
    assert [s.sector for s in d.sectors] == [0, 1, 2, 3, 4] and d.lines == (0, 1)
    assert d.sectors[0].used == (False,) * 4 + (True,) * 28
    assert d.sectors[4].used == (True,) * 4 + (False,) * 28
    assert d.sector_efficiency == pytest.approx(0.8)


def test_out_of_range_block_or_warp():
    sc = scenario(global_array() + access("g[threadIdx.x]"))
    with pytest.raises(IndexError):
        warp_detail(sc, 0, block=1)
    with pytest.raises(IndexError):
        warp_detail(sc, 0, warp=1)


def test_wide_load_repeating_addresses_in_pairs_merges_phases():
    sc = scenario(shared_array(type_="double", shape="[64]") + access("s[lane/2]")
                  + access("s[lane/2]", op="store"))
    load, store = warp_detail(sc, 0), warp_detail(sc, 1)
    assert load.phases == (tuple(range(32)),) and load.wavefronts == 1
    assert store.phases == phase_lanes(8) and store.wavefronts == 2
    assert {ln.phase for ln in load.lanes} == {0}
