"""The access kinds' registry (viz.kinds.registry): the parser, the engine, the reasons and the
per-warp detail find a kind by its op there, so a kind registered in viz/kinds/ alone is parsed,
counted, described and drawn; and an op a file may hold that is no kind (a list, a typo) is none."""

from __future__ import annotations

from dataclasses import replace

import pytest

from viz.engine import analyze
from viz.kinds import KIND_METRIC_LABELS, KIND_METRICS, KIND_OPS
from viz.kinds.registry import Kind, kind_of, kinds, register
from viz.report import explain_access
from viz.scenario import ScenarioError, loads
from viz.warp import warp_detail

SCENARIO = """format = 3
[launch]
block = [64]
grid = [2]
[arrays.g]
space = "global"
type = "float4"
shape = [65536]
[arrays.s]
space = "shared"
type = "float4"
shape = [1024]
[[access]]
op = "{op}"
at = "s[(tid * 3) % 64]"
from = "g[blockIdx.x * 64 + tid]"
"""


def test_the_kinds_in_their_order_with_their_counters():
    assert KIND_OPS == ("cp.async", "atomic", "tma.load", "tma.store", "wgmma")
    assert [k.op for k in kinds()] == list(KIND_OPS)
    assert KIND_METRICS == tuple(m for op in KIND_OPS for m in kind_of(op).metrics)
    assert len(set(KIND_METRICS)) == len(KIND_METRICS) == 16
    assert set(KIND_METRIC_LABELS) == set(KIND_METRICS)
    assert kind_of("atomic").metric_labels["smsp__inst_executed_op_global_red.sum"] == \
        "global reduction instructions (RED)"


@pytest.mark.parametrize("op", ["load", "store", "ldmatrix.x4", "cp_async", "", None, 3, ["cp.async"], {"a": 1}])
def test_an_op_that_is_no_kind_is_none(op):
    assert kind_of(op) is None


def test_a_kind_is_registered_once():
    with pytest.raises(ValueError, match="registered twice"):
        register(kind_of("atomic"))


@pytest.fixture
def toy(monkeypatch):
    """A new kind, registered in the registry only: a cp.async by another name, each of its
    behaviours counted as it is asked."""
    from viz.kinds import registry

    base = kind_of("cp.async")
    asked: list[str] = []

    def note(name, f):
        def g(*a):
            asked.append(name)
            return f(*a)
        return g

    kind = replace(base, op="toy.copy", example='op = "toy.copy", at = "s[tid]", from = "g[tid]"',
                   parse=note("parse", lambda b, k, raw: replace(base.parse(b, k, dict(raw, op="cp.async")),
                                                                  op="toy.copy")),
                   count=note("count", base.count), figures=note("figures", base.figures),
                   shared_rule=note("shared_rule", base.shared_rule),
                   extra_reasons=note("extra_reasons", base.extra_reasons), per_lane=note("per_lane", base.per_lane))
    monkeypatch.setitem(registry._KINDS, "toy.copy", kind)
    return kind, asked


def test_a_kind_registered_in_the_registry_alone_is_parsed_counted_described_and_drawn(toy):
    kind, asked = toy
    sc = loads(SCENARIO.format(op="toy.copy"), source="toy.toml")
    assert sc.accesses[0].op == "toy.copy" and asked == ["parse"]
    ref = analyze(loads(SCENARIO.format(op="cp.async"), source="ref.toml"))
    an = analyze(sc)
    assert asked == ["parse", "count"]
    assert an.metrics == ref.metrics and sum(an.metrics.values()) > 0
    d, r = an.per_access()[0], ref.per_access()[0]
    assert "figures" in asked and d.kind == "toy.copy" and d.kind_metrics == r.kind_metrics
    assert d.sectors_per_request == r.sectors_per_request > 0
    rows = explain_access(d)
    assert {"shared_rule", "extra_reasons"} <= set(asked)
    assert [row[:2] for row in rows] == [row[:2] for row in explain_access(r)]
    w, wr = warp_detail(sc, 0, 1, 1), warp_detail(loads(SCENARIO.format(op="cp.async"), source="ref.toml"), 0, 1, 1)
    assert "per_lane" in asked and w.lanes == wr.lanes


