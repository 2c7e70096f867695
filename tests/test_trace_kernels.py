"""The realistic test kernels of kernels/trace/ (row softmax, AoS particles, cp.async double
buffering, stmatrix): the instrumenter's edits on the PTX nvcc makes here, the counting
rules for stmatrix/ldmatrix lanes, the GPU-memory check and, with the GPU (``-m gpu``),
``warpviz trace --validate`` and the messages for bad launches on the device."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from helpers import HAVE_NVCC, have_pycuda
from viz.cli import main
from viz.counting import count_addresses
from viz.trace import TraceError, tracefile
from viz.trace.analysis import analyze_trace, matrix_lanes
from viz.trace.launch import check_fits, load_launch, parse_launch
from viz.trace.ptx import instrument_full, parse

ROOT = Path(__file__).resolve().parents[1]
TRACE = ROOT / "kernels" / "trace"
nvcc = pytest.mark.skipif(not HAVE_NVCC, reason="needs nvcc and ptxas")
NEW = ["softmax_row", "softmax_warp", "particles_aos28", "particles_aos32", "cpasync_double", "stmatrix_frag"]


def _ptx(name: str, tmp_path: Path) -> str:
    out = tmp_path / f"{name}.ptx"
    subprocess.run(["nvcc", "-ptx", "-lineinfo", "-arch=sm_90a", "-O3", "-std=c++17", "-o", str(out),
                    str(TRACE / f"{name}.cu")], check=True, capture_output=True, timeout=300)
    return out.read_text()


@nvcc
@pytest.mark.nvcc
@pytest.mark.parametrize("name", NEW)
def test_new_launch_files_build_and_match_their_kernels(name):
    from viz.trace.build import build

    launch = load_launch(TRACE / f"{name}.launch.toml")
    b = build(launch, "sm_90")               # nvcc -ptx, parameters checked, instrumented, both assembled
    assert b.cubin[:4] == b.instrumented_cubin[:4] == b"\x7fELF"
    assert launch.kernel in b.ptx and len(b.instrs) > 0


@nvcc
@pytest.mark.nvcc
def test_stmatrix_is_recorded_with_each_lanes_row_address(tmp_path):
    from viz.trace.build import assemble

    ptx = _ptx("stmatrix_frag", tmp_path)
    text, instrs, _ = instrument_full(ptx)
    st = [i for i in instrs if i.kind == "stmatrix"]
    assert [(i.op, i.space, i.width) for i in st] == [("store", "shared", 16)] * 3
    assert [matrix_lanes(i.opcode) for i in st] == [32, 32, 16]           # .x4, .x4.trans, .x2
    assert all(i.line > 0 and i.file.endswith("stmatrix_frag.cu") for i in st)
    lines = [ln.strip() for ln in text.splitlines()]
    for i in st:
        at = lines.index(i.ptx)
        block = lines[max(k for k in range(at) if lines[k] == "{"):at]
        # the recorder takes the stmatrix's own address operand (a 32-bit shared register)
        assert f"cvt.u64.u32 %wvd0, {i.address};" in block
        assert "mov.b32 %wvr2, %wvr0;" in block                            # every lane: shared
    # the 16-byte shared loads that read the tiles back are recorded as LDS.128
    assert sum(1 for i in instrs if i.kind == "load" and i.space == "shared" and i.width == 16) == 3
    assert assemble(text, "sm_90a", "instrumented")[:4] == b"\x7fELF"


@nvcc
@pytest.mark.nvcc
def test_cpasync_double_buffer_records_both_operands_not_the_group_instructions(tmp_path):
    from viz.trace.build import assemble

    ptx = _ptx("cpasync_double", tmp_path)
    p = parse(ptx)
    cp = [i for i in p.instrs if i.kind == "cp.async"]
    assert [(i.op, i.space, i.width, i.operand) for i in cp] == \
        [("store", "shared", 16, 0), ("load", "global", 16, 1)] * 2
    assert not any("commit_group" in i.ptx or "wait_group" in i.ptx or "wait_all" in i.ptx for i in p.instrs)
    assert [(i.space, i.width) for i in p.instrs if i.kind == "load" and i.space == "shared"] == [("shared", 16)]
    # the guarded tail: the consumer's LDS.128 sits under a branch or a predicate
    lds = next(i for i in p.instrs if i.kind == "load" and i.space == "shared")
    assert lds.predicate or any(lds.id in r.ids for r in p.regions)
    # fault finding covers cp.async's global source: the copy is issued with bad lanes off
    text, _, _ = instrument_full(ptx, check=True)
    issued = [ln.strip() for ln in text.splitlines() if re.match(r"\s*@%wvp1 cp\.async\.cg", ln)]
    assert len(issued) == 2
    assert assemble(text, "sm_90a", "fault-finding")[:4] == b"\x7fELF"


@nvcc
@pytest.mark.nvcc
def test_cpasync_group_instructions_are_recorded_as_events(tmp_path):
    from viz.trace.build import assemble
    from viz.trace.ptx import EVENT_BASE

    ptx = _ptx("cpasync_double", tmp_path)
    p = parse(ptx)
    assert [e.opcode for e in p.events] == ["cp.async.commit_group", "cp.async.commit_group",
                                            "cp.async.wait_group", "cp.async.wait_all"]
    assert [e.id for e in p.events] == [EVENT_BASE + k for k in range(4)]
    assert all(e.kind == "event" and e.space == "none" and e.line > 0 for e in p.events)
    assert all(i.id < EVENT_BASE for i in p.instrs)                     # memory ids unchanged
    text, instrs, _ = instrument_full(ptx)
    lines = [ln.strip() for ln in text.splitlines()]
    where = [k for k, ln in enumerate(lines) if ln.startswith("cp.async.") and "group" in ln or ln.startswith(
        "cp.async.wait_all")]
    assert len(where) == len(p.events)
    for e, at in zip(p.events, where):      # a recording block (id, no address, no lane mask) before each
        assert lines[at] == e.ptx
        block = lines[max(k for k in range(at) if lines[k] == "{"):at]
        assert f"mov.u32 %wvr13, {e.id};" in block and "mov.u64 %wvd0, 0;" in block
        assert "mov.b32 %wvr2, 0;" in block and "mov.b32 %wvr3, 0;" in block
    assert assemble(text, "sm_90a", "instrumented")[:4] == b"\x7fELF"


def _stmatrix_trace(opcode: str, addr: np.ndarray, warps: int = 3) -> tracefile.Trace:
    table = [{"id": 0, "line_no": 1, "ptx": f"{opcode} [%r1], {{%r2, %r3}};", "function": "k", "opcode": opcode,
              "kind": "stmatrix", "op": "store", "space": "shared", "width": 16, "predicate": "",
              "address": "%r1", "operand": 0, "file": "k.cu", "line": 3}]
    full = 0xFFFFFFFF
    heads = np.array([[0, 0, w, full, full, full, 0, 0] for w in range(warps)], np.uint32)
    addrs = np.repeat(addr.astype(np.uint64)[None, :], warps, axis=0)
    header = {"title": "t", "kernel": "k", "launch": {"block": [32 * warps, 1, 1], "grid": [1, 1, 1]},
              "instructions": table, "complete": True}
    return tracefile.from_records(header, heads, addrs)


@pytest.mark.parametrize("x, lanes", [("x1", 8), ("x2", 16), ("x4", 32)])
def test_matrix_instructions_count_only_the_lanes_that_give_row_addresses(x, lanes):
    rng = np.random.default_rng(7)
    # lanes beyond 8 * matrices point at conflicting rows (256 bytes apart): ignored by the hardware
    addr = (rng.permutation(64)[:32] * 16).astype(np.int64)
    addr[lanes:] = 4096 + np.arange(32 - lanes) * 256
    an = analyze_trace(_stmatrix_trace(f"stmatrix.sync.aligned.m8n8.{x}.shared.b16", addr))
    mask = np.zeros((1, 32), bool)
    mask[0, :lanes] = True
    p, s = count_addresses("shared", 16, addr[None, :].astype(np.int64), mask, 1, False)[:2]
    m = an.metrics
    assert m["l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum"] == 3 * int(p.sum())
    assert m["l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"] == 3 * int(p.sum() - s.sum())
    assert m["smsp__inst_executed_op_shared_st.sum"] == 0              # an STSM is not an STS
    assert an.stats[0].active_lanes == 3 * lanes
    assert int(p.sum()) >= lanes // 8                                    # 8 rows of 16 bytes per wavefront at best


def test_a_launch_over_the_gpus_free_memory_names_the_buffer(tmp_path):
    text = ('title = "t"\nsource = "k.cu"\nkernel = "k"\nblock = [64]\ngrid = [2]\n\n'
            '[[arg]]\ntype = "float*"\ncount = 1000\n\n[[arg]]\ntype = "double*"\ncount = 3000000000\n\n'
            '[[arg]]\ntype = "int"\nvalue = 1\n')
    (tmp_path / "k.cu").write_text("")
    launch = parse_launch(text, tmp_path / "big.launch.toml")
    check_fits(launch, 30 << 30)                          # 22.4 GiB fit in 30 GiB
    with pytest.raises(TraceError) as e:
        check_fits(launch, 20 << 30, "the GPU (NVIDIA H100 80GB HBM3)")
    msg = str(e.value)
    assert msg.count("\n") == 0 and msg.startswith(str(tmp_path / "big.launch.toml"))
    assert "(arg 2.count)" in msg and "buffer [[arg]] 2 (double*, count = 3,000,000,000) needs 22.35 GiB" in msg
    assert "all 2 buffers together: 22.35 GiB (24,000,004,096 bytes)" in msg
    assert "NVIDIA H100 80GB HBM3) has 20.00 GiB (21,474,836,480 bytes) free" in msg and "Fix:" in msg


# ---------------------------------------------------------------------------- on the GPU



GPU = pytest.mark.skipif(not (have_pycuda() and HAVE_NVCC), reason="needs PyCUDA, a GPU and nvcc")


@pytest.mark.gpu
@GPU
@pytest.mark.parametrize("name", ["softmax_row", "softmax_warp", "particles_aos28", "particles_aos32", "cpasync_double",
                                  "stmatrix_frag"])
def test_new_kernels_validate_on_the_gpu(name, tmp_path, capsys):
    out = tmp_path / "t.wvtrace"
    rc = main(["trace", str(TRACE / f"{name}.launch.toml"), "--validate", "--json", "--out", str(out)])
    doc = json.loads(capsys.readouterr().out)
    if name == "softmax_row":
        # ptxas fused the sum loop's four loads into one LDS.128 per iteration (in every copy
        # of the loop it unrolled again): the trace is rewritten to it and says so; the max
        # loop's unrolled body does not run at 4 warps a block (H100, 2026-11-26: 120 / 144)
        smap = doc["trace"]["sass_map"]
        assert smap["fused"] and not smap["uncertain"], smap
    assert rc == 0 and doc["validation"]["match"], doc["validation"]["rows"]
    assert all(r["match"] for r in doc["validation"]["other"]), doc["validation"]["other"]
    if name == "cpasync_double":
        # 3 blocks of 4 warps; blocks 0 and 1 take 3 tiles, block 2 takes 2: commit_group before
        # the loop 12, in it 32; wait_group 1 32; wait_all 12
        assert [e["executed"] for e in doc["trace"]["events"]] == [12, 32, 32, 12]
        assert int(tracefile.load(out).instr.max()) < (1 << 20)          # no event among the records


def _paragraph(err: str) -> str:
    """The error paragraph: the last line of stderr (before it, warpviz may say how many
    instructions it instrumented). Echoed so that the device log keeps the whole text."""
    sys.stderr.write(err)
    para = [ln for ln in err.splitlines() if not re.fullmatch(r"warpviz: \d+ memory instruction\(s\) instrumented in \S+", ln)]
    assert len(para) == 1 and para[0].startswith("warpviz: ")
    return para[0]


def _write(tmp_path: Path, source: str, args: str, block: int = 32, grid: int = 1) -> Path:
    (tmp_path / "k.cu").write_text(source)
    p = tmp_path / "k.launch.toml"
    p.write_text(f'title = "t"\nsource = "k.cu"\nkernel = "k"\nblock = [{block}]\ngrid = [{grid}]\n\n{args}')
    return p


OK_SOURCE = 'extern "C" __global__ void k(float* a, int n) { int i = threadIdx.x; if (i < n) a[i] += 1.0f; }\n'
OK_ARGS = '[[arg]]\ntype = "float*"\ncount = 32\n\n[[arg]]\ntype = "int"\nvalue = 32\n'


@pytest.mark.gpu
@GPU
def test_buffers_over_the_gpus_memory_exit_2_before_allocating(tmp_path, capsys):
    # 200 GiB of floats: over any H100's memory, under warpviz's own sanity bound
    p = _write(tmp_path, OK_SOURCE, '[[arg]]\ntype = "float*"\ncount = 53687091200\n\n[[arg]]\ntype = "int"\nvalue = 32\n')
    assert main(["trace", str(p)]) == 2
    err = capsys.readouterr().err
    sys.stderr.write(err)
    assert err.count("\n") == 1 and str(p) in err and "buffer [[arg]] 1 (float*, count = 53,687,091,200)" in err
    assert re.search(r"needs 200\.00 GiB .* but the GPU \(NVIDIA [^)]*\) has [\d.,]+ GiB \([\d,]+ bytes\) free", err)
    ok = _write(tmp_path, OK_SOURCE, OK_ARGS)
    assert main(["trace", str(ok), "--out", str(tmp_path / "ok.wvtrace")]) == 0


CPASYNC_FAULT = r'''extern "C" __global__ void k(const float4* in, float4* out, int stride) {
    __shared__ __align__(16) float4 s[32];
    unsigned dst = (unsigned)__cvta_generic_to_shared(&s[threadIdx.x]);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" :: "r"(dst), "l"(in + (long long)threadIdx.x * stride));
    asm volatile("cp.async.wait_all;\n" ::);
    __syncwarp();
    out[threadIdx.x] = s[threadIdx.x ^ 1];
}
'''


@pytest.mark.gpu
@GPU
def test_a_cpasync_that_faults_names_its_instruction_and_lanes(tmp_path, capsys):
    args = ('[[arg]]\ntype = "float4*"\ncount = 32\n\n[[arg]]\ntype = "float4*"\ncount = 32\n\n'
            '[[arg]]\ntype = "int"\nvalue = 50000000\n')
    p = _write(tmp_path, CPASYNC_FAULT, args)
    assert main(["trace", str(p)]) == 2
    err = _paragraph(capsys.readouterr().err)
    assert "failed on the GPU" in err and str(p) in err
    # lane t copies from in + t * 50,000,000 float4s: every lane but 0 leaves the buffers
    m = re.search(r"instruction 2 at k\.cu:4 \(`cp\.async\.cg\.shared\.global [^`]*`\), block 0 warp 0, "
                  r"lanes 1, 2, .*lane 1's address is \+([\d,]+) bytes from the start of the buffers", err)
    assert m, err
    assert int(m.group(1).replace(",", "")) == 16 * 50_000_000
    ok = _write(tmp_path, OK_SOURCE, OK_ARGS)
    assert main(["trace", str(ok), "--out", str(tmp_path / "ok.wvtrace")]) == 0


STMATRIX_FAULT = r'''extern "C" __global__ void k(unsigned* out, int bad) {
    __shared__ __align__(16) unsigned short tile[16 * 16];
    unsigned lane = threadIdx.x;
    unsigned a = (unsigned)__cvta_generic_to_shared(&tile[(lane % 16) * 16 + (lane / 16) * 8]) + lane * bad;
    asm volatile("stmatrix.sync.aligned.m8n8.x4.shared.b16 [%0], {%1, %2, %3, %4};\n"
                 :: "r"(a), "r"(lane), "r"(lane), "r"(lane), "r"(lane) : "memory");
    __syncwarp();
    out[lane] = tile[lane];
}
'''


@pytest.mark.gpu
@GPU
def test_a_stmatrix_that_faults_exits_2_with_one_paragraph(tmp_path, capsys):
    args = '[[arg]]\ntype = "unsigned*"\ncount = 32\n\n[[arg]]\ntype = "int"\nvalue = 1048576\n'
    p = _write(tmp_path, STMATRIX_FAULT, args)
    assert main(["trace", str(p)]) == 2
    err = _paragraph(capsys.readouterr().err)
    # a shared address outside the block's window: CUDA says so; the finder checks global
    # addresses only, so the message points to compute-sanitizer
    assert "failed on the GPU" in err and str(p) in err
    assert "compute-sanitizer" in err
    ok = _write(tmp_path, OK_SOURCE, OK_ARGS)
    assert main(["trace", str(ok), "--out", str(tmp_path / "ok.wvtrace")]) == 0


# ---------------------------------------------------------------------------- ptxas's @!PT LDS before LDGSTS


def _shipped(name: str) -> tracefile.Trace:
    return tracefile.load(ROOT / "assets" / "traces" / f"{name}.wvtrace")


def test_never_true_loads_before_each_ldgsts_are_found_in_the_plain_sass():
    from viz.trace.ptx import MemInstr, predicated_shared, sass_ldgsts, sass_predicated

    # the plain SASS of cpasync_double recorded on the H100: three `@!PT LDS RZ, [RZ]` before
    # each of its two LDGSTS; the second LDGSTS (the loop's guarded prefetch) is predicated
    t = _shipped("cpasync_double")
    sass = t.header["sass_guard"]["sass"]
    assert sum("@!PT LDS RZ, [RZ]" in ln for ln in sass) == 6
    instrs = [MemInstr(**{k: i[k] for k in MemInstr.__dataclass_fields__}) for i in t.instructions]
    cp = [i.id for i in instrs if i.kind == "cp.async" and i.space == "global"]
    assert sass_ldgsts(sass, instrs) == {cp[0]: (False, 3), cp[1]: (True, 3)}
    # they are no PTX load: the one ld.shared maps to the one real LDS (not predicated)
    lds = next(i.id for i in instrs if i.kind == "load" and i.space == "shared")
    assert sass_predicated(sass, instrs) == {lds: False, cp[0]: False, cp[1]: True}
    assert predicated_shared(sass) == 0
    assert sass_ldgsts(sass[:-1] + [ln for ln in sass if "LDGSTS" in ln], instrs) is None   # 3 LDGSTS, 2 cp.async


def test_ldmatrix_cpasync_counts_the_never_true_loads_and_equals_all_ten():
    t = _shipped("ldmatrix_cpasync")
    an = analyze_trace(t)
    cp = next(s for s in an.stats if s.instr["kind"] == "cp.async" and s.instr["space"] == "global")
    assert (cp.executed, cp.never_true_lds) == (4, 12)                 # 4 warps x 3 @!PT LDS
    assert an.metrics["smsp__inst_executed_op_shared_ld.sum"] == t.header["ncu"]["smsp__inst_executed_op_shared_ld.sum"] == 12
    assert an.metrics == {k: t.header["ncu"][k] for k in an.metrics}
    d = next(a for a in an.per_access() if a.index == cp.instr["id"])
    assert d.never_true_shared_loads == 12


def test_a_predicated_off_ldgsts_counts_with_its_never_true_loads(tmp_path):
    """cpasync_double's loop prefetch: a warp past the last tile branches around the cp.async
    in the PTX; ptxas predicated the LDGSTS, so that warp still executes it (and the three
    @!PT LDS before it): the H100 counts 44 LDGSTS and 32 + 3 x 44 = 164 shared loads."""
    from viz.trace.ptx import parse

    t = _shipped("cpasync_double")
    # the PTX branch around each cp.async is a skip region
    ptx_regions = parse(_ptx("cpasync_double", tmp_path)).regions
    cp = [i["id"] for i in t.instructions if i["kind"] == "cp.async" and i["space"] == "global"]
    assert [r.ids for r in ptx_regions if set(r.ids) & set(cp)] == [(cp[0],), (cp[1],)]
    assert [t.instructions[k]["sass_predicated"] for k in cp] == [False, True]
    # the recording: one skip record per warp whose last loop pass skips the prefetch
    skips = (t.instr == cp[1]) & (t.flags == 1)
    assert int(skips.sum()) == 12 and sorted(set(zip(t.block[skips].tolist(), t.warp[skips].tolist()))) == \
        [(b, w) for b in range(3) for w in range(4)]
    an = analyze_trace(t)
    ncu = t.header["ncu"]
    s = an.stats[cp[1]]
    assert (s.executed, s.predicated_off, s.never_true_lds) == (20, 12, 3 * 32)
    assert an.metrics["smsp__inst_executed_op_shared_ld.sum"] == 32 + 3 * 44 == 164
    assert an.metrics == {k: ncu[k] for k in an.metrics}
    assert an.other_metrics["smsp__inst_executed_op_ldgsts.sum"] == t.header["ncu_other"]["smsp__inst_executed_op_ldgsts.sum"] == 44
    # had ptxas kept the branch (LDGSTS not predicated), those warps would not execute it
    inst = [dict(i) for i in t.instructions]
    inst[cp[1]]["sass_predicated"] = False
    t.header = dict(t.header, instructions=inst)
    an = analyze_trace(t)
    assert an.metrics["smsp__inst_executed_op_shared_ld.sum"] == 32 + 3 * 32
    assert an.other_metrics["smsp__inst_executed_op_ldgsts.sum"] == 32


def test_figures_say_why_a_cpasync_counts_shared_loads(capsys):
    from viz.trace.analysis import explain_trace

    an = analyze_trace(_shipped("ldmatrix_cpasync"))
    d = next(a for a in an.per_access() if a.kind == "cp.async" and a.space == "global")
    rows = explain_trace(d)
    assert ("", "+12") in [r[:2] for r in rows]
    assert any("@!PT LDS" in r[2] for r in rows)
    assert main(["analyze", str(ROOT / "assets" / "traces" / "ldmatrix_cpasync.wvtrace")]) == 0
    out = capsys.readouterr().out
    assert "+12 never-true shared loads (@!PT LDS before the LDGSTS: counted as shared loads)" in out
    assert re.search(r"smsp__inst_executed_op_shared_ld\.sum\s+12\n", out)


def test_sass_guard_leaves_the_never_true_loads_out():
    from viz.trace.ptx import compare_sass

    # ldmatrix_cpasync's plain SASS as recorded on the H100 has three @!PT LDS before its
    # LDGSTS; ptxas put two in the instrumented kernel, which changes no real load
    plain = _shipped("ldmatrix_cpasync").header["sass_guard"]["sass"]
    assert sum("@!PT LDS" in ln for ln in plain) == 3
    first = next(k for k, ln in enumerate(plain) if "@!PT LDS" in ln)
    inst = plain[:first] + plain[first + 1:] + ["/*0f00*/ STG.E desc[UR4][R2.64], R4"] * 21 + \
        ["/*0f10*/ ATOMG.E.ADD.STRONG.GPU PT, R5, desc[UR4][R2.64], R6"] * 7
    assert compare_sass(plain, inst, 7) == []
    assert compare_sass(plain, [ln for ln in inst if "LDSM" not in ln], 7) == \
        ["LDSM: 1 in the plain kernel, 0 instrumented (expected 1)"]


def test_every_counter_outside_the_ten_has_a_short_name_in_the_gpu_panel():
    pytest.importorskip("PySide6")
    from viz.app.gpu_panel import OTHER_LABELS
    from viz.trace.analysis import OTHER_METRIC_NAMES

    assert set(OTHER_METRIC_NAMES) == set(OTHER_LABELS)
