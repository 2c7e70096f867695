#!/bin/bash
# Issue 13, a warp's own issue: `warpviz calibrate --runs 3` with the new dependent-issue
# microbenchmarks (wv_dep: FFMA, SHFL, MUFU, LDC, BREV), installed where the cost model
# reads it; then `warpviz bench --traces` with that calibration (every traced launch
# predicted before it is timed), and the GPU tests of calibrate and the traced kernels.
# Run from the repo root on the device machine:  bash tools/gpu/session/h13issue.sh
# Expected time: about 4 minutes (setup 10 s, calibrate 3 x 10 s, traces about 100 s,
# tests about 60 s); step limits 90 + 180 + 200 s.
# Writes $OUT/h13issue/: log.txt, calibration.json, calibration.txt, traces.json, traces.txt.
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/h13issue"; mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks_event_reasons.active --format=csv
DEV="$(nvidia-smi --query-gpu=name --format=csv,noheader) on the workplace device machine (nvidia-h100-x1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), CUDA 13.0"
step 90 python3 -m viz.cli calibrate --runs 3 --out "$R/calibration.json" --label "$DEV, measured $(date -u +%F) with warpviz calibrate --runs 3" > "$R/calibration.txt"
cat "$R/calibration.txt"
[ -s "$R/calibration.json" ] && cp "$R/calibration.json" assets/calibration/nvidia-h100-80gb-hbm3.json
step 180 python3 -m viz.cli bench --traces --no-counters --out "$R/traces.json" --label "$DEV, traced launches measured $(date -u +%F) with warpviz bench --traces" > "$R/traces.txt"
tail -70 "$R/traces.txt"
step 200 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_calibrate.py tests/test_trace_kernels.py tests/test_trace_bench.py
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
ls -la "$R"