def test_a_kind_checks_its_own_keys_and_gives_its_example(toy):
    with pytest.raises(ScenarioError) as err:
        loads(SCENARIO.format(op="toy.copy") + 'cache = "cg"\nbox = [8, 8]\n', source="toy.toml")
    assert "unknown key 'box'" in str(err.value) and "allowed keys: at, cache, for, from, note, op, when" in \
        str(err.value).lower()
    with pytest.raises(ScenarioError) as err:        # the parser asks the kind for its example
        loads(SCENARIO.format(op="atomic").replace('from = "g[blockIdx.x * 64 + tid]"\n', "")
              .replace('at = "s[(tid * 3) % 64]"\n', ""), source="atomic.toml")
    assert "missing 'at'" in str(err.value) and kind_of("atomic").example in str(err.value)


def test_a_file_whose_op_is_no_string_is_a_scenario_error():
    with pytest.raises(ScenarioError):
        loads(SCENARIO.replace('op = "{op}"', 'op = ["cp.async"]'), source="bad.toml")


def test_kind_is_a_frozen_record():
    k = kind_of("tma.load")
    assert isinstance(k, Kind) and not k.through_banks and k.reasons is not None
    with pytest.raises(AttributeError):
        k.op = "x"  # type: ignore[misc]


# ---------------------------------------------------------------------------- one table for every layer


def test_the_trace_side_reads_the_same_table():
    from viz.kinds.registry import forms, sass_classes, trace_kinds
    from viz.trace.analysis import OTHER_METRICS
    from viz.trace.reconcile import SASS_CLASS, ptx_class
    from viz.trace.schema import KINDS

    assert KINDS == trace_kinds() == ("load", "store", "ldmatrix", "stmatrix", "cp.async", "atomic", "reduction",
                                      "tma", "bulk", "tensormap", "wgmma")   # kinds.tma_copy, kinds.wgmma
    assert SASS_CLASS == sass_classes() and SASS_CLASS["REDAS"] == ("shared", "atomic") and \
        SASS_CLASS["LDGSTS"] == ("shared", "cp.async") and SASS_CLASS["UTMALDG"] == ("global", "tma") and \
        len(SASS_CLASS) == 15 + 9 + 4
    assert ptx_class({"kind": "reduction", "space": "global"}) == ("global", "atomic")
    assert OTHER_METRICS[("stmatrix", "shared")] == "sm__sass_inst_executed_op_shared_stsm.sum"
    assert len(OTHER_METRICS) == 7 and all(f.kind in KINDS for f in forms())


@pytest.fixture
def toy_form(monkeypatch):
    """A new trace form, registered in the table alone: ``tex.`` recorded as a global load."""
    from viz.kinds import registry
    from viz.kinds.registry import TraceForm

    form = TraceForm(kind="load", heads=("tex",), space="global", sass={"TEX": "global"})
    monkeypatch.setattr(registry, "_FORMS", [form, *registry._FORMS])
    return form


def test_a_form_registered_alone_takes_what_was_unrecorded(toy_form):
    from viz.kinds.registry import unrecorded_of
    from viz.trace.ptx import classify

    assert classify("tex.2d.v4.f32.f32") == ("load", "global") and unrecorded_of("tex.2d.v4.f32.f32") is None
    assert classify("suld.b.2d.b32.trap") is None and unrecorded_of("suld.b.2d.b32.trap") is not None


def test_generated_cuda_and_random_scenarios_come_from_the_kind(toy):
    from viz.gpu import codegen, randomkinds

    kind, asked = toy
    seen = []
    toy_kind = replace(kind, codegen=lambda a, arr, sc, ren, k: seen.append((a.op, k)) or ["/* toy copy */"])
    from viz.kinds import registry

    registry._KINDS["toy.copy"] = toy_kind
    src = codegen.generate(loads(SCENARIO.format(op="toy.copy"), source="toy.toml")).source
    assert seen == [("toy.copy", 0)] and "/* toy copy */" in src and "// access 0: toy.copy s[(tid * 3) % 64]" in src
    got = randomkinds.scenarios(2, seed=3, kinds=("toy.copy",))        # its random_text (cp.async's here)
    assert [name for name, _ in got] == ["random-toycopy-3-0", "random-toycopy-3-1"]


