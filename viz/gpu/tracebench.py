"""Traced launches on the GPU: each trace's own launch, timed as ``bench`` times a kernel, beside
the cost model's prediction made from the trace (``warpviz bench --traces``).

A trace (``viz.trace``) records one real launch: a launch file's source, kernel, block, grid
and arguments. This module runs that exact launch again with the plain kernel (the one Nsight
Compute counted when the trace was validated: the same ``nvcc -ptx`` and ``ptxas``, no
recorder), and times it with the machinery of every ``bench`` entry
(``runner.Session.time_launch``): a warm-up, launches queued behind a spin kernel so the
events hold GPU time only, samples of at least 1 ms of back-to-back launches, the median and
the spread, longer samples when the spread is 5% or more, else flagged noisy. Buffer sets are
rotated as ``bench`` rotates them (``plan.buffer_sets``: a small launch gets 8 sets, as the
small ``kernels/`` entries ``copy_guarded`` and ``reduce_tree`` in the shipped file), so a
traced launch and a ``kernels/`` entry of the same size are timed the same way. Unlike a bench
entry (random words), every set starts as the launch file's own fills (``viz.trace.record``:
the recorder's seed), so a kernel that reads indices or sizes from a buffer runs as it was
recorded.

The prediction (``viz.gpu.predict.predict_trace``) needs no GPU; the document keeps the
compiled kernel's resources (registers, shared memory, the PTX's barriers and loops) so the
shipped predictions can be rebuilt without nvcc.

Nothing here imports PyCUDA: the session is ``viz.gpu.worker.ProcessSession``.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import re
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from .. import __version__
from . import GpuUnavailable
from ..errors import safe_text

DRY_RUN_FREE_BYTES = 84_462_993_408   # the H100 80GB HBM3's free memory as measured: a dry run's launches must fit it
SHIPPED = "h100-traces.json"      # assets/measurements/: the H100's traced launches
SCALAR_KINDS = {"int": "i32", "unsigned": "u32", "float": "f32", "double": "f64", "char": "i8", "short": "i16",
                "long long": "i64", "unsigned long long": "u64"}

Progress = Callable[[float, str], None]


def _noop(*_a, **_k):
    return False


@dataclass
class PlainBuild:
    """The plain kernel of a launch file and what ptxas says about it."""

    cubin: bytes
    resources: dict          # registers, shared_bytes (static + the launch's dynamic), flow (see ptx_flow)


def ptx_flow(ptx: str, kernel: str) -> dict:
    """Where the kernel's PTX synchronises and loops, by PTX line (1-based, as the trace's
    instruction table's ``line_no``): ``barriers`` (``bar.sync`` / ``barrier.sync``) and
    ``loops`` ([label line, backward branch line] for each branch to an earlier label). The
    latency chain (``viz.gpu.tracemodel``) counts the barriers a warp passes between two of
    its recorded instructions from these, without the PTX."""
    lines = ptx.splitlines()
    start = end = None
    for i, ln in enumerate(lines):
        if re.search(r"\.entry\s+" + re.escape(kernel) + r"\b", ln):
            start = i
        elif start is not None and i > start and ln.startswith("}"):
            end = i
            break
    if start is None:
        return {"barriers": [], "loops": []}
    labels, bars, branches = {}, [], []
    for i in range(start, end if end is not None else len(lines)):
        s = lines[i].split("//")[0].strip()
        m = re.match(r"^([$\w]+):", s)
        if m:
            labels[m.group(1)] = i + 1
            continue
        if re.match(r"^(@!?%[\w$]+\s+)?(bar|barrier)(\.cta)?\.(sync|red|arrive)\b", s) or re.match(
                r"^(@!?%[\w$]+\s+)?bar\.sync\b", s):
            bars.append(i + 1)
        m = re.match(r"^(@!?%[\w$]+\s+)?bra(\.uni)?\s+([$\w]+)\s*;", s)
        if m:
            branches.append((i + 1, m.group(3)))
    loops = sorted([labels[t], ln] for ln, t in branches if t in labels and labels[t] < ln)
    return {"barriers": bars, "loops": loops}


def plain_build(launch, arch: str | None = None) -> PlainBuild:
    """Compile a launch file's source as the trace pipeline does (``viz.trace.build``: nvcc
    -ptx, then ptxas -O3 --generate-line-info) with ``ptxas -v`` for its resources. The
    cubin and the resources are cached beside the cubin cache, keyed by the PTX."""
    from ..fileio import write_atomic
    from ..cachedir import touch, trim
    from ..toolchain.compile import ARCH, cache_dir, parse_ptxas_usage
    from ..trace.build import assemble_verbose, kernel_ptx

    arch = arch or ARCH
    kp = kernel_ptx(launch, arch)           # resolved, cut down to the kernel, checked against the [[arg]] tables
    ptx, entry = kp.ptx, kp.entry
    key = hashlib.sha256((ptx + "\0" + kp.arch + "\0" + entry).encode()).hexdigest()[:32]
    cub, use = cache_dir() / f"{key}.trace.cubin", cache_dir() / f"{key}.trace.json"
    res = cubin = None
    if cub.exists() and use.exists():
        from ..fileio import ReadRefused, read_bytes_limited, read_json_limited

        touch(cub), touch(use)
        try:        # the cache is warpviz's own: a damaged entry is built again and written over
            res = read_json_limited(use, 1 << 20, "cached build")
            cubin = read_bytes_limited(cub, 256 << 20, "cached cubin")
        except ReadRefused:
            res = None
        if not isinstance(res, dict) or not isinstance(res.get("registers", 0), (int, type(None))) or \
                not isinstance(res.get("static_shared_bytes", 0), int) or not cubin.startswith(b"\x7fELF"):
            res = None
    if res is None:
        data, log = assemble_verbose(ptx, kp.arch, "plain")
        usage = parse_ptxas_usage(log).get(entry) or {}
        res = {"registers": usage.get("registers"), "static_shared_bytes": usage.get("shared_bytes", 0),
               "spill_bytes": usage.get("spill_bytes", 0), "flow": ptx_flow(ptx, entry)}
        for path, payload in ((cub, data), (use, json.dumps(res))):
            write_atomic(path, payload)
        cubin = data
        trim()                      # the compile cache's cap (viz.cachedir)
    from .caveats import untimed_ptx

    # the PTX instructions the cost model does not time (tensor-core MMA) or a trace does not
    # record (bulk copies): said beside the prediction (viz.gpu.caveats)
    res = dict(res, shared_bytes=int(res.get("static_shared_bytes") or 0) + launch.shared_bytes, entry=entry,
               untimed=untimed_ptx(ptx))
    profile = sass_profile(cubin, entry)
    if profile is not None:
        res["sass"] = profile
    return PlainBuild(cubin, res)


def sass_profile(cubin: bytes, kernel: str) -> dict | None:
    """The kernel's static SASS profile for the instruction count (``viz.toolchain.sass.profile_of``,
    where that module and cuobjdump or nvdisasm are there), else None."""
    try:
        from ..toolchain.sass import profiles_of_cubin  # noqa: PLC0415
    except ImportError:
        return None
    try:
        return (profiles_of_cubin(cubin) or {}).get(kernel)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None


def launch_spec(launch, cubin: bytes, label: str = "", entry: str | None = None):
    """The ``runner.LaunchSpec`` of a launch file's exact launch: its block, grid, dynamic
    shared memory, one buffer allocation (each buffer 256-byte aligned, as the recorder lays
    them out), its NULL pointers (``count = 0``) and its scalars. ``entry``: the kernel's PTX
    name (``PlainBuild.resources["entry"]``; default ``launch.function``)."""
    from .runner import LaunchSpec

    args = []
    for n, (a, off) in enumerate(zip(launch.args, launch.buffer_offsets()), 1):
        if a.spec is not None:              # a tensor map, pointer or struct [[arg]] (viz.trace.tensormaps)
            from ..trace import TraceError

            raise TraceError(launch.path, f"arg {n}.type", f"`bench --traces` does not time launches that take a "
                             f"{a.type} [[arg]] yet (their parameters are packed and their tensor maps encoded only "
                             "by `warpviz trace`)", "trace it with `warpviz trace` (which records and validates it)")
        if a.is_buffer and not a.is_null:
            args.append(("ptr", off))
        elif a.is_buffer:
            args.append(("u64", 0))
        else:
            args.append((SCALAR_KINDS[a.type], a.value))
    return LaunchSpec(entry or launch.function, cubin, tuple(launch.block), tuple(launch.grid), launch.shared_bytes,
                      launch.buffer_bytes, args, label or launch.name)


@dataclass
class TracedLaunch:
    """A shipped (or given) trace and the launch file it was recorded from."""

    name: str
    trace_path: Path
    launch: object | None = None       # viz.trace.launch.Launch
    launch_file: str = ""              # as shown: relative to the repository when it is in kernels/
    error: str | None = None


def _shown(path: Path) -> str:
    from .. import assets

    try:
        return str(Path("kernels") / path.resolve().relative_to(assets.kernels_dir().resolve()))
    except ValueError:
        return str(path)


def traced_launches(paths=None) -> list[TracedLaunch]:
    """The traces (and launch files) to time: the shipped traces by default, else ``paths``.

    Each trace is timed with a launch file the user names, never one its header names (a
    trace never chooses a file for warpviz to compile): ``NAME.launch.toml`` given in
    ``paths`` beside ``NAME.wvtrace`` is that trace's launch file; a shipped trace (in
    ``assets/traces``) without one uses ``kernels/**/NAME.launch.toml`` (``viz.trace.launch
    .shipped_launch_file``); any other trace alone is an error that says to name its launch
    file. The launch file must be the trace's launch (same kernel, block, grid, shared
    memory and arguments; ``same_launch``). A launch file named without a trace is timed
    alone (no prediction)."""
    from ..trace import TraceError, tracefile
    from ..trace.launch import launch_name, load_launch, same_launch, shipped_launch_file

    paths = [Path(p) for p in (paths if paths is not None else tracefile.shipped())]
    traces = {p.name[:-len(".wvtrace")] for p in paths if p.name.endswith(".wvtrace")}
    given = {launch_name(p): p for p in paths if not p.name.endswith(".wvtrace")}
    out = []
    for p in paths:
        if p.name.endswith(".wvtrace"):
            name = p.name[:-len(".wvtrace")]
        else:
            name = launch_name(p)
            if name in traces:
                continue                  # the launch file of the trace of the same name (below)
        t = TracedLaunch(name, p)
        try:
            if not p.name.endswith(".wvtrace"):
                t.launch, t.trace_path = load_launch(p), None
                t.launch_file = _shown(p)
            else:
                header = tracefile.load(p).header
                lf = given.get(name) or shipped_launch_file(p)
                if lf is None:
                    t.error = str(TraceError(p, "", "warpviz times a trace only with the launch file you name (a "
                                             "trace never names a file for warpviz to compile)",
                                             f"name its launch file too: `warpviz bench --traces {p} "
                                             f"{name}.launch.toml`"))
                else:
                    launch = load_launch(lf)
                    differs = same_launch(header, launch)
                    if differs:
                        t.error = str(TraceError(p, "", f"it was not recorded from {lf}: {differs}",
                                                 "name the launch file the trace was recorded from"))
                    else:
                        t.launch, t.launch_file = launch, _shown(lf)
        except TraceError as err:
            t.error = str(err)
        out.append(t)
    return out


def build_all(items: list[TracedLaunch], jobs: int | None = None) -> dict[str, PlainBuild | str]:
    """Plain builds of every launch, in parallel: {name: PlainBuild or the error text}."""
    from ..trace import TraceError

    def one(t: TracedLaunch):
        try:
            return plain_build(t.launch)
        except TraceError as err:
            return str(err)               # the whole paragraph: file, key, problem, fix
        except (GpuUnavailable, RuntimeError, OSError, subprocess.SubprocessError) as err:
            return str(getattr(err, "reason", None) or err)[-600:]

    todo = [t for t in items if t.launch is not None]
    with ThreadPoolExecutor(jobs or max(1, min(16, os.cpu_count() or 1))) as pool:
        return dict(zip([t.name for t in todo], pool.map(one, todo)))


def new_document(device: dict, label: str, measured_at: str) -> dict:
    """A results file (``viz.gpu.results``) holding only a ``traces`` section."""
    from .results import FORMAT, VERSION

    return {"format": FORMAT, "version": VERSION, "label": label, "measured_at": measured_at, "warpviz": __version__,
            "device": dict(device), "ceiling": {}, "scenarios": {}, "kernels": {}, "traces": {}}


def entry_prediction(entry: dict, trace_path, device_model) -> dict:
    """The prediction of one traced launch as stored in its entry (``predicted``); a
    prediction scaled from a partial trace's first blocks (``tracemodel.coverage``) keeps
    ``coverage``: {grid_blocks, recorded_blocks, used_blocks, scale}."""
    from ..trace import tracefile
    from .predict import predict_trace
    from .tracemodel import coverage

    sets = ((entry.get("timing") or {}).get("scale") or {}).get("buffer_sets")
    tr = tracefile.load(trace_path)
    pred = predict_trace(tr, device_model, resources=entry.get("resources"), buffer_sets=sets).as_dict()
    cov = coverage(tr)
    if cov.scale != 1:
        pred["coverage"] = {"grid_blocks": cov.grid_blocks, "recorded_blocks": cov.recorded_blocks,
                            "used_blocks": cov.used_blocks, "scale": round(cov.scale, 6)}
    return pred


def set_caveats(entry: dict, trace_path=None, device: str | None = None) -> list[dict]:
    """Put the caveats of a traced launch's prediction (``viz.gpu.caveats``) in its entry as
    ``caveats`` (a list of {key, text, args}; empty where none holds or there is no
    prediction), from the entry's prediction and resources and the header of the trace at
    ``trace_path`` (its PTX, its fused accesses)."""
    from ..trace import TraceError, tracefile
    from .caveats import entry_caveats

    header = None
    if trace_path is not None:
        try:
            header = tracefile.read_header(trace_path)
        except (TraceError, OSError):
            header = None
    entry["caveats"] = [c.as_dict() for c in entry_caveats(entry, header, device)]
    return entry["caveats"]


def add_caveats(doc: dict) -> dict:
    """``set_caveats`` for every traced launch of a results document (``bench --traces
    --show``): the trace is the shipped one of the entry's ``trace`` name when its kernel and
    launch are the entry's, else none is read. Returns the document."""
    from ..trace import TraceError, tracefile

    here = {p.name: p for p in tracefile.shipped()}
    device = (doc.get("device") or {}).get("name") if isinstance(doc.get("device"), dict) else None
    for e in (doc.get("traces") or {}).values():
        if not isinstance(e, dict):
            continue
        path = here.get(e.get("trace")) if isinstance(e.get("trace"), str) else None
        if path is not None:
            try:
                h = tracefile.read_header(path)
            except (TraceError, OSError):
                h = None
            launch = e.get("launch") or {}
            if h is None or h.get("kernel") != e.get("kernel") or any(
                    (h.get("launch") or {}).get(k) != launch.get(k) for k in ("block", "grid")):
                path = None
        set_caveats(e, path, device if isinstance(device, str) else None)
    return doc


