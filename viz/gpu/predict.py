"""The cost model applied to the launches ``bench`` times (no GPU: nvcc at most).

``bench`` records, for every timed entry, the scale of its launch and the compiled
kernel's registers; ``predict_entry`` rebuilds the same launch from the scenario (or the
``kernels/`` entry) and predicts it with ``viz.gpu.costmodel``. ``predict_document`` does it
for a whole results file, so the shipped predictions can be recomputed (and checked) on a
laptop, and ``accuracy`` compares them with the measured medians.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..engine import analyze
from ..scenario import Scenario
from ..work import MAX_WORK
from . import costmodel
from .plan import DeviceLimits, l2_resident, plan_scale


@dataclass(frozen=True)
class Resources:
    registers: int | None
    shared_bytes: int | None = None
    sass: dict | None = None        # the timed kernel's static SASS profile (viz.toolchain.sass.profile_of)

    def as_dict(self) -> dict:
        d = {"registers": self.registers, "shared_bytes": self.shared_bytes}
        if self.sass is not None:
            d["sass"] = self.sass
        return d


def limits_of(device: dict) -> DeviceLimits:
    return DeviceLimits(int(device.get("sm_count", 132)), int(device.get("l2_bytes", 50 << 20)))


def generated_resources(unit: Scenario, name: str) -> Resources:
    """Registers of a scenario's generated kernel (ptxas) and its SASS profile (None without
    cuobjdump), or unknown without nvcc."""
    from . import GpuUnavailable
    from .codegen import generate
    from ..toolchain.compile import CompileError, resource_usage
    from ..toolchain.sass import kernel_profile

    try:
        kernel = generate(unit, name=name)
        use = resource_usage(kernel.source).get(name) or {}
        return Resources(use.get("registers"), kernel.shared_bytes + use.get("shared_bytes", 0),
                         kernel_profile(kernel.source, name))
    except (GpuUnavailable, CompileError):
        return Resources(None, None)


def hand_resources(k, sc: Scenario) -> Resources:
    from . import GpuUnavailable, handwritten
    from ..toolchain.compile import CompileError, resource_usage
    from .plan import const_value
    from ..toolchain.sass import kernel_profile

    profile = None
    try:
        use = resource_usage(handwritten.file_source(k.file)).get(k.function) or {}
        profile = kernel_profile(handwritten.file_source(k.file), k.function)
    except (GpuUnavailable, CompileError):
        use = {}
    dyn = const_value(k.shared, dict(sc.params), f"shared of {k.name}")
    return Resources(use.get("registers"), dyn + use.get("shared_bytes", 0), profile)


ANALYSIS_LIMIT = 300_000_000   # lane-bytes (simulate.work_estimate) analysed in full; beyond, the first rows
# The analysis' work bound for the rows chosen above (viz.work): a timed launch is scaled up, so
# it may take more than a file's (the hand-written stencils' rows are near twice MAX_WORK).
PREDICT_WORK = 4 * MAX_WORK


def analysis_of(sc: Scenario):
    """(Analysis, blocks of the launch): the whole launch, or for a very large one (a
    scaled GEMM) its first rows of blocks, whose counts ``costmodel.workload`` scales up.
    Every block of such a launch does the same work (the scenario's loops do not depend
    on the block), so the first rows stand for the rest."""
    from dataclasses import replace as _replace

    from ..scenario import Launch
    from .simulate import work_estimate

    total = sc.launch.blocks
    work = work_estimate(sc)
    if work <= ANALYSIS_LIMIT:
        return analyze(sc, max_work=PREDICT_WORK), total
    gx, gy, gz = sc.launch.grid
    per_block = work / total
    keep = max(1, int(ANALYSIS_LIMIT // per_block))
    if keep >= gx:
        grid = (gx, max(1, min(gy, keep // gx)), 1)
    else:
        grid = (max(1, keep), 1, 1)
    small = _replace(sc, launch=Launch(sc.launch.block, grid))
    return analyze(small, max_work=PREDICT_WORK), total


def serial_loops(k) -> bool:
    """Whether a kernels/ function keeps its loops rolled (``#pragma unroll 1`` in its body)."""
    import re

    from . import handwritten

    src = handwritten.file_source(k.file)
    m = re.search(r"\b" + re.escape(k.function) + r"\s*\(", src)
    if not m:
        return False
    end = src.find("\n}", m.end())
    return "#pragma unroll 1" in src[m.end():end if end > 0 else None]


def predict_scenario(sc: Scenario, device: costmodel.DeviceModel, limits: DeviceLimits, name: str,
                     replicas: int | None = None, resources: Resources | None = None):
    """(Prediction, Resources) of a scenario's timed launch (``bench._time_scenario``)."""
    scale = plan_scale(sc, limits, replicas=replicas)
    unit = scale.scenario
    res = resources or generated_resources(unit, name)
    an, blocks = analysis_of(unit)
    resident = l2_resident(scale.launch_bytes, scale.buffer_sets, limits.l2_bytes)
    w = costmodel.workload(an, scale.replicas, device, res.registers, res.shared_bytes, blocks_total=blocks,
                           resident=resident, sass_profile=res.sass)
    return costmodel.predict_launch(w, device), res


def hand_resident(k, big: Scenario, limits: DeviceLimits) -> bool:
    """Whether a kernels/ entry's timed loop keeps its data in L2 (``plan.l2_resident``),
    from its launch's buffers (``handwritten.launch_bytes``) and the buffer sets the bench uses."""
    from . import handwritten

    sets = plan_scale(big, limits, replicas=1).buffer_sets
    return l2_resident(handwritten.launch_bytes(k, big), sets, limits.l2_bytes)


def predict_hand(k, device: costmodel.DeviceModel, resources: Resources | None = None,
                 limits: DeviceLimits | None = None):
    """(Prediction, Resources) of a kernels/ entry's timed launch (``bench._bench_hand``)."""
    from . import handwritten

    big = handwritten.scenario_of(k, True)
    res = resources or hand_resources(k, big)
    an, blocks = analysis_of(big)
    limits = limits or DeviceLimits(device.sm_count, device.l2_bytes)
    w = costmodel.workload(an, 1, device, res.registers, res.shared_bytes, blocks_total=blocks, generated=False,
                           serial_loops=serial_loops(k), resident=hand_resident(k, big, limits),
                           sass_profile=res.sass)
    return costmodel.predict_launch(w, device), res


def refuse_unrecorded(tr, resources: dict | None) -> None:
    """A TraceError when the traced kernel executes memory instructions a trace does not
    record (``caveats.unrecorded_memory``: ``wmma.load``/``wmma.store``, bulk copies): the
    trace lacks their traffic, so any prediction from it would be a confident number for a
    fraction of the launch (the CUDA sample's `simple_wmma_gemm`, whose loads are all
    `wmma.load`, measured 4,668 us on the H100 against 4.26 us predicted from its empty trace)."""
    from ..trace import TraceError
    from ..trace.schema import unrecorded_ran
    from .caveats import unrecorded_memory

    ops = unrecorded_memory(resources, tr.header)
    ran: dict[str, int] = {}
    for d in unrecorded_ran(tr.header) or ():      # what the trace itself says ran unrecorded
        words = str(d.get("opcode") or "").split(".")
        op = ".".join(words[:4 if words[:2] == ["cp", "reduce"] or words[:4] == ["cp", "async", "bulk", "tensor"]
                            else 3 if words[:3] == ["cp", "async", "bulk"] else 2])
        ran[op] = ran.get(op, 0) + 1
    for op, n in ran.items():                      # keyed as caveats.untimed_ptx keys them
        ops[op] = max(ops.get(op, 0), n)
    if ops:
        what = ", ".join(f"{k} ({v})" for k, v in sorted(ops.items(), key=lambda kv: (-kv[1], kv[0])))
        raise TraceError(Path(tr.path).name if tr.path else "<trace>", "", f"the kernel executes {what} (PTX), "
                         "memory instructions a trace does not record, so the cost model cannot predict it from its "
                         "trace", "time it and read Nsight Compute's counters")


def predict_trace(trace, device: costmodel.DeviceModel | None = None, resources: dict | None = None,
                  buffer_sets: int | None = None):
    """The Prediction of a traced launch (``trace``: a ``viz.trace.tracefile.Trace`` or the
    path of a .wvtrace) as ``warpviz bench --traces`` times it (over ``buffer_sets`` rotated
    buffer sets; ``plan.buffer_sets`` when None), from what the trace recorded
    (``viz.gpu.tracemodel``) and the compiled kernel's ``resources`` (``tracebench.plain_build``:
    registers, shared memory, the PTX's barriers and loops; without them, unknown registers
    and no barriers). A partial trace is predicted from its first blocks scaled to the grid,
    or refused with a TraceError that says why (``tracemodel.coverage``). No GPU, no nvcc."""
    from ..trace import tracefile
    from ..trace.analysis import analyze_trace
    from . import tracemodel

    tr = trace if isinstance(trace, tracefile.Trace) else tracefile.load(trace)
    device = device or costmodel.H100
    refuse_unrecorded(tr, resources)
    # the analysis of the blocks the model replays (tracemodel.coverage: a partial trace's first blocks)
    an = analyze_trace(tr) if tracemodel.coverage(tr).scale == 1 else None
    w = tracemodel.workload(tr, an, device, resources, buffer_sets)
    return costmodel.predict_launch(w, device)


def _res(entry: dict) -> Resources | None:
    r = (entry.get("timing") or {}).get("resources") or entry.get("resources")
    if not isinstance(r, dict):
        return None
    sass = r.get("sass")
    if sass is not None:
        from ..toolchain.sass import check_profile

        sass = check_profile(sass)
    return Resources(r.get("registers"), r.get("shared_bytes"), sass)


def device_of(doc: dict) -> costmodel.DeviceModel:
    """The device model a results file's predictions were made with (its ``cost_model``
    figures, version 2), else one from its device table, measured memcpy and calibration."""
    fig = doc.get("cost_model") or {}
    if "l2_gbps" in fig and "sm_count" in fig:
        return costmodel.DeviceModel.from_figures(doc["device"].get("name", "GPU"), fig)
    memcpy = ((doc.get("ceiling") or {}).get("memcpy_d2d") or {}).get("gbps")
    return costmodel.DeviceModel.from_device(doc["device"], memcpy)


def device_with_calibration(doc: dict, path) -> costmodel.DeviceModel:
    """The device model of a results file's device and measured memcpy with the calibration
    file at ``path`` (``CalibrationError``/``OSError``/``ValueError`` name the file), through
    the figures the file will record, so its predictions can be recomputed from it alone."""
    from .calibration import Calibration, read_json

    cal = Calibration.from_json(read_json(path), str(path))
    memcpy = ((doc.get("ceiling") or {}).get("memcpy_d2d") or {}).get("gbps")
    device = costmodel.DeviceModel.from_device(doc["device"], memcpy, cal)
    return costmodel.DeviceModel.from_figures(doc["device"].get("name", "GPU"), device.figures())


def predict_document(doc: dict, device: costmodel.DeviceModel | None = None, names=None) -> dict:
    """{(section, name): (Prediction, Resources)} for every timed entry of a results file, rebuilt from
    its scenarios and the recorded resources (compiled here when the file has none)."""
    from ..scenario import load
    from . import handwritten
    from .codegen import kernel_name

    device = device or device_of(doc)
    limits = limits_of(doc["device"])
    out = {}
    for i, (name, e) in enumerate(doc.get("scenarios", {}).items()):
        if names is not None and name not in names:
            continue
        t = e.get("timing")
        if not t or "median_ms" not in t:
            continue
        sc = load(name)
        out[("scenarios", name)] = predict_scenario(sc, device, limits, kernel_name(i, name), resources=_res(e))
    hand = {k.name: k for k in handwritten.manifest()}
    for name, e in doc.get("kernels", {}).items():
        if names is not None and name not in names:
            continue
        t = e.get("timing")
        if not t or "median_ms" not in t or name not in hand:
            continue
        out[("kernels", name)] = predict_hand(hand[name], device, _res(e), limits)
    return out


def accuracy(doc: dict, predictions: dict, within: float = 0.2) -> dict:
    """Measured / predicted per entry, and how many are within ``within``."""
    rows = []
    for (section, name), pr in predictions.items():
        p = pr[0] if isinstance(pr, tuple) else pr
        m = doc[section][name]["timing"]["median_ms"]
        rows.append({"section": section, "name": name, "measured_ms": m, "predicted_ms": round(p.ms, 6),
                     "ratio": round(m / p.ms, 4) if p.ms else None, "bound": p.bound})
    # within: |predicted - measured| <= within x measured
    ok = [r for r in rows if r["ratio"] and abs(r["predicted_ms"] - r["measured_ms"]) <= within * r["measured_ms"]]
    rows.sort(key=lambda r: -abs(r["predicted_ms"] - r["measured_ms"]) / r["measured_ms"])
    return {"entries": len(rows), "within": len(ok), "rows": rows}


__all__ = ["predict_scenario", "predict_hand", "predict_trace", "predict_document", "accuracy", "Resources"]