def test_importing_the_kinds_imports_no_numba_qt_or_upper_layer():
    import subprocess
    import sys

    code = ("import sys, viz.kinds, viz.trace.ptx; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('numba', 'PySide6') or m == 'viz.gpu' or m.startswith('viz.gpu.')]; "
            "print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0 and out.stdout.strip() == "[]", out.stderr


def _operand_form(**kw):
    """A toy form whose records carry operands: ``tex.`` recorded as a "load", each lane's slot
    its lane number times 3 (what a TMA kind would put there: coordinates, the tensor map)."""
    from viz.kinds.registry import TraceForm

    return TraceForm(kind="load", heads=("tex",), space="global", slots="operands", width=lambda parts, ops: 16,
                     record_code=lambda ins: ["cvt.u64.u32 %wvd0, %wvr4;", "mul.lo.u64 %wvd0, %wvd0, 3;"], **kw)


def test_a_form_whose_records_carry_operands_is_instrumented_with_its_own_code(monkeypatch, tmp_path):
    from viz.kinds import registry
    from viz.trace.ptx import instrument_full, parse

    monkeypatch.setattr(registry, "_FORMS", [_operand_form(), *registry._FORMS])
    ptx = """.version 8.1
.target sm_90
.address_size 64

.visible .entry k(.param .u64 p, .param .u64 t)
{
  .reg .b32 %r<4>;
  .reg .b64 %rd<4>;
  .reg .f32 %f<8>;
  ld.param.u64 %rd1, [p];
  ld.param.u64 %rd2, [t];
  mov.f32 %f0, 0f3F000000;
  tex.2d.v4.f32.f32 {%f1, %f2, %f3, %f4}, [%rd2, {%f0, %f0}];
  st.global.f32 [%rd1], %f1;
  ret;
}
"""
    p = parse(ptx)
    tex = p.instrs[0]
    assert (tex.opcode, tex.kind, tex.space, tex.width) == ("tex.2d.v4.f32.f32", "load", "global", 16)
    assert tex.address == "{%f1, %f2, %f3, %f4}, [%rd2, {%f0, %f0}]" and not p.events
    text = instrument_full(ptx)[0]
    block = text[:text.index("tex.2d.v4")]
    assert "mul.lo.u64 %wvd0, %wvd0, 3;" in block and "mov.b32 %wvr3, 0;" in block
    import shutil
    import subprocess

    if shutil.which("ptxas"):
        (tmp_path / "k.ptx").write_text(text)
        r = subprocess.run(["ptxas", "-arch=sm_90", str(tmp_path / "k.ptx"), "-o", str(tmp_path / "k.cubin")],
                           capture_output=True, text=True, timeout=300)
        assert r.returncode == 0, r.stderr


def test_a_form_that_counts_its_records_itself_feeds_its_own_counters(monkeypatch):
    """``TraceForm.count``: the analysis adds what it returns, by Nsight Compute name, to the
    ten (a name of the ten) or to the counters outside them (any other)."""
    from viz.kinds import registry
    from viz.trace import tracefile
    from viz.trace.analysis import analyze_trace

    trace = tracefile.load("assets/traces/copy_float.wvtrace")
    before = analyze_trace(trace)
    plain = registry.trace_kind("load")
    toy = replace(plain, count=lambda tr, ins, rows: {"toy__boxes.sum": 2 * rows.size,
                                                       "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum": 1})
    monkeypatch.setattr(registry, "_FORMS", [toy, *registry._FORMS])
    after = analyze_trace(trace)
    loads_ = sum(s.executed for s in before.stats if s.instr["kind"] == "load")
    assert loads_ > 0 and after.other_metrics["toy__boxes.sum"] == 2 * loads_
    sec = "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum"
    chunks = sum(-(-s.executed // (1 << 16)) for s in before.stats if s.instr["kind"] == "load" and s.executed)
    assert after.metrics[sec] == before.metrics[sec] + chunks