def bench_traces(items: list[TracedLaunch], session=None, label: str | None = None, progress: Progress = _noop,
                 cancelled=_noop, builds: dict | None = None, memcpy: bool = True, save_to=None,
                 predict: bool = True) -> dict:
    """Time every traced launch (see the module docstring) and predict it: the results
    document with its ``traces`` section. ``session``: a ``ProcessSession`` (started here
    when None). ``save_to``: the document is written there (atomically) after every timed
    launch, so a run stopped half way keeps what it measured. ``predict``: the predictions
    follow the timings (else ``repredict`` adds them later, without a GPU)."""
    from .results import save as save_doc

    def keep():
        if save_to:
            save_doc(doc, save_to)

    import numpy as np

    from . import costmodel
    from .plan import DeviceLimits, buffer_sets, gbps
    from .runner import KernelFault
    from .worker import Cancelled, ProcessSession
    from ..trace import TraceError
    from ..trace.launch import check_fits
    from ..trace.record import host_buffer

    own = session is None
    session = session or ProcessSession()
    try:
        dev = session.info
        now = _dt.datetime.now(_dt.timezone.utc).replace(microsecond=0).isoformat()
        doc = new_document(dev, label or f"{dev['name']}, traced launches measured {now[:10]} with warpviz bench "
                                         "--traces", now)
        memcpy_gbps = None
        if memcpy:
            progress(0.01, "cudaMemcpy device to device (the ceiling)")
            mt = session.time_memcpy()
            memcpy_gbps = gbps(2 * (256 << 20), mt.median_ms)
            doc["ceiling"]["memcpy_d2d"] = {"bytes": 256 << 20, "gbps": round(memcpy_gbps, 2),
                                            "timing": mt.as_dict(), "note": "read + write bytes over the median time"}
        device_model = costmodel.DeviceModel.from_device(dev, memcpy_gbps)
        doc["cost_model"] = device_model.figures()
        progress(0.03, "compiling the traced kernels")
        builds = builds if builds is not None else build_all(items)
        limits = session.limits()
        for i, t in enumerate(items):
            if cancelled():
                raise Cancelled
            progress(0.05 + 0.93 * i / max(1, len(items)), f"timing {t.name}")
            entry: dict = {"trace": str(t.trace_path.name) if t.trace_path else None, "launch_file": t.launch_file}
            doc["traces"][t.name] = entry
            if t.error or t.launch is None:
                entry["error"] = t.error or "no launch file"
                continue
            L = t.launch
            entry.update(kernel=L.kernel, title=L.title, launch={"block": list(L.block), "grid": list(L.grid),
                                                                 "shared_bytes": L.shared_bytes,
                                                                 "args": [a.as_dict() for a in L.args]})
            b = builds.get(t.name)
            if not isinstance(b, PlainBuild):
                entry["error"] = f"does not compile: {b}"
                continue
            entry["resources"] = b.resources
            sets = buffer_sets(L.buffer_bytes, DeviceLimits(limits.sm_count, limits.l2_bytes, limits.free_bytes))
            try:
                spec = launch_spec(L, b.cubin, t.name, b.resources.get("entry"))
                check_fits(L, limits.free_bytes, f"the GPU ({dev.get('name', 'GPU 0')})")
                initial = np.asarray(host_buffer(L))        # checked against this machine's memory first
                timing = session.time_launch(spec, sets, cancelled=cancelled, initial=initial)
            except (KernelFault, TraceError) as err:
                entry["error"] = str(err)
                continue
            entry["timing"] = {"scale": {"grid": list(L.grid), "buffer_sets": sets,
                                         "launch_global_bytes": L.buffer_bytes, "fills": "the launch file's"},
                               **timing.as_dict()}
            keep()
        for t in items if predict else ():
            entry = doc["traces"][t.name]
            if "timing" not in entry or t.trace_path is None:
                continue
            progress(0.99, f"predicting {t.name}")
            try:
                entry["timing"]["predicted"] = entry_prediction(entry, t.trace_path, device_model)
                set_caveats(entry, t.trace_path, dev.get("name"))
            except Exception as err:  # the model must not lose a measurement: say why there is no prediction
                entry["timing"]["predicted_error"] = f"{type(err).__name__}: {err}"[:400]
        keep()
        progress(1.0, "done")
        return doc
    finally:
        if own:
            session.close()


