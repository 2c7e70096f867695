"""What the built-ins' notes and the guide teach holds in the model (and on the H100 where
the shipped counters say so): the column-read rule gcd(row length, 32), the pair rule of
wide shared loads, the banks a sub-word warp touches, why the LCG swizzle works, and that
every access must be aligned to its size (4-byte ones included)."""

from __future__ import annotations

import json
import math
import re

import pytest

from viz import assets
from viz.engine import analyze
from viz.report import to_json
from viz.scenario import ScenarioError, load, loads
from viz.warp import warp_detail

C = json.loads((assets.measurements_dir() / "h100-counters-2026-11-23.json").read_text())["scenarios"]
WF_LD = "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum"

COLUMN = """title = "column read of float t[32][{L}]"
[launch]
block = [32]
grid = [1]
[arrays.t]
space = "shared"
type = "float"
shape = [32, {L}]
[[access]]
op = "load"
at = "t[threadIdx.x][0]"
"""


def column_reads(sc) -> list[float]:
    """Wavefronts per instruction of the shared loads that read down a column (t[lane][...])."""
    doc = to_json(analyze(sc))
    return [a["wavefronts_per_instruction"] for a in doc["accesses"]
            if a["space"] == "shared" and a["op"] == "load"]


@pytest.mark.parametrize("length", [32, 33, 34, 40, 48, 49, 56, 64, 65, 96, 100])
def test_column_read_degree_is_gcd_of_row_length_and_32(length):
    assert column_reads(loads(COLUMN.format(L=length))) == [math.gcd(length, 32)]


@pytest.mark.parametrize("name", ["pad-row-48", "pad-row-64", "pad-row-64-pad", "pad-tile-64x64",
                                  "pad-tile-64x64-pad", "transpose-tile", "transpose-tile-pad"])
def test_builtin_column_reads_follow_the_gcd_rule(name):
    sc = load(name)
    (tile,) = [a for a in sc.arrays if a.space == "shared"]
    words = tile.row_pitch * tile.type.size // 4
    assert column_reads(sc)[-1] == math.gcd(words, 32)
    for k in map(int, re.findall(r"(\d+)-way", sc.title)):
        assert k == math.gcd(words, 32), f"{name}: the title says {k}-way"


@pytest.mark.parametrize("type_,at,wavefronts", [("float4", "s[0]", 2), ("double", "s[0]", 1),
                                                 ("float4", "s[lane]", 4), ("double", "s[lane]", 2)])
def test_pair_rule_of_wide_shared_loads(type_, at, wavefronts):
    """The notes: 4 (16-byte) and 2 (8-byte) wavefronts are the minimum for 32 distinct
    addresses only; a load whose lanes repeat addresses in pairs needs half. Model = H100."""
    text = C[f"probe: {type_} {at}"]["toml"]
    assert column_reads(loads(text)) == [wavefronts]
    assert C[f"probe: {type_} {at}"]["hardware"][WF_LD] == wavefronts


@pytest.mark.parametrize("name,per_warp", [("char-shared", 8), ("short-shared", 16)])
def test_sub_word_warps_touch_consecutive_words_whose_banks_move_with_the_warp(name, per_warp):
    sc = load(name)
    for warp in range(4):
        banks = sorted({b for lane in warp_detail(sc, 0, 0, warp).lanes for b in lane.banks})
        start = warp * per_warp % 32
        assert banks == list(range(start, start + per_warp)), (name, warp)


def test_lcg_swizzle_works_because_of_the_row():
    with_row, without = column_reads(load("transpose-tile-lcg")), column_reads(load("transpose-tile-lcg-norow"))
    assert with_row == [1] and without == [32]


def test_four_byte_accesses_must_be_aligned_too():
    text = COLUMN.format(L=32).replace('space = "shared"', 'space = "global"\noffset = 2')
    with pytest.raises(ScenarioError, match="misaligned 4-byte"):
        analyze(loads(text))
    assert load("misaligned-int2").arrays[0].offset == 4          # bytes: d_in + 1 of an int array
