"""`warpviz export FILE.wvtrace`: a recorded trace exports through the same painter as a
scenario; each picture's figures are the analysis's for that warp-level execution."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pytest

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from viz.cli import main  # noqa: E402
from viz.export import ExportError, Settings, export, trace_selection  # noqa: E402
from viz.trace.analysis import analyze_trace  # noqa: E402
from viz.trace.detail import TraceSource, TraceTimeline  # noqa: E402
from viz.frames import Cursor  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"
PAD = TRACES / "transpose_pad.wvtrace"


pytestmark = pytest.mark.usefixtures("qapp")    # pytest-qt's QApplication first (tests/conftest.py)


def _svg_text(path: Path) -> str:
    root = ET.parse(path).getroot()
    return " ".join(e.text for e in root.iter() if e.tag.endswith("text") and e.text)


def _per_record(an, trace, row: int) -> int:
    """The analysis's wavefronts + sectors of one record (``TraceInstrStats.per_record``)."""
    sid = int(trace.instr[row])
    rows = np.flatnonzero((trace.instr == sid) & (trace.flags == 0))
    return int(an.stats[sid].per_record[np.searchsorted(rows, row)])


@pytest.mark.parametrize("name,block,warp", [("transpose_pad", 0, 1), ("shared_stride--shared-stride-32", 0, 0),
                                             ("copy_float4", 1, 0)])
def test_summary_svg_of_each_instruction_says_the_analysis_figures(name, block, warp, tmp_path):
    src = TraceSource.open(TRACES / f"{name}.wvtrace")
    an = analyze_trace(src.trace)
    rows = src.stream(block, warp)
    assert len(rows) > 0
    for k, row in enumerate(rows):
        out = tmp_path / f"i{k}.svg"
        sel = trace_selection(src, str(k + 1), str(block), str(warp))
        export(src, out, Settings(size=(1280, 720)), sel)
        text = _svg_text(out)
        assert f"step {k + 1} of {len(rows)} · instruction " in text
        assert "lane" in text
        # device addresses are shown from their lowest 128-byte line, which the label names
        assert ("byte addr" in text) != bool(re.search(r"byte − 0x[0-9a-f]+80 |byte − 0x[0-9a-f]+00 ", text + " "))
        want = _per_record(an, src.trace, int(row))
        m = re.search(r"Summary: (\d+) wavefronts?", text) or re.search(r"Summary: 1 request, (\d+) sectors?", text)
        assert m, text[-300:]
        assert int(m.group(1)) == want


def test_cli_exports_every_frame_of_a_warps_stream(tmp_path, capsys):
    folder = tmp_path / "frames"
    rc = main(["export", str(PAD), "--out", str(folder) + "/", "--warp", "2", "--block", "3", "--size", "320x180",
               "--no-title"])
    assert rc == 0, capsys.readouterr().err
    src = TraceSource.open(PAD)
    tl = TraceTimeline(src)
    n = src.stream_length(3, 2)
    want = sum(tl.frame_count(Cursor(k, 3, 2)) for k in range(n))
    assert len(list(folder.glob("frame_*.png"))) == want > n
    assert "wrote" in capsys.readouterr().out


def test_cli_gif_of_selected_instructions(tmp_path, capsys):
    import imageio.v3 as iio

    out = tmp_path / "a.gif"
    assert main(["export", str(PAD), "--out", str(out), "-i", "1-2", "--size", "320x180", "--hold", "0.2"]) == 0
    src = TraceSource.open(PAD)
    tl = TraceTimeline(src)
    want = tl.frame_count(Cursor(0, 0, 0)) + tl.frame_count(Cursor(1, 0, 0))
    assert len(list(iio.imiter(out))) == want


@pytest.mark.parametrize("argv,words", [
    (["-i", "99"], "outside 1..16"),
    (["--set", "W=3"], "has no params"),
    (["--warp", "8"], "outside 0..7"),
    (["--compare"], "name the trace or scenario"),
])
def test_cli_trace_errors_exit_2(tmp_path, capsys, argv, words):
    assert main(["export", str(PAD), "--out", str(tmp_path / "a.png"), *argv]) == 2
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1
    assert not (tmp_path / "a.png").exists()


def test_cli_corrupt_or_newer_trace_exits_2(tmp_path, capsys):
    bad = tmp_path / "bad.wvtrace"
    bad.write_bytes(PAD.read_bytes()[:500])
    assert main(["export", str(bad), "--out", str(tmp_path / "a.png")]) == 2
    assert "corrupt or truncated" in capsys.readouterr().err
    assert not (tmp_path / "a.png").exists()


def test_a_warp_past_its_stream_is_named(tmp_path):
    src = TraceSource.open(TRACES / "reduce_tree.wvtrace")      # warp 0 runs 28 instructions, warp 4 two
    lengths = {w: src.stream_length(0, w) for w in range(src.warps)}
    longest = max(lengths.values())
    short = next(w for w in range(src.warps) if lengths[w] < longest)   # the first warp that stops short
    sel = trace_selection(src, str(longest), "0", f"0-{src.warps - 1}")
    with pytest.raises(ExportError, match=f"warp {short} of block 0 executed {lengths[short]} recorded"):
        export(src, tmp_path / "a.png", Settings(size=(320, 180)), sel)