def measure_bottlenecks(doc: dict, items: list[TracedLaunch], builds: dict, cancelled=None,
                        timeout: float | None = None) -> int:
    """Nsight Compute on every timed traced launch (the same plain cubin, launch and buffer
    contents; ``ncu.BOTTLENECK_SECTIONS`` and metrics, as ``bench`` measures its entries),
    attached to the document's entries (``results.apply_bottleneck``). Returns how many got
    counters."""
    from .ncu import NCU_TIMEOUT_S, run_bottlenecks, summarize
    from .results import apply_bottleneck
    from .trace_pipeline import plain_launch

    todo = [t for t in items if t.launch is not None and isinstance(builds.get(t.name), PlainBuild)
            and "timing" in (doc["traces"].get(t.name) or {})]
    if not todo:
        return 0
    memcpy = ((doc.get("ceiling") or {}).get("memcpy_d2d") or {}).get("gbps")
    with tempfile.TemporaryDirectory(prefix="warpviz-trace-ncu-") as tmp:
        # a C++ kernel is asked for by its PTX entry
        launches = [plain_launch(t.launch, builds[t.name].cubin, Path(tmp) / f"buffer-{k}.npy",
                                 builds[t.name].resources.get("entry"))
                    for k, t in enumerate(todo)]
        got, _log, missing = run_bottlenecks({"launches": launches}, timeout=timeout or NCU_TIMEOUT_S,
                                             cancelled=cancelled, driver="viz.gpu.trace_ncu_driver", launch_skip=0)
    n = 0
    for t, raw in zip(todo, got):
        if raw is not None:
            apply_bottleneck(doc["traces"][t.name], summarize(raw), memcpy)
            n += 1
    doc["bottleneck_note"] = ("Nsight Compute on each traced launch (its own grid, block and buffer contents), at "
                              "the GPU's own clocks, caches flushed before each pass"
                              + (f"; metrics this ncu does not know: {', '.join(missing)}" if missing else ""))
    return n


