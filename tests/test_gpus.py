"""A GPU is one description (viz.gpus, assets/gpus/*.toml): the loader refuses hostile files with
a message naming the file and the field, the shipped descriptions agree with the model's rules,
a running GPU is matched to its description (or gets the caveat), and the compile target and the
analysis come from it."""

from __future__ import annotations

import tomllib

import pytest

from viz import gpus
from viz.engine import analyze
from viz.scenario import ScenarioError, load

H100_TOML = gpus.gpus_dir() / "nvidia-h100-80gb-hbm3.toml"


def _doc() -> dict:
    return tomllib.loads(H100_TOML.read_text(encoding="utf-8"))


def _write(tmp_path, text: str, name: str = "gpu.toml"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def test_every_shipped_description_reads_and_the_h100_and_h200_are_measured_hoppers():
    ds = {d.slug: d for d in gpus.descriptions()}
    assert set(ds) == {"nvidia-h100-80gb-hbm3", "nvidia-h200", "nvidia-a100-sxm4-80gb", "nvidia-l40s", "nvidia-b200"}
    assert gpus.descriptions()[0].slug == gpus.REFERENCE_SLUG
    h100, h200 = ds["nvidia-h100-80gb-hbm3"], ds["nvidia-h200"]
    for d in (h100, h200):
        assert (d.target, d.target_features, d.compute_capability, d.sm_count) == ("sm_90", "sm_90a", "9.0", 132)
        assert (d.banks, d.bank_bytes, d.sector_bytes, d.line_bytes, d.phase_lanes) == (32, 4, 32, 128, {8: 16, 16: 8})
        assert d.has_kind("tma.load") and d.has_kind("wgmma")
        assert d.provenance("rules.banks").startswith("measured: ")
    assert h100.l2_bytes == 50 << 20 and h200.l2_bytes == 60 << 20
    assert h200.dram_peak_gbps > h100.dram_peak_gbps
    assert h100.calibration_path().is_file()
    # the planned ones say plainly that nothing in them was measured
    for slug, target in (("nvidia-a100-sxm4-80gb", "sm_80"), ("nvidia-l40s", "sm_89"), ("nvidia-b200", "sm_100")):
        d = ds[slug]
        assert d.target == target and d.calibration == ""
        assert d.provenance("rules.banks").startswith("unmeasured: ")
        assert d.provenance("spec.dram_peak_gbps").startswith("unmeasured: ")
        assert not d.has_kind("wgmma")
    assert not ds["nvidia-a100-sxm4-80gb"].has_kind("tma.load") and ds["nvidia-b200"].has_kind("tma.load")


def test_the_model_counts_with_the_reference_rules_and_every_shipped_gpu_has_them():
    assert (gpus.WARP, gpus.BANKS, gpus.BANK_BYTES, gpus.SECTOR_BYTES, gpus.LINE_BYTES) == (32, 32, 4, 32, 128)
    assert (gpus.WORD_SHIFT, gpus.SECTOR_SHIFT, gpus.LINE_SHIFT, gpus.BANK_MASK) == (2, 5, 7, 31)
    assert all(gpus.modelled(d) for d in gpus.descriptions())


@pytest.mark.parametrize("edit, words", [
    (lambda d: d["rules"].__setitem__("banks", "32"), ["rules.banks", "whole number", "str"]),
    (lambda d: d["rules"].__setitem__("banks", 0), ["rules.banks", "out of range"]),
    (lambda d: d["rules"].__setitem__("sector_bytes", 1 << 20), ["rules.sector_bytes", "out of range"]),
    (lambda d: d["rules"].__setitem__("bank_bytes", True), ["rules.bank_bytes", "whole number", "bool"]),
    (lambda d: d["spec"].__setitem__("dram_peak_gbps", float("nan")), ["spec.dram_peak_gbps", "out of range"]),
    (lambda d: d["spec"].__setitem__("l2_bytes", -1), ["spec.l2_bytes", "out of range"]),
    (lambda d: d["rules"].__setitem__("bankz", 32), ["unknown key rules.bankz"]),
    (lambda d: d.__setitem__("colour", "green"), ["unknown key 'colour'"]),
    (lambda d: d["rules"].pop("line_bytes"), ["rules.line_bytes is missing"]),
    (lambda d: d.pop("target"), ["target is missing"]),
    (lambda d: d.__setitem__("target", "sm_90; rm -rf /"), ["target must be a one-line text"]),
    (lambda d: d.__setitem__("target", "cc90"), ["target = 'cc90' is not of the form"]),
    (lambda d: d.__setitem__("target_features", "sm_80a"), ["target_features", "sm_90"]),
    (lambda d: d.__setitem__("compute_capability", 9.0), ["compute_capability must be a text"]),
    (lambda d: d.__setitem__("match", []), ["match must be a list"]),
    (lambda d: d.__setitem__("calibration", "../../etc/passwd"), ["calibration", "not of the form"]),
    (lambda d: d.__setitem__("format", 99), ["format 99", "update warpviz"]),
    (lambda d: d["rules"].__setitem__("phase_lanes", {"8": 16}), ["rules.phase_lanes needs both"]),
    (lambda d: d["rules"].__setitem__("phase_lanes", {"8": 12, "16": 8}), ["rules.phase_lanes.8 = 12", "divide"]),
    (lambda d: d["rules"].__setitem__("kinds", ["load", 7]), ["rules.kinds[1] must be a text"]),
    (lambda d: d["rules"].__setitem__("line_bytes", 100), ["rules.line_bytes (100)", "multiple", "rules.sector_bytes"]),
    (lambda d: d["rules"].__setitem__("shared_per_block_bytes", 1 << 21), ["shared_per_block_bytes", "at most"]),
    (lambda d: d["measured"].__setitem__("rules.nonsense", "my lab"), ["[measured] names 'rules.nonsense'"]),
])
def test_a_hostile_description_is_refused_naming_the_file_and_the_field(tmp_path, edit, words):
    import tomlkit

    d = _doc()
    edit(d)
    p = _write(tmp_path, tomlkit.dumps(d))
    with pytest.raises(gpus.GpuDescriptionError) as err:
        gpus.read(p)
    msg = str(err.value)
    assert msg.startswith(str(p) + ": ")
    for w in words:
        assert w in msg, (w, msg)


@pytest.mark.parametrize("content, words", [
    (b"banks = [", ["is not valid TOML"]),
    (b"\xff\xfe not text", ["is not UTF-8 text"]),
    (b"x" * (gpus.MAX_DESCRIPTION_BYTES + 10), ["larger than 64 KiB"]),
])
def test_a_file_that_is_no_toml_is_refused(tmp_path, content, words):
    p = tmp_path / "bad.toml"
    p.write_bytes(content)
    with pytest.raises(gpus.GpuDescriptionError) as err:
        gpus.read(p)
    for w in words:
        assert w in str(err.value)


def test_a_folder_is_not_read_as_a_description(tmp_path):
    with pytest.raises(gpus.GpuDescriptionError, match="not a regular file"):
        gpus.read(tmp_path)


def test_a_running_gpu_is_matched_by_name_and_an_unknown_one_gets_the_h100_with_a_caveat():
    m = gpus.for_device("NVIDIA H200", "9.0")
    assert m.exact and m.caveat is None and m.description.slug == "nvidia-h200"
    assert gpus.for_device("NVIDIA H100 80GB HBM3", "9.0").description.slug == "nvidia-h100-80gb-hbm3"
    assert gpus.for_device("NVIDIA GeForce RTX 4090", "8.9").description.target == "sm_89"
    gh = gpus.for_device("NVIDIA GH200 480GB", "9.0")
    assert not gh.exact and gh.description.is_reference
    assert "no description for NVIDIA GH200 480GB" in gh.caveat and "the same SM" in gh.caveat
    assert "assets/gpus/" in gh.caveat and "warpviz calibrate" in gh.caveat
    other = gpus.for_device("Some Future GPU", "12.0")
    assert "these figures are the NVIDIA H100 80GB HBM3's" in other.caveat


def test_the_compile_target_is_the_descriptions(monkeypatch):
    import subprocess
    import sys

    from viz.toolchain import compile as cc

    assert cc.ARCH == gpus.reference().target == "sm_90"
    env = {"WARPVIZ_GPU": "nvidia-a100-sxm4-80gb", "PYTHONPATH": str(gpus.gpus_dir().parents[1])}
    import os

    out = subprocess.run([sys.executable, "-c", "from viz.toolchain.compile import ARCH; print(ARCH)"],
                         env={**os.environ, **env}, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "sm_80", out.stderr
    bad = subprocess.run([sys.executable, "-c", "from viz import gpus; gpus.active()"],
                         env={**os.environ, **env, "WARPVIZ_GPU": "no-such-gpu"}, capture_output=True, text=True,
                         timeout=120)
    assert bad.returncode != 0 and "$WARPVIZ_GPU = 'no-such-gpu' names no GPU description" in bad.stderr


def test_analyze_takes_a_device_and_refuses_a_kind_it_lacks():
    sc = load("tma-swizzle-128b")
    h200 = gpus.by_slug("nvidia-h200")
    a = analyze(sc, device=h200)
    assert a.device is h200
    assert a.metrics == analyze(sc).metrics          # the same SM: the same counts
    with pytest.raises(ScenarioError) as err:
        analyze(sc, device=gpus.by_slug("nvidia-a100-sxm4-80gb"))
    assert "NVIDIA A100-SXM4-80GB (sm_80) has no tma.load accesses" in str(err.value)
    assert analyze(load("transpose-tile"), device=gpus.by_slug("nvidia-a100-sxm4-80gb")).metrics == \
        analyze(load("transpose-tile")).metrics


# ---------------------------------------------------------------------------- the cost model per GPU


def test_the_cost_model_of_a_described_gpu_uses_its_description_and_calibration():
    from viz.gpu import costmodel

    assert costmodel.for_gpu(gpus.reference()) is costmodel.H100
    h200 = costmodel.for_gpu(gpus.by_slug("nvidia-h200"))
    assert (h200.name, h200.l2_bytes, h200.sm_count) == ("NVIDIA H200", 60 << 20, 132)
    src = dict(h200.sources)
    assert src["dram_copy_gbps"] == "calibration" and src["loaded_latency"].startswith("calibration (")
    # the H200's own loaded-latency curve: its copy saturates near 4 TB/s, the H100's at 2.8
    assert h200.loaded_latency[-1][0] > 3900 > costmodel.LOADED_LATENCY_H100[-1][0]
    assert costmodel.calibration_caveat("NVIDIA H200", src, "9.0") is None
    # a GPU with a description and no calibration: defaults, said in one line with the fix
    a100 = costmodel.for_gpu(gpus.by_slug("nvidia-a100-sxm4-80gb"))
    s = dict(a100.sources)
    assert s["dram_copy_gbps"] == "default" and s["loaded_latency"].startswith("default (the H100's measured curve")
    assert (a100.max_threads_per_sm, a100.shared_per_sm, a100.l2_bytes) == (2048, 167936, 40 << 20)
    note = costmodel.calibration_caveat(a100.name, s, "8.0")
    assert note == (f"{a100.name} is not calibrated: {len(s)} of {len(s)} figures of the cost model are defaults (the "
                    "H100's); run `warpviz calibrate` on this GPU to measure them")
    assert "no description for NVIDIA GH200" in costmodel.calibration_caveat("NVIDIA GH200", dict(costmodel.H100.sources))


def test_the_h100s_figures_and_predictions_are_the_reference_descriptions():
    from viz.gpu import costmodel

    h = costmodel.H100
    ref = gpus.reference()
    assert (h.sm_count, h.l2_bytes, h.max_threads_per_sm, h.shared_per_sm) == \
        (ref.sm_count, ref.l2_bytes, ref.max_threads_per_sm, ref.shared_per_sm_bytes)
    assert h.loaded_latency == costmodel.LOADED_LATENCY_H100
    assert dict(h.sources)["loaded_latency"] == costmodel.H100_CURVE_SOURCE
    assert costmodel.calibration_caveat(h.name, dict(h.sources), "9.0") is None


def test_bench_says_when_a_gpu_is_not_calibrated():
    from viz.gpu import results
    from viz.gpu.cli import format_bench

    doc = results.load()
    assert "CAVEAT" not in format_bench(doc)            # the shipped H100 file: calibrated
    doc["device"]["name"] = "NVIDIA H200"
    doc["cost_model"]["sources"] = {k: "default" for k in doc["cost_model"]["sources"]}
    doc["cost_model"]["sources"]["dram_copy_gbps"] = "measured"
    lines = format_bench(doc).splitlines()
    assert lines[1] == ("CAVEAT: NVIDIA H200 is not calibrated: 20 of 21 figures of the cost model are defaults (the "
                        "H100's); run `warpviz calibrate` on this GPU to measure them")
    doc["device"]["name"] = "Mystery GPU\n\x1b[31m"
    assert "no description for Mystery GPU" in format_bench(doc) and "\x1b" not in format_bench(doc)


def test_the_dry_run_predicts_for_the_gpu_whose_description_it_names(monkeypatch):
    from viz.gpu import tracebench

    monkeypatch.setenv(gpus.ENV, "nvidia-h200")
    gpus.active.cache_clear()
    try:
        items = tracebench.traced_launches(None)[:1]
        doc = tracebench.dry_run(items, builds={})
        assert doc["device"]["name"] == "NVIDIA H200" and "nvidia-h200" in doc["label"]
        assert doc["cost_model"]["l2_bytes"] == 60 << 20
    finally:
        gpus.active.cache_clear()


def test_the_api_analyzes_for_a_device_named_by_slug_or_name():
    import warpviz

    sc = warpviz.scenario("tma-swizzle-128b")
    assert sc.analyze(device="NVIDIA H200").metrics == sc.analyze(device="nvidia-h200").metrics == sc.analyze().metrics
    with pytest.raises(warpviz.WarpvizError, match=r"NVIDIA A100-SXM4-80GB \(sm_80\) has no tma.load accesses"):
        sc.analyze(device="nvidia-a100-sxm4-80gb")
    with pytest.raises(warpviz.WarpvizError, match=r"Analysis\(\): device names no GPU description \('Voodoo 2'"):
        sc.analyze(device="Voodoo 2")
    with pytest.raises(warpviz.WarpvizError, match=r"device must be a GPU description's slug or a GPU's name, not 3"):
        sc.analyze(device=3)


def test_a_calibrated_launch_that_touches_memory_replaces_the_empty_launch(tmp_path):
    """launch_touch_us: where a calibration has it, every launch costs it instead of the empty
    launch's launch_overhead_us; the H100's file has none and keeps the empty launch."""
    import json

    from viz.gpu import costmodel
    from viz.gpu.calibration import Calibration

    doc = json.loads(gpus.by_slug("nvidia-h200").calibration_path().read_text())
    assert doc["figures"]["launch_touch_us"]["value"] > 0      # the shipped H200 calibration measures it
    del doc["figures"]["launch_touch_us"]                       # a calibration from before it was measured
    base = costmodel.DeviceModel.from_device({"name": "NVIDIA H200", "compute_capability": "9.0"}, None,
                                             Calibration.from_json(doc, "h200.json"))
    assert base.launch_touch_s == 0.0 and "launch_touch_us" not in base.figures()
    doc["figures"]["launch_touch_us"] = {"value": 1.75, "unit": "us", "spread_pct": 0.5, "runs": 7, "how": "test"}
    dev = costmodel.DeviceModel.from_device({"name": "NVIDIA H200", "compute_capability": "9.0"}, None,
                                            Calibration.from_json(doc, "h200.json"))
    assert dev.launch_touch_s == pytest.approx(1.75e-6) and dict(dev.sources)["launch_touch_us"] == "calibration"
    w = costmodel.Workload(blocks=16, threads_per_block=256)
    assert costmodel.predict_launch(w, dev).overhead_s == pytest.approx(1.75e-6)
    assert costmodel.predict_launch(w, base).overhead_s == pytest.approx(base.launch_overhead_s)
    again = costmodel.DeviceModel.from_figures(dev.name, dev.figures())       # through a results file
    assert again.launch_touch_s == pytest.approx(1.75e-6)
    assert costmodel.H100.launch_touch_s == 0.0
