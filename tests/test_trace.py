"""Tracing real kernels: launch files, the PTX instrumenter, the trace file, the analysis.

Without a GPU: launch-file checks, PTX edits on PTX that nvcc makes here (assembled with
ptxas), the .wvtrace format and its errors, the analysis against the engine (a trace
built from a scenario's own addresses must count exactly what the engine counts), and the
shipped H100 traces against their recorded Nsight Compute counters. With the GPU
(``-m gpu``): ``warpviz trace --validate`` on launch files.
"""

from __future__ import annotations

import json
import re
import subprocess
import zipfile
from pathlib import Path

import numpy as np
import pytest

from helpers import HAVE_NVCC, have_pycuda
from viz.cli import main
from viz.engine import METRIC_NAMES, analyze, evaluate_instruction
from viz.scenario import load
from viz.trace import TraceError, tracefile
from viz.trace.analysis import analyze_trace, to_json
from viz.gpu.trace_cli import blocks_text, parse_blocks
from viz.trace.launch import load_launch, parse_launch
from viz.trace.ptx import classify, compare_sass, instrument, parse, predication_note

ROOT = Path(__file__).resolve().parents[1]
KERNELS = ROOT / "kernels"
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")


def _launch(tmp_path: Path, body: str, source: str | None = None) -> Path:
    if source is not None:
        (tmp_path / "k.cu").write_text(source)
    p = tmp_path / "k.launch.toml"
    p.write_text(body)
    return p


GOOD = """title = "t"
source = "k.cu"
kernel = "k"
block = [64]
grid = [2]

[[arg]]
type = "float*"
count = 128

[[arg]]
type = "int"
value = 128
"""
SOURCE = 'extern "C" __global__ void k(float* a, int n) { int i = blockIdx.x * 64 + threadIdx.x; if (i < n) a[i] += 1.0f; }\n'


# ---------------------------------------------------------------------------- launch files


def test_launch_file_parses(tmp_path):
    la = load_launch(_launch(tmp_path, GOOD, SOURCE))
    assert la.block == (64, 1, 1) and la.grid == (2, 1, 1) and la.blocks == 2
    assert [a.type for a in la.args] == ["float*", "int"]
    assert la.buffer_offsets() == [0, -1] and la.buffer_bytes == 512


@pytest.mark.parametrize("edit, where, words", [
    (lambda t: "colour = 3\n" + t, "colour", "unknown key"),
    (lambda t: t + "colour = 3\n", "arg 2.colour", "unknown key"),
    (lambda t: t.replace("block = [64]", "block = [0]"), "block", "zero"),
    (lambda t: t.replace("grid = [2]", "grid = []"), "grid", "1 to 3 integers"),
    (lambda t: t.replace("block = [64]", "block = [64, 32]"), "block", "over CUDA's limit"),
    (lambda t: t.replace('source = "k.cu"', 'source = "nothere.cu"'), "source", "does not exist"),
    (lambda t: t.replace('type = "float*"', 'type = "float3*"'), "arg 1.type", "unknown buffer type"),
    (lambda t: t.replace("count = 128", "count = 0"), "arg 1.count", "count"),
    (lambda t: t.replace("value = 128", "value = 1.5"), "arg 2.value", "integer"),
    (lambda t: t.replace("value = 128", "value = 3000000000"), "arg 2.value", "does not fit"),
    (lambda t: t.replace('kernel = "k"\n', ""), "kernel", "missing"),
    (lambda t: "format = 3\n" + t, "format", "not known"),
    (lambda t: t.replace("count = 128", "count = 128\nfill = \"pi\""), "arg 1.fill", "unknown fill"),
])
def test_bad_launch_file_names_key_and_exits_2(tmp_path, capsys, edit, where, words):
    p = _launch(tmp_path, edit(GOOD), SOURCE)
    with pytest.raises(TraceError) as err:
        load_launch(p)
    assert err.value.where == where and words in err.value.problem
    assert main(["trace", str(p)]) == 2
    msg = capsys.readouterr().err
    assert str(p) in msg and "Fix:" in msg and msg.count("\n") == 1  # one paragraph


def test_bad_toml_is_one_paragraph(tmp_path):
    with pytest.raises(TraceError, match="not valid TOML"):
        parse_launch("block = [", tmp_path / "x.toml")