def dry_run(items: list[TracedLaunch], progress: Progress = _noop, builds: dict | None = None) -> dict:
    """Everything ``bench_traces`` does without a GPU: compile every traced kernel, build its
    launch (``launch_spec``, its buffers as the launch file fills them) and predict it. The
    document's entries have ``dry_run`` (the launch's arguments, buffer sets, prediction)
    where a timed one has ``timing``."""
    from . import costmodel
    from .plan import buffer_sets
    from ..trace import TraceError
    from ..trace.launch import check_fits

    from .. import gpus

    progress(0.0, f"compiling {len(items)} traced kernels")
    builds = builds if builds is not None else build_all(items)
    gpu = gpus.active()              # $WARPVIZ_GPU, else the H100: its description and calibration
    model = costmodel.for_gpu(gpu)
    free = DRY_RUN_FREE_BYTES if gpu.is_reference else int(0.98 * gpu.dram_bytes)
    doc = new_document({"name": model.name, "compute_capability": gpu.compute_capability},
                       f"dry run: nothing timed; predicted for the {model.name} (assets/gpus/{gpu.slug}.toml), "
                       f"its calibration {gpu.calibration or 'none'}", "")
    doc["cost_model"] = model.figures()
    for i, t in enumerate(items):
        progress(0.5 + 0.5 * i / max(1, len(items)), f"building and predicting {t.name}")
        entry: dict = {"trace": t.trace_path.name if t.trace_path else None, "launch_file": t.launch_file}
        doc["traces"][t.name] = entry
        if t.error or t.launch is None:
            entry["error"] = t.error or "no launch file"
            continue
        b = builds.get(t.name)
        if not isinstance(b, PlainBuild):
            entry["error"] = f"does not compile: {b}"
            continue
        entry["resources"] = b.resources
        try:        # nothing is allocated: the buffers are checked against the GPU the run predicts for
            spec = launch_spec(t.launch, b.cubin, t.name, b.resources.get("entry"))
            check_fits(t.launch, free, f"the {model.name} (the GPU a dry run predicts for)")
        except TraceError as err:
            entry["error"] = str(err)
            continue
        entry["dry_run"] = {"args": [list(a) for a in spec.args], "arg_format": spec.arg_format,
                            "buffer_bytes": int(t.launch.buffer_bytes),
                            "buffer_sets": buffer_sets(t.launch.buffer_bytes),
                            "cubin_bytes": len(b.cubin)}
        if t.trace_path is not None:
            try:
                entry["dry_run"]["predicted"] = entry_prediction(entry, t.trace_path, model)
                set_caveats(entry, t.trace_path, model.name)
            except TraceError as err:       # too large for the cost model, or changed since it was read
                entry["dry_run"]["predicted_error"] = str(err)
    progress(1.0, "done")
    return doc


