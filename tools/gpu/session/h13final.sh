#!/bin/bash
# Issue 13, the final H100 run: `warpviz calibrate --runs 3` (three GPU processes, each
# figure the median of all their sets) installed where the cost model reads it, then
# `warpviz bench --all` with that calibration: every timed entry's prediction is made by
# the model before the launch is measured.
# Run from the repo root on the device machine:  bash tools/gpu/session/h13final.sh
# Expected time: about 6 minutes (setup 10 s, calibrate 3 x 9 s, bench --all about 320 s
# without Nsight Compute); step limits 60 s and 420 s. SKIP_CAL=1 keeps the checkout's
# calibration; BENCH_FLAGS=--no-counters skips Nsight Compute (bench --all with counters and
# bottlenecks ran past 330 s on 2026-11-23 and wrote nothing).
# Writes $OUT/h13final/: log.txt, calibration.json, calibration.txt, h100.json (the results file).
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/h13final"; mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks_event_reasons.active --format=csv
DEV="$(nvidia-smi --query-gpu=name --format=csv,noheader) on the workplace device machine (nvidia-h100-x1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), CUDA 13.0"
[ "${SKIP_CAL:-0}" = 1 ] || step 60 python3 -m viz.cli calibrate --runs 3 --out assets/calibration/nvidia-h100-80gb-hbm3.json --label "$DEV, measured $(date -u +%F) with warpviz calibrate --runs 3" > "$R/calibration.txt"
[ -f "$R/calibration.txt" ] && cat "$R/calibration.txt"; cp assets/calibration/nvidia-h100-80gb-hbm3.json "$R/calibration.json"
step 420 python3 -m viz.cli bench --all ${BENCH_FLAGS:-} --out "$R/h100.json" --label "$DEV, measured $(date -u +%F) with warpviz bench --all"
nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv
ls -la "$R"
