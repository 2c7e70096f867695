#!/bin/bash
# Records the test kernels of kernels/trace/ with --validate (the shipped traces in
# assets/traces/, docs/GPU.md "More test kernels") and runs the -m gpu tests for bad input.
# Run from the repo root on the device machine:
#   bash tools/gpu/session/trace_test_kernels.sh
# Expected run time: about 90 s (budget 150 s): setup 10-20 s with the carried PyCUDA build;
# 3 traces with --validate, ~12 s each; the gpu tests for bad input (buffers over the GPU's
# memory, a faulting cp.async, a faulting stmatrix) ~35 s. Every step has its own `timeout`.
# Writes under $OUT/trace_test_kernels/: log.txt; summary.txt; traces/NAME.wvtrace + NAME.json + NAME.err
# (to ship in assets/traces/); pytest-gpu.txt + pytest-gpu.xml.
set -u
OUT=${OUT:-/tmp/wv-out}; R="$OUT/trace_test_kernels"; mkdir -p "$R/traces"
exec > >(tee -a "$R/log.txt") 2>&1
T0=$(date +%s)
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }

# 1. trace --validate: cpasync_double (skip records for predicated-off LDGSTS), stmatrix_frag
#    (now with the STSM counter), softmax_warp (new)
W="$R/traces"
for n in cpasync_double stmatrix_frag softmax_warp; do
  t0=$(date +%s)
  timeout 40 python3 -m viz.cli trace "kernels/trace/$n.launch.toml" --validate --json --out "$W/$n.wvtrace" \
    > "$W/$n.json" 2> "$W/$n.err"
  rc=$?
  python3 - "$W/$n.json" "$n" "$rc" "$(( $(date +%s) - t0 ))" <<'PY' | tee -a "$R/summary.txt"
import json, sys
path, name, rc, secs = sys.argv[1:]
try:
    d = json.load(open(path))
except Exception:
    print(f"{name}: rc={rc} ({secs} s) no JSON:", open(path.replace('.json', '.err')).read()[-800:]); sys.exit()
v = d.get("validation", {})
print(f"{name}: rc={rc} ({secs} s) records={d['trace']['records']} complete={d['trace']['complete']} match={v.get('match')}")
g = v.get("sass_guard") or {}
if g.get("problems"): print("    SASS guard:", g["problems"])
if g.get("note"): print("    note:", g["note"][:120])
for r in v.get("rows", []):
    print(f"    {'  ' if r['match'] else '!!'} {r['metric']}: trace {r['model']} ncu {r['hardware']}")
for r in v.get("other", []):
    print(f"    other {r['metric']}: trace {r['model']} ncu {r['hardware']} {'ok' if r['match'] else 'DIFFERS'}")
print("    events:", d["trace"].get("events"))
PY
done

# 2. the gpu tests for bad input (the validate test is step 1's work: not repeated)
step 80 python3 -m pytest -m gpu -q -p no:cacheprovider -rA tests/test_trace_kernels.py -k "fault or over_the" \
  --junitxml="$R/pytest-gpu.xml" > "$R/pytest-gpu.txt" 2>&1
tail -40 "$R/pytest-gpu.txt"
echo "trace_test_kernels: total $(( $(date +%s) - T0 )) s"
ls -la "$R" "$W"