def repredict(doc: dict, device_model=None, names=None) -> dict:
    """Recompute every traced launch's prediction of a results document in place (no GPU, no
    nvcc: the recorded resources and the shipped traces); returns the document."""
    from ..trace import tracefile
    from .predict import device_of

    device_model = device_model or device_of(doc)
    here = {p.name: p for p in tracefile.shipped()}
    for name, e in (doc.get("traces") or {}).items():
        if names is not None and name not in names:
            continue
        t = e.get("timing")
        if not t or e.get("trace") not in here:
            continue
        from ..trace import TraceError

        try:
            t["predicted"] = entry_prediction(e, here[e["trace"]], device_model)
        except TraceError as err:       # the model cannot predict it (and says why), as bench records it
            t.pop("predicted", None)
            t["predicted_error"] = f"{type(err).__name__}: {err}"[:400]
            continue
        t.pop("predicted_error", None)
        set_caveats(e, here[e["trace"]], device_model.name)
    return doc


def refresh_resources(doc: dict, log=print) -> int:
    """Compile every traced launch of a results file here (``plain_build``: nvcc; the SASS
    profile where ``viz.toolchain.sass`` and cuobjdump are there) and replace its recorded
    resources; a register count that differs from the recorded one (another nvcc) is said.
    Returns how many entries were refreshed."""
    from ..trace import tracefile

    here = {p.name: p for p in tracefile.shipped()}
    names = [n for n, e in (doc.get("traces") or {}).items() if e.get("trace") in here]
    items = {t.name: t for t in traced_launches([here[doc["traces"][n]["trace"]] for n in names])}
    builds = build_all([t for t in items.values() if t.launch is not None])
    n = 0
    for name in names:
        b = builds.get(name)
        if not isinstance(b, PlainBuild):
            log(f"{name}: not refreshed ({b or items[name].error})")
            continue
        old = doc["traces"][name].get("resources") or {}
        if old.get("registers") not in (None, b.resources.get("registers")):
            log(f"{name}: {b.resources.get('registers')} registers here, {old.get('registers')} recorded")
        doc["traces"][name]["resources"] = b.resources
        n += 1
    return n


