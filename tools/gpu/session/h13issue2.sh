#!/bin/bash
# Issue 13, the check of a warp's own issue: with the calibration of h13issue.sh installed
# (assets/calibration/), `warpviz bench --all --no-counters` and `warpviz bench --traces
# --no-counters`: every entry and traced launch predicted by the model before it is timed.
# Run from the repo root on the device machine:  bash tools/gpu/session/h13issue2.sh
# Expected time: about 7 minutes (setup 10 s, bench --all about 300 s, traces about 110 s);
# step limits 360 + 150 s. SKIP_TRACES=1 runs bench --all only (the traced launches' model
# did not change).
# Writes $OUT/h13issue2/: log.txt, h100.json, bench.txt, traces.json, traces.txt.
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/h13issue2"; mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks_event_reasons.active --format=csv
DEV="$(nvidia-smi --query-gpu=name --format=csv,noheader) on the workplace device machine (nvidia-h100-x1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), CUDA 13.0"
step 360 python3 -m viz.cli bench --all --no-counters --out "$R/h100.json" --label "$DEV, measured $(date -u +%F) with warpviz bench --all" > "$R/bench.txt"
tail -5 "$R/bench.txt"
[ "${SKIP_TRACES:-0}" = 1 ] || step 150 python3 -m viz.cli bench --traces --no-counters --out "$R/traces.json" --label "$DEV, traced launches measured $(date -u +%F) with warpviz bench --traces" > "$R/traces.txt"
[ -f "$R/traces.txt" ] && tail -3 "$R/traces.txt"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
ls -la "$R"
