"""``warpviz validate``, ``warpviz bench`` and ``warpviz calibrate`` (registered in ``viz/cli.py``).

validate FILE_OR_NAME... | --all [--random N [--kind plain|ldmatrix]] [--seed S] [--json]
    The ten metrics, model vs Nsight Compute, per scenario. Exit 0 when every metric of
    every scenario matches, 1 on any mismatch, 2 when it cannot run (no PyCUDA, no
    driver, no device, no ncu, counters not permitted; the message says which).
bench FILE_OR_NAME... | --all [--json] [--out PATH] [--label TEXT] [--no-counters]
      [--no-kernels] [--no-sweeps]
    Times every scenario (scaled to fill the GPU), checks results, reads counters,
    times the hand-written kernels and the sweeps, and writes the versioned results
    file (``viz.gpu.results``); ``--json`` prints it.
bench --traces [TRACE_OR_LAUNCH...] [--dry-run] [--out PATH] [--json] [--label TEXT] [--no-counters]
               [--no-predict]
bench --traces --show [PATH] [--json]
    Times each trace's own launch (the shipped traces when none is named) as bench times
    a kernel, beside the cost model's prediction from the trace (``viz.gpu.tracebench``);
    writes a results file with a ``traces`` section, then Nsight Compute's bottleneck of each
    (unless --no-counters). A named trace is timed with the launch file named beside it
    (``NAME.wvtrace NAME.launch.toml``; a shipped trace: its launch file in kernels/), never
    one its header names. ``--dry-run`` needs no GPU, only nvcc: it compiles every traced
    kernel, builds its launch and predicts it. Exit 2 with the paragraph when a named launch
    does not build (the source, the kernel, its arguments). ``--show`` prints a results
    file's traced launches (the shipped H100 file by default) without a GPU.
gpu-check
    What ``pip install 'warpviz[gpu]'`` (PyCUDA, built from source) needs, checked in a second
    without a GPU (``viz.gpu.doctor``): exit 0 when PyCUDA is installed or can be built, 1 when
    a piece is missing (each says how to get it).
calibrate [--out PATH] [--json] [--quick] [--runs N] [--dry-run] [--show [PATH] [--markdown]]
    Measures this machine's GPU for the cost model (``viz.gpu.calibrate``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..argcheck import bounded_int, check_out_file
from . import GpuUnavailable
from ..errors import safe_text

MAX_RANDOM = 10_000          # validate --random N
MAX_RUNS = 100               # calibrate --runs N


def add_parsers(sub) -> None:
    va = sub.add_parser("validate", help="model vs Nsight Compute counters on this machine's GPU")
    va.add_argument("scenarios", nargs="*", metavar="FILE_OR_NAME")
    va.add_argument("--all", action="store_true", help="every built-in scenario")
    va.add_argument("--random", type=bounded_int(0, MAX_RANDOM, "--random"), default=0, metavar="N",
                    help=f"also N random scenarios (0..{MAX_RANDOM:,})")
    va.add_argument("--seed", type=bounded_int(0, 2**32 - 1, "--seed"), default=0,
                    help="the random scenarios' seed (0..4,294,967,295)")
    va.add_argument("--kinds", default="", metavar="KIND,...",
                    help="with --random: random scenarios of these access kinds (cp.async, atomic, tma.load)")
    va.add_argument("--kind", choices=["plain", "ldmatrix"], default="plain",
                    help="what the random scenarios do: plain loads and stores (default), or ldmatrix / stmatrix")
    va.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a param")
    va.add_argument("--json", action="store_true", help="print the comparison as JSON")

    sub.add_parser("gpu-check", help="what the GPU extra (PyCUDA) needs, checked before pip builds it: nvcc, "
                   "CUDA_ROOT, cuda.h, curand.h, a C++ compiler, the Python headers, libcuda")

    be = sub.add_parser("bench", help="time scenarios on this machine's GPU and write a results file")
    be.add_argument("scenarios", nargs="*", metavar="FILE_OR_NAME")
    be.add_argument("--all", action="store_true", help="every built-in scenario")
    be.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="override a param")
    be.add_argument("--json", action="store_true", help="print the results document")
    be.add_argument("--out", metavar="PATH", help="write the results file here")
    be.add_argument("--label", help="where and when it was measured (stored in the file)")
    be.add_argument("--no-counters", action="store_true", help="skip Nsight Compute")
    be.add_argument("--no-kernels", action="store_true", help="skip the hand-written kernels")
    be.add_argument("--no-sweeps", action="store_true", help="skip the sweeps")
    be.add_argument("--traces", action="store_true",
                    help="time traced launches instead: the named .wvtrace (or launch) files, else every shipped trace")
    be.add_argument("--dry-run", action="store_true",
                    help="with --traces: compile, build every launch and predict it, without a GPU")
    be.add_argument("--no-predict", action="store_true",
                    help="with --traces: time only (python -m viz.gpu.tracebench repredict FILE predicts them later)")
    be.add_argument("--show", nargs="?", const="", default=None, metavar="PATH",
                    help="with --traces: print the traced launches of a results file (the shipped H100 one by "
                         "default): measured, predicted, bound; no GPU")


def _fail(message: str) -> int:
    print(f"warpviz: {message}", file=sys.stderr)
    return 2


def _items(args) -> list:
    from ..scenario import builtin_names, load, parse_overrides

    names = list(args.scenarios)
    if args.all:
        names += builtin_names()
    overrides = parse_overrides(args.set)
    items = []
    for n in names:
        sc = load(n, overrides if overrides and not args.all else None)
        if sc.expect_error:
            continue  # a lesson in an error: the model refuses it, nothing to run
        items.append((sc.name or n, sc))
    return items


def _require(counters: bool) -> dict:
    from .front import require

    return require(counters)


def cmd_validate(args) -> int:
    from ..scenario import ScenarioError
    from .front import ValidateRequest, validate
    from .randomgen import scenarios as random_scenarios

    try:
        items = _items(args)
    except ScenarioError as err:
        return _fail(str(err))
    if args.random and args.kinds:
        from .randomkinds import KINDS, scenarios as kind_scenarios

        wanted = tuple(k.strip() for k in args.kinds.split(",") if k.strip())
        unknown = [k for k in wanted if k not in KINDS]
        if unknown:
            return _fail(f"--kinds: unknown kind {unknown[0]!r}; the kinds are {', '.join(KINDS)}")
        items += kind_scenarios(args.random, args.seed, wanted)
    elif args.random:
        items += random_scenarios(args.random, args.seed, kind=args.kind)
    if not items:
        return _fail("nothing to validate: name scenarios, or give --all or --random N")
    try:
        _require(True)
        found = validate(ValidateRequest(items))
    except GpuUnavailable as err:
        return _fail(f"cannot validate on this machine: {err.reason}")
    results = [v.raw for v in found]
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        print(format_validation(results))
    bad = [v for v in found if v.match is not True]
    return 1 if bad else 0


def add_calibrate_parser(sub) -> None:
    from .calibrate import QUICK_SETS, SETS

    ca = sub.add_parser("calibrate", help="measure this machine's GPU (bandwidths, latencies, rates) for the cost model")
    ca.add_argument("--out", metavar="PATH", help="write the calibration file here (default: assets/calibration/"
                                                  "<device>.json, where the cost model looks)")
    ca.add_argument("--json", action="store_true", help="print the calibration document")
    ca.add_argument("--quick", action="store_true", help=f"{QUICK_SETS} sets and shorter loops instead of {SETS}")
    ca.add_argument("--label", help="where and when it was measured (stored in the file)")
    ca.add_argument("--runs", type=bounded_int(1, MAX_RUNS, "--runs"), default=None, metavar="N",
                    help=f"measure in N separate GPU processes (1..{MAX_RUNS}) and keep each figure's median over all "
                         "their sets (default 3, --quick 1): some figures (the launch overhead) move by 10%% from process to "
                         "process, not within one")
    ca.add_argument("--dry-run", action="store_true", help="compile the microbenchmarks and list them; no GPU needed")
    ca.add_argument("--show", metavar="PATH", nargs="?", const="", help="print a calibration file (default: the "
                    "shipped H100's) as a table; no GPU needed")
    ca.add_argument("--markdown", action="store_true", help="with --show: a Markdown table")


def cmd_calibrate(args) -> int:
    from .calibrate import (FIGURES, RUN_SPREAD_MAX, default_path, document, dumps, format_markdown, format_table,
                            read, save, source, unstable)
    from ..toolchain.compile import CompileError

    tool = "warpviz calibrate" + (" --quick" if args.quick else "") + (f" --runs {args.runs}" if args.runs else "")
    if args.show is not None:
        from .calibration import CalibrationError

        path = Path(args.show) if args.show else default_path("NVIDIA H100 80GB HBM3")
        try:
            doc = read(path)
        except CalibrationError as err:
            print(f"warpviz: {err}", file=sys.stderr)
            return 2
        print(dumps(doc) if args.json else format_markdown(doc) if args.markdown else format_table(doc),
              end="" if args.json else "\n")
        return 0
    if args.out:
        try:
            check_out_file(args.out)
        except ValueError as err:
            return _fail(str(err))
    if args.dry_run:
        from ..toolchain.compile import compile_cubin

        try:
            cubin = compile_cubin(source())
        except (CompileError, GpuUnavailable) as err:
            print(f"warpviz: cannot compile kernels/calibrate/calibrate.cu: {err}", file=sys.stderr)
            return 2
        from ..toolchain.compile import ARCH

        print(f"kernels/calibrate/calibrate.cu compiles ({len(cubin)} bytes of {ARCH} cubin); figures:")
        for key, (unit, how) in FIGURES.items():
            print(f"  {key} [{unit}]: {how}")
        return 0
    if _refused_out(args.out):
        return _fail(_refused_out(args.out))
    try:
        from .front import CalibrateRequest, calibrate

        _require(False)
        runs = args.runs if args.runs is not None else (1 if args.quick else 3)
        if runs < 1:
            print("warpviz: --runs must be at least 1", file=sys.stderr)
            return 2

        def say(text: str) -> None:
            if not args.json:
                print(text, file=sys.stderr, flush=True)

        raw = calibrate(CalibrateRequest(quick=args.quick, runs=runs, verbose=not args.json), say)
    except GpuUnavailable as err:
        print(f"warpviz: cannot calibrate on this machine: {err.reason}", file=sys.stderr)
        return 2
    doc = document(raw, args.label, tool)
    path = Path(args.out) if args.out else default_path(doc["device"]["name"] or "gpu")
    bad = [k for k, c in doc["checks"].items() if not c["ok"]]
    shaky = unstable(doc)
    if not bad and not shaky:
        try:
            save(doc, path)
        except OSError as err:
            print(f"warpviz: cannot write {path}: {err}; give --out PATH", file=sys.stderr)
            return 2
        print(f"wrote {path}", file=sys.stderr)
    print(dumps(doc) if args.json else format_table(doc), end="\n" if not args.json else "")
    if bad or shaky:
        # An implausible or unstable calibration is not written: the cost model would take its
        # figures (docs/GPU.md, "Calibration"); the one there, if any, is left as it was.
        why = []
        if bad:
            why.append("implausible figures: " + ", ".join(f"{k} ({doc['figures'][k]['value']:g}, expected "
                                                            f"{doc['checks'][k]['expected']})" for k in bad))
        if shaky:
            why.append(f"figures whose {doc.get('runs', 1)} runs differ by more than {100 * RUN_SPREAD_MAX:.0f}%: "
                       + ", ".join(f"{k} ({sp:.1f}%)" for k, sp in shaky.items()))
        print(f"warpviz: {path} NOT written: {'; '.join(why)}. Run `warpviz calibrate` again on an idle GPU; "
              f"--json prints the measured document", file=sys.stderr)
        return 1
    return 0


def format_validation(results: list[dict]) -> str:
    out = []
    for r in results:
        head = f"{safe_text(r['label'])}: {safe_text(r['title'])}"
        if r["error"]:       # a compiler's message quotes the file (an #error line): cut, escaped
            out.append(f"{head}\n  ERROR {safe_text(r['error'], 4000, newlines=True)}")
            continue
        out.append(f"{head}  [{'all match' if r['match'] else 'MISMATCH'}]")
        for row in r["rows"]:
            hw = "-" if row["hardware"] is None else f"{row['hardware']:,}"
            out.append(f"  {row['metric']:<58} {row['model']:>12,} {hw:>12}  {'ok' if row['match'] else 'DIFFERS'}")
    n_ok = sum(1 for r in results if r["match"])
    out.append(f"\n{n_ok} of {len(results)} scenarios: model equals counters on every metric (the ten, and LDSM "
               "instructions where a scenario uses ldmatrix)")
    return "\n".join(out)


def _refused_out(path) -> str | None:
    """Why ``--out`` cannot be written, said before minutes of measurement (a FIFO, a device,
    a folder: ``viz.fileio.real_target``); None when it can be tried."""
    if not path:
        return None
    from ..fileio import WriteError, real_target

    try:
        real_target(path)
    except WriteError as err:
        return str(err)
    return None


def cmd_bench(args) -> int:
    from ..scenario import ScenarioError
    from . import results as res
    from .bench import bench

    if args.out and args.show is None:
        try:
            check_out_file(args.out)
        except ValueError as err:
            return _fail(str(err))
    if getattr(args, "traces", False):
        return cmd_bench_traces(args)
    if _refused_out(args.out):
        return _fail(_refused_out(args.out))
    try:
        items = _items(args)
    except ScenarioError as err:
        return _fail(str(err))
    if not items:
        return _fail("nothing to bench: name scenarios, or give --all")
    try:
        _require(False)
        doc = bench(items, with_counters=not args.no_counters, hand_kernels=not args.no_kernels,
                    sweeps=not args.no_sweeps, label=args.label,
                    progress=lambda f, t: print(f"[{f * 100:5.1f}%] {t}", file=sys.stderr, flush=True))
    except GpuUnavailable as err:
        return _fail(f"cannot bench on this machine: {err.reason}")
    if args.out:
        try:
            res.save(doc, args.out)
        except (res.ResultsError, OSError) as err:
            # Minutes of measurement: never lost to a check or a full disk. The document goes
            # next to --out as it is (unchecked), and the message names the problem.
            import json

            from ..fileio import write_atomic

            keep = f"{args.out}.unchecked.json"
            try:
                write_atomic(keep, json.dumps(doc, indent=1, default=str))
                where = f"the measurements are in {keep} (not checked)"
            except OSError as err2:
                where = f"and {keep} could not be written either ({err2})"
            return _fail(f"cannot write {args.out}: {err}; {where}")
        print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        print(res.dumps(doc), end="")
    else:
        print(format_bench(doc))
    return 0


def cmd_bench_traces(args) -> int:
    """``warpviz bench --traces``: see ``viz.gpu.tracebench``."""
    from . import results as res
    from .tracebench import PlainBuild, bench_traces, build_all, dry_run, format_table, traced_launches

    if args.show is not None:
        from .tracebench import SHIPPED

        path = args.show or str(res.shipped_path().with_name(SHIPPED))
        try:
            doc = res.load(path)
        except res.ResultsError as err:
            return _fail(str(err))
        if not doc.get("traces"):
            return _fail(f"{path}: no traced launches in this results file (warpviz bench --traces writes them)")
        from .tracebench import add_caveats

        add_caveats(doc)        # computed here from the entries and the shipped traces, never read from the file
        print(res.dumps(doc), end="") if args.json else print(format_table(doc))
        if not args.show and not args.json:       # the shipped file: the held-out set's accuracy apart
            from .tracebench import heldout_summary

            for line in heldout_summary():
                print(line)
        return 0
    if _refused_out(args.out):
        return _fail(_refused_out(args.out))
    from ..assets import launch_argument, trace_argument

    named = [trace_argument(a) or launch_argument(a) for a in args.scenarios] if args.scenarios else None
    items = traced_launches(named)     # files, or shipped traces' and launch files' names
    if not items:
        return _fail("nothing to time: no shipped traces and none named")
    bad = [t for t in items if t.error and args.scenarios]
    if bad:
        return _fail(bad[0].error)
    log = lambda f, t: print(f"[{f * 100:5.1f}%] {t}", file=sys.stderr, flush=True)  # noqa: E731
    if args.dry_run and args.scenarios:
        # what needs no nvcc first: a named launch whose buffers no GPU it predicts for could hold
        from .. import gpus
        from ..trace import TraceError
        from ..trace.launch import check_fits
        from .tracebench import DRY_RUN_FREE_BYTES

        gpu = gpus.active()
        free = DRY_RUN_FREE_BYTES if gpu.is_reference else int(0.98 * gpu.dram_bytes)
        try:
            for t in items:
                if t.launch is not None:
                    check_fits(t.launch, free, f"the {gpu.name} (the GPU a dry run predicts for)")
        except TraceError as err:
            return _fail(str(err))
    try:
        from ..toolchain.compile import require_nvcc

        if not args.dry_run:
            from .front import device

            device()
        require_nvcc()
        log(0.0, f"compiling {len(items)} traced kernels")
        builds = build_all(items)
        failed = [f"{t.name}: {builds[t.name]}" for t in items if t.name in builds
                  and not isinstance(builds[t.name], PlainBuild)]
        if failed and args.scenarios:
            # a launch the user named that does not build (the source, the kernel, its arguments): nothing to time
            return _fail(failed[0].split(": ", 1)[1] if len(failed) == 1 else "; ".join(failed))
        if args.dry_run:
            doc = dry_run(items, progress=log, builds=builds)
            refused = [e["error"] for e in doc["traces"].values() if e.get("error")]
            if refused and args.scenarios:      # a launch the user named that could not run (too large...)
                return _fail(refused[0] if len(refused) == 1 else "; ".join(refused))
        else:
            # written after every timed launch: a run stopped half way keeps what it measured
            doc = bench_traces(items, label=args.label, progress=log, builds=builds, save_to=args.out,
                               predict=not args.no_predict)
            if not args.no_counters:
                from .ncu import find_ncu
                from .tracebench import measure_bottlenecks

                if find_ncu():
                    log(0.99, "measuring the bottlenecks of the traced launches with Nsight Compute")
                    try:
                        n = measure_bottlenecks(doc, items, builds)
                        log(1.0, f"Nsight Compute profiled {n} traced launches")
                    except (GpuUnavailable, RuntimeError) as err:
                        doc["bottleneck_note"] = f"no bottleneck counters: {getattr(err, 'reason', None) or err}"
                        log(1.0, doc["bottleneck_note"][:300])
    except GpuUnavailable as err:
        return _fail(f"cannot {'build' if args.dry_run else 'time'} traced launches on this machine: {err.reason}")
    if args.out:
        try:
            res.save(doc, args.out)
        except (res.ResultsError, OSError) as err:      # viz.fileio.WriteError (a full disk): the paragraph names the file
            return _fail(str(err))
        print(f"wrote {args.out}", file=sys.stderr)
    if args.json:
        print(res.dumps(doc), end="")
    else:
        if args.dry_run:
            print(f"predicted for: {safe_text(doc.get('label', ''), 300)}")
        note = _calibration_note(doc)
        if note:
            print(f"CAVEAT: {note}")
        print(format_table(doc))
    broken = [t for t in items if t.error] + [t for t in items if t.name in builds
                                               and not isinstance(builds[t.name], PlainBuild)]
    if broken:              # the shipped set: every launch was tried, the table says which failed
        return _fail(f"{len(broken)} of {len(items)} traced launches could not be built or timed; the first: "
                     f"{broken[0].error or builds[broken[0].name]}")
    return 0


def _calibration_note(doc: dict) -> str | None:
    """The one-line caveat of a results file whose predictions used figures that are not its
    GPU's own (``costmodel.calibration_caveat``), cut and escaped (a file is anyone's)."""
    from .costmodel import calibration_caveat

    dev = doc.get("device") if isinstance(doc.get("device"), dict) else {}
    cm = doc.get("cost_model") if isinstance(doc.get("cost_model"), dict) else {}
    src = cm.get("sources") if isinstance(cm.get("sources"), dict) else None
    if not src:
        return None
    name = str(dev.get("name") or "this GPU")[:120]
    cc = dev.get("compute_capability")
    note = calibration_caveat(name, src, cc if isinstance(cc, str) else None)
    return safe_text(note, 600) if note else None


def format_bench(doc: dict) -> str:
    """The readable summary: per scenario time, bandwidth, share of cudaMemcpy, prediction, counters."""
    ceil = doc.get("ceiling", {}).get("memcpy_d2d", {})
    s = lambda v: safe_text(v, 120)  # noqa: E731  (a results file is anyone's: cut and escaped)
    out = [f"{s(doc['device'].get('name'))} (cc {s(doc['device'].get('compute_capability'))}, "
           f"driver {s(doc['device'].get('driver'))}), {s(doc['measured_at'])}",
           f"cudaMemcpy D2D {ceil.get('bytes', 0) >> 20} MiB: {ceil.get('gbps', 0):,.0f} GB/s"
           f" (median of {ceil.get('timing', {}).get('runs', 0)})", "",
           f"{'scenario':<28} {'median ms':>10} {'spread':>7} {'GB/s':>8} {'useful':>8} {'of cpy':>7} "
           f"{'pred ms':>9} {'ns/warp-inst':>12} {'counters':>9} {'result':>8}"]

    def row(name, e):
        t = e.get("timing") or {}
        if "error" in e and not t:
            return f"{s(name):<28} ERROR {s(e['error'][:90])}"
        frac = t.get("fraction_of_memcpy")
        pred = (t.get("predicted") or {}).get("ms")
        ctr = {True: "match", False: "DIFFER", None: "-"}[e.get("match")]
        chk = (e.get("check") or {}).get("status", "-")
        return (f"{s(name):<28} {t.get('median_ms', 0):>10.4f} {t.get('spread', 0) * 100:>6.1f}% "
                f"{t.get('gbps', 0) or 0:>8.0f} {t.get('useful_gbps', 0) or 0:>8.0f} "
                f"{'' if frac is None else f'{frac * 100:.0f}%':>7} {'' if pred is None else f'{pred:.4f}':>9} "
                f"{t.get('ns_per_warp_instruction') or 0:>12.4f} {ctr:>9} {chk[:8]:>8}")

    note = _calibration_note(doc)
    if note:
        out[1:1] = [f"CAVEAT: {note}"]
    for name, e in doc["scenarios"].items():
        out.append(row(name, e))
    if doc.get("kernels"):
        out += ["", "hand-written kernels (kernels/):"]
        for name, e in doc["kernels"].items():
            out.append(row(name, e))
    for name, sw in (doc.get("sweeps") or {}).items():
        pts = sw.get("points", [])
        out.append("")
        out.append(f"sweep {s(name)}: " + ", ".join(
            f"{s(p['label'])}: {p['median_ms']:.4f} ms (pred {p['predicted_ms']:.4f})" if p.get("predicted_ms")
            else f"{s(p['label'])}: {p['median_ms']:.4f} ms" for p in pts[:100]))
    bad = [n for n, e in doc["scenarios"].items() if e.get("match") is False]
    bad += [n for n, e in doc.get("kernels", {}).items() if e.get("match") is False]
    out.append("")
    out.append("counters differ from the model for: " + ", ".join(s(b) for b in bad[:100]) if bad else
               "counters: every compared scenario and kernel matches the model" if doc.get("counters_note", "").startswith("Nsight")
               else s(doc.get("counters_note", "")))
    return "\n".join(out)


__all__ = ["add_parsers", "cmd_validate", "cmd_bench", "cmd_bench_traces", "format_validation", "format_bench"]