def accuracy(doc: dict, within: float = 0.2) -> dict:
    """Measured / predicted per traced launch, worst first, and how many are within ``within``."""
    rows = []
    for name, e in (doc.get("traces") or {}).items():
        t = e.get("timing") or {}
        p = t.get("predicted") or {}
        if "median_ms" not in t or not p.get("ms"):
            continue
        m = t["median_ms"]
        rows.append({"name": name, "measured_ms": m, "predicted_ms": p["ms"], "ratio": round(m / p["ms"], 4),
                     "bound": p.get("bound"), "spread": t.get("spread"), "noisy": t.get("noisy", False),
                     "within": abs(p["ms"] - m) <= within * m})
    rows.sort(key=lambda r: -abs(r["predicted_ms"] - r["measured_ms"]) / r["measured_ms"])
    return {"entries": len(rows), "within": sum(r["within"] for r in rows), "rows": rows}


def caveat_lines(e: dict) -> list[str]:
    """The "caveat:" lines of a traced launch's entry (its ``caveats``, each read back with
    ``caveats.from_dict``: the text is the template's, never the file's), indented under it."""
    from .caveats import from_dict

    listed = e.get("caveats") if isinstance(e.get("caveats"), list) else []
    got = [from_dict(c) for c in listed]
    return [f"{'':<4}caveat: {c.text()}" for c in got if c is not None]


