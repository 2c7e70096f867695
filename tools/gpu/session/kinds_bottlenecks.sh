#!/bin/bash
# Nsight Compute's bottleneck sections on the timed launches of the nine cp.async, TMA and
# shared-atomic built-ins, as `bench` would have measured them: the same launches
# (`bench.timed_launches`), the same sections and metrics (kinds_bottleneck_metrics.txt: the
# names checked against this ncu's --query-metrics), the GPU's own clocks. docs/GPU.md, item 6
# of the cost model's misses ("The TMA's time per box") and the bottleneck table's kinds rows.
# Run from the repo root on the device machine:  bash tools/gpu/session/kinds_bottlenecks.sh
# Expected time: about 60 s (setup 10 s, compile 10 s, one ncu process over 9 launches
# about 30 s); step limits 60 + 120 + 40 s.
# Writes $OUT/kinds_bottlenecks/: log.txt, index.json, batch-*.raw.csv, bottlenecks.json.
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/kinds_bottlenecks"; W=/tmp/kinds_bottlenecks-work; mkdir -p "$R" "$W"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; local rc=$?; echo "=== rc=$rc in $(( $(date +%s) - t0 )) s"; return $rc; }
step 60 python3 - "$W" <<'PY'
import sys
from pathlib import Path
from viz.gpu.bottleneck import prep
from viz.scenario import load
names = ["cp-async-pipeline", "shared-histogram-few-bins", "shared-histogram-many-bins", "tma-ldmatrix-128b",
         "tma-ldmatrix-none", "tma-swizzle-128b", "tma-swizzle-32b", "tma-swizzle-64b", "tma-swizzle-none"]
s = prep(Path(sys.argv[1]), items=[(n, load(n)) for n in names], hand_kernels=False)
print(s["batches"])
PY
cp tools/gpu/session/kinds_bottleneck_metrics.txt "$W/metrics.txt"
cp "$W/index.json" "$R/"
METRICS=$(tr -d '\n' < "$W/metrics.txt"); SECTIONS=$(cat "$W/sections.txt")
for spec in "$W"/batch-*.json; do
  b=$(basename "$spec" .json)
  step 120 ncu --target-processes all --kernel-name-base function --launch-skip 1 --clock-control none \
    $SECTIONS --metrics "$METRICS" --print-units base -f -o "$W/$b" python3 -m viz.gpu.ncu_driver "$spec" > "$R/$b.ncu.log" 2>&1
  tail -3 "$R/$b.ncu.log"
  [ -f "$W/$b.ncu-rep" ] && step 40 ncu -i "$W/$b.ncu-rep" --page raw --csv --print-units base > "$R/$b.raw.csv"
done
step 40 python3 -m viz.gpu.bottleneck collect "$R" --out "$R/bottlenecks.json"
ls -la "$R"