def test_blocks_option():
    assert parse_blocks("0-3,7, 9", 10, "f") == [0, 1, 2, 3, 7, 9]
    assert blocks_text([0, 1, 2, 3, 7, 9]) == "0-3,7,9" and blocks_text(None) == "all"
    for bad in ("10", "3-1", "a", "1-"):
        with pytest.raises(TraceError):
            parse_blocks(bad, 10, "f")


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("edit, words", [
    (lambda t: t.replace('kernel = "k"', 'kernel = "other"'), "has no kernel `other` (it has: k)"),
    (lambda t: t.split("[[arg]]\ntype = \"int\"")[0], "takes 2 parameter(s) but the file gives 1"),
    (lambda t: t.replace('type = "int"', 'type = "double"'), "parameter 2 of `k` is `.u32`"),
])
def test_launch_checked_against_the_compiled_kernel(tmp_path, capsys, edit, words):
    from viz.trace.build import build

    p = _launch(tmp_path, edit(GOOD), SOURCE)
    with pytest.raises(TraceError) as err:
        build(load_launch(p))
    assert words in str(err.value)


@nvcc
@pytest.mark.nvcc
def test_source_that_does_not_compile_names_first_error(tmp_path):
    from viz.trace.build import build

    p = _launch(tmp_path, GOOD, 'extern "C" __global__ void k(float* a, int n) { a[0] = undefined_name; }\n')
    with pytest.raises(TraceError) as err:
        build(load_launch(p))
    assert "does not compile" in err.value.problem and "undefined_name" in err.value.problem
    assert err.value.problem.count("\n") == 0


# ---------------------------------------------------------------------------- PTX


def test_classify():
    assert classify("ld.global.nc.v4.f32") == ("load", "global")
    assert classify("st.volatile.shared.u8") == ("store", "shared")
    assert classify("ld.shared::cta.b32") == ("load", "shared")
    assert classify("ld.f32") == ("load", "generic")
    assert classify("atom.global.add.u32") == ("atomic", "global")
    assert classify("red.shared.add.f32") == ("reduction", "shared")
    assert classify("ldmatrix.sync.aligned.m8n8.x4.shared.b16") == ("ldmatrix", "shared")
    assert classify("cp.async.cg.shared.global") == ("cp.async", "shared")
    # a TMA copy is its own kind (viz.kinds.tma_copy)
    assert classify("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes") == ("tma", "global")
    for skipped in ("ld.param.u64", "st.local.u32", "ld.const.f32", "cp.async.wait_all", "cp.async.commit_group",
                    "mov.u32", "ldu.param.u32"):
        assert classify(skipped) is None, skipped


HAND_PTX = """
.version 8.0
.target sm_90
.address_size 64

.visible .entry hand(
	.param .u64 hand_param_0
)
{
	.reg .pred 	%p<3>;
	.reg .b32 	%r<9>;
	.reg .f32 	%f<5>;
	.reg .b64 	%rd<6>;
	.shared .align 16 .b8 buf[1024];

	ld.param.u64 	%rd1, [hand_param_0];
	.loc	1 7 3
	mov.u32 	%r1, %tid.x;
	setp.lt.u32 	%p1, %r1, 7;
	mul.wide.u32 	%rd2, %r1, 16;
	add.s64 	%rd3, %rd1, %rd2;
	@%p1 ld.global.v4.f32 	{%f1, %f2, %f3, %f4}, [%rd3+16];
	.loc	1 8 3
	shl.b32 	%r2, %r1, 2;
	mov.u32 	%r3, buf;
	add.s32 	%r4, %r3, %r2;
	@!%p1 st.shared.f32 	[%r4+-4], %f1;
	st.shared.f32 	[buf+8], %f2;
	cvta.shared.u64 	%rd4, %rd3;
	ld.u8 	%r5, [%rd4];
	atom.global.add.u32 	%r6, [%rd1], 1;
	cp.async.ca.shared.global [%r4], [%rd3], 8;
	cp.async.wait_all;
	ld.local.u32 	%r7, [%rd4];
	ret;
}
	.file	1 "/src/hand.cu"
"""


def test_parse_finds_every_memory_instruction():
    p = parse(HAND_PTX)
    got = [(i.kind, i.op, i.space, i.width, i.predicate, i.address, i.line) for i in p.instrs]
    assert got == [
        ("load", "load", "global", 16, "%p1", "%rd3+16", 7),
        ("store", "store", "shared", 4, "!%p1", "%r4+-4", 8),
        ("store", "store", "shared", 4, "", "buf+8", 8),
        ("load", "load", "generic", 1, "", "%rd4", 8),
        ("reduction", "load", "global", 4, "", "%rd1", 8),   # its result %r6 is never read
        ("cp.async", "store", "shared", 8, "", "%r4", 8),
        ("cp.async", "load", "global", 8, "", "%rd3", 8),
    ]
    assert all(i.file == "/src/hand.cu" for i in p.instrs)
    assert [i.id for i in p.instrs] == list(range(7))


