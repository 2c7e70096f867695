"""A new access kind through the registry alone.

A toy kind is written into tmp_path as its own package (its module, and the painter module of
its picture: a kind module imports no Qt), registered with ``viz.kinds.registry.register`` and
``register_form`` only, before the trace side is imported, as a module listed in
``REGISTERED`` would be. Nothing of warpviz is edited for it. It must then flow through the PTX
classifier and the instrumenter, a trace file written and read back, ``analyze`` (its counters,
its figures in the JSON, its line of text and its explanation rows) and the picture (its
caption and its own map, drawn by its own painter). This is what docs/ARCHITECTURE.md
"A new access kind" promises; the run is a child process, so the kind is registered before any
table is read, and the registry of this test process is left as it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

KIND_MODULE = '''
"""A toy access kind: ``toyld.shared.b32 %r1, %rd5;`` reads 16 bytes a lane from shared memory,
lane L at %rd5 + 16 L. Its records carry each lane's address as an operand slot
(``record_code``), and the kind counts them itself."""
from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from viz.kinds.registry import Kind, TraceForm, register, register_form

READS = "toy__reads.sum"
BYTES = "toy__bytes.sum"


def record_code(ins):
    base = ins.address.split(",")[-1].strip()
    return ["cvt.u64.u32 %wvd0, %wvr4;", "shl.b64 %wvd0, %wvd0, 4;", f"add.s64 %wvd0, %wvd0, {base};"]


def count(trace, ins, rows):
    slots = trace.addresses(rows)
    return {READS: int(rows.size), BYTES: 16 * sum(len(np.unique(s)) for s in slots)}


@dataclass(frozen=True)
class ToyMap:
    view: ClassVar[str] = "toykind.view"     # its painter (a module of its own: Qt lives there)
    title: str


def picture_map(detail):
    return ToyMap(f"toy read of warp {detail.warp}")


KIND = register(Kind(op="toyld", keys=frozenset({"op"}), example='op = "toyld"', parse=lambda b, k, raw: None,
                     count=lambda *a: None, name="toy read", writes=False, through_banks=False,
                     phase_caption="a toy read: one phase of 16 bytes a lane", picture_map=picture_map))
FORM = register_form(TraceForm(
    kind="toyld", heads=("toyld",), name="toy read", space="shared", roles=(("load", "shared", 0),),
    width=lambda parts, operands: 16, counts_shared=False, counts_global=False, ten_spaces=(), slots="operands",
    record_code=record_code, count=count, counters={READS: "toy reads", BYTES: "toy bytes"}, detail_op="toyld",
    figures=lambda ins, own: {"toy": {"reads": own.get(READS, 0), "bytes": own.get(BYTES, 0)}},
    reasons=lambda d: [("toy bytes", f"{d['toy']['bytes']:,}", "16 bytes a lane")],
    summary=lambda d: f"toy reads {d['toy']['reads']:,}, {d['toy']['bytes']:,} bytes"))
'''

VIEW_MODULE = '''
CALLS = []


def paint_map(p, rect, m, th, scale=None, min_px=None):
    CALLS.append(m.title)
'''

RUN = r'''
import json
import sys

import numpy as np

import viz.kinds                # the shipped kinds (REGISTERED)
import toykind                  # the toy: viz.kinds.registry.register / register_form, nothing else

from viz.trace import ptx, tracefile
from viz.trace.analysis import analyze_trace, explain_trace, to_json, to_table

PTX = """.version 8.0
.target sm_90
.address_size 64
.file 1 "toy.cu"
.visible .entry k(
.param .u64 p
)
{
.reg .b32 %r<4>;
.reg .b64 %rd<8>;
.loc 1 7 0
toyld.shared.b32 %r1, %rd5;
ret;
}
"""
out = {"classify": ptx.classify("toyld.shared.b32")}
parsed = ptx.parse(PTX)
out["parsed"] = [(i.kind, i.op, i.space, i.width, i.line) for i in parsed.instrs]
text, instrs = ptx.instrument(PTX)
out["instrumented"] = "shl.b64 %wvd0, %wvd0, 4;" in text and "add.s64 %wvd0, %wvd0, %rd5;" in text

table = [dict(i.as_dict(), file="toy.cu") for i in instrs]
heads, slots = [], []
for w in range(2):                   # two warps, each one record: lane L's slot is 0x100 * w + 16 L
    heads.append([0, 0, w, 0xFFFFFFFF, 0xFFFFFFFF, 0, 0, 0])
    slots.append([0x100 * w + 16 * lane for lane in range(32)])
header = {"title": "toy", "kernel": "k", "launch": {"block": [64], "grid": [1]}, "instructions": table,
          "complete": True}
t = tracefile.from_records(header, np.array(heads, np.uint32), np.array(slots, np.uint64))
t = tracefile.load(tracefile.save(t, sys.argv[1]))
an = analyze_trace(t)
d = to_json(an)["accesses"][0]
out["json"] = json.loads(json.dumps(d))
out["other"] = {k: v for k, v in an.other_metrics.items() if k.startswith("toy")}
out["ten"] = sum(an.metrics.values())
out["text"] = to_table(an)
out["explain"] = [r[0] for r in explain_trace(d)]

from PySide6.QtCore import QRectF
from PySide6.QtGui import QGuiApplication

app = QGuiApplication([])
from viz.frames import Cursor
from viz.render import NullPainter, PaintOptions, paint_frame, theme
from viz.render.painter import _phase_text
from viz.trace.detail import TraceSource, TraceTimeline

src = TraceSource(t)
tl = TraceTimeline(src)
c = Cursor(instruction=0, block=0, warp=1)
det = tl.detail(c)
out["access_op"] = det.access.op
out["caption"] = _phase_text(det)
for f in tl.frames(c):
    paint_frame(NullPainter(), QRectF(0, 0, 1280, 720), det, f, theme("light", 1.0), PaintOptions(title="toy"))
import toykind.view
out["painted"] = toykind.view.CALLS
print(json.dumps(out))
'''


def test_a_toy_kind_flows_through_the_registry_alone(tmp_path):
    pkg = tmp_path / "toykind"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(KIND_MODULE))
    (pkg / "view.py").write_text(textwrap.dedent(VIEW_MODULE))
    (tmp_path / "run.py").write_text(RUN)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), str(tmp_path)]), QT_QPA_PLATFORM="offscreen")
    res = subprocess.run([sys.executable, str(tmp_path / "run.py"), str(tmp_path / "toy.wvtrace")], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr[-4000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    # the PTX classifier and the instrumenter
    assert out["classify"] == ["toyld", "shared"]
    assert out["parsed"] == [["toyld", "load", "shared", 16, 7]]
    assert out["instrumented"] is True
    # analyze: its own counters (beside the ten, which it does not enter), its JSON, text and reasons
    assert out["other"] == {"toy__reads.sum": 2, "toy__bytes.sum": 2 * 32 * 16}
    assert out["ten"] == 0
    assert out["json"]["kind"] == "toyld" and out["json"]["toy"] == {"reads": 2, "bytes": 1024}
    assert "toy reads 2, 1,024 bytes" in out["text"]
    assert "toy bytes" in out["explain"]
    # the picture: drawn as its kind, with its caption, its map painted by its own painter
    assert out["access_op"] == "toyld"
    assert out["caption"] == "a toy read: one phase of 16 bytes a lane"
    assert out["painted"] and set(out["painted"]) == {"toy read of warp 1"}


def test_the_file_counts_docs_architecture_states_are_true():
    """docs/ARCHITECTURE.md "A new access kind" states how many files outside their modules
    wgmma and the TMA kinds touch; tools/kind_files.py counts them with git."""
    import re

    sys.path.insert(0, str(ROOT / "tools"))
    try:
        import kind_files
    finally:
        sys.path.remove(str(ROOT / "tools"))
    doc = (ROOT / "docs" / "ARCHITECTURE.md").read_text(encoding="utf-8")
    stated = {"wgmma": int(re.search(r"\*\*wgmma: (\d+)\*\*", doc).group(1)),
              "tma": int(re.search(r"\*\*TMA \([^)]*\): (\d+)\*\*", doc).group(1))}
    for kind, n in stated.items():
        files = kind_files.files_naming(*kind_files.KINDS[kind], root=ROOT)
        assert len(files) == n, f"{kind}: docs/ARCHITECTURE.md says {n}, git finds {len(files)}: {files}"
        assert "viz/kinds/__init__.py" in files
        # in viz/trace only the launch file's host-built tensor maps (read, packed, encoded)
        assert {f for f in files if f.startswith("viz/trace/")} <= {
            "viz/trace/launch.py", "viz/trace/pyargs.py", "viz/trace/tensormaps.py"}, files
