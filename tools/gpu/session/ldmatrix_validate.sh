#!/bin/bash
# `warpviz validate` of the ldmatrix / stmatrix built-ins and of random ldmatrix scenarios
# (and a few plain ones, to see nothing else moved), on the H100, and whether a misaligned row
# address faults. Made the `validate` part of assets/measurements/h100-ldmatrix-2026-11-23.json.
# Run from the repo root on the device machine:   bash tools/gpu/session/ldmatrix_validate.sh
# Total run time: about 60-80 s (device_setup ~20-30 s, then the steps below under `timeout`,
# capped together at BUDGET=100 s); well under the 150 s this run may take.
# Results under $OUT/ldmatrix_validate/: validate-builtins.json, validate-random.json,
# validate-plain.json (warpviz validate --json), sass.txt (the SASS of the built-ins'
# kernels: LDSM / STSM), misaligned.txt (does a misaligned row address fault?), log.txt.
# (The probe that measured the rule is tools/gpu/session/ldmatrix_probe.sh.)
source tools/gpu/device_setup.sh
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/ldmatrix_validate"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
exec 3>&1
T0=$(date +%s); BUDGET=100
step() {
  local limit=$1; shift
  local left=$(( BUDGET - ($(date +%s) - T0) ))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 3 ]; then echo "=== SKIPPED (budget spent): $*" >&3; return 124; fi
  echo "=== $* (limit ${limit}s)" >&3; local t=$(date +%s)
  timeout "$limit" "$@"; local rc=$?
  echo "=== rc=$rc in $(( $(date +%s) - t )) s" >&3; return $rc
}
summary() {  # FILE: how many scenarios match, and every row that differs
  python3 - "$1" <<'PY'
import json, sys
try:
    v = json.load(open(sys.argv[1]))
except Exception as err:  # noqa: BLE001
    print(f"{sys.argv[1]}: unreadable ({err})"); sys.exit(0)
print(f"{sys.argv[1].rsplit('/', 1)[-1]}: {sum(r['match'] is True for r in v)} of {len(v)} scenarios match on every metric")
for r in v:
    if r["error"]:
        print(f"  {r['label']}: ERROR {r['error'][:300]}")
    for x in r["rows"]:
        if not x["match"]:
            print(f"  {r['label']}: {x['metric']} model {x['model']} hardware {x['hardware']}")
PY
}
step 45 python3 -m viz.cli validate ldmatrix-x4-tile ldmatrix-x4-tile-sw128 stmatrix-accumulator \
    stmatrix-accumulator-pad --json > "$D/validate-builtins.json" 2> "$D/validate-builtins.err"
summary "$D/validate-builtins.json"
step 60 python3 -m viz.cli validate --random 60 --kind ldmatrix --seed 2 --json > "$D/validate-random.json" \
    2> "$D/validate-random.err"
summary "$D/validate-random.json"
step 20 python3 - > "$D/sass.txt" 2>&1 <<'PY'
from viz.scenario import load
from viz.gpu.codegen import generate
from viz.toolchain.compile import compile_cubin, sass_memory_instructions
for n in ["ldmatrix-x4-tile", "stmatrix-accumulator"]:
    print("==", n)
    print("\n".join(sass_memory_instructions(compile_cubin(generate(load(n)).source)) or ["(no cuobjdump)"]))
PY
grep -E "==|LDSM|STSM" "$D/sass.txt" | head -12
# Misaligned row addresses: does the GPU fault (as warpviz's refusal says)? One process each.
if step 30 nvcc -O3 -arch=sm_90a -o /tmp/ldmatrix_misaligned tools/gpu/session/ldmatrix_misaligned.cu; then
  for mode in 0 1 2 3; do step 10 /tmp/ldmatrix_misaligned $mode; done > "$D/misaligned.txt" 2>&1
  cat "$D/misaligned.txt"
fi
step 40 python3 -m viz.cli validate coalesced transpose-tile-pad vector-int4 cute-sw128-tile --random 8 --seed 5 \
    --json > "$D/validate-plain.json" 2> "$D/validate-plain.err"
summary "$D/validate-plain.json"
echo "total $(( $(date +%s) - T0 )) s after setup"
ls -la "$D"