def test_instrument_records_masks_addresses_and_keeps_the_original():
    text, instrs = instrument(HAND_PTX)
    lines = [ln.strip() for ln in text.splitlines()]
    # every original line is still there, in order
    orig = [ln.strip() for ln in HAND_PTX.splitlines()]
    it = iter(lines)
    assert all(any(x == y for y in it) for x in orig)
    assert lines.count("activemask.b32 %wvr0;") == 8                   # 7 memory instructions + 1 event
    assert "vote.sync.ballot.b32 %wvr1, %p1, %wvr0;" in lines
    assert "vote.sync.ballot.b32 %wvr1, !%p1, %wvr0;" in lines
    assert "add.s64 %wvd0, %rd3, 16;" in lines                         # 64-bit register + offset
    assert "cvt.u64.u32 %wvd0, %r4;" in lines and "add.s64 %wvd0, %wvd0, -4;" in lines  # 32-bit shared
    assert "mov.u64 %wvd0, buf;" in lines and "add.s64 %wvd0, %wvd0, 8;" in lines     # symbol + offset
    assert lines.count("isspacep.shared %wvp1, %wvd0;") == 1          # only the generic load
    # the recording block comes right before its instruction
    k = lines.index("@!%p1 st.shared.f32 \t[%r4+-4], %f1;".strip())
    assert lines[k - 1] == "}" and "mov.u32 %wvr13, 1;" in lines[k - 12:k]
    # ld.local is not recorded; cp.async.wait_all is recorded as an event (its own id range)
    assert [ln for ln in lines if ln.startswith("mov.u32 %wvr13,")] == \
        [f"mov.u32 %wvr13, {k};" for k in range(7)] + ["mov.u32 %wvr13, 1048576;"]


@nvcc
@pytest.mark.nvcc
def test_hand_ptx_assembles(tmp_path):
    from viz.trace.build import assemble

    text, _ = instrument(HAND_PTX)
    assert assemble(HAND_PTX)[:4] == b"\x7fELF"
    assert assemble(text)[:4] == b"\x7fELF"


def _ptx_of(path: Path, tmp_path: Path) -> str:
    out = tmp_path / (path.stem + ".ptx")
    subprocess.run(["nvcc", "-ptx", "-lineinfo", "-arch=sm_90", "-O3", "-std=c++17", "-o", str(out), str(path)],
                   check=True, capture_output=True, timeout=300)
    return out.read_text()


SOURCES = sorted(KERNELS.glob("*.cu")) + sorted((KERNELS / "trace").glob("*.cu"))


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("src", SOURCES, ids=lambda p: p.name)
def test_instrumented_kernels_assemble(src, tmp_path):
    from viz.trace.build import assemble

    ptx = _ptx_of(src, tmp_path)
    text, instrs = instrument(ptx)
    # every ld/st/atom/red/ldmatrix/cp.async line of global, shared or generic space is instrumented
    want = 0
    for ln in ptx.splitlines():
        m = re.match(r"\s*(@!?%\w+\s+)?((ld|st|atom|red|ldmatrix|stmatrix|cp\.async)\.[\w.:]+)", ln)
        if m and classify(m.group(2)) is not None:
            want += 2 if m.group(2).startswith("cp.async") else 1
    assert len(instrs) == want > 0
    assert all(i.line > 0 and i.file.endswith(src.name) or i.file.endswith(".cuh") for i in instrs)
    assert assemble(text, what="instrumented")[:4] == b"\x7fELF"


def test_sass_guard_and_predication_note():
    plain = ["/*0010*/ LDG.E R1, desc[UR4][R2.64]", "/*0020*/ STS.128 [R3], R4", "/*0030*/ STG.E [R5], R1",
             "/*0040*/ @!P0 LDS R1, [R2]"]
    inst = plain[:1] + ["/*0020*/ STS [R3], R4"] * 4 + ["/*0030*/ STG.E [R5], R1"] * 7 + ["/*0040*/ ATOMG.E.ADD"] * 2 \
        + plain[3:]
    assert compare_sass(plain, inst, 2) == ["STS: 1 in the plain kernel, 4 instrumented (expected 1)"]
    fine = plain + ["/*0050*/ STG.E [R5], R1"] * 6 + ["/*0060*/ ATOMG.E.ADD"] * 2
    assert compare_sass(plain, fine, 2) == []
    instrs = parse(HAND_PTX).instrs
    assert predication_note(plain, instrs) == ""                       # one predicated LDS, one in the PTX
    assert "ptxas predicated 1" in predication_note(plain + ["/*0070*/ @P1 STS [R1], R2"], instrs)


# ---------------------------------------------------------------------------- trace file


