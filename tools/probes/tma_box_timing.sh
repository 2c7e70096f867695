#!/bin/bash
# How a block's time grows with its TMA box (tools/probes/tma_boxes/*.toml:
# boxes of 16-128 rows of 16-64 bytes, swizzle none, one box per block, 64 threads), timed
# as bench times a scenario. The built-ins tma-swizzle-* are not among them: they are what
# the figure has to predict. Made assets/measurements/h100-tma-2026-11-23.json and the cost
# model's TMA term (docs/GPU.md, "The TMA's time per box").
# Run from the repo root on the device machine:  bash tools/probes/tma_box_timing.sh
# Expected time: about 50 s (setup 10 s, 8 timings of 2-4 s, compile); step limit 150 s.
# Writes $OUT/tma_box_timing/: log.txt, tma.json (a results file).
# --dry: no GPU, no setup: every box scenario loads, generates its kernel and gets the cost
# model's H100 prediction (TMA-bound); what the tests run.
if [ "${1:-}" = --dry ]; then
  exec "${PYTHON:-python3}" - tools/probes/tma_boxes/*.toml <<'PY'
import sys
from viz.gpu import codegen, costmodel
from viz.scenario import load
from viz.engine import analyze
for path in sys.argv[1:]:
    sc = load(path)
    src = codegen.generate(sc).source
    per_block = costmodel.tma_seconds_per_block(analyze(sc))
    assert per_block > 0 and "cp.async.bulk.tensor" in src, path
print(f"dry: {len(sys.argv) - 1} box scenarios load, generate their kernels and have a TMA term")
PY
fi
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/tma_box_timing"; mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
step 150 python3 -m viz.cli bench tools/probes/tma_boxes/*.toml --no-counters --no-kernels --no-sweeps --out "$R/tma.json" --label "TMA box probes, H100 device machine, $(date -u +%F)"
ls -la "$R"
