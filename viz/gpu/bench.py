"""Validate and bench: the model against the counters, the kernels against the clock.

``validate`` compiles every scenario's generated kernel, runs them all in one Nsight
Compute session and compares the ten metrics. ``bench`` adds, per scenario, a result
check (one launch at the model's size, compared with ``viz.gpu.simulate``), a timed run
scaled to fill the GPU (``viz.gpu.plan``) with the cost model's prediction beside it,
the hand-written kernels of ``kernels/`` (checked against numpy, timed), the
device-to-device cudaMemcpy ceiling, and sweeps (pad, stride, swizzle). The result is
the measurements document of ``viz.gpu.results``.

Both take ``progress(fraction, text)`` and ``cancelled()`` callbacks for the app's worker.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import dataclass, field
from typing import Callable

from .. import __version__
from ..engine import METRIC_NAMES, Analysis, analyze
from ..scenario import Scenario, ScenarioError, loads, with_params
from . import GpuUnavailable, costmodel
from .codegen import GeneratedKernel, generate, kernel_name
from ..toolchain.compile import CompileError, compile_many
from .ncu import compare, extra_metrics, run_ncu

Progress = Callable[[float, str], None]
MAX_SCALED_WORK = 3_000_000_000   # lane-instructions beyond which a scaled run is not re-analysed


from .worker import Cancelled  # noqa: E402  (the user pressed Cancel)


def _noop(*_a, **_k):
    return False


@dataclass
class Prepared:
    """One scenario ready for the GPU: its analysis and generated kernel (or why not)."""

    label: str
    scenario: Scenario
    analysis: Analysis | None = None
    kernel: GeneratedKernel | None = None
    cubin: bytes | None = None
    error: str | None = None
    extra: dict = field(default_factory=dict)


def prepare(items: list[tuple[str, Scenario]], compile_: bool = True) -> list[Prepared]:
    """Analyse, generate and compile (in parallel) every scenario."""
    out = []
    for i, (label, sc) in enumerate(items):
        p = Prepared(label, sc)
        try:
            p.analysis = analyze(sc)
            p.kernel = generate(sc, name=kernel_name(i, label))
        except ScenarioError as err:
            p.error = f"the model refuses it: {err.problem}"
        out.append(p)
    if compile_:
        todo = [p for p in out if p.kernel is not None]
        for p, res in zip(todo, compile_many([p.kernel.source for p in todo])):
            if isinstance(res, CompileError):
                p.error = f"the generated kernel does not compile: {res.log[-800:]}"
            else:
                p.cubin = res
    return out


def counters_for(prepared: list[Prepared], hand: list | None = None, cancelled=None) -> tuple[dict, dict]:
    """One ncu session over every prepared scenario (and hand-written kernel launch spec):
    ({label: metrics}, {hand name: metrics})."""
    from .runner import generated_launch

    launches, owners = [], []
    for p in prepared:
        if p.cubin is None:
            continue
        launches.append(generated_launch(p.kernel, p.cubin, 1, label=p.label).to_json())
        owners.append(("scenario", p.label))
    for name, spec in hand or []:
        launches.append(spec.to_json())
        owners.append(("kernel", name))
    if not launches:
        return {}, {}
    extra = extra_metrics([p.analysis.metrics for p in prepared if p.cubin is not None and p.analysis is not None])
    counters, _log = run_ncu({"launches": launches}, cancelled=cancelled, metrics=METRIC_NAMES + extra)
    by_scenario, by_kernel = {}, {}
    for (kind, label), metrics in zip(owners, counters):
        if metrics is not None:
            (by_scenario if kind == "scenario" else by_kernel)[label] = metrics
    return by_scenario, by_kernel


def validate(items: list[tuple[str, Scenario]], progress: Progress = _noop, cancelled=None) -> list[dict]:
    """Model vs counters for each scenario: [{label, rows, match, error}]."""
    progress(0.0, "compiling kernels")
    prepared = prepare(items)
    progress(0.3, "running Nsight Compute")
    counters, _ = counters_for(prepared, cancelled=cancelled)
    out = []
    for p in prepared:
        d = {"label": p.label, "title": p.scenario.title, "error": p.error, "rows": [], "match": None}
        if p.analysis is not None and p.error is None:
            hw = counters.get(p.label)
            d["rows"] = [r.as_dict() for r in compare(p.analysis.metrics, hw)]
            if hw is None:
                d["error"] = "ncu reported no counters for this kernel (did it fail to launch?)"
            else:
                d["match"] = all(r["match"] for r in d["rows"])
        out.append(d)
    progress(1.0, "done")
    return out


# ---------------------------------------------------------------------------- timing


def _time_scenario(session, sc: Scenario, name: str, memcpy_gbps: float, device_model,
                   cancelled=_noop, replicas: int | None = None) -> dict:
    """Scale, generate, time; bandwidths and the cost model's prediction."""
    scale, spec = scenario_timed_launch(sc, name, session.limits(), replicas)
    unit = scale.scenario
    timing = session.time_launch(spec, scale.buffer_sets, cancelled=cancelled)
    out = {"scale": scale.as_dict(), **timing.as_dict()}
    from .predict import analysis_of, generated_resources

    an, blocks = analysis_of(unit)
    from .plan import l2_resident

    out.update(_rates(an, scale.replicas, timing.median_ms, memcpy_gbps, device_model,
                      generated_resources(unit, name), blocks,
                      resident=l2_resident(scale.launch_bytes, scale.buffer_sets, session.limits().l2_bytes)))
    return out


