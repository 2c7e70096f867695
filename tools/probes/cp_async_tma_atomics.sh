#!/bin/bash
# How the H100 counts cp.async, TMA 2-D tile copies and shared atomics: one warp, one
# instruction, one probe kernel per address pattern (cp_async_tma_atomics.cu, cases from cp_async_tma_atomics.py)
# under Nsight Compute. Made assets/measurements/h100-kinds-2026-11-23.json (its probes) and
# the rules of docs/memory-model.md ("cp.async, TMA tile copies and shared atomics").
# Run from the repo root on the device machine:  bash tools/probes/cp_async_tma_atomics.sh
# Total run time: about 2.5 minutes expected, under 4 at worst: every step has its own
# `timeout`, and the optional steps (the fallback retry, the early validate) shrink or
# are skipped so that everything after device_setup.sh ends within 230 s.
# Writes under $OUT/cp_async_tma_atomics/: log.txt, query-metrics.txt (ncu's metric list),
# metrics-<group>.txt (the counters asked for), cases.json, place.txt (host program
# output with the TMA tiles read back), ncu-<part>.csv (Nsight Compute, one launch per
# case), sass.txt (the probe's memory instructions) and results.json (cases + counters +
# placements, made by tools/probes/cp_async_tma_atomics.py collect).
# --dry: no GPU, no setup: compiles the probe kernels, writes the cases and runs the metric choice and collect on made-up output; what the tests run.
if [ "${1:-}" = --dry ]; then
  set -e; PY=${PYTHON:-python3}; DRY=$(mktemp -d); trap 'rm -rf "$DRY"' EXIT
  if command -v nvcc > /dev/null; then
    nvcc -arch=sm_90a -O3 -std=c++17 -cubin -o "$DRY/probe.cubin" tools/probes/cp_async_tma_atomics.cu
    echo "dry: probe kernels compiled, $(stat -c %s "$DRY/probe.cubin") bytes of cubin"
  else
    echo "dry: no nvcc here, probe kernels not compiled"
  fi
  "$PY" tools/probes/cp_async_tma_atomics.py --dry "$DRY"
  exit 0
fi
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/cp_async_tma_atomics"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
T0=$(date +%s)
PY=tools/probes/cp_async_tma_atomics.py
BIN=/tmp/cp_async_tma_atomics
NCU=$(command -v ncu || ls /usr/local/cuda/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
echo "ncu: $NCU"; "$NCU" --version | tail -1
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader

step 20 nvcc -arch=sm_90a -O3 -std=c++17 -o "$BIN" tools/probes/cp_async_tma_atomics.cu
Q="'$NCU' --query-metrics"
step 20 bash -c "$Q --query-metrics-mode all --chip gh100 > '$D/query-metrics.txt' 2>&1 || $Q --query-metrics-mode all > '$D/query-metrics.txt' 2>&1 || $Q > '$D/query-metrics.txt' 2>&1"
wc -l "$D/query-metrics.txt"
grep -iE 'ldgsts|atom|_red|tma|bulk|ldsm|stsm' "$D/query-metrics.txt" | grep -E '\.sum\b' | sort -u > "$D/query-interesting.txt"; wc -l "$D/query-interesting.txt"
step 10 python3 $PY cases /tmp/kinds_cases.txt "$D/cases.json"
for g in cp atom tma; do python3 $PY metrics "$D/query-metrics.txt" $g "$D/metrics-$g.txt"; done
python3 $PY fallback "$D/metrics-fallback.txt"

# 1. every case once without the profiler: faults show here; TMA tiles are read back.
step 15 "$BIN" /tmp/kinds_cases.txt place > "$D/place.txt"
grep -cE '^CASE .* LAUNCHED' "$D/place.txt"; grep -E '^CASE .* (ENCODE|ERROR|UNKNOWN)|^FATAL' "$D/place.txt"

# 2. Nsight Compute, one process per part (a timeout loses only that part).
MSET=""   # "" = the picked lists; "fallback" after the first part read nothing with them
prof() {  # prof PART METRICS_GROUP LIMIT PREFIXES
  local part=$1 grp=$2 lim=$3 pre=$4
  [ -n "$MSET" ] && grp=$MSET
  step "$lim" "$NCU" --metrics "$(cat "$D/metrics-$grp.txt")" --csv --print-units base --kernel-name-base function \
    "$BIN" /tmp/kinds_cases.txt count "$pre" > "$D/ncu-$part.csv" 2> "$D/ncu-$part.err"
  local n=$(grep -c '^CASE .* LAUNCHED' "$D/ncu-$part.csv"); local rows=$(grep -c '^"' "$D/ncu-$part.csv")
  echo "part $part: $n launches, $rows csv rows (metrics: $grp)"; tail -3 "$D/ncu-$part.err"
  if [ "$rows" -lt 2 ] && [ -z "$MSET" ] && [ "$part" = cp1 ] && [ "$(( $(date +%s) - T0 ))" -lt 100 ]; then
    echo "part $part: nothing read; every part now uses the fallback metrics"
    grep -iE 'error|fail|unknown|not found' "$D/ncu-$part.csv" "$D/ncu-$part.err" | head -5
    MSET=fallback
    step 20 "$NCU" --metrics "$(cat "$D/metrics-fallback.txt")" --csv --print-units base --kernel-name-base function \
      "$BIN" /tmp/kinds_cases.txt count "$pre" > "$D/ncu-$part.csv" 2> "$D/ncu-$part.err"
  fi
}
prof cp1 cp 30 cp_ca4,cp_ca8
prof cp2 cp 25 cp_ca16,cp_cg16
prof atom1 atom 25 atom_u32,red_u32
prof atom2 atom 20 atom_f32,red_f32,atomicadd_cpp
prof tma tma 20 tma

step 10 python3 $PY collect "$D/cases.json" "$D/place.txt" "$D/results.json" "$D"/ncu-*.csv
# 3. early check of the product side (generated kernels with cp.async / atomics / TMA and
#    a real tensor map, their metrics under ncu): the 7 built-ins and 6 random scenarios.
LEFT=$(( 200 - ($(date +%s) - T0) )); [ "$LEFT" -gt 45 ] && LEFT=45
[ "$LEFT" -ge 15 ] && step "$LEFT" python3 -m viz.cli validate cp-async-pipeline tma-swizzle-none tma-swizzle-32b tma-swizzle-64b \
  tma-swizzle-128b shared-histogram-few-bins shared-histogram-many-bins --random 6 --seed 1 \
  --kinds cp.async,atomic,tma.load --json > "$D/validate-early.json" 2> "$D/validate-early.err"
tail -5 "$D/validate-early.err"
(command -v cuobjdump >/dev/null && timeout 10 cuobjdump -sass "$BIN" | grep -E 'Function|LDGSTS|ATOMS|REDS|RED|ATOM|UTMA|SYNCS|LDS|STS|LDC|LDL|LDG|STG|DEPBAR' > "$D/sass.txt") || true
echo "cp_async_tma_atomics: done in $(( $(date +%s) - T0 )) s"
ls -la "$D"
