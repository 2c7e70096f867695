#!/bin/bash
# h13trace device run: every shipped trace's own launch (assets/traces/*.wvtrace, launch files in
# kernels/ and kernels/trace/) timed on the H100 as `bench` times a kernel (spin-queued launches,
# samples of >= 1 ms, median and spread, 8 rotated buffer sets for these small launches, each set
# holding the launch file's own fills), with the cost model's prediction from the trace; then
# Nsight Compute's bottleneck sections on the same launches (batches of 20, the file saved after
# each); then the -m gpu test (a traced launch timed beside the kernels/ entry of the same launch).
# Run from the repo root on the device machine:  bash tools/gpu/session/h13trace.sh
# Expected time: about 2 minutes with the carried PyCUDA build (setup 10 s; compile 60 kernels
# 10 s, memcpy ceiling 2 s, 60 timings about 50 s; Nsight Compute about 40 s; the test 15 s).
# Step limits: timings 90 s, Nsight Compute 55 s (no new batch after 35 s), test 25 s: 170 s
# beyond setup. The timings are in traces.json before Nsight Compute starts.
# Writes $OUT/h13trace/: log.txt, traces.json (results file with a `traces` section; the
# bottlenecks are added to it), traces.txt and traces.md (the tables), pytest.txt, smi-before.csv, smi-after.csv.
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/h13trace"; mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
smi() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv > "$R/smi-$1.csv" 2>&1; cat "$R/smi-$1.csv"; }
smi before
LABEL="$(nvidia-smi --query-gpu=name --format=csv,noheader) on the workplace device machine (nvidia-h100-x1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), traced launches measured $(date -u +%F) with warpviz bench --traces"
step 90 python3 -m viz.cli bench --traces --no-counters --out "$R/traces.json" --label "$LABEL" > "$R/traces.txt"
cat "$R/traces.txt"
step 55 python3 -m viz.gpu.tracebench bottlenecks "$R/traces.json" --budget 35
step 10 python3 -m viz.gpu.tracebench table "$R/traces.json" --markdown > "$R/traces.md"
step 25 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_trace_bench.py > "$R/pytest.txt" 2>&1
tail -15 "$R/pytest.txt"
smi after
ls -la "$R"
