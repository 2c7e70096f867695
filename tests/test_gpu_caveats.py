"""Caveats beside a prediction (``viz.gpu.caveats``): what the model does not time, a scaled
partial trace, fused shared loads under arithmetic, a bound the checked launches rarely had,
each computed from the inputs and the shipped results files (no GPU)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from viz.gpu import caveats, costmodel, results, tracebench, tracemodel
from viz.gpu.caveats import Caveat, CheckedLaunch, entry_caveats, from_dict, untimed_ptx
from viz.gpu.plan import Timing
from viz.gpu.predict import predict_trace
from viz.trace import tracefile

ROOT = Path(__file__).resolve().parents[1]
TRACES = ROOT / "assets" / "traces"
MEAS = ROOT / "assets" / "measurements"
PTX = ROOT / "tests" / "data" / "ptx"
HELDOUT = MEAS / "h100-heldout-2026-11-26.json"


def _keys(cs) -> list[str]:
    return [c.key for c in cs]


def _bound_counts(bound: str) -> tuple[int, int, float, float]:
    """(launches bound by ``bound``, of those within 20%, lowest and highest measured/predicted)
    in the shipped results files, counted here independently of the module."""
    n = ok = 0
    ratios = []
    for path in [MEAS / "h100.json", MEAS / "h100-traces.json", *sorted(MEAS.glob("h100-heldout-*.json"))]:
        doc = json.loads(path.read_text())
        for section in ("scenarios", "kernels", "traces"):
            for e in (doc.get(section) or {}).values():
                t = e.get("timing") or {}
                p = t.get("predicted") or {}
                if p.get("bound") == bound and t.get("median_ms") and p.get("ms"):
                    n += 1
                    ok += abs(p["ms"] - t["median_ms"]) <= 0.2 * t["median_ms"]
                    ratios.append(t["median_ms"] / p["ms"])
    return n, ok, min(ratios), max(ratios)


# ---------------------------------------------------------------------------- what the kernel executes


def test_the_ptx_of_tritons_matmul_has_wgmma_and_its_add_has_nothing_untimed():
    assert untimed_ptx((PTX / "triton_matmul.ptx").read_text(), "matmul_kernel") == {"wgmma.mma_async": 2}
    for name in ("triton_add", "triton_softmax", "triton_transpose", "numba_axpy"):
        assert untimed_ptx((PTX / f"{name}.ptx").read_text()) == {}, name


def test_ptx_comments_and_fences_are_not_untimed_work_and_other_families_are_found():
    ptx = """.version 8.0
