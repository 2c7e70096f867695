#!/bin/bash
# How the H100 serves ldmatrix / stmatrix: 365 one-instruction probe kernels under Nsight
# Compute. Made assets/measurements/h100-ldmatrix-2026-11-23.json (its cases) and the evidence
# table of docs/GPU.md ("ldmatrix and stmatrix"); ldmatrix_rule.py checks its result against the
# model. Run from the repo root on the device machine:   bash tools/probes/ldmatrix_wavefronts.sh
# Total run time: about 2-3 minutes; at most ~4 minutes (device_setup ~20-30 s, then every
# step below under `timeout`, all of them together capped at BUDGET=205 s).
# Builds tools/probes/ldmatrix_wavefronts.cu (one kernel per ldmatrix/stmatrix form, one
# instruction per warp, row addresses from a table), saves `ncu --query-metrics`, picks the
# shared/LDSM/STSM counters that exist, and profiles every case (ldmatrix_wavefronts.py cases: ~365
# launches, 1 block each) under Nsight Compute: five "core" runs with the core counters
# over all cases (most telling first), one "wide" run (second) with every candidate
# counter over ~30 cases. A run cut by its timeout loses only its own cases.
# After core-2: `warpviz validate` of the four ldmatrix/stmatrix built-ins and 16 random
# ldmatrix scenarios (--kind ldmatrix) -> validate.json.
# Results under $OUT/ldmatrix_wavefronts/: ldmatrix.json (each case: per-lane byte offsets of every warp
# and all counters), cases.json, query-*.txt(.gz), metrics_*.txt, core-*.csv, wide.csv,
# sass.txt (the SASS of every probe kernel), log.txt.
# --dry: no GPU, no setup: compiles the probe kernels, writes the cases and runs the metric choice, collect and the rule on made-up counters; what the tests run.
if [ "${1:-}" = --dry ]; then
  set -e; PY=${PYTHON:-python3}; DRY=$(mktemp -d); trap 'rm -rf "$DRY"' EXIT
  if command -v nvcc > /dev/null; then
    nvcc -arch=sm_90a -O3 -std=c++17 -cubin -o "$DRY/probe.cubin" tools/probes/ldmatrix_wavefronts.cu
    echo "dry: probe kernels compiled, $(stat -c %s "$DRY/probe.cubin") bytes of cubin"
  else
    echo "dry: no nvcc here, probe kernels not compiled"
  fi
  "$PY" tools/probes/ldmatrix_wavefronts.py --dry "$DRY"
  "$PY" tools/probes/ldmatrix_rule.py --dry
  exit 0
fi
source tools/gpu/device_setup.sh
set -u
OUT=${OUT:-/tmp/wv-out}
D="$OUT/ldmatrix_wavefronts"; mkdir -p "$D"
exec > >(tee -a "$D/log.txt") 2>&1
exec 3>&1   # the log, for step lines of commands whose output goes to a file
S=tools/probes
B=/tmp/ldmatrix-build; mkdir -p "$B"
T0=$(date +%s); BUDGET=205
step() {
  local limit=$1; shift
  local left=$(( BUDGET - ($(date +%s) - T0) ))
  [ "$left" -lt "$limit" ] && limit=$left
  if [ "$limit" -le 3 ]; then echo "=== SKIPPED (budget spent): $*" >&3; return 124; fi
  echo "=== $* (limit ${limit}s)" >&3; local t=$(date +%s)
  timeout "$limit" "$@"; local rc=$?
  echo "=== rc=$rc in $(( $(date +%s) - t )) s" >&3; return $rc
}
timeout 10 nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv
NCU=$(command -v ncu); echo "ncu: $NCU"; timeout 10 ncu --version | tail -1
step 60 nvcc -O3 -arch=sm_90a -o "$B/ldmatrix_wavefronts" $S/ldmatrix_wavefronts.cu || { echo "build failed"; exit 1; }
step 20 bash -c "cuobjdump -sass '$B/ldmatrix_wavefronts' | grep -E 'Function|LDSM|STSM|LDS|STS|LDG|STG' > '$D/sass.txt'"
step 10 python3 $S/ldmatrix_wavefronts.py cases "$D"
step 25 bash -c "ncu --query-metrics > '$D/query-base.txt' 2>&1 || ncu --query-metrics --chip gh100 > '$D/query-base.txt' 2>&1"
step 25 bash -c "ncu --query-metrics --query-metrics-mode all > '$D/query-all.txt' 2>&1"
step 10 python3 $S/ldmatrix_wavefronts.py metrics "$D/query-base.txt" "$D/query-all.txt" "$D"
gzip -f "$D/query-all.txt"
grep -iE "ldsm|stsm" "$D/query-base.txt" | head -40
# one plain run first: a fault here would spoil every ncu run
step 20 "$B/ldmatrix_wavefronts" "$D/cases.txt" > "$D/plain.txt" 2>&1; tail -2 "$D/plain.txt"
FALLBACK="smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum"
profile() {  # csv casesfile first last metricsfile limit
  step "$6" ncu --metrics "$(cat "$D/$5")" --csv --print-units base --kernel-name-base demangled \
      --cache-control none "$B/ldmatrix_wavefronts" "$D/$2" "$3" "$4" > "$D/$1" 2> "$D/$1.err"
  local rc=$?
  tail -3 "$D/$1.err"; echo "$1: $(grep -c '^"' "$D/$1") csv rows"
  return $rc
}
CSVS=()
while read -r csv cases first last metrics; do
  if [ "$csv" = wide.csv ]; then limit=45; else limit=40; fi
  profile "$csv" "$cases" "$first" "$last" "$metrics" "$limit"
  if [ "$csv" = core-1.csv ] && ! grep -q '^"ID"' "$D/$csv"; then
    echo "core-1 gave no counters: the six contract metrics only from now on"
    echo "$FALLBACK" > "$D/metrics_core.txt"; echo "$FALLBACK" > "$D/metrics_wide.txt"
    profile "$csv" "$cases" "$first" "$last" metrics_core.txt 40
  fi
  CSVS+=("$D/$csv")
  if [ "$csv" = core-2.csv ]; then
    # the model as it stands (one phase per matrix): the built-ins and random ldmatrix scenarios
    step 60 python3 -m viz.cli validate ldmatrix-x4-tile ldmatrix-x4-tile-sw128 stmatrix-accumulator \
        stmatrix-accumulator-pad --random 16 --kind ldmatrix --seed 1 --json > "$D/validate.json" 2> "$D/validate.err"
    tail -3 "$D/validate.err"
    python3 -c "import json; v=json.load(open('$D/validate.json')); print('validate: matching', sum(r['match'] is True for r in v), 'of', len(v))" || true
  fi
done < "$D/runs.txt"
step 20 python3 $S/ldmatrix_wavefronts.py collect "$D" "$D/ldmatrix.json" "${CSVS[@]}" > "$D/summary.txt"
tail -3 "$D/summary.txt"
echo "total $(( $(date +%s) - T0 )) s after setup"
ls -la "$D"
