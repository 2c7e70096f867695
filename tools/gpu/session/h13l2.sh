#!/bin/bash
# Issue 13, L2 request and partial-store rates: `warpviz calibrate` twice (the new figures
# l2_write_gbps, l2_scatter_gsectors, dram_scatter_gbps, l2_partial_gstores, l2_partial_dram_gstores beside the
# old ones; run to run stability) and the calibrate -m gpu test.
# Run from the repo root on the device machine:  bash tools/gpu/session/h13l2.sh
# Expected time: about 40 s (setup 10 s, each calibrate about 8 s, the test 10 s); every
# step has its own timeout, the limits add up to 90 s beyond setup.
# Writes $OUT/h13l2/: log.txt, calib-1.json, calib-2.json (calibration files), calib-*.txt.
set -u
OUT=${OUT:-/tmp/wv-out}
R="$OUT/h13l2"; mkdir -p "$R"
exec > >(tee -a "$R/log.txt") 2>&1
source tools/gpu/device_setup.sh
step() { local limit=$1; shift; echo "=== $* (limit ${limit}s) $(date -u +%T)"; local t0=$(date +%s); timeout "$limit" "$@"; echo "=== rc=$? in $(( $(date +%s) - t0 )) s"; }
LABEL="$(nvidia-smi --query-gpu=name --format=csv,noheader) on the workplace device machine (nvidia-h100-x1), driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader), measured $(date -u +%F) with warpviz calibrate"
step 30 python3 -m viz.cli calibrate --out "$R/calib-1.json" --label "$LABEL" > "$R/calib-1.txt"; cat "$R/calib-1.txt"
step 30 python3 -m viz.cli calibrate --out "$R/calib-2.json" --label "$LABEL" > "$R/calib-2.txt"; cat "$R/calib-2.txt"
python3 - "$R" <<'PY'
import json, sys
r = sys.argv[1]
try:
    a, b = (json.load(open(f"{r}/calib-{i}.json"))["figures"] for i in (1, 2))
    for k in a:
        if k in b:
            d = abs(a[k]["value"] - b[k]["value"]) / max(abs(a[k]["value"]), 1e-12) * 100
            print(f"{k:<42} {a[k]['value']:>12g} {b[k]['value']:>12g}  {d:5.1f}% {'' if d < 5 else 'DIFFERS'}")
except Exception as err:
    print("compare failed:", err)
PY
step 30 python3 -m pytest -m gpu -q -p no:cacheprovider tests/test_gpu_calibrate.py
ls -la "$R"
