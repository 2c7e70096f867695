"""Never silent: every PTX memory instruction that no registered kind records is found by the
parser, counted per warp-level execution (an event of kind "unrecorded"), and a trace whose
kernel ran one says so: ``complete: false`` and its ``unrecorded`` list in the header,
``analyze`` (table and JSON), the app's Figures panel, and the cost model, which refuses it.
The PTX snippets are real: ptxas assembles them (and their instrumented form) where it exists."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from viz.cli import main
from viz.kinds.registry import form_of, unrecorded_of
from viz.trace import tracefile
from viz.trace.analysis import analyze_trace, to_json, to_table, unrecorded_json
from viz.trace.ptx import EVENT_BASE, UNRECORDED_KIND, classify, instrument_full, parse
from viz.trace.schema import PARTIAL_NOTES, note_parts, records_complete, set_unrecorded

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "assets" / "traces" / "copy_float.wvtrace"

# sm_90a: distributed shared memory, TMA and bulk copies, wgmma with descriptors, textures,
# surfaces, multimem; beside them what stays recorded (ld.shared::cta, ld.global.nc, st.global)
# and what touches no data (prefetch, the bulk group instructions, the wgmma fences).
HOPPER_PTX = """.version 8.1
.target sm_90a
.address_size 64

.visible .entry k(.param .u64 p, .param .u64 tmap)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<10>;
  .reg .f32 %f<20>;
  .reg .pred %p<4>;
  .shared .align 128 .b8 smem[4096];
  .shared .align 8 .b64 bar;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [tmap];
  mov.u32 %r1, smem;
  mov.u32 %r2, bar;
  ld.shared::cluster.u32 %r3, [%r1];
  st.shared::cluster.u32 [%r1+4], %r3;
  ld.shared::cta.u32 %r4, [%r1+8];
  atom.shared::cluster.add.u32 %r5, [%r1+12], 1;
  cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd2, {%r4, %r4}], [%r2];
  cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1], 256, [%r2];
  cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32 [%rd1], [%r1], 256;
  cp.async.bulk.commit_group;
  cp.async.bulk.wait_group 0;
  ld.global.nc.u32 %r6, [%rd1];
  prefetch.global.L2 [%rd1];
  red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32 [%r1], 1, [%r2];
  cvt.u64.u32 %rd3, %r1;
  cvt.u64.u32 %rd4, %r4;
  setp.ne.u32 %p1, %r4, 0;
  wgmma.fence.sync.aligned;
  wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16 {%f0, %f1, %f2, %f3}, %rd3, %rd4, %p1, 1, 1, 0, 0;
  wgmma.commit_group.sync.aligned;
  wgmma.wait_group.sync.aligned 0;
  tex.2d.v4.f32.f32 {%f4, %f5, %f6, %f7}, [%rd2, {%f0, %f1}];
  suld.b.2d.b32.trap {%r7}, [%rd2, {%r4, %r4}];
  multimem.ld_reduce.relaxed.sys.global.add.f32 %f8, [%rd1];
  add.f32 %f9, %f8, %f4;
  add.f32 %f9, %f9, %f0;
  cvt.rzi.u32.f32 %r8, %f9;
  add.u32 %r6, %r6, %r8;
  add.u32 %r6, %r6, %r7;
  add.u32 %r6, %r6, %r5;
  st.global.u32 [%rd1+4], %r6;
  ret;
}
"""
HOPPER_UNRECORDED = [      # the TMA and bulk copies are recorded (viz.kinds.tma_copy)
    "ld.shared::cluster.u32", "st.shared::cluster.u32", "atom.shared::cluster.add.u32",
    "red.async.relaxed.cluster.shared::cluster.mbarrier::complete_tx::bytes.add.u32",
    "tex.2d.v4.f32.f32", "suld.b.2d.b32.trap",
    "multimem.ld_reduce.relaxed.sys.global.add.f32",
]

# sm_100a: Blackwell's tensor memory and the bulk store.
BLACKWELL_PTX = """.version 8.7
.target sm_100a
.address_size 64