def heldout_summary(folder: Path | None = None) -> list[str]:
    """One line per held-out results file (``h100-heldout-*.json`` beside the shipped one:
    real kernels the model was never tuned on, predicted before they were timed): how many
    of its launches are within 20% and the worst predicted / measured, apart from the
    shipped traced launches' count."""
    from . import results as res

    folder = folder or res.shipped_path().parent
    out = []
    for path in sorted(folder.glob("h100-heldout-*.json")):
        try:
            doc = res.load(path)
        except res.ResultsError as err:
            out.append(f"held-out kernels: {err}")
            continue
        acc = accuracy(doc)
        timed = [e for e in (doc.get("traces") or {}).values() if "median_ms" in (e.get("timing") or {})]
        if not acc["entries"]:
            if timed:
                why = next((e["timing"].get("predicted_error") for e in timed if e["timing"].get("predicted_error")), "")
                out.append(f"held-out real kernels ({path.name}): none of its {len(timed)} timed launches predicted"
                           + (f" ({why.removeprefix('TraceError: ')})" if why else ""))
            continue
        if len(timed) > acc["entries"]:
            out.append(f"held-out real kernels ({path.name}): {len(timed) - acc['entries']} of its timed launches "
                       "not predicted (the model says why: `warpviz bench --traces --show` of the file)")
        worst = max(acc["rows"], key=lambda r: max(r["ratio"], 1 / r["ratio"]))
        off = worst["predicted_ms"] / worst["measured_ms"]
        out.append(f"held-out real kernels (never tuned on, predicted before timing; {path.name}): "
                   f"{acc['within']} of {acc['entries']} within 20%, worst predicted/measured {off:.2f} "
                   f"({worst['name']}); `warpviz bench --traces --show {path}` lists them")
    return out


def format_table(doc: dict) -> str:
    """The CLI's table: per traced launch, measured and predicted time, the bound and its share;
    under a launch, a "caveat:" line for each of its caveats (``viz.gpu.caveats``)."""
    acc = accuracy(doc)
    out = [f"{'traced launch':<34} {'measured us':>11} {'spread':>7} {'predicted us':>12} {'meas/pred':>9}  bound"]
    by = {r["name"]: r for r in acc["rows"]}
    s = safe_text     # a results file is anyone's: each of its texts cut and escaped (viz.errors)
    for name, e in (doc.get("traces") or {}).items():
        dry = (e.get("dry_run") or {}).get("predicted")
        shown = s(name)
        if name not in by and dry:
            out.append(f"{shown:<34} {'(dry run)':>11} {'':>7} {dry['ms'] * 1e3:>12.3f} {'':>9}  "
                       f"{s(dry.get('explain', ''))}")
            out += caveat_lines(e)
            continue
        t = e.get("timing") or {}
        if name not in by and "median_ms" in t:
            why = t.get("predicted_error") or "not predicted yet (python -m viz.gpu.tracebench repredict FILE)"
            out.append(f"{shown:<34} {t['median_ms'] * 1e3:>11.3f} {100 * t.get('spread', 0):>6.1f}% {'':>12} "
                       f"{'':>9}  {s(why, 150)}")
            continue
        if name not in by:
            out.append(f"{shown:<34} {s(e.get('error') or 'not timed', 120)}")
            continue
        r = by[name]
        p = e["timing"]["predicted"]
        flag = " noisy" if r["noisy"] else ""
        out.append(f"{shown:<34} {r['measured_ms'] * 1e3:>11.3f} {100 * (r['spread'] or 0):>6.1f}% "
                   f"{r['predicted_ms'] * 1e3:>12.3f} {r['ratio']:>9.2f}  {s(p.get('explain', r['bound']))}{flag}")
        out += caveat_lines(e)
    out.append(f"{acc['within']} of {acc['entries']} traced launches predicted within 20% of the measured median")
    return "\n".join(out)


__all__ = ["bench_traces", "dry_run", "set_caveats", "add_caveats", "caveat_lines", "measure_bottlenecks", "markdown_table", "main", "refresh_resources",
           "sass_profile", "traced_launches", "plain_build", "launch_spec", "ptx_flow", "repredict", "accuracy",
           "format_table", "SHIPPED", "TracedLaunch", "PlainBuild"]


