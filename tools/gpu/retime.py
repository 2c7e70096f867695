"""Time chosen bench entries two ways on this machine's GPU, for the timing-method evidence.

    python3 tools/gpu/retime.py [--out FILE.json] NAME...

NAME is a built-in scenario (timed as `warpviz bench` times it: scaled by viz.gpu.plan)
or a hand-written kernel of kernels/manifest.toml (its name, e.g. copy_guarded or
shared_stride@shared-stride-8). Each entry is timed with the old method (each launch
between its own pair of CUDA events, queued by Python one at a time) and with today's
``Session.time_launch`` (samples of back-to-back launches queued behind a spin kernel,
scaled until the spread is under 5% or flagged noisy): new, old, new.
"""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np


def old_time_launch(session, spec, sets: int, runs: int = 200) -> dict:
    """The method warpviz used before: per-launch events, WARMUP_MS of warm-up."""
    drv = session.driver
    fn = session.prepare(spec)
    bufs = [session.alloc(spec.buffer_bytes) for _ in range(max(1, sets))]
    try:
        for k, b in enumerate(bufs):
            session.fill_random(b, spec.buffer_bytes, seed=k + 1)

        def timed(n):
            starts = [drv.event() for _ in range(n)]
            ends = [drv.event() for _ in range(n)]
            for i in range(n):
                starts[i].record()
                session.launch(fn, spec, int(bufs[i % len(bufs)]))
                ends[i].record()
            ends[-1].synchronize()
            return [starts[i].time_till(ends[i]) for i in range(n)]

        est = max(1e-3, float(np.median(timed(3))))
        extra = int(min(2000, 100.0 / est)) - 3
        if extra > 0:
            timed(extra)
        n = int(min(200, max(30, 1500.0 / est)))
        from viz.gpu.plan import Timing

        return Timing(tuple(timed(n))).as_dict()
    finally:
        for b in bufs:
            b.free()


def spec_of(session, name: str):
    from viz.gpu import handwritten
    from viz.toolchain.compile import compile_cubin
    from viz.gpu.plan import DeviceLimits, plan_scale

    lim = session.limits()
    for k in handwritten.manifest():
        if k.name == name:
            cubin = compile_cubin(handwritten.file_source(k.file))
            big = handwritten.scenario_of(k, True)
            spec = handwritten.launch_spec(k, big, cubin)
            sets = plan_scale(big, DeviceLimits(lim.sm_count, lim.l2_bytes, lim.free_bytes), replicas=1).buffer_sets
            return spec, sets, {"kind": "kernel", "grid": list(big.launch.grid), "bytes": spec.buffer_bytes}
    from viz.gpu.codegen import generate
    from viz.gpu.runner import generated_launch
    from viz.scenario import load

    sc = load(name)
    scale = plan_scale(sc, lim)
    kernel = generate(scale.scenario, name="wv_retime")
    spec = generated_launch(kernel, compile_cubin(kernel.source), scale.replicas, label=name)
    return spec, scale.buffer_sets, {"kind": "scenario", "scale": scale.as_dict()}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("names", nargs="+")
    ap.add_argument("--out")
    args = ap.parse_args()
    from viz.gpu.runner import Session, gpu_state

    session = Session()
    doc = {"device": session.info, "state_before": gpu_state(), "entries": {}}
    for name in args.names:
        t0 = time.time()
        try:
            spec, sets, what = spec_of(session, name)
            e = {**what, "sets": sets, "old": [], "new": []}
            e["new"].append(session.time_launch(spec, sets).as_dict())
            e["old"].append(old_time_launch(session, spec, sets))
            e["new"].append(session.time_launch(spec, sets).as_dict())
        except Exception as err:  # report and go on with the next entry
            e = {"error": f"{type(err).__name__}: {err}"}
        e["seconds"] = round(time.time() - t0, 2)
        doc["entries"][name] = e
        if args.out:     # after every entry: a timeout keeps what was measured
            with open(args.out, "w") as f:
                json.dump(doc, f, indent=1)
        if "error" in e:
            print(f"{name}: {e['error']}", file=sys.stderr, flush=True)
        else:
            fmt = lambda t: f"{t['median_ms']:.5f} ms ({t['spread'] * 100:.1f}%)"
            print(f"{name}: old {', '.join(fmt(t) for t in e['old'])}; new {', '.join(fmt(t) for t in e['new'])}"
                  f" [x{e['new'][-1]['launches_per_sample']}, {e['new'][-1]['attempts']} attempt(s)]", flush=True)
    doc["state_after"] = gpu_state()
    session.close()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(doc, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
