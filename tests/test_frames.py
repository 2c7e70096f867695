"""The frame model: one warp instruction as compute, request, wavefronts or lines, summary."""

import os
import subprocess
import sys

import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from viz.frames import Bounds, Cursor, Timeline, frame_count, frames  # noqa: E402
from viz.scenario import load, loads  # noqa: E402
from viz.warp import warp_detail  # noqa: E402

COLUMN_READ = 8   # transpose-tile: 4 loads of in, 4 row stores, then the 4 column reads


def detail(name: str, instr: int, block: int = 0, warp: int = 0, **overrides):
    return warp_detail(load(name, {k: str(v) for k, v in overrides.items()} or None), instr, block, warp)


def test_transpose_column_read_is_compute_request_32_wavefronts_summary():
    d = detail("transpose-tile", COLUMN_READ)
    fs = frames(d)
    assert d.wavefronts == 32
    assert [f.kind for f in fs] == ["compute", "request"] + ["wavefront"] * 32 + ["summary"]
    assert len(fs) == frame_count(d) == 35
    assert all(f.count == 35 and f.index == k for k, f in enumerate(fs))
    assert [f.wavefront for f in fs[2:-1]] == list(range(32))
    assert fs[4].caption.startswith("Wavefront 3 of 32: 1 bank delivers 1 word to 1 lane")
    assert fs[-1].caption == "Summary: 32 wavefronts for 1 phase = 31 bank conflicts (32-way)"
    assert fs[-1].is_last and not fs[0].is_last


def test_padding_leaves_one_wavefront():
    fs = frames(detail("transpose-tile", COLUMN_READ, PAD=1))
    assert [f.kind for f in fs] == ["compute", "request", "wavefront", "summary"]
    assert "32 banks deliver 32 words to 32 lanes" in fs[2].caption
    assert fs[-1].caption.endswith("no bank conflicts")


def test_global_frames_are_one_per_line():
    d = detail("offset-by-one", 0)
    fs = frames(d)
    assert len(d.lines) == 2
    assert [f.kind for f in fs] == ["compute", "request", "line", "line", "summary"]
    assert [f.line for f in fs[2:4]] == list(d.lines)
    assert "1 of its 4 sectors moves" in fs[3].caption
    assert "5 sectors" in fs[-1].caption and "80% sector efficiency" in fs[-1].caption


def test_wavefronts_follow_the_phases_of_16_byte_accesses():
    d = detail("float4-tile", 4)          # float4 column read: 4 quarter-warp phases
    fs = frames(d)
    waves = [f for f in fs if f.kind == "wavefront"]
    assert len(waves) == d.wavefronts
    assert [f.phase for f in waves] == list(d.wavefront_phase)
    assert "phases of 8 lanes" in fs[1].caption


def test_broadcast_is_named():
    fs = frames(detail("shared-broadcast", 1))
    assert "(broadcast)" in fs[2].caption


def test_no_active_lane_is_one_frame_saying_so():
    sc = loads("""
[launch]
block = [64]
grid = [1]
[arrays.a]
space = "shared"
type = "float"
shape = [64]
[[access]]
op = "load"
at = "a[tid]"
when = "tid < 32"
""")
    d = warp_detail(sc, 0, 0, 1)
    fs = frames(d)
    assert len(fs) == frame_count(d) == 1
    assert fs[0].kind == "idle" and "issues nothing" in fs[0].caption


@pytest.mark.parametrize("name", ["transpose-tile", "stride-32", "vector-int4", "aos-float3-r", "char-shared"])
def test_frame_count_matches_frames_everywhere(name):
    sc = load(name)
    for k, ins in enumerate(sc.instructions()):
        d = warp_detail(sc, ins)
        fs = frames(d)
        assert len(fs) == frame_count(d)
        assert fs[0].kind in ("compute", "idle") and fs[-1].kind in ("summary", "idle")
        assert all(f.caption and "{" not in f.caption for f in fs), k


def test_cursor_steps_frames_across_instructions_and_stops_at_the_ends():
    tl = Timeline(load("transpose-tile"))
    c = Cursor(instruction=COLUMN_READ)
    n = tl.frame_count(c)
    end = tl.step(c, "frame", n - 1)
    assert end.frame == n - 1 and end.instruction == COLUMN_READ
    nxt = tl.step(end, "frame", 1)
    assert (nxt.instruction, nxt.frame) == (COLUMN_READ + 1, 0)
    assert tl.step(nxt, "frame", -1) == end
    assert tl.step(Cursor(), "frame", -1) == Cursor()
    last = tl.end(Cursor(), whole=True)
    assert last.at_end(tl.bounds, tl.frame_count)
    assert tl.step(last, "frame", 5) == last
    assert tl.home(end) == Cursor(instruction=COLUMN_READ)
    assert tl.step(c, "instruction", 100).instruction == tl.bounds.instructions - 1


def test_cursor_keeps_the_summary_when_stepping_warps_and_blocks():
    tl = Timeline(load("transpose-tile"))
    c = tl.end(Cursor(instruction=COLUMN_READ))
    for unit in ("warp", "block"):
        moved = tl.step(c, unit, 1)
        assert tl.frame(moved).kind == "summary"
        assert getattr(moved, unit) == 1
    assert tl.step(c, "warp", 100).warp == tl.bounds.warps - 1
    assert tl.step(c, "block", -3).block == 0


def test_bounds_of_a_scenario():
    sc = load("transpose-tile")
    assert Bounds.of(sc) == Bounds(16, 64, 8)


def test_frame_model_imports_no_qt():
    code = "import sys, viz.frames; sys.exit(any(m.startswith('PySide6') for m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], timeout=600).returncode == 0
