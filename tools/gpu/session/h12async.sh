#!/bin/bash
# h12async, device run 3: the TMA kernels again, now launched through cuLaunchKernel's
# kernelParams (run 2: every generated TMA kernel launched with PyCUDA's packed parameter
# buffer failed; cp.async and atomics matched on all 19 scenarios).
# Run from the repo root on the device machine:  bash tools/gpu/session/h12async.sh
# Device time: about 45 s expected, under 90 s with device_setup.sh (steps: 10 + 55 s).
# Writes under $OUT/h12async/: log.txt, launch.txt (one plain launch of each TMA built-in,
# outside the profiler, with the error if any), validate-tma.json.
# (Run 1: h12async-probe.sh; run 2: h12async-run2.sh.)
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/h12async"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
T0=$(date +%s)
step 15 python3 - > "$D/launch.txt" 2>&1 <<'PY'
from viz.scenario import load
from viz.gpu.bench import prepare
from viz.gpu.runner import Session, generated_launch, random_bytes
from viz.gpu.simulate import global_footprint
s = Session()
for p in prepare([(n, load(n)) for n in ["tma-ldmatrix-128b", "tma-swizzle-128b", "tma-swizzle-none"]]):
    try:
        s.run_once(generated_launch(p.kernel, p.cubin, 1, label=p.label), random_bytes(global_footprint(p.scenario)))
        print(p.label, "launched and finished")
    except Exception as err:
        print(p.label, "FAILED:", type(err).__name__, err)
        break
PY
cat "$D/launch.txt"
step 55 python3 -m viz.cli validate tma-swizzle-none tma-swizzle-32b tma-swizzle-64b tma-swizzle-128b tma-ldmatrix-none \
  tma-ldmatrix-128b --random 8 --seed 23 --kinds tma.load --json > "$D/validate-tma.json"
python3 - "$D/validate-tma.json" <<'PY'
import json, sys
t = open(sys.argv[1]).read()
if "[" not in t:
    print("no results")
else:
    v = json.loads(t[t.index("["):t.rindex("]") + 1])
    print("matching:", sum(r["match"] is True for r in v), "of", len(v))
    for r in v:
        bad = [(x["metric"], x["model"], x["hardware"]) for x in r["rows"] if not x["match"]]
        print(" ", r["label"], "MATCH" if r["match"] else "MISMATCH", r["error"] or "", bad)
PY
echo "h12async run 3: done in $(( $(date +%s) - T0 )) s"
ls -la "$D"