def scenario_timed_launch(sc: Scenario, name: str, limits, replicas: int | None = None):
    """The timed launch of a scenario: (its Scale, the LaunchSpec that ``time_launch`` runs
    over ``scale.buffer_sets`` buffer sets). The bottleneck measurement profiles the same."""
    from ..toolchain.compile import compile_cubin
    from .plan import plan_scale
    from .runner import generated_launch

    scale = plan_scale(sc, limits, replicas=replicas)
    kernel = generate(scale.scenario, name=name)
    cubin = compile_cubin(kernel.source)
    return scale, generated_launch(kernel, cubin, scale.replicas, label=name)


def hand_timed_launch(k, cubin: bytes, limits):
    """The timed launch of a kernels/ entry: (scaled scenario, LaunchSpec, buffer sets)."""
    from . import handwritten
    from .plan import DeviceLimits, plan_scale

    big = handwritten.scenario_of(k, True)
    bspec = handwritten.launch_spec(k, big, cubin)
    sets = plan_scale(big, DeviceLimits(limits.sm_count, limits.l2_bytes, limits.free_bytes), replicas=1).buffer_sets
    return big, bspec, sets


def hand_cubins() -> list[tuple]:
    """[(kernels/ manifest entry, its cubin or the CompileError)], each source file compiled
    once, all of them in parallel."""
    from . import handwritten

    ks = handwritten.manifest()
    srcs = sorted({k.file for k in ks})
    cubins = dict(zip(srcs, compile_many([handwritten.file_source(f) for f in srcs])))
    return [(k, cubins[k.file]) for k in ks]