def markdown_table(doc: dict) -> str:
    """The docs' table (docs/GPU.md, "Traced launches"): per traced launch, measured median and
    spread, prediction, measured/predicted, the predicted bound and Nsight Compute's busiest unit."""
    acc = accuracy(doc)
    by = {r["name"]: r for r in acc["rows"]}
    out = ["| traced launch | grid x block | measured µs (spread) | predicted µs | measured / predicted | "
           "predicted bound | measured (Nsight Compute) |", "|---|---|---:|---:|---:|---|---|"]
    for name, e in (doc.get("traces") or {}).items():
        if name not in by:
            out.append(f"| `{name}` | | {e.get('error', 'not timed')[:80]} | | | | |")
            continue
        r, t = by[name], e["timing"]
        p = t["predicted"]
        L = e.get("launch") or {}
        dims = lambda v: "x".join(str(x) for x in v if x != 1) or "1"  # noqa: E731
        b = (e.get("bottleneck") or {}).get("bound") or {}
        meas = f"{b['unit']} {b['pct_of_peak']:.0f}%" if b else ""
        mark = "" if r["within"] else " **"
        out.append(f"| `{name}` | {dims(L.get('grid', []))} x {dims(L.get('block', []))} | "
                   f"{r['measured_ms'] * 1e3:.2f} ({100 * (r['spread'] or 0):.1f}%{', noisy' if r['noisy'] else ''}) | "
                   f"{r['predicted_ms'] * 1e3:.2f} | {r['ratio']:.2f}{mark} | {p['bound']} | {meas} |")
    out.append("")
    out.append(f"{acc['within']} of {acc['entries']} within 20% (** outside).")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    """``python -m viz.gpu.tracebench repredict FILE [--out PATH]`` (recompute the traces'
    predictions with the model as it is now: after a cost-model change, the shipped file's
    predictions follow) | ``resources FILE [--out PATH]`` (compile here, refresh the recorded
    resources, then repredict) | ``table FILE [--markdown]``."""
    import argparse
    import sys

    from . import results

    ap = argparse.ArgumentParser(prog="python -m viz.gpu.tracebench")
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("repredict", help="recompute the traced launches' predictions of a results file")
    r.add_argument("file")
    r.add_argument("--out", help="write here (default: over FILE, atomically)")
    r.add_argument("--calibration", metavar="FILE", help="predict with this calibration (recorded in the file's "
                                                         "cost_model) instead of the figures the file records")
    c = sub.add_parser("resources", help="compile every traced kernel of a results file here and refresh its "
                                         "resources (the SASS profile where viz.toolchain.sass and cuobjdump are there), "
                                         "then recompute the predictions")
    c.add_argument("file")
    c.add_argument("--out", help="write here (default: over FILE, atomically)")
    bo = sub.add_parser("bottlenecks", help="Nsight Compute on the timed traced launches of a results file, in "
                                            "batches, the file saved after each (needs a GPU and ncu)")
    bo.add_argument("file")
    from ..argcheck import bounded_float, bounded_int

    bo.add_argument("--batch", type=bounded_int(1, 10_000, "--batch"), default=20,
                    help="launches per ncu process, 1..10000 (default 20)")
    bo.add_argument("--budget", type=bounded_float(0, 10**7, "--budget"), default=0.0, metavar="S",
                    help="start no new batch after S seconds, 0..10,000,000 (0: no limit)")
    t = sub.add_parser("table", help="print the traced launches' table")
    t.add_argument("file")
    t.add_argument("--markdown", action="store_true")
    a = ap.parse_args(argv)
    try:
        doc = results.load(a.file)
    except results.ResultsError as err:
        print(f"warpviz: {err}", file=sys.stderr)
        return 2
    if a.cmd == "bottlenecks":
        import time

        t0 = time.monotonic()
        from ..trace import tracefile

        here = {p.name: p for p in tracefile.shipped()}
        timed = [n for n, e in doc.get("traces", {}).items() if "timing" in e and e.get("trace") in here
                 and "bottleneck" not in e]
        # the launches whose measured time is furthest from the launch overhead first: the ones a
        # short budget should explain (the others are mostly the launch itself)
        timed.sort(key=lambda n: -doc["traces"][n]["timing"]["median_ms"])
        items = traced_launches([here[doc["traces"][n]["trace"]] for n in timed])
        builds = build_all(items)
        done = 0
        for k in range(0, len(items), max(1, a.batch)):
            if a.budget and time.monotonic() - t0 > a.budget:
                print(f"stopped after {done} launches: the budget of {a.budget:.0f} s is spent", file=sys.stderr)
                break
            batch = items[k:k + max(1, a.batch)]
            try:
                done += measure_bottlenecks(doc, batch, builds)
            except (GpuUnavailable, RuntimeError) as err:
                print(f"warpviz: Nsight Compute: {getattr(err, 'reason', None) or str(err)[:400]}", file=sys.stderr)
                break
            results.save(doc, a.file)
            print(f"[{time.monotonic() - t0:5.1f} s] Nsight Compute profiled {done} of {len(items)}", file=sys.stderr)
        return 0
    if a.cmd == "resources":
        changed = refresh_resources(doc, log=lambda m: print(m, file=sys.stderr))
        repredict(doc)
        results.save(doc, a.out or a.file)
        acc = accuracy(doc)
        print(f"wrote {a.out or a.file}: resources of {changed} traced launches refreshed; "
              f"{acc['within']} of {acc['entries']} within 20%")
        return 0
    if a.cmd == "repredict":
        device = None
        if a.calibration:
            from .calibration import CalibrationError
            from .predict import device_with_calibration

            try:
                device = device_with_calibration(doc, a.calibration)
            except (OSError, ValueError, CalibrationError) as err:
                print(f"warpviz: {a.calibration}: {err}", file=sys.stderr)
                return 2
            doc["cost_model"] = device.figures()
        repredict(doc, device)
        results.save(doc, a.out or a.file)
        acc = accuracy(doc)
        print(f"wrote {a.out or a.file}: {acc['within']} of {acc['entries']} traced launches within 20%")
        return 0
    print(markdown_table(doc) if a.markdown else format_table(doc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