def _scenario_trace(name: str) -> tuple[tracefile.Trace, object]:
    """A trace of a built-in scenario, built from the engine's own per-lane addresses:
    one record per (instruction, block, warp) with an active lane, as branched code runs."""
    sc = load(name)
    lw = sc.launch
    nt = lw.threads_per_block
    table, heads, addrs = [], [], []
    for ins in sc.instructions():
        acc = sc.accesses[ins.access]
        arr = sc.array(acc.array)
        table.append({"id": ins.number, "line_no": 0, "ptx": f"{acc.op} {acc.text}", "function": "k",
                      "opcode": "", "kind": acc.op, "op": acc.op, "space": arr.space, "width": ins.size,
                      "predicate": "", "address": "", "operand": 0, "file": "k.cu", "line": acc.line or 1})
        blocks = np.arange(lw.blocks, dtype=np.int64)
        lv = evaluate_instruction(sc, ins, blocks, np.arange(nt, dtype=np.int64))
        addr = np.broadcast_to(lv.addr.natural(), (lw.blocks, nt))
        mask = np.broadcast_to(lv.mask, (lw.blocks, nt))
        for b in range(lw.blocks):
            for w in range(lw.warps_per_block):
                lanes = range(w * 32, min(nt, w * 32 + 32))
                m = sum(1 << (t - w * 32) for t in lanes if mask[b, t])
                if not m:
                    continue
                exists = sum(1 << (t - w * 32) for t in lanes)
                a = np.zeros(32, np.uint64)
                a[:len(lanes)] = addr[b, w * 32:w * 32 + len(lanes)]
                sh = exists if arr.space == "shared" else 0
                heads.append([ins.number, b, w, exists, m, sh, exists - sh, 0])
                addrs.append(a)
    header = {"title": sc.title, "kernel": "k", "launch": {"block": list(lw.block), "grid": list(lw.grid)},
              "instructions": table, "complete": True}
    return tracefile.from_records(header, np.array(heads, np.uint32).reshape(-1, 8),
                                  np.array(addrs, np.uint64).reshape(-1, 32)), sc