def timed_launches(items: list[tuple[str, Scenario]], limits, hand_kernels: bool = True,
                   sweeps: bool = False) -> list[dict]:
    """Every launch that ``bench`` times, as data, without a GPU: [{"kind": "scenario" |
    "kernel" | "sweep", "label", "spec": LaunchSpec, "buffer_sets", "error"}]. Kernel names
    are the ones ``bench`` gives them, so a profile lines up with the timed entries."""
    from .plan import plan_scale

    out: list[dict] = []
    sources = []   # compile them all in parallel first (the cubin cache serves the rest)
    for i, (label, sc) in enumerate(items):
        try:
            sources.append(generate(plan_scale(sc, limits).scenario, name=kernel_name(i, label)).source)
        except (ScenarioError, ValueError):
            pass
    compile_many(sources)
    for i, (label, sc) in enumerate(items):
        try:
            scale, spec = scenario_timed_launch(sc, kernel_name(i, label), limits)
            out.append({"kind": "scenario", "label": label, "spec": spec, "buffer_sets": scale.buffer_sets})
        except (ScenarioError, CompileError, ValueError) as err:
            out.append({"kind": "scenario", "label": label, "spec": None, "error": str(err)[-400:]})
    if hand_kernels:
        for k, cub in hand_cubins():
            if isinstance(cub, CompileError):
                out.append({"kind": "kernel", "label": k.name, "spec": None, "error": cub.log[-400:]})
                continue
            _big, spec, sets = hand_timed_launch(k, cub, limits)
            spec.label = k.name
            out.append({"kind": "kernel", "label": k.name, "spec": spec, "buffer_sets": sets})
    if sweeps:
        for name, sw in SWEEPS.items():
            if "scenarios" in sw:
                continue
            base = sweep_base(sw)
            replicas = None
            for v in sw["values"]:
                sc = with_params(base, {sw["param"]: v})
                if replicas is None:
                    replicas = plan_scale(sc, limits).replicas
                kname = f"wv_sweep_{name.replace('-', '_')}_{v}"
                scale, spec = scenario_timed_launch(sc, kname, limits, replicas)
                out.append({"kind": "sweep", "label": f"{name}:{v}", "sweep": name, "value": v, "spec": spec,
                            "buffer_sets": scale.buffer_sets})
    return out


def _rates(an: Analysis, repeat: int, ms: float, memcpy_gbps: float, device_model, resources=None,
           blocks_total: int | None = None, generated: bool = True, serial_loops: bool = False,
           resident: bool = False) -> dict:
    """Bandwidths of a timed launch and the cost model's prediction of it. ``an`` covers
    one replica (or its first rows of ``blocks_total`` blocks, ``predict.analysis_of``).
    The DRAM columns (``dram_gbps``, ``fraction_of_memcpy``) need the launch's DRAM
    counters: ``results.apply_bottleneck`` fills them."""
    from .plan import gbps

    m = an.metrics
    t = costmodel.totals(m)
    f = repeat * (blocks_total or an.scenario.launch.blocks) / an.scenario.launch.blocks
    useful = round(sum(d.bytes_requested for d in an.per_access() if d.space == "global") * f)
    warp_inst = round(sum(s.warp_instructions for s in an.stats) * f)
    w = costmodel.workload(an, repeat, device_model, getattr(resources, "registers", None),
                           getattr(resources, "shared_bytes", None), blocks_total=blocks_total,
                           generated=generated, serial_loops=serial_loops, resident=resident,
                           sass_profile=getattr(resources, "sass", None))
    pred = costmodel.predict_launch(w, device_model)
    sectors = round(t["sectors"] * f)
    out = {
        "bytes_moved": sectors * 32, "bytes_requested": useful, "warp_instructions": warp_inst,
        "gbps": round(gbps(sectors * 32, ms), 2), "useful_gbps": round(gbps(useful, ms), 2),
        "ns_per_warp_instruction": round(ms * 1e6 / warp_inst, 6) if warp_inst else None,
        "fraction_of_memcpy": None, "fraction_note": "needs the DRAM counters of this launch",
        "predicted": pred.as_dict(),
    }
    if resources is not None:
        out["resources"] = resources.as_dict()
    return out


def _check_generated(session, p: Prepared) -> dict:
    from .runner import generated_launch, random_bytes
    from .simulate import check, global_footprint

    initial = random_bytes(global_footprint(p.scenario))
    result = session.run_once(generated_launch(p.kernel, p.cubin, 1, label=p.label), initial)
    return check(p.scenario, initial, result).as_dict()


SHARED_STRIDE_SWEEP = """
title = "Shared stride sweep: 256 reads of cache[tid*S] per thread"
[launch]
block = [256]
grid = [132]
[params]
S = 1
REPS = 256
[arrays.cache]
space = "shared"
type = "float"
shape = ["256*S"]
[[access]]
op = "load"
at = "cache[tid*S]"
for = { k = "0:REPS" }
"""

