#!/bin/bash
# Every shipped trace's own launch (assets/traces/*.wvtrace, launch files in
# kernels/ and kernels/trace/) timed on the H100 as `bench` times a kernel (spin-queued launches,
# samples of >= 1 ms, median and spread, 8 rotated buffer sets for these small launches, each set
# holding the launch file's own fills); then Nsight Compute's bottleneck sections on as many of the
# same launches as fit (the slowest first, batches of 10, the file saved after each batch).
# The predictions are made afterwards, without a GPU (python -m viz.gpu.tracebench repredict).
# Made the "measured (Nsight Compute)" column of docs/GPU.md's traced-launch table (the times
# and predictions shipped in assets/measurements/h100-traces.json come from calibrate_and_bench.sh).
# Run from the repo root on the device machine:  bash tools/gpu/session/trace_launch_timing.sh
# Expected time: about 2.5 minutes with the carried PyCUDA build: setup 10 s; the timings about
# 1.5 s per launch, 60 launches about 95 s (limit 150 s; traces.json is written after every
# launch, so a stop keeps what was measured); Nsight Compute 40 s (no new batch after 20 s).
# Limits add up to 190 s beyond setup.
# Writes $OUT/trace_launch_timing/: log.txt, traces.json (results file with a `traces` section; the
# bottlenecks are added to it), traces.txt (the table), smi-before.csv, smi-after.csv.
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/trace_launch_timing"; mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
smi() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv > "$R/smi-$1.csv" 2>&1; cat "$R/smi-$1.csv"; }
smi before
LABEL="$(nvidia-smi --query-gpu=name --format=csv,noheader) on the workplace device machine (nvidia-h100-x1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), traced launches measured $(date -u +%F) with warpviz bench --traces"
step 150 python3 -m viz.cli bench --traces --no-counters --no-predict --out "$R/traces.json" --label "$LABEL" > "$R/traces.txt"
cat "$R/traces.txt"
step 40 python3 -m viz.gpu.tracebench bottlenecks "$R/traces.json" --budget 20 --batch 10
smi after
ls -la "$R"