.target sm_90a
.address_size 64
.visible .entry k()
{
	// wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 in a comment
	/* mma.sync.aligned.m16n8k16 in a block comment */
	wgmma.fence.sync.aligned;
	wgmma.commit_group.sync.aligned;
	@%p1 mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%f1,%f2,%f3,%f4}, {%r1,%r2}, {%r3}, {%f1,%f2,%f3,%f4};
	cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%r1], [%rd1, {%r2, %r3}], [%r4];
	tcgen05.mma.cta.kind::f16 [%r5], %rd2, %rd3, %r6, 1;
	ret;
}
.visible .entry other()
{
	wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 {%r1}, %rd1, %rd2, 1, 1, 1, 0, 1;
	ret;
}
"""
    got = untimed_ptx(ptx, "k")
    assert got == {"mma.sync": 1, "cp.async.bulk.tensor": 1, "tcgen05.mma": 1}
    assert untimed_ptx(ptx, "other") == {"wgmma.mma_async": 1}     # each kernel its own
    assert untimed_ptx(ptx, "missing") == {}
    cs = caveats.caveats({"ms": 1.0, "bound": "latency"}, resources={"untimed": got}, checked=())
    assert _keys(cs) == ["untimed-mma", "unrecorded-copies"]
    assert "mma.sync" in cs[0].text() and "tcgen05.mma" in cs[0].text() and "memory side only" in cs[0].text()
    assert "cp.async.bulk.tensor" in cs[1].text()
    # a scenario's TMA loads are timed (the TMA term): no copy caveat there
    assert _keys(caveats.caveats({"bound": "TMA"}, resources={"untimed": {"cp.async.bulk.tensor": 1}},
                                 traced=False, checked=())) == []


def test_the_sass_profile_names_tensor_core_instructions():
    from viz.toolchain import sass

    assert caveats.untimed_sass(["HGMMA", "LDS", "HMMA", "HGMMA", "UTMALDG", "FFMA"]) == \
        {"HGMMA": 2, "HMMA": 1, "UTMALDG": 1}
    ins = [sass.Instr(0, "HGMMA.64x64x16.F32", "", None, None, None), sass.Instr(16, "EXIT", "", None, None, None)]
    prof = sass.profile_of(ins, "k")
    assert prof["untimed"] == {"HGMMA": 1}
    assert "untimed" not in sass.profile_of([sass.Instr(0, "EXIT", "", None, None, None)], "k")
    cs = caveats.caveats({"bound": "latency"}, resources={"sass": prof}, checked=())
    assert _keys(cs) == ["untimed-mma"] and "HGMMA" in cs[0].text()


def test_the_held_out_matmul_gets_the_mma_caveat_and_its_bounds_record():
    """Triton's fp16 matmul, 1.45x off in the held-out set: its PTX (as plain_build records it)
    says the prediction is the memory side only, and its L2 bound has the checked launches'
    count beside it."""
    doc = results.load(HELDOUT)
    e = dict(doc["traces"]["heldout_triton_matmul_2048"])
    e["resources"] = dict(e["resources"], untimed=untimed_ptx((PTX / "triton_matmul.ptx").read_text(),
                                                              e["resources"]["entry"]))
    cs = entry_caveats(e, device=doc["device"]["name"])
    assert _keys(cs)[0] == "untimed-mma"
    # the shipped entry's SASS profile names the SASS instruction, its PTX record the PTX one
    assert cs[0].text() == ("the kernel executes HGMMA, wgmma.mma_async, which the cost model does not time: the "
                            "prediction is the memory side only")
    n, ok, lo, hi = _bound_counts("L2")
    assert e["timing"]["predicted"]["bound"] == "L2" and ok < n       # the matmul itself is the L2 miss
    loose = next(c for c in cs if c.key == "bound-loose")
    assert loose.args == {"bound": "L2", "checked": n, "within": ok, "lo": round(lo, 2), "hi": round(hi, 2)}
    assert f"{ok} of {n} within 20%" in loose.text()
    assert "device" not in _keys(cs)                                  # measured on the H100
    # the shipped file's run recorded the PTX's untimed instructions itself (plain_build)
    shipped = entry_caveats(doc["traces"]["heldout_triton_matmul_2048"], device=doc["device"]["name"])
    assert _keys(shipped)[0] == "untimed-mma" and "bound-loose" in _keys(shipped)
    e.pop("resources")                 # without any record, only the bound (and the scaling) is said
    assert "untimed-mma" not in _keys(entry_caveats(e)) and "bound-loose" in _keys(entry_caveats(e))


def test_a_shipped_plain_trace_gets_no_caveat():
    doc = results.load(MEAS / tracebench.SHIPPED)
    e = doc["traces"]["copy_float"]
    h = tracefile.read_header(TRACES / "copy_float.wvtrace")
    assert entry_caveats(e, h, doc["device"]["name"]) == []
    assert _bound_counts(e["timing"]["predicted"]["bound"])[0] >= caveats.MIN_CHECKED


def test_a_partial_trace_gets_the_coverage_caveat(tmp_path):
    tr = tracefile.load(TRACES / "copy_float.wvtrace")
    sub = tracemodel.first_blocks(tr, 8)
    sub.header = dict(tr.header, complete=False, recorded_blocks="0-7")
    path = tracefile.save(sub, tmp_path / "copy_float.wvtrace")
    entry = {"trace": path.name, "timing": {"median_ms": 0.002, "scale": {"buffer_sets": 8}}}
    entry["timing"]["predicted"] = tracebench.entry_prediction(entry, path, costmodel.H100)
    assert entry["timing"]["predicted"]["coverage"] == {"grid_blocks": tr.blocks, "recorded_blocks": 8,
                                                        "used_blocks": 8, "scale": tr.blocks / 8}
    got = tracebench.set_caveats(entry, path, costmodel.H100.name)
    assert [c["key"] for c in got] == ["scaled"]
    assert got[0]["text"].startswith(f"predicted from 8 of {tr.blocks} blocks, scaled by {tr.blocks / 8:g}")
    # the whole trace: not scaled, no coverage, no caveat
    whole = {"trace": "copy_float.wvtrace", "timing": {"median_ms": 0.002, "scale": {"buffer_sets": 8}}}
    whole["timing"]["predicted"] = tracebench.entry_prediction(whole, TRACES / "copy_float.wvtrace", costmodel.H100)
    assert "coverage" not in whole["timing"]["predicted"]
    assert tracebench.set_caveats(whole, TRACES / "copy_float.wvtrace") == []
    # a Coverage given directly
    cov = tracemodel.coverage(sub)
    assert _keys(caveats.caveats({"bound": "latency"}, coverage=cov, checked=())) == ["scaled"]


def test_fused_shared_loads_under_arithmetic_are_said_with_the_checked_launches_like_them():
    doc = results.load(MEAS / tracebench.SHIPPED)
    e = doc["traces"]["sgemm_tile16"]
    h = tracefile.read_header(TRACES / "sgemm_tile16.wvtrace")
    n, share = caveats.fused_shared_loads(h, e["resources"])
    assert n == 4 and share >= caveats.ARITH_SHARE
    cs = entry_caveats(e, h)
    assert _keys(cs) == ["fused-shared"]
    # the shipped launches like it: sgemm_tile16 itself and softmax_row, whose sum loop's
    # loads are one LDS.128 and whose SASS loops over partial[] are mostly arithmetic
    like = ("sgemm_tile16", "softmax_row")
    assert caveats.fused_shared_loads(tracefile.read_header(TRACES / "softmax_row.wvtrace"),
                                      doc["traces"]["softmax_row"]["resources"])[0] == 1
    ts = [doc["traces"][k]["timing"] for k in like]
    ratios = [round(t["median_ms"] / t["predicted"]["ms"], 2) for t in ts]
    within = sum(abs(t["predicted"]["ms"] - t["median_ms"]) <= caveats.WITHIN * t["median_ms"] for t in ts)
    assert cs[0].args == {"n": 4, "pct": round(100 * share), "checked": 2, "within": within,
                          "lo": min(ratios), "hi": max(ratios)}
    # quad_read's fused shared load is not in a loop of arithmetic; a fused store is not a load
    for name in ("quad_read", "sgemm_float4_scalar_sts"):
        hq = tracefile.read_header(TRACES / f"{name}.wvtrace")
        assert caveats.fused_shared_loads(hq, doc["traces"][name]["resources"]) is None, name
    # no checked launch like it: said so
    only = (CheckedLaunch("x.json", "a", "latency", 1.0, True),) * caveats.MIN_CHECKED
    assert _keys(caveats.caveats(e["timing"]["predicted"], resources=e["resources"], header=h, checked=only)) == \
        ["fused-shared-unchecked"]


def test_a_bound_the_checked_launches_never_or_rarely_had_is_said():
    rows = tuple(CheckedLaunch("f.json", f"k{i}", "latency", 1.0 + 0.01 * i, True) for i in range(6)) + \
        (CheckedLaunch("f.json", "d", "DRAM", 1.5, False),) + \
        tuple(CheckedLaunch("f.json", f"s{i}", "shared", 1.0, True) for i in range(9)) + \
        (CheckedLaunch("f.json", "s9", "shared", 1.3, False),)
    assert caveats.caveats({"bound": "latency"}, checked=rows) == []
    c = caveats.caveats({"bound": "L2"}, checked=rows)
    assert [(x.key, x.args) for x in c] == [("bound-unchecked", {"bound": "L2", "total": 17})]
    c = caveats.caveats({"bound": "DRAM"}, checked=rows)            # 1 checked: too few
    assert c[0].key == "bound-loose" and c[0].args["checked"] == 1 and c[0].args["within"] == 0
    assert caveats.caveats({"bound": "shared"}, checked=rows) == []  # 9 of 10 within: enough
    c = caveats.caveats({"bound": "latency"}, device="NVIDIA A100-SXM4-80GB", checked=rows)
    assert _keys(c) == ["device"] and "A100" in c[0].text() and "checked on the H100 and the H200 only" in c[0].text()
    assert caveats.caveats({"bound": "latency"}, device="NVIDIA H200", checked=rows) == []     # checked there too


def test_caveats_read_back_from_a_file_are_checked_and_made_from_the_template():
    c = Caveat("bound-loose", {"bound": "L2", "checked": 7, "within": 6, "lo": 0.7, "hi": 1.22})
    assert from_dict(json.loads(json.dumps(c.as_dict()))) == c
    good = c.as_dict()
    for bad in ({**good, "key": "nope"}, {**good, "args": {**good["args"], "extra": 1}},
                {**good, "args": {**good["args"], "lo": "0.7"}}, {**good, "args": {**good["args"], "lo": float("nan")}},
                {**good, "args": {**good["args"], "bound": "L2\x1b[2J"}}, {**good, "args": {**good["args"], "lo": True}},
                {"key": "scaled", "args": {"used": 1.5, "grid": 8, "scale": 2.0}}, "text", None):
        assert from_dict(bad) is None, bad
    # the text comes from the template, not the file's "text"
    assert from_dict({**good, "text": "anything"}).text() == c.text()


def test_every_template_has_a_chinese_entry_with_its_fields():
    import tomllib

    cat = tomllib.loads((ROOT / "assets" / "translations" / "zh_CN.toml").read_text("utf-8"))
    for key, t in caveats.TEMPLATES.items():
        assert t in cat, key
        assert caveats._fields(cat[t]) == caveats._fields(t), key


def test_the_table_prints_a_caveat_line_under_the_launch_and_json_keeps_the_list(tmp_path, capsys):
    from viz.cli import main

    doc = tracebench.new_document({"name": "NVIDIA H100 80GB HBM3"}, "x", "2026-11-23")
    t = Timing(tuple([0.002] * 30))
    for name in ("copy_float", "sgemm_tile16"):
        shipped = results.load(MEAS / tracebench.SHIPPED)["traces"][name]
        doc["traces"][name] = {"trace": f"{name}.wvtrace", "kernel": shipped["kernel"], "launch": shipped["launch"],
                               "resources": shipped["resources"],
                               "timing": {**t.as_dict(), "predicted": predict_trace(
                                   TRACES / f"{name}.wvtrace", costmodel.H100, resources=shipped["resources"],
                                   buffer_sets=8).as_dict()},
                               "caveats": [{"key": "device", "text": "\x1b[2J forged", "args": {"device": "\x1b"}}]}
    p = results.save(doc, tmp_path / "t.json")
    assert main(["bench", "--traces", "--show", str(p)]) == 0
    out = capsys.readouterr().out.splitlines()
    i = next(k for k, ln in enumerate(out) if ln.startswith("sgemm_tile16"))
    assert out[i + 1].startswith("    caveat: ptxas fused 4 shared loads")
    j = next(k for k, ln in enumerate(out) if ln.startswith("copy_float"))
    assert not out[j + 1].lstrip().startswith("caveat:")
    assert not any("forged" in ln or "\x1b" in ln for ln in out)      # the file's own caveats are not shown
    assert main(["bench", "--traces", "--show", str(p), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["traces"]["copy_float"]["caveats"] == []
    assert [c["key"] for c in shown["traces"]["sgemm_tile16"]["caveats"]] == ["fused-shared"]


def test_the_checked_launches_are_the_shipped_files():
    rows = caveats.checked_launches()
    files = {r.source for r in rows}
    assert {"h100.json", "h100-traces.json", HELDOUT.name} <= files
    assert sum(r.source == HELDOUT.name for r in rows) == len(results.load(HELDOUT)["traces"])
    assert all(r.trace is None or r.source == "h100-traces.json" for r in rows)


@pytest.mark.skipif(not __import__("shutil").which("ptxas") and not Path("/usr/local/cuda/bin/ptxas").exists(),
                    reason="needs ptxas")
def test_plain_build_records_the_untimed_ptx_of_a_launch():
    from viz.trace.launch import load_launch

    try:
        b = tracebench.plain_build(load_launch(PTX / "triton_matmul.launch.toml"))
    except Exception as err:  # pragma: no cover - a toolkit that cannot assemble sm_90a
        pytest.skip(f"cannot build here: {err}")
    assert b.resources["untimed"] == {"wgmma.mma_async": 2}


def test_the_docs_counts_of_loose_bounds_are_the_shipped_files():
    """docs/GPU.md's "today L2: 5 of 6 ..." is what the shipped results files give."""
    text = " ".join((ROOT / "docs" / "GPU.md").read_text(encoding="utf-8").split())
    n, ok, _lo, _hi = _bound_counts("L2")
    assert f"today L2: {ok} of {n}," in text
    lsu, tma = _bound_counts("LSU issue")[0], _bound_counts("TMA")[0]
    assert f"LSU issue: {lsu} checked; TMA: {tma} checked" in text
    for bound in ("L2", "LSU issue", "TMA"):
        assert caveats.caveats({"bound": bound})[0].key == "bound-loose", bound
