#!/usr/bin/env bash
# The cost model's probes. Default: the latency of a dependent DRAM load while DRAM is busy
# (tools/gpu/session/loaded_latency_probe.py), for the cost model's dram_loaded_latency_ns.
# (costmodel.LOADED_LATENCY_H100, docs/GPU.md "Loaded latency"), and the block launch rate
# (block_launch_probe.py, docs/GPU.md "Figures").
# Expected run time: about 40 s (device_setup ~20 s, the probe ~10 s); hard budget 150 s.
#
# COSTMODEL_MODE=bottlenecks: Nsight Compute's measured bottleneck of every timed launch of
# `warpviz bench --all` (built-in scenarios, kernels/ entries, the pad/stride sweeps): the
# "measured" columns of docs/GPU.md's bottleneck table and the bottlenecks in
# assets/measurements/h100.json (python -m viz.gpu.bottleneck merges them).
#
#   usage on the device, from the repo root:   bash tools/gpu/session/costmodel_probes.sh
#   dry run here (no GPU, no ncu: builds and checks everything, prints the ncu commands):
#       COSTMODEL_MODE=bottlenecks COSTMODEL_DRY=1 PYTHON=/work/main/.venv/bin/python OUT=/tmp/costmodel-out bash tools/gpu/session/costmodel_probes.sh
#
# The bottleneck pass's expected run time on the H100: about 2 minutes (device_setup ~10 s with the carried
# PyCUDA build, compile ~20 s, five ncu processes of 18-28 launches ~15 s each); every step
# has a `timeout` and the script stops starting new ncu batches at 225 s, so it ends in under
# 4 minutes. The sweeps batch (3a) runs last and only if time is left.
#
# Writes $OUT/costmodel_probes/: log.txt, bottlenecks.json (per launch: DRAM bytes, L1/L2 hit rates and
# sectors, % of peak of DRAM/L2/L1/shared pipe/LSU, occupancy, registers, top stalls, and
# the raw counters), index.json (the launches), metrics.txt / missing.txt / sections.txt
# (what was asked; names checked against this ncu's --query-metrics), query-*.txt.gz,
# batch-*.raw.csv (ncu --page raw), batch-*.ncu.log, resource-usage.txt (cuobjdump).
# The default mode writes log.txt and loaded-latency.json.
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/costmodel_probes"
W=/tmp/costmodel_probes-work
mkdir -p "$R" "$W"
exec > >(tee -a "$R/log.txt") 2>&1
T0=$(date +%s)
BUDGET=${COSTMODEL_BUDGET:-225}
DRY=${COSTMODEL_DRY:-0}
elapsed() { echo $(( $(date +%s) - T0 )); }
left() { echo $(( BUDGET - $(date +%s) + T0 )); }
step() { local limit=$1; shift; echo "=== [$(elapsed) s] $* (limit ${limit}s)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }

MODE=${COSTMODEL_MODE:-latency}
if [ "$MODE" = latency ]; then
  if [ "$DRY" = 1 ]; then
    echo "costmodel_probes: DRY run of the latency probe: compiling its kernel only"
    ${PYTHON:-python3} -c "import re; from viz.toolchain.compile import compile_cubin; src=open('tools/gpu/session/loaded_latency_probe.py').read(); print(len(compile_cubin(re.search(r'SOURCE = r\"\"\"(.*?)\"\"\"', src, re.S).group(1))), 'bytes of cubin')"
    exit 0
  fi
  source tools/gpu/device_setup.sh
  nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,clocks_event_reasons.active --format=csv
  step 60 python3 tools/gpu/session/loaded_latency_probe.py --json "$R/loaded-latency.json"
  nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
  echo "costmodel_probes: done in $(elapsed) s"
  ls -la "$R"
  exit 0
fi

if [ "$DRY" = 1 ]; then
  PY=${PYTHON:-python3}
  export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
  NCU=""
  echo "costmodel_probes: DRY run (no GPU): the ncu commands are printed, not run"
else
  source tools/gpu/device_setup.sh
  PY=python3
  NCU=$(command -v ncu || true)
  nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks_event_reasons.active --format=csv
fi

# 1. What this ncu knows: metric names (base and full) and sections.
if [ -n "$NCU" ]; then
  "$NCU" --version | tail -1
  step 45 "$NCU" --query-metrics > "$R/query-base.txt" 2>&1
  [ -s "$R/query-base.txt" ] || step 45 "$NCU" --query-metrics --chip gh100 > "$R/query-base.txt" 2>&1
  step 60 "$NCU" --query-metrics --query-metrics-mode all > "$R/query-all.txt" 2>&1
  [ -s "$R/query-all.txt" ] || step 60 "$NCU" --query-metrics --query-metrics-mode all --chip gh100 > "$R/query-all.txt" 2>&1
  step 20 "$NCU" --list-sections > "$R/sections-list.txt" 2>&1
  wc -l "$R"/query-*.txt "$R/sections-list.txt"
  QARGS="--query-all $R/query-all.txt --query-base $R/query-base.txt --sections $R/sections-list.txt"
else
  QARGS=""
fi

# 1b. How fast SMs start blocks (a few seconds; the cost model's block_launch_ns).
if [ "$DRY" != 1 ]; then
  step 30 $PY tools/gpu/session/block_launch_probe.py --json "$R/blocks.json" > "$R/blocks.log" 2>&1; tail -2 "$R/blocks.log"
fi

# 2. The timed launches (as `warpviz bench --all` builds them), batched; metric names checked.
rm -rf "$W"/*
step 120 $PY -m viz.gpu.bottleneck prep "$W" --sweeps $QARGS || { echo "costmodel_probes: prep failed"; exit 1; }
cp "$W"/index.json "$W"/metrics.txt "$W"/missing.txt "$W"/sections.txt "$R"/
echo "missing metrics (not asked): $(tr '\n' ' ' < "$W/missing.txt")"

# 3. Registers and shared memory per kernel, from the cubins.
if command -v cuobjdump >/dev/null; then
  for f in "$W"/cubins/*.cubin; do echo "== $(basename "$f" .cubin)"; timeout 10 cuobjdump --dump-resource-usage "$f" | grep -i "REG\|SHARED"; done > "$R/resource-usage.txt" 2>&1
  echo "resource usage of $(ls "$W"/cubins | wc -l) cubins -> resource-usage.txt"
fi

# 3b. SASS of a few kernels: how ptxas schedules loads (how many are in flight before the first use).
if command -v cuobjdump >/dev/null; then
  for k in wv_0[0-9][0-9]_gemm_naive wv_0[0-9][0-9]_reduction_tree wv_0[0-9][0-9]_coalesced wv_0[0-9][0-9]_stencil_global \
           wv_0[0-9][0-9]_transpose_naive wv_0[0-9][0-9]_gemm_tiled reduce_tree reduce_interleaved gemm_naive; do
    for f in "$W"/cubins/$k.cubin; do [ -f "$f" ] && { echo "== $(basename "$f")"; timeout 10 cuobjdump -sass "$f"; }; done
  done > "$R/sass.txt" 2>&1
  gzip -f "$R/sass.txt"
fi

# 4. Nsight Compute over each batch, at the GPU's own clocks (as timed), the fill kernel skipped.
METRICS=$(tr -d '\n' < "$W/metrics.txt")
SECTIONS=$(cat "$W/sections.txt")
for spec in "$W"/batch-*.json; do
  b=$(basename "$spec" .json)
  n=$(( $(left) - 25 ))   # room for the import (a few s) and the summary
  case "$b" in batch-3*) want=60 ;; *) want=80 ;; esac
  lim=$(( n < want ? n : want ))
  if [ "$lim" -lt 20 ]; then echo "costmodel_probes: $b skipped: $(left) s left of the ${BUDGET} s budget"; continue; fi
  CMD=(--target-processes all --kernel-name-base function --launch-skip 1 --clock-control none
       $SECTIONS ${METRICS:+--metrics "$METRICS"} --print-units base -f -o "$W/$b"
       $PY -m viz.gpu.ncu_driver "$spec")
  if [ -z "$NCU" ]; then
    echo "DRY: timeout $lim ncu ${CMD[*]:0:10} --metrics <$(echo "$METRICS" | tr ',' '\n' | wc -l) names> ... ${CMD[*]: -6}"
    continue
  fi
  step "$lim" "$NCU" "${CMD[@]}" > "$R/$b.ncu.log" 2>&1
  tail -3 "$R/$b.ncu.log"
  grep -c "warpviz-ncu-driver: ran" "$R/$b.ncu.log" | sed "s/^/launches run in $b: /"
  if [ -f "$W/$b.ncu-rep" ]; then
    step 30 "$NCU" -i "$W/$b.ncu-rep" --page raw --csv --print-units base > "$R/$b.raw.csv" 2>"$R/$b.import.log"
    ls -la "$W/$b.ncu-rep" "$R/$b.raw.csv"
    [ "$(stat -c %s "$W/$b.ncu-rep")" -lt 20000000 ] && cp "$W/$b.ncu-rep" "$R/"
  else
    echo "costmodel_probes: $b wrote no report"
  fi
done

# 5. The summary.
cp "$W"/*.raw.csv "$R"/ 2>/dev/null
step 40 $PY -m viz.gpu.bottleneck collect "$R" --out "$R/bottlenecks.json"
gzip -f "$R"/query-*.txt 2>/dev/null
[ "$DRY" = 1 ] || nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
echo "costmodel_probes: done in $(elapsed) s"
ls -la "$R"