SWEEPS = {
    "transpose-pad": {"scenario": "transpose-tile", "param": "PAD", "values": [0, 1, 2, 3, 4]},
    "global-stride": {"scenario": "stride-2", "param": "S", "values": [1, 2, 4, 8, 16, 32]},
    "shared-stride": {"scenario": SHARED_STRIDE_SWEEP, "param": "S", "values": [1, 2, 4, 8, 16, 32, 33]},
    "transpose-swizzle": {"scenarios": ["transpose-tile", "transpose-tile-pad", "transpose-tile-xor",
                                        "transpose-tile-xor4", "transpose-tile-diagonal", "transpose-tile-bitrev",
                                        "transpose-tile-bitrev-xor", "transpose-tile-cute", "transpose-tile-lcg",
                                        "transpose-tile-lcg-norow"]},
}


def sweep_base(spec: dict) -> Scenario:
    from ..scenario import load

    s = spec["scenario"]
    return loads(s, source="<sweep>", name="sweep") if "\n" in s else load(s)


def run_sweep(session, name: str, memcpy_gbps: float, device_model, doc_scenarios: dict | None = None,
              cancelled=_noop) -> dict:
    spec = SWEEPS[name]
    points = []
    if "scenarios" in spec:
        for sname in spec["scenarios"]:
            e = (doc_scenarios or {}).get(sname, {})
            t = e.get("timing") or {}
            if "median_ms" in t:
                points.append({"value": sname, "label": sname, "median_ms": t["median_ms"],
                               "predicted_ms": (t.get("predicted") or {}).get("ms"), "model": e.get("model")})
        return {"param": "scenario", "points": points}
    from .plan import plan_scale

    base = sweep_base(spec)
    replicas = None
    for v in spec["values"]:
        if cancelled():
            raise Cancelled
        sc = with_params(base, {spec["param"]: v})
        if replicas is None:  # the same launch for every point: only the pattern changes
            replicas = plan_scale(sc, session.limits()).replicas
        t = _time_scenario(session, sc, f"wv_sweep_{name.replace('-', '_')}_{v}", memcpy_gbps, device_model,
                           cancelled, replicas)
        points.append({"value": v, "label": f"{spec['param']} = {v}", "median_ms": t["median_ms"],
                       "spread": t["spread"], "predicted_ms": (t.get("predicted") or {}).get("ms"),
                       "model": analyze(sc).metrics, "timing": t})
    return {"param": spec["param"], "scenario": spec["scenario"] if "\n" not in spec["scenario"] else "inline",
            "points": points}


def measure_bottlenecks(doc: dict, items, limits, hand_kernels: bool, memcpy_gbps: float, cancelled=_noop) -> None:
    """Nsight Compute on every timed launch (``timed_launches``), attached to the document's
    entries (``results.apply_bottleneck``)."""
    from .ncu import run_bottlenecks, summarize
    from .results import apply_bottleneck

    launches = [d for d in timed_launches(items, limits, hand_kernels) if d.get("spec") is not None]
    if not launches:
        return
    got, _log, missing = run_bottlenecks({"mode": "timed", "launches": [d["spec"].to_json() for d in launches]},
                                         cancelled=cancelled)
    for d, raw in zip(launches, got):
        entry = doc["scenarios" if d["kind"] == "scenario" else "kernels"].get(d["label"])
        if entry is not None and raw is not None:
            apply_bottleneck(entry, summarize(raw), memcpy_gbps)
    doc["bottleneck_note"] = ("Nsight Compute on each timed launch (same grid, replicas and buffer), at the "
                              "GPU's own clocks, caches flushed before each pass"
                              + (f"; metrics this ncu does not know: {', '.join(missing)}" if missing else ""))