.visible .entry kb(.param .u64 p)
{
  .reg .b32 %r<20>;
  .reg .b64 %rd<10>;
  .shared .align 16 .b32 taddr;
  .shared .align 128 .b8 smem[4096];
  ld.param.u64 %rd1, [p];
  mov.u32 %r1, taddr;
  mov.u32 %r9, smem;
  tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%r1], 32;
  ld.shared.u32 %r2, [%r1];
  tcgen05.ld.sync.aligned.16x64b.x1.b32 {%r3}, [%r2];
  tcgen05.wait::ld.sync.aligned;
  tcgen05.st.sync.aligned.16x64b.x1.b32 [%r2], {%r3};
  tcgen05.wait::st.sync.aligned;
  st.bulk.weak.shared::cta [%r9], 128, 0;
  tcgen05.dealloc.cta_group::1.sync.aligned.b32 %r2, 32;
  tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;
  st.global.u32 [%rd1], %r3;
  ret;
}
"""
BLACKWELL_UNRECORDED = ["tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32",
                        "tcgen05.ld.sync.aligned.16x64b.x1.b32", "tcgen05.st.sync.aligned.16x64b.x1.b32",
                        "st.bulk.weak.shared::cta"]


def test_hopper_forms_no_kind_records_are_found_and_counted_as_events():
    p = parse(HOPPER_PTX)
    assert [(i.opcode, i.kind, i.space) for i in p.instrs] == [
        ("ld.shared::cta.u32", "load", "shared"),
        ("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes", "tma", "global"),
        ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", "bulk", "global"),
        ("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.u32", "bulk", "global"),
        ("cp.async.bulk.commit_group", "tensormap", "global"), ("cp.async.bulk.wait_group", "tensormap", "global"),
        ("ld.global.nc.u32", "load", "global"),
        ("wgmma.mma_async.sync.aligned.m64n8k16.f32.f16.f16", "wgmma", "shared"),    # recorded (viz.kinds.wgmma)
        ("st.global.u32", "store", "global")]
    un = [e for e in p.events if e.kind == UNRECORDED_KIND]
    assert [e.opcode for e in un] == HOPPER_UNRECORDED
    assert [e.id for e in p.events] == [EVENT_BASE + k for k in range(len(p.events))]
    assert [e.line_no for e in un] == [17, 18, 20, 28, 36, 37, 38]
    # prefetch, the group instructions and the fences touch no data: neither recorded nor listed
    assert not any(w in e.opcode for e in p.events for w in ("prefetch", "commit_group", "wait_group", "fence"))


def test_blackwell_forms_no_kind_records_are_found():
    p = parse(BLACKWELL_PTX)
    assert [i.opcode for i in p.instrs] == ["ld.shared.u32", "st.global.u32"]
    assert [e.opcode for e in p.events if e.kind == UNRECORDED_KIND] == BLACKWELL_UNRECORDED


@pytest.mark.parametrize("opcode", ["ld.shared::cluster.u32", "st.shared::cluster.v2.f32", "ldu.shared::cluster.u32",
                                   "red.shared::cluster.add.u32", "ldmatrix.sync.aligned.m8n8.x4.shared::cluster.b16"])
def test_cluster_shared_memory_is_no_plain_shared_access(opcode):
    assert classify(opcode) is None and form_of(opcode) is None
    assert "shared::cluster" in unrecorded_of(opcode).why


@pytest.mark.parametrize("opcode,kind,space", [("ld.shared::cta.u32", "load", "shared"),
                                               ("ld.global.nc.v4.f32", "load", "global"),
                                               ("st.u32", "store", "generic"),
                                               ("cp.async.cg.shared.global", "cp.async", "shared"),
                                               ("red.global.add.u32", "reduction", "global")])
def test_what_a_kind_records_stays_recorded(opcode, kind, space):
    assert classify(opcode) == (kind, space) and unrecorded_of(opcode) is None


@pytest.mark.parametrize("opcode", ["prefetch.global.L2", "applypriority.global.L2::evict_normal", "ld.param.u64",
                                    "ld.local.u32", "mbarrier.try_wait.parity.shared::cta.b64"])
def test_what_moves_no_data_a_trace_counts_is_not_listed(opcode):
    assert classify(opcode) is None and unrecorded_of(opcode) is None


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("ptxas") is None, reason="needs ptxas")
@pytest.mark.parametrize("text,arch", [(HOPPER_PTX, "sm_90a"), (BLACKWELL_PTX, "sm_100a")])
def test_the_snippets_and_their_instrumented_form_assemble(tmp_path, text, arch):
    for name, ptx in (("plain", text), ("instrumented", instrument_full(text)[0])):
        f = tmp_path / f"{name}.ptx"
        f.write_text(ptx)
        r = subprocess.run(["ptxas", f"-arch={arch}", str(f), "-o", str(tmp_path / f"{name}.cubin")],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr


def _with_unrecorded(tmp_path, executed=(12, 0)) -> Path:
    """The shipped copy_float trace as a new recorder writes one whose kernel also ran a TMA
    copy 12 times and had a cluster load that never ran."""
    t = tracefile.load(SHIPPED)
    h = dict(t.header)
    set_unrecorded(h, [
        {"id": EVENT_BASE, "ptx": "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
                                  "[%r1], [%rd2, {%r4, %r4}], [%r2];",
         "opcode": "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes",
         "function": "k", "line_no": 21, "file": "copy.cu", "line": 7, "why": "a TMA or bulk copy",
         "executed": executed[0]},
        {"id": EVENT_BASE + 1, "ptx": "ld.shared::cluster.u32 %r3, [%r1];", "opcode": "ld.shared::cluster.u32",
         "function": "k", "line_no": 17, "file": "copy.cu", "line": 5, "why": "distributed shared memory",
         "executed": executed[1]}])
    heads = np.stack([t.instr, t.block, t.warp, t.active, t.pred, t.shared, t.global_,
                      np.zeros(t.records, np.uint32)], axis=1)
    out = tmp_path / "with_tma.wvtrace"
    tracefile.save(tracefile.from_records(h, heads, t.addresses().astype(np.uint64)), out)
    return out


def test_a_trace_header_round_trip_with_complete_false(tmp_path):
    back = tracefile.load(_with_unrecorded(tmp_path))
    h = back.header
    assert h["complete"] is False and h["records_complete"] is True and records_complete(h)
    assert [(d["line_no"], d["line"], d["executed"]) for d in h["unrecorded"]] == [(21, 7, 12), (17, 5, 0)]
    assert h["note"] == PARTIAL_NOTES["unrecorded"].format(instructions=1, executed=12)
    assert note_parts(h["note"]) == [("unrecorded", {"instructions": 1, "executed": 12})]
    # the figures of what was recorded are those of the shipped trace
    assert analyze_trace(back).metrics == analyze_trace(tracefile.load(SHIPPED)).metrics


def test_nothing_unrecorded_ran_is_complete(tmp_path):
    h = tracefile.load(_with_unrecorded(tmp_path, executed=(0, 0))).header
    assert h["complete"] is True and unrecorded_json(h) == []
    assert not any(line.startswith("NOT RECORDED") for line in to_table(analyze_trace(tracefile.load(SHIPPED))).split("\n"))


def test_analyze_json_and_table_name_them(tmp_path, capsys):
    path = _with_unrecorded(tmp_path)
    assert main(["analyze", str(path), "--json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["trace"]["complete"] is False
    assert doc["trace"]["unrecorded"] == [{
        "instruction": "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes "
                       "[%r1], [%rd2, {%r4, %r4}], [%r2];",
        "ptx_line": 21, "file": "copy.cu", "line": 7, "executed": 12, "why": "a TMA or bulk copy"}]
    assert main(["analyze", str(path)]) == 0
    text = capsys.readouterr().out
    assert "NOT RECORDED: 1 memory instruction(s) warpviz does not record ran 12 warp-level executions" in text
    assert "  PTX line 21 (copy.cu:7): cp.async.bulk.tensor.2d" in text and "executed 12" in text


def test_the_python_api_gives_them(tmp_path):
    import warpviz

    t = warpviz.open_trace(str(_with_unrecorded(tmp_path)))
    assert t.complete is False and [d["executed"] for d in t.unrecorded] == [12]
    assert warpviz.open_trace(str(SHIPPED)).unrecorded is None


def test_an_older_trace_says_it_does_not_know(capsys):
    h = tracefile.load(SHIPPED).header
    assert "unrecorded" not in h and unrecorded_json(h) is None
    assert to_json(analyze_trace(tracefile.load(SHIPPED)))["trace"]["unrecorded"] is None
    assert main(["analyze", str(SHIPPED)]) == 0
    assert "unrecorded memory instructions: unknown (a trace written before warpviz listed them" in \
        capsys.readouterr().out


def test_the_cost_model_refuses_and_names_them(tmp_path):
    from viz.gpu.predict import predict_trace
    from viz.trace import TraceError

    predict_trace(SHIPPED)           # the shipped trace itself is predicted
    with pytest.raises(TraceError, match=r"executes cp\.async\.bulk\.tensor \(1\) \(PTX\), memory instructions a trace does not record"):
        predict_trace(_with_unrecorded(tmp_path))


# A kernel with a 1-D bulk copy (thread 0 of each block) and a load through the cluster
# window (every thread): neither is recorded; the global store is.
BULK_SOURCE = r'''extern "C" __global__ void k(float* out, const float* in)
{
    __shared__ __align__(128) float tile[256];
    __shared__ __align__(8) unsigned long long bar;
    const unsigned s = (unsigned)__cvta_generic_to_shared(tile);
    const unsigned b = (unsigned)__cvta_generic_to_shared(&bar);
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(b) : "memory");
        asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" :: "r"(b), "r"(1024) : "memory");
        asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];"
                     :: "r"(s), "l"(in + blockIdx.x * 256), "r"(1024), "r"(b) : "memory");
    }
    asm volatile("{\n.reg .pred P1;\nWV_WAIT:\nmbarrier.try_wait.parity.shared::cta.b64 P1, [%0], 0;\n"
                 "@!P1 bra.uni WV_WAIT;\n}" :: "r"(b) : "memory");
    unsigned v;
    asm volatile("ld.shared::cluster.u32 %0, [%1];" : "=r"(v) : "r"(s + threadIdx.x * 4u) : "memory");
    out[blockIdx.x * 256 + threadIdx.x] = __uint_as_float(v);
}
'''
BULK_LAUNCH = '''title = "bulk copy and a cluster-window load"
source = "k.cu"
kernel = "k"
block = [256]
grid = [4]

[[arg]]
type = "float*"
count = 1024
fill = "zero"

[[arg]]
type = "float*"
count = 1024
fill = "iota"
'''


@pytest.mark.nvcc
@pytest.mark.skipif(shutil.which("nvcc") is None, reason="needs nvcc")
def test_nvccs_ptx_of_a_bulk_copy_and_a_cluster_load(tmp_path):
    (tmp_path / "k.cu").write_text(BULK_SOURCE)
    subprocess.run(["nvcc", "-arch=sm_90", "-ptx", "-lineinfo", str(tmp_path / "k.cu"), "-o", str(tmp_path / "k.ptx")],
                   check=True, capture_output=True, timeout=300)
    p = parse((tmp_path / "k.ptx").read_text())
    # the bulk copy and its fence are recorded (viz.kinds.tma_copy); the cluster load is not
    assert [(i.opcode, i.line) for i in p.instrs] == [
        ("fence.proxy.async.shared::cta", 9), ("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes", 15),
        ("st.global.u32", 21)]
    assert [(e.opcode, e.kind, e.line) for e in p.events] == [("ld.shared::cluster.u32", UNRECORDED_KIND, 20)]


@pytest.mark.gpu
def test_a_traced_bulk_copy_and_cluster_load_are_counted_and_named(tmp_path, capsys):
    from helpers import HAVE_NVCC, have_pycuda

    if not (have_pycuda() and HAVE_NVCC):
        pytest.skip("needs PyCUDA, a GPU and nvcc")
    (tmp_path / "k.cu").write_text(BULK_SOURCE)
    (tmp_path / "k.launch.toml").write_text(BULK_LAUNCH)
    out = tmp_path / "k.wvtrace"
    main(["trace", str(tmp_path / "k.launch.toml"), "--validate", "--json", "--out", str(out)])
    doc = json.loads(capsys.readouterr().out)
    print(json.dumps(doc.get("validation"), indent=1))      # the device log keeps what Nsight Compute said
    got = [(d["line"], d["executed"]) for d in doc["trace"]["unrecorded"]]
    assert got == [(20, 32)]        # 8 warps of 4 blocks (the bulk copy is recorded: viz.kinds.tma_copy)
    assert doc["trace"]["complete"] is False and doc["validation"]["unrecorded"] == doc["trace"]["unrecorded"]
    h = tracefile.load(out).header
    assert h["records_complete"] is True and h["complete"] is False
    assert doc["metrics"]["l1tex__t_requests_pipe_lsu_mem_global_op_st.sum"] == 32     # the store: recorded
