#!/bin/bash
# h11kern (issue 11, kernel side): one device call, run from the repo root on the device machine:
#   bash tools/gpu/session/h11kern.sh
# Expected run time: about 3 minutes (setup 10-20 s with the carried PyCUDA build; SASS of the
# ldmatrix_cpasync variants ~25 s; 6 traces with --validate ~8 s each ~50 s; extra Nsight
# Compute counters ~40 s; gpu tests ~60 s). Every step has its own `timeout`.
# Writes under $OUT/h11kern/: log.txt; sass_variants.json + sass/*.sass (which PTX instruction
# gives the `@!PT LDS RZ, [RZ]`); traces/NAME.wvtrace + NAME.json + NAME.err per launch (to ship
# in assets/traces/); summary.txt; ncu_extra.json + ncu_metric_names.txt (stmatrix, LDSM,
# LDGSTS counters); pytest-gpu.txt + pytest-gpu.xml.
set -u
OUT=${OUT:-/tmp/wv-out}; R="$OUT/h11kern"; mkdir -p "$R/traces"
exec > >(tee -a "$R/log.txt") 2>&1
T0=$(date +%s)
source tools/gpu/device_setup.sh
nvidia-smi --query-gpu=name,driver_version,memory.total,memory.used --format=csv,noheader
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }

# 1. SASS of the ldmatrix_cpasync variants (no GPU needed; nvcc, ptxas, cuobjdump)
step 90 python3 tools/gpu/session/h11kern/sass_variants.py "$R"

# 2. trace --validate of the new test kernels and of ldmatrix_cpasync
W="$R/traces"
for n in softmax_row particles_aos28 particles_aos32 cpasync_double stmatrix_frag ldmatrix_cpasync; do
  t0=$(date +%s)
  timeout 60 python3 -m viz.cli trace "kernels/trace/$n.launch.toml" --validate --json --out "$W/$n.wvtrace" \
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
PY
done

# 3. Nsight Compute counters outside the ten (STSM? LDSM, LDGSTS) and the variants' shared loads
step 150 python3 tools/gpu/session/h11kern/ncu_extra.py "$R"

# 4. the gpu tests of this task (oversized buffers, faults in cp.async/stmatrix kernels, validate)
# (step 2 already validated every new launch; the test validates cpasync_double and checks its events)
step 200 python3 -m pytest -m gpu -q -p no:cacheprovider -rA tests/test_trace_kernels.py -k "not validate_on or cpasync" \
  --junitxml="$R/pytest-gpu.xml" > "$R/pytest-gpu.txt" 2>&1
tail -30 "$R/pytest-gpu.txt"
echo "h11kern: total $(( $(date +%s) - T0 )) s"
ls -la "$R" "$W"
