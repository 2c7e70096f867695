#!/bin/bash
# Atomics on the H100, measured with Nsight Compute (run from the repo root on the device
# machine):
#   1. the probe: tools/probes/atomics.cu, one warp and one atomic instruction per case
#      (205 cases): shared ATOMS.ADD (atom and red), ATOMS.POPC.INC (atomicAdd(p, 1) with the
#      result unused) and the single-lane ATOMS ptxas makes of an atomicAdd on a uniform
#      address; global RED and ATOM of 4 and 8 bytes (u32, u64, f32, f64) with the same,
#      consecutive, strided and colliding addresses, full and partial warps; counters minus
#      the same kernel with no active lane, printed beside warpviz's model;
#   2. `warpviz validate` of the atomics validate cases (tools/gpu/atomic_cases, 21 scenarios)
#      and the two histogram built-ins: the model's counters against Nsight Compute's.
#
# With the device tool: command "bash tools/probes/atomics.sh", carry [".gpu-wheels"]
# (made here once by tools/gpu/fetch_wheels.sh). About 3 to 4 minutes (PyCUDA is built the
# first time, ~2 min, for step 2; step 1 needs only nvcc and ncu). Writes under
# $OUT/atomics/: log.txt, query-metrics.txt, metrics.txt, cases.json, ncu-*.csv, sass.txt
# (the probe's atomic instructions), results.json (cases + counters + model) and
# validate.json. Expected: "atomics: 205 cases, N equal to the model" (the global
# sector counts and 8-byte atomics are what the run is for) and validate exit 0.
# --dry: no GPU, no setup: compiles the probe kernels, writes the cases and runs the metric
# choice and the model's recheck on made-up counters; what the tests run.
if [ "${1:-}" = --dry ]; then
  set -e; PY=${PYTHON:-python3}; DRY=$(mktemp -d); trap 'rm -rf "$DRY"' EXIT
  if command -v nvcc > /dev/null; then
    nvcc -arch=sm_90 -O3 -std=c++17 -cubin -o "$DRY/probe.cubin" tools/probes/atomics.cu
    echo "dry: probe kernels compiled, $(stat -c %s "$DRY/probe.cubin") bytes of cubin"
  else
    echo "dry: no nvcc here, probe kernels not compiled"
  fi
  "$PY" tools/probes/atomics.py --dry "$DRY" | tail -1
  exit 0
fi
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/atomics"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
PY=tools/probes/atomics.py
BIN=/tmp/atomics_probe
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
echo "ncu: $NCU"; "$NCU" --version | tail -1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

step 30 nvcc -arch=sm_90 -O3 -std=c++17 -o "$BIN" tools/probes/atomics.cu
cuobjdump -sass "$BIN" | grep -E "Function|ATOM|RED" > "$D/sass.txt"
Q="'$NCU' --query-metrics"
step 30 bash -c "$Q --query-metrics-mode all --chip gh100 > '$D/query-metrics.txt' 2>&1 || $Q > '$D/query-metrics.txt' 2>&1"
grep -iE 'atom|_red' "$D/query-metrics.txt" | sort -u > "$D/query-atomics.txt"; wc -l "$D/query-atomics.txt"
python3 $PY metrics "$D/query-metrics.txt" "$D/metrics.txt"
step 10 python3 $PY cases /tmp/atomics_cases.txt "$D/cases.json"
step 15 "$BIN" /tmp/atomics_cases.txt | grep -cE 'LAUNCHED'      # faults show here, before the profiler

# Nsight Compute, one process per group of kernels (a timeout loses only that group)
prof() {
  local part=$1 lim=$2 kernels=$3
  step "$lim" "$NCU" --metrics "$(cat "$D/metrics.txt")" --csv --print-units base --kernel-name-base function \
    "$BIN" /tmp/atomics_cases.txt "$kernels" > "$D/ncu-$part.csv" 2> "$D/ncu-$part.err"
  echo "part $part: $(grep -c '^CASE .* LAUNCHED' "$D/ncu-$part.csv") launches"; tail -2 "$D/ncu-$part.err"
}
prof shared 45 s_atom_u32,s_red_u32,s_popc_inc,su_one_unused,su_one_used,su_v_unused,su_v_used
prof global4 45 g_red_u32,g_atom_u32,g_red_f32,g_atom_f32,gu_one_unused,gu_one_used,gu_v_used,gu_f32_unused
prof global8 30 g_red_u64,g_atom_u64,g_red_f64,gu_u64_unused
python3 $PY collect "$D/cases.json" "$D/results.json" "$D"/ncu-*.csv

step 150 python3 -m viz.cli validate tools/gpu/atomic_cases/*.toml shared-histogram-few-bins shared-histogram-many-bins \
  --json > "$D/validate.json"
python3 - "$D/validate.json" <<'PY'
import json, sys
try:
    rows = json.load(open(sys.argv[1]))
except Exception as err:
    print("validate: no JSON:", err); sys.exit()
for r in rows:
    bad = [x for x in r["rows"] if not x["match"]]
    print(f"validate {r['label']}: match={r['match']} {r['error'] or ''}")
    for x in bad:
        print(f"    {x['metric']}: model {x['model']} ncu {x['hardware']}")
PY
ls -la "$D"