def bench(items: list[tuple[str, Scenario]], session=None, with_counters: bool = True, hand_kernels: bool = True,
          sweeps: bool = True, label: str | None = None, progress: Progress = _noop, cancelled=_noop,
          bottlenecks: bool = True) -> dict:
    """The whole measurement (see the module docstring); returns the results document."""
    from . import handwritten
    from .plan import gbps
    from .results import mismatches, new_document
    from .runner import KernelFault
    from .worker import ProcessSession

    own = session is None
    session = session or ProcessSession()
    try:
        dev = session.info
        now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
        doc = new_document(dev, label or f"{dev['name']}, measured {now[:10]} with warpviz bench", now, __version__)
        progress(0.01, "cudaMemcpy device to device (the ceiling)")
        mt = session.time_memcpy()
        memcpy_gbps = gbps(2 * (256 << 20), mt.median_ms)
        doc["ceiling"]["memcpy_d2d"] = {"bytes": 256 << 20, "gbps": round(memcpy_gbps, 2), "timing": mt.as_dict(),
                                        "note": "read + write bytes over the median time"}
        from .runner import gpu_state

        doc["device"]["state_after_memcpy"] = gpu_state()
        peak = dev.get("peak_bandwidth_gbs") or 0
        if peak and memcpy_gbps < 0.75 * peak:
            doc["device"]["warning"] = (f"cudaMemcpy reached only {memcpy_gbps:.0f} GB/s of the "
                                        f"{peak:.0f} GB/s peak: the GPU looked throttled or shared")
        device_model = costmodel.DeviceModel.from_device(dev, memcpy_gbps)
        doc["cost_model"] = device_model.figures()
        progress(0.03, "compiling kernels")
        prepared = prepare(items)
        hand = []
        hand_specs = []
        if hand_kernels:
            for k, cub in hand_cubins():
                if isinstance(cub, CompileError):
                    hand.append((k, None, f"does not compile: {cub.log[-400:]}"))
                    continue
                sc = handwritten.scenario_of(k, False)
                spec = handwritten.launch_spec(k, sc, cub)
                spec.name = k.function
                hand.append((k, cub, None))
                hand_specs.append((k.name, spec))
        counters, kcounters = {}, {}
        if with_counters:
            progress(0.06, "reading the hardware counters with Nsight Compute")
            try:
                counters, kcounters = _counters_in_groups(prepared, hand_specs)
                doc["counters_note"] = "Nsight Compute, one launch at the scenario's own size"
            except GpuUnavailable as err:
                doc["counters_note"] = f"no counters: {err.reason}"
        n = len(prepared) + len(hand)
        for i, p in enumerate(prepared):
            if cancelled():
                raise Cancelled
            progress(0.15 + 0.6 * i / max(1, n), f"timing {p.label}")
            entry = {"title": p.scenario.title, "params": dict(p.scenario.params),
                     "launch": {"block": list(p.scenario.launch.block), "grid": list(p.scenario.launch.grid)}}
            doc["scenarios"][p.label] = entry
            if p.error:
                entry["error"] = p.error
                continue
            entry["model"] = p.analysis.metrics
            hw = counters.get(p.label)
            entry["counters"] = hw
            entry["match"] = None if hw is None else not mismatches(entry)
            entry["mismatches"] = mismatches(entry)
            try:
                entry["check"] = _check_generated(session, p)
                entry["timing"] = _time_scenario(session, p.scenario, p.kernel.name, memcpy_gbps, device_model,
                                                 cancelled)
            except KernelFault as err:
                entry["error"] = str(err)
        for j, (k, cub, err) in enumerate(hand):
            if cancelled():
                raise Cancelled
            progress(0.15 + 0.6 * (len(prepared) + j) / max(1, n), f"timing kernel {k.name}")
            entry = {"scenario": k.scenario, "file": k.file, "function": k.function}
            doc["kernels"][k.name] = entry
            if err:
                entry["error"] = err
                continue
            entry.update(_bench_hand(session, k, cub, kcounters.get(k.name), memcpy_gbps, device_model, cancelled))
        if with_counters and bottlenecks:
            progress(0.78, "measuring the bottlenecks of the timed launches with Nsight Compute")
            try:
                measure_bottlenecks(doc, items, session.limits(), hand_kernels, memcpy_gbps, cancelled)
            except (GpuUnavailable, RuntimeError) as err:
                doc["bottleneck_note"] = f"no bottleneck counters: {getattr(err, 'reason', None) or err}"
        if sweeps:
            for si, name in enumerate(SWEEPS):
                progress(0.8 + 0.18 * si / len(SWEEPS), f"sweep {name}")
                try:
                    doc["sweeps"][name] = run_sweep(session, name, memcpy_gbps, device_model, doc["scenarios"],
                                                    cancelled)
                except KernelFault as err:
                    doc["sweeps"][name] = {"error": str(err), "points": []}
        progress(1.0, "done")
        return doc
    finally:
        if own:
            session.close()