SCENARIOS = ["transpose-tile-pad", "transpose-tile", "vector-int4", "char-stride-4", "gemm-nt-tile",
             "boundary-n1003", "float3-whole", "aos-float3-r", "random-gather", "shared-stride-2"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_trace_analysis_counts_what_the_engine_counts(name, tmp_path):
    trace, sc = _scenario_trace(name)
    path = tracefile.save(trace, tmp_path / "t.wvtrace")
    got = analyze_trace(tracefile.load(path)).metrics
    assert got == analyze(sc).metrics
    assert any(v > 0 for v in got.values())


def test_predicated_off_shared_warp_counts_as_executed_instruction():
    trace, sc = _scenario_trace("shared-stride-2")
    base = analyze_trace(trace).metrics
    trace.pred[:] = np.where(trace.warp == 0, 0, trace.pred)          # warp 0: every lane predicated off
    m = analyze_trace(trace).metrics
    off = int((trace.warp == 0).sum())
    assert off > 0
    for op in ("ld", "st"):
        assert m[f"smsp__inst_executed_op_shared_{op}.sum"] == base[f"smsp__inst_executed_op_shared_{op}.sum"]
    assert sum(m[k] for k in METRIC_NAMES if "wavefronts" in k) < sum(base[k] for k in METRIC_NAMES if "wavefronts" in k)


def test_roundtrip_keeps_every_array(tmp_path):
    trace, _ = _scenario_trace("transpose-tile-pad")
    back = tracefile.load(tracefile.save(trace, tmp_path / "t.wvtrace"))
    for name in tracefile.ARRAYS:
        a = getattr(trace, "global_" if name == "global" else name)
        b = getattr(back, "global_" if name == "global" else name)
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert np.array_equal(back.addresses(), trace.addresses())
    assert back.header["version"] == tracefile.VERSION and back.header["records"] == trace.records


def test_bad_trace_files_say_why(tmp_path, capsys):
    trace, _ = _scenario_trace("vector-int4")
    good = tracefile.save(trace, tmp_path / "good.wvtrace")
    data = good.read_bytes()
    cases = {}
    (tmp_path / "trunc.wvtrace").write_bytes(data[:len(data) // 2])
    cases["trunc.wvtrace"] = "corrupt or truncated"
    (tmp_path / "noise.wvtrace").write_bytes(bytes(range(256)) * 4)
    cases["noise.wvtrace"] = "not a warpviz trace"
    with zipfile.ZipFile(good) as z, zipfile.ZipFile(tmp_path / "newer.wvtrace", "w") as out:
        for item in z.namelist():
            blob = z.read(item)
            if item == "header.json":
                h = json.loads(blob)
                h["version"] = tracefile.VERSION + 1
                blob = json.dumps(h).encode()
            out.writestr(item, blob)
    cases["newer.wvtrace"] = "newer warpviz"
    with zipfile.ZipFile(good) as z, zipfile.ZipFile(tmp_path / "missing.wvtrace", "w") as out:
        for item in z.namelist():
            if item != "offset.npy":
                out.writestr(item, z.read(item))
    cases["missing.wvtrace"] = "`offset` is missing"
    flipped = bytearray(data)
    k = data.index(b"offset.npy") + 200       # inside the deflated array data
    flipped[k] ^= 0xFF
    (tmp_path / "flipped.wvtrace").write_bytes(bytes(flipped))
    cases["flipped.wvtrace"] = "corrupt"
    for name, words in cases.items():
        with pytest.raises(TraceError) as err:
            tracefile.load(tmp_path / name)
        assert words in str(err.value), (name, str(err.value))
        assert main(["analyze", str(tmp_path / name)]) == 2
        assert name in capsys.readouterr().err


# ---------------------------------------------------------------------------- shipped H100 traces

SHIPPED = tracefile.shipped()
# Kernels where the recording cannot equal Nsight Compute, each for the reason docs/GPU.md
# gives (measured on the H100): the metrics that differ, and nothing else may.
KNOWN: dict[str, set[str]] = {}
# Launch files whose kernels the H100 has not recorded yet (tools/trace/device_fused_kernels.sh
# records and validates them); each leaves this set when its trace ships.
AWAITING_H100: set[str] = {"tma_struct_param"}   # cutlass: its H200 trace ships once tools/gpu/cutlass_gemm.sh ran
# Traces whose shared ld/st bank conflicts vary from run to run on the hardware (docs/GPU.md,
# "Hopper's TMA and wgmma on the H200"): the same TMA-store copy kernel measured twice on the
# H200 minutes apart gave ld conflicts 4 and 10, st conflicts 126 and 145 (the trace holds the
# second run); the model has none. Only the conflicts (and the wavefronts by as many) may
# differ, by one of the measured runs (the trace's own); the ideal wavefronts (wavefronts - conflicts) are exact.
CONTENTION: dict[str, dict[str, tuple[int, int]]] = {"tma_copy_triton": {"ld": (4, 10), "st": (126, 145)}}
# Traces whose SASS mapping is not certain, and why (the trace says so in sass_map.notes):
# nvdisasm's line information puts 6 of the GEMM's 8 HGMMA on neighbouring PTX lines (1459,
# 1498, 1533, 1563), not on their wgmma.mma_async's, so those 6 wgmma stay `uncertain` (their
# records unchanged; every counter equals Nsight Compute's).
UNCERTAIN_SASS: dict[str, str] = {"triton_wgmma_matmul": "HGMMA"}


def test_every_kernels_launch_file_has_a_shipped_trace():
    names = {p.stem for p in SHIPPED}
    launches = {p.name[:-len(".launch.toml")] for p in KERNELS.glob("*.launch.toml")}
    launches |= {p.name[:-len(".launch.toml")] for p in (KERNELS / "trace").glob("*.launch.toml")}
    launches |= {p.name[:-len(".launch.toml")] for p in (KERNELS / "format2").glob("*.launch.toml")}
    assert {"block_sum_cg", "numba_block_sum", "tiles_transpose_padded", "triton_matmul"} <= launches
    assert len(launches) >= 59 and launches - AWAITING_H100 <= names
    assert not AWAITING_H100 & names, "a recorded kernel is still listed as awaiting the H100"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_a_shipped_trace_names_no_path_of_the_machine_that_recorded_it(path):
    """Instructions name their source as the trace carries it (a key of the header's
    ``sources``), never by a path of the machine that recorded them."""
    h = tracefile.load(path).header
    files = {str(i.get("file") or "") for i in h["instructions"]}
    assert not [f for f in files if f.startswith("/") or ":\\" in f], files
    assert all(not f or Path(f).name in h["sources"] or h.get("ptx") for f in files), (files, list(h["sources"]))


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_shipped_trace_equals_its_nsight_compute_counters(path):
    trace = tracefile.load(path)
    h = trace.header
    assert h["complete"] and h["gpu"]["name"].startswith(("NVIDIA H100", "NVIDIA H200")) and h["ncu"]
    assert h["sources"][h["source_name"]] and "kernel" in h["launch_file"]
    an = analyze_trace(trace)
    differ = {k for k in METRIC_NAMES if an.metrics[k] != h["ncu"][k]}
    runs = CONTENTION.get(path.stem, {})
    for op, (low, high) in runs.items():      # extra conflicts of the hardware, not of the access pattern
        wf, cf = (f"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{op}.sum",
                  f"l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{op}.sum")
        assert an.metrics[cf] == 0 and h["ncu"][cf] in (low, high), (op, h["ncu"][cf])
        assert h["ncu"][wf] - h["ncu"][cf] == an.metrics[wf] - an.metrics[cf]     # ideal wavefronts exact
        differ -= {wf, cf}
    assert differ == KNOWN.get(path.stem, set())
    # the trace is what the SASS runs (viz.trace.reconcile), and where it is not certain it says so
    smap = h["sass_map"]
    certain = path.stem not in KNOWN and path.stem not in UNCERTAIN_SASS
    assert smap["tool"] == "nvdisasm -gp" and smap["certain"] == certain
    if path.stem in UNCERTAIN_SASS:
        assert smap["notes"] and all(UNCERTAIN_SASS[path.stem] in n for n in smap["notes"])
    with zipfile.ZipFile(path) as z:     # the recorded arrays: at most 4 bytes per lane access
        arrays = sum(i.compress_size for i in z.infolist() if i.filename.endswith(".npy"))
    assert arrays <= 4 * trace.lane_accesses()


def test_analyze_json_of_a_trace(capsys):
    path = next(p for p in SHIPPED if p.stem == "transpose_tile_pad1")
    assert main(["analyze", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert set(doc) >= {"scenario", "metrics", "accesses", "launch", "trace"}
    assert doc["launch"] == {"block": [32, 8, 1], "grid": [8, 8, 1], "threads": 16384, "warps": 512}
    ncu = tracefile.load(path).header["ncu"]
    assert doc["metrics"] == {k: ncu[k] for k in METRIC_NAMES}
    shared = [a for a in doc["accesses"] if a["space"] == "shared" and a["executed"]]
    assert shared and all(a["source"].startswith("transpose.cu:") and a["ptx"] for a in shared)
    assert sum(a["bank_conflicts"] for a in shared) == 0
    assert main(["analyze", str(path)]) == 0
    assert "totals (Nsight Compute metric names):" in capsys.readouterr().out


# ---------------------------------------------------------------------------- on the GPU



@pytest.mark.gpu
@pytest.mark.skipif(not (have_pycuda() and HAVE_NVCC), reason="needs PyCUDA, a GPU and nvcc")
@pytest.mark.parametrize("launch", ["kernels/transpose_tile_pad1.launch.toml",
                                    "kernels/trace/stencil2d.launch.toml", "kernels/trace/sgemm_float4.launch.toml",
                                    "kernels/trace/reduce_shfl.launch.toml"])
def test_trace_validate_on_the_gpu(launch, tmp_path, capsys):
    out = tmp_path / "t.wvtrace"
    rc = main(["trace", str(ROOT / launch), "--validate", "--json", "--out", str(out)])
    doc = json.loads(capsys.readouterr().out)
    assert rc == 0 and doc["validation"]["match"], doc["validation"]
    assert to_json(analyze_trace(tracefile.load(out)))["metrics"] == doc["metrics"]


# ---------------------------------------------------------------------------- branches ptxas may predicate

BRANCH_PTX = HAND_PTX.replace("""	@!%p1 st.shared.f32 	[%r4+-4], %f1;
""", """	@%p1 bra 	$L__BB0_2;

	st.shared.f32 	[%r4+-4], %f1;
	ld.shared.f32 	%f3, [%r4];

$L__BB0_2:
	@!%p1 bra 	$L__BB0_3;
	bar.sync 	0;
	st.shared.f32 	[%r4], %f3;

$L__BB0_3:
""")


def test_skip_regions_and_their_records():
    from viz.trace.ptx import instrument_full, sass_predicated

    p = parse(BRANCH_PTX)
    # the first branch skips a straight-line store + load; the second crosses a barrier
    assert [(r.predicate, [p.instrs[i].ptx.split()[0] for i in r.ids]) for r in p.regions] == \
        [("%p1", ["st.shared.f32", "ld.shared.f32"])]
    text, instrs, regions = instrument_full(BRANCH_PTX)
    lines = [ln.strip() for ln in text.splitlines()]
    k = lines.index("@%p1 bra \t$L__BB0_2;".strip())
    block = lines[lines[:k].index("{", k - 80 if k > 80 else 0):k]
    assert "vote.sync.ballot.b32 %wvr1, %p1, %wvr0;" in block and "setp.eq.u32 %wvp1, %wvr1, %wvr0;" in block
    assert "@%wvp5 atom.global.add.u32 %wvr11, [%wvd3], 2;" in block
    assert block.count("@%wvp7 st.global.v4.u32 [%wvd6+16], {%wvr14, %wvr14, %wvr14, %wvr15};") == 2
    plain = ["/*0010*/ @P0 STS [R1], R2", "/*0020*/ @P0 LDS R3, [R1]", "/*0030*/ STS [R1], R3",
             "/*0040*/ STS [R5+0x8], R6"]
    got = sass_predicated(plain, instrs)
    stores = [i.id for i in instrs if i.space == "shared" and i.kind == "store"]
    assert [got[i] for i in stores] == [True, False, False]
    assert [got[i.id] for i in instrs if i.space == "shared" and i.kind == "load"] == [True]
    assert sass_predicated(plain[:2], instrs) is None                    # numbers differ: nothing assumed


@nvcc
@pytest.mark.nvcc
def test_branch_ptx_assembles():
    from viz.trace.build import assemble
    from viz.trace.ptx import instrument_full

    text, _, regions = instrument_full(BRANCH_PTX)
    assert len(regions) == 1 and assemble(text)[:4] == b"\x7fELF"


def test_skip_records_count_only_where_ptxas_predicated():
    trace, _ = _scenario_trace("shared-stride-2")
    base = analyze_trace(trace).metrics
    # two warps that branched around the first shared instruction
    first = next(i for i in trace.instructions if i["space"] == "shared")
    n = trace.records
    extra = np.array([[first["id"], 0, 5, 0xFFFFFFFF, 0, 0, 0, 1], [first["id"], 1, 5, 0xFFFFFFFF, 0, 0, 0, 1]],
                     np.uint32)
    heads = np.concatenate([np.stack([trace.instr, trace.block, trace.warp, trace.active, trace.pred, trace.shared,
                                      trace.global_, np.zeros(n, np.uint32)], axis=1), extra])
    addr = np.concatenate([trace.addresses().astype(np.uint64), np.full((2, 32), 12345, np.uint64)])
    with_skips = tracefile.from_records(trace.header, heads, addr)
    assert int(with_skips.flags.sum()) == 2 and with_skips.lane_accesses() == trace.lane_accesses()
    assert analyze_trace(with_skips).metrics == base                       # not known to be predicated
    first["sass_predicated"] = True
    m = analyze_trace(with_skips).metrics
    key = f"smsp__inst_executed_op_shared_{'ld' if first['op'] == 'load' else 'st'}.sum"
    assert m[key] == base[key] + 2 and {k: v for k, v in m.items() if k != key} == \
        {k: v for k, v in base.items() if k != key}


def test_trace_without_pycuda_says_why(tmp_path, capsys):
    if have_pycuda():
        pytest.skip("PyCUDA is installed here")
    p = _launch(tmp_path, GOOD, SOURCE)
    assert main(["trace", str(p)]) == 2
    err = capsys.readouterr().err
    assert "cannot trace here" in err and "PyCUDA" in err and err.count("\n") == 1


GPU_ONLY = pytest.mark.skipif(not (have_pycuda() and HAVE_NVCC), reason="needs PyCUDA, a GPU and nvcc")


@pytest.mark.gpu
@GPU_ONLY
def test_trace_selected_blocks_on_the_gpu(tmp_path, capsys):
    out = tmp_path / "b.wvtrace"
    rc = main(["trace", str(KERNELS / "trace" / "stencil2d.launch.toml"), "--blocks", "0-1,7", "--json",
               "--out", str(out)])
    doc = json.loads(capsys.readouterr().out)
    trace = tracefile.load(out)
    assert rc == 0 and set(np.unique(trace.block)) == {0, 1, 7}
    assert doc["trace"]["recorded_blocks"] == "0-1,7" and doc["trace"]["complete"] is False


@pytest.mark.gpu
@GPU_ONLY
def test_trace_over_the_size_limit_records_the_blocks_that_fit(tmp_path, capsys, monkeypatch):
    from viz.trace import record

    monkeypatch.setattr(record, "MAX_RECORDS", 3000)
    out = tmp_path / "big.wvtrace"
    rc = main(["trace", str(KERNELS / "transpose_tile_pad1.launch.toml"), "--out", str(out)])
    err = capsys.readouterr().err
    trace = tracefile.load(out)
    assert rc == 0 and "over the limit of 3,000" in err
    assert trace.header["complete"] is False and trace.records <= 3000
    blocks = np.unique(trace.block)
    assert blocks.tolist() == list(range(len(blocks)))                      # whole blocks, from block 0
    assert np.bincount(trace.block).tolist() == [128] * len(blocks)           # every record of each


@pytest.mark.gpu
@GPU_ONLY
def test_faulting_kernel_exits_2_and_warpviz_survives(tmp_path, capsys):
    src = 'extern "C" __global__ void k(float* a, int n) { a[(long long)threadIdx.x * n] = 1.0f; }\n'
    p = _launch(tmp_path, GOOD.replace("value = 128", "value = 100000000"), src)
    assert main(["trace", str(p)]) == 2
    err = capsys.readouterr().err
    assert "failed on the GPU" in err and str(p) in err
    # thread t writes a[t * 100000000]: every lane but thread 0 leaves the 512-byte buffer
    m = re.search(r"instruction 1 at k\.cu:1 \(`st\.global\.\w+ [^`]*`\), block (\d) warp (\d), lanes (\d+), "
                  r".*lane \3's address is \+([\d,]+) bytes from the start of the buffers \(valid: 0\.\.511\)", err)
    assert m, err
    warp, lane, offset = int(m.group(2)), int(m.group(3)), int(m.group(4).replace(",", ""))
    assert lane == (1 if warp == 0 else 0) and offset == (32 * warp + lane) * 400_000_000
    good = _launch(tmp_path, GOOD, SOURCE)           # the next trace in the same process works
    assert main(["trace", str(good), "--out", str(tmp_path / "ok.wvtrace")]) == 0


def test_guide_chapter_quotes_the_real_output():
    """docs/guide/your-own-kernel.md quotes `warpviz analyze` of the shipped transpose_pad trace."""
    from viz.trace.analysis import to_table

    text = (ROOT / "docs" / "guide" / "your-own-kernel.md").read_text()
    quoted = re.search(r"```\n(instruction 6:.*?)\n```", text, re.S).group(1)
    table = to_table(analyze_trace(tracefile.load(ROOT / "assets" / "traces" / "transpose_pad.wvtrace")))
    assert quoted in table
    launch = re.search(r"```toml\n(.*?)```", text, re.S).group(1)
    assert launch.strip() == (KERNELS / "trace" / "transpose_pad.launch.toml").read_text().strip()


def test_global_atomic_with_unused_result_is_a_reduction():
    ptx = HAND_PTX.replace("	ret;", "	atom.global.add.u32 	%r8, [%rd1], 2;\n	st.global.u32 	[%rd1], %r8;\n	ret;")
    kinds = [(i.kind, i.ptx.split()[0]) for i in parse(ptx).instrs if i.opcode.startswith("atom")]
    # %r6 (the first atom's result) is never read: a RED on the GPU; %r8 is stored
    assert kinds == [("reduction", "atom.global.add.u32"), ("atomic", "atom.global.add.u32")]


OTHER_RECORDED = ["reduce_shfl", "generic_atomic", "ldmatrix_cpasync", "cpasync_double", "stmatrix_frag"]


@pytest.mark.parametrize("name", OTHER_RECORDED)
def test_atomics_ldsm_ldgsts_equal_their_own_counters(name):
    """Outside the ten: the H100's counters of RED, ATOMS, LDSM, LDGSTS (recorded with --validate)."""
    trace = tracefile.load(ROOT / "assets" / "traces" / f"{name}.wvtrace")
    hw = trace.header["ncu_other"]
    other = analyze_trace(trace).other_metrics
    assert hw and any(hw.values())
    assert {k: other.get(k, 0) for k in hw} == hw


def test_the_app_refuses_an_unreadable_trace_with_the_reason(capsys, tmp_path):
    missing = tmp_path / "missing.wvtrace"
    assert main([str(missing)]) == 2            # refused before any window opens
    err = capsys.readouterr().err
    assert "missing.wvtrace" in err and "no such file" in err


@nvcc
@pytest.mark.nvcc
def test_fault_finding_variant_guards_global_accesses_and_assembles(tmp_path):
    from viz.trace.build import assemble
    from viz.trace.ptx import instrument_full

    text, instrs, _ = instrument_full(HAND_PTX, check=True)
    lines = [ln.strip() for ln in text.splitlines()]
    # the guarded global load is issued by the block with the bad lanes off, not as written
    assert "@%p1 ld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd3+16];" not in lines
    assert "@%wvp1 ld.global.v4.f32 \t{%f1, %f2, %f3, %f4}, [%rd3+16];" in lines
    assert "and.pred %wvp1, %wvp1, %p1;" in lines and "and.b64 %wvd7, %wvd0, 15;" in lines
    assert "@%wvp1 ld.u8 \t%r5, [%rd4];" in lines                      # generic: checked too
    assert "@!%p1 st.shared.f32 \t[%r4+-4], %f1;" in lines                # shared: as written
    assert assemble(text)[:4] == b"\x7fELF"


@pytest.mark.parametrize("name", ["transpose-tile", "boundary-n1003", "char-stride-4"])
def test_per_warp_heat_map_equals_the_engines(name):
    trace, sc = _scenario_trace(name)
    assert np.array_equal(analyze_trace(trace).per_warp(), analyze(sc).per_warp())


def test_blocks_beyond_the_bitmap_cannot_be_selected():
    assert parse_blocks("65535", 70000, "f") == [65535]
    with pytest.raises(TraceError, match="only blocks 0..65,535"):
        parse_blocks("65530-65536", 70000, "f")