def run_one(session, label: str, sc: Scenario, memcpy_gbps: float | None = None, cancelled=_noop) -> dict:
    """One scenario on the GPU (the app's Run): model, result check, scaled timing and
    prediction; ``memcpy_gbps`` is the session's ceiling, measured here when None."""
    from .plan import gbps

    if memcpy_gbps is None:
        memcpy_gbps = gbps(2 * (256 << 20), session.time_memcpy(cancelled=cancelled).median_ms)
    p = prepare([(label, sc)])[0]
    entry = {"title": sc.title, "params": dict(sc.params), "memcpy_gbps": round(memcpy_gbps, 2),
             "launch": {"block": list(sc.launch.block), "grid": list(sc.launch.grid)}}
    if p.error:
        entry["error"] = p.error
        return entry
    entry["model"] = p.analysis.metrics
    device_model = costmodel.DeviceModel.from_device(session.info, memcpy_gbps)
    entry["check"] = _check_generated(session, p)
    entry["timing"] = _time_scenario(session, sc, p.kernel.name, memcpy_gbps, device_model, cancelled)
    return entry


def _counters_in_groups(prepared, hand_specs, group: int = 400):
    counters, kcounters = {}, {}
    for start in range(0, max(len(prepared), 1), group):
        c, k = counters_for(prepared[start:start + group], hand_specs if start == 0 else None)
        counters.update(c)
        kcounters.update(k)
    return counters, kcounters


def _bench_hand(session, k, cubin, hw, memcpy_gbps, device_model, cancelled) -> dict:
    from . import handwritten
    from .results import mismatches
    from .runner import KernelFault

    out: dict = {}
    sc = handwritten.scenario_of(k, False)
    model = analyze(sc).metrics
    out["model"] = model
    out["counters"] = hw
    out["match"] = None if hw is None else not mismatches({"model": model, "counters": hw})
    out["mismatches"] = mismatches(out)
    try:
        spec = handwritten.launch_spec(k, sc, cubin)
        before = handwritten.initial_bytes(sc)
        after = session.run_once(spec, before)
        out["check"] = handwritten.check(k, sc, before, after)
        big, bspec, sets = hand_timed_launch(k, cubin, session.limits())
        timing = session.time_launch(bspec, sets, cancelled=cancelled)
        t = {"scale": {"params": dict(k.timing.get("params", {})), "grid": list(big.launch.grid),
                       "buffer_sets": sets, "launch_global_bytes": bspec.buffer_bytes}, **timing.as_dict()}
        from .predict import analysis_of, hand_resources, serial_loops

        an, blocks = analysis_of(big)
        from .plan import l2_resident

        t.update(_rates(an, 1, timing.median_ms, memcpy_gbps, device_model, hand_resources(k, big), blocks,
                        generated=False, serial_loops=serial_loops(k),
                        resident=l2_resident(bspec.buffer_bytes, sets, session.limits().l2_bytes)))
        out["timing"] = t
    except KernelFault as err:
        out["error"] = str(err)
    return out


__all__ = ["validate", "bench", "measure_bottlenecks", "timed_launches", "run_one", "prepare", "counters_for", "Prepared", "SWEEPS", "run_sweep", "Cancelled"]
